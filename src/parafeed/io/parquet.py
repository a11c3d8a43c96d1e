"""Parquet files, on pyarrow: one element per row, a dict of column -> value with tf.data's types (what maps to what:
:mod:`parafeed.io.arrow_columns`, docs/formats.md#parquet).

Rows are read a row group at a time, in batches; a position is ``(row group, row)``: restoring one seeks to the row
group (from the footer's row counts) without reading what comes before it. :class:`ParquetRows` reads rows by their
position in a list of files (decoded row groups are kept, a few at a time), for splits by record and global shuffles.
"""

from __future__ import annotations

import collections
import operator
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from parafeed.core.iterator import DatasetIterator
from parafeed.errors import DataLossError, StateError
from parafeed.io.arrow_columns import Columns, pyarrow_modules
from parafeed.io.storage import open_input, remote_settings

STEP = "ParquetDataset"
BATCH_ROWS = 4096  # rows decoded at a time within a row group
KEEP_ROW_GROUPS = 4  # decoded row groups ParquetRows keeps for reads by position


def open_parquet(path: str, storage_options: dict | None = None, current: Any = None) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` over ``path`` (local, or a URL read through parafeed's storage layer: read
    ahead and retried, with the remote settings ``current``, the building pipeline's by default); a file that is not
    Parquet or is cut short raises DataLossError naming it."""
    pa, _, pq = pyarrow_modules(STEP)
    f = open_input(path, STEP, storage_options, current)
    try:
        return pq.ParquetFile(f, pre_buffer=True)
    except (pa.ArrowInvalid, OSError) as err:
        f.close()
        raise DataLossError(f"{STEP}: {path} is not a readable Parquet file (its footer): {err}") from None


# ------------------------------------------------------------------------------------------------ reading


class ParquetFileReader(DatasetIterator):
    """The rows of one Parquet file in order, lending the rest of the decoded batch. State: ``{"row_group", "row"}``
    (the row within its group)."""

    lends = True

    def __init__(self, path: str, columns: Callable[[Any, str], Columns], storage_options: dict | None = None):
        super().__init__()
        self._path = path
        self._file = open_parquet(path, storage_options)
        self._columns = columns(self._file.schema_arrow, path)
        meta = self._file.metadata
        self._group_rows = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        self._firsts = np.cumsum([0, *self._group_rows]).tolist()
        self._group = 0  # the current batch's row group, and its first row's number there
        self._base = 0
        self._batches: Iterator[tuple[Iterator[dict], Iterator, int]] | None = None  # the group's, from the position
        self._rest: Iterator[dict] = iter(())  # the current batch's rows not taken yet, made as they are taken
        self._left: Iterator = iter(())  # (its length_hint: how many those are)
        self._size = 0  # the current batch's rows

    def _group_batches(self, group: int, skip: int) -> Iterator[tuple[Iterator[dict], Iterator, int]]:
        """The rows of row group ``group`` from its row ``skip`` on, a decoded batch at a time (``Columns.iter_rows``,
        and the batch's size)."""
        path, columns = self._path, self._columns
        first = self._firsts[group]  # the batch's first row in the file
        try:
            for batch in self._file.iter_batches(BATCH_ROWS, row_groups=[group], columns=columns.names):
                start = max(0, skip - (first - self._firsts[group]))
                if start < batch.num_rows:
                    yield *columns.iter_rows(batch.slice(start), path, first + start), batch.num_rows - start
                first += batch.num_rows
        except OSError as err:  # (pyarrow's ArrowInvalid / IOError on a damaged page)
            raise DataLossError(f"{STEP}: {path}, row group {group}: {err}") from err

    def __next__(self) -> dict:
        try:
            return next(self._rest)
        except StopIteration:
            pass
        while self._group < len(self._group_rows):
            row = self._row()
            if self._batches is None:
                self._batches = self._group_batches(self._group, row)
            batch = next(self._batches, None)
            if batch is None:
                self._group, self._base, self._batches = self._group + 1, 0, None
                self._drop_batch()
                continue
            self._base, (self._rest, self._left, self._size) = row, batch
            return next(self._rest)
        raise StopIteration

    def lend(self) -> Iterator[dict]:
        return self._rest

    def _row(self) -> int:
        """The next row's number within its row group."""
        return self._base + self._size - operator.length_hint(self._left)

    def _drop_batch(self) -> None:
        self._rest, self._left, self._size = iter(()), iter(()), 0

    def _get_state(self) -> dict:
        return {"row_group": self._group, "row": self._row()}

    def _set_state(self, state: dict) -> None:
        group, row = int(state["row_group"]), int(state["row"])
        if group > len(self._group_rows) or (group < len(self._group_rows) and row > self._group_rows[group]):
            raise StateError(f"set_state(): {self._path} has no row {row} of row group {group}")
        self._group, self._base, self._batches = group, row, None
        self._drop_batch()

    def close(self) -> None:
        self._batches = None
        self._drop_batch()
        self._file.close()


def row_count(path: str, storage_options: dict | None = None) -> int:
    """Rows in a Parquet file, from its footer."""
    f = open_parquet(path, storage_options)
    try:
        return int(f.metadata.num_rows)
    finally:
        f.close()


class ParquetRows:
    """Rows of Parquet files by position in their concatenation (files holding ``counts`` rows). A read decodes the
    row's row group and keeps it (the last KEEP_ROW_GROUPS): positions that come near each other, as those of a
    shuffle buffer or a split's share, decode each group about once. Safe to call from several threads."""

    def __init__(self, paths: list[str], counts: list[int], columns: Callable[[Any, str], Columns],
                 storage_options: dict | None = None):  # fmt: skip
        self.paths = list(paths)
        self.starts = np.cumsum([0, *counts])
        self.remote = False  # (a row group is decoded whole: reading ahead on I/O threads would decode it twice)
        self._columns = columns
        self._storage_options = storage_options
        self._settings = remote_settings(self.paths)  # (files are opened later, as they are read)
        self._files: dict[int, tuple[Any, Columns, np.ndarray]] = {}
        self._groups: collections.OrderedDict[tuple[int, int], list[dict]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def _file(self, k: int) -> tuple[Any, Columns, np.ndarray]:
        if k not in self._files:
            path = self.paths[k]
            f = open_parquet(path, self._storage_options, self._settings)
            meta = f.metadata
            firsts = np.cumsum([0, *(meta.row_group(g).num_rows for g in range(meta.num_row_groups))])
            self._files[k] = (f, self._columns(f.schema_arrow, path), firsts)
        return self._files[k]

    def read(self, position: int) -> dict:
        """The row at ``position`` of the files' concatenation."""
        k = int(np.searchsorted(self.starts, position, side="right")) - 1
        i = position - int(self.starts[k])
        with self._lock:
            f, columns, firsts = self._file(k)
            g = int(np.searchsorted(firsts, i, side="right")) - 1
            rows = self._groups.get((k, g))
            if rows is None:
                path = self.paths[k]
                try:
                    table = f.read_row_group(g, columns=columns.names)
                except OSError as err:
                    raise DataLossError(f"{STEP}: {path}, row group {g}: {err}") from err
                rows, first = [], int(firsts[g])
                for batch in table.to_batches():
                    rows += columns.rows(batch, path, first)
                    first += batch.num_rows
                self._groups[(k, g)] = rows
                while len(self._groups) > KEEP_ROW_GROUPS:
                    self._groups.popitem(last=False)
            else:
                self._groups.move_to_end((k, g))
            return rows[i - int(firsts[g])]

    def close(self) -> None:
        with self._lock:
            for f, _, _ in self._files.values():
                f.close()
            self._files.clear()
            self._groups.clear()

"""Parquet files, on pyarrow: one element per row, a dict of column -> value with tf.data's types.

What maps to what (docs/formats.md#parquet):
* integers, floats and booleans: NumPy scalars of the stored type; timestamps, dates, times and durations: their
  stored integers (int64, or int32 for date32/time32);
* strings and binary (dictionary-encoded or not): ``bytes``;
* a list column: a 1-D array per row (strings: an object array of ``bytes``); a list of lists: a
  :class:`~parafeed.values.ragged_tensor.RaggedTensor` per row; a struct: a dict of its fields.

A null is an error naming the file, the row and the column, unless ``defaults`` gives the column's value for it.
Rows are read a row group at a time, in batches; a position is ``(row group, row)``: restoring one seeks to the row
group (from the footer's row counts) without reading what comes before it. :class:`ParquetRows` reads rows by their
position in a list of files (decoded row groups are kept, a few at a time), for splits by record and global shuffles.
"""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from parafeed.core.iterator import DatasetIterator
from parafeed.errors import DataLossError, InvalidArgumentError, StateError
from parafeed.io.storage import open_input, remote_settings
from parafeed.values.ragged_spec import RaggedTensorSpec
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.structure import STRING, TensorSpec

STEP = "ParquetDataset"
BATCH_ROWS = 4096  # rows decoded at a time within a row group
KEEP_ROW_GROUPS = 4  # decoded row groups ParquetRows keeps for reads by position

Convert = Callable[[Any, str, int], Sequence[Any]]  # (pyarrow array, file, first row) -> a value per row


def pyarrow_modules() -> tuple[Any, Any, Any]:
    """``pyarrow``, ``pyarrow.compute`` and ``pyarrow.parquet``, or an ImportError that says how to install them."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"{STEP}: reading Parquet needs pyarrow: pip install 'parafeed[parquet]'") from None
    return pa, pc, pq


def open_parquet(path: str, storage_options: dict | None = None, current: Any = None) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` over ``path`` (local, or a URL read through parafeed's storage layer: read
    ahead and retried, with the remote settings ``current``, the building pipeline's by default); a file that is not
    Parquet or is cut short raises DataLossError naming it."""
    pa, _, pq = pyarrow_modules()
    f = open_input(path, STEP, storage_options, current)
    try:
        return pq.ParquetFile(f, pre_buffer=True)
    except (pa.ArrowInvalid, OSError) as err:
        f.close()
        raise DataLossError(f"{STEP}: {path} is not a readable Parquet file (its footer): {err}") from None


# ------------------------------------------------------------------------------------------------- conversions


def _null_error(path: str, row: int, column: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"{STEP}: {path}, row {row}: column {column!r} is null; give its value for nulls with "
        f"ParquetDataset(..., defaults={{{column!r}: ...}}) or fill the column when writing the file"
    )


def _scalar_dtype(pa: Any, t: Any) -> np.dtype:
    """The NumPy dtype of a column of numbers, booleans or times (their stored integers) of type ``t``."""
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_time64(t) or pa.types.is_date64(t):
        return np.dtype(np.int64)
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return np.dtype(np.int32)
    return np.dtype(t.to_pandas_dtype())


def _is_list(pa: Any, t: Any) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


def _is_bytes(pa: Any, t: Any) -> bool:
    """Strings and binary: given as ``bytes``."""
    kinds = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)
    return any(kind(t) for kind in kinds) or bool(pa.types.is_fixed_size_binary(t))


def column_reader(field: Any, default: Any, name: str) -> tuple[Any, Convert]:
    """The spec of a column and the function that turns a pyarrow array of it into one value per row."""
    pa, pc, _ = pyarrow_modules()
    t = field.type
    if pa.types.is_dictionary(t):
        spec, inner = column_reader(pa.field(field.name, t.value_type), default, name)
        return spec, lambda a, path, first: inner(a.dictionary_decode(), path, first)
    if _is_bytes(pa, t):
        filled = None if default is None else (default.encode() if isinstance(default, str) else bytes(default))

        def strings(a: Any, path: str, first: int) -> Sequence[Any]:
            a = _fill(pa, pc, a, filled, path, first, name)
            return a.cast(pa.large_binary()).to_pylist()

        return TensorSpec((), STRING), strings
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_temporal(t):
        dtype = _scalar_dtype(pa, t)
        storage = pa.from_numpy_dtype(dtype)

        def numbers(a: Any, path: str, first: int) -> Sequence[Any]:
            if pa.types.is_temporal(a.type):
                a = a.view(storage) if a.type.bit_width == storage.bit_width else a.cast(storage)
            a = _fill(pa, pc, a, None if default is None else pa.scalar(default, storage), path, first, name)
            return a.to_numpy(zero_copy_only=False)

        return TensorSpec((), dtype), numbers
    if _is_list(pa, t):
        return _list_reader(pa, pc, field, default, name)
    if pa.types.is_struct(t):
        children = [t.field(i) for i in range(t.num_fields)]
        parts = [(f.name, column_reader(f, None, f"{name}.{f.name}")) for f in children]

        def fields(a: Any, path: str, first: int) -> Sequence[Any]:
            if a.null_count:
                raise _null_error(path, first + _first_null(pc, a), name)
            values = [convert(a.field(k), path, first) for k, (_, (_, convert)) in enumerate(parts)]
            keys = [key for key, _ in parts]
            return [dict(zip(keys, row)) for row in zip(*values)]

        return {key: spec for key, (spec, _) in parts}, fields
    raise InvalidArgumentError(
        f"{STEP}: column {name!r} has type {t}, which has no tf.data counterpart; leave it out with `columns=` "
        "or write it as numbers, strings or lists of them"
    )


def _first_null(pc: Any, a: Any) -> int:
    return int(pc.index(pc.is_null(a), True).as_py())


def _fill(pa: Any, pc: Any, a: Any, default: Any, path: str, first: int, name: str) -> Any:
    if not a.null_count:
        return a
    if default is None:
        raise _null_error(path, first + _first_null(pc, a), name)
    return pc.fill_null(a, default)


def _list_reader(pa: Any, pc: Any, field: Any, default: Any, name: str) -> tuple[Any, Convert]:
    """A list column: a 1-D array per row, or a RaggedTensor per row for a list of lists."""
    t = field.type
    inner = t.value_field
    nested = _is_list(pa, inner.type)
    leaf = inner.type.value_field if nested else inner
    if not (pa.types.is_primitive(leaf.type) or _is_bytes(pa, leaf.type)):
        raise InvalidArgumentError(
            f"{STEP}: column {name!r} is a list of {leaf.type}: parafeed reads lists of numbers or strings, and "
            "lists of such lists; leave it out with `columns=`"
        )
    leaf_spec, leaf_convert = column_reader(leaf, None, f"{name}[]")
    dtype = leaf_spec.dtype
    size = t.list_size if pa.types.is_fixed_size_list(t) else None
    empty = None if default is None else _default_list(default, dtype, nested, name)

    def values_of(a: Any, path: str, first: int) -> np.ndarray:
        out = leaf_convert(a, path, first)
        return np.array(out, dtype=object) if dtype == STRING else np.asarray(out)

    def lists(a: Any, path: str, first: int) -> Sequence[Any]:
        nulls = a.is_null().to_numpy(zero_copy_only=False) if a.null_count else None
        if nulls is not None and empty is None:
            raise _null_error(path, first + int(np.argmax(nulls)), name)
        splits = _splits(pc, a)
        flat = a.flatten()
        _no_null_items(pc, flat, splits, path, first, name)
        if not nested:
            values = values_of(flat, path, first)
            rows: list[Any] = [values[s:e] for s, e in itertools.pairwise(splits.tolist())]
        else:
            inner_splits = _splits(pc, flat)
            _no_null_items(pc, flat.flatten(), inner_splits[splits], path, first, name)
            values = values_of(flat.flatten(), path, first)
            rows = [
                RaggedTensor(values[inner_splits[s] : inner_splits[e]], inner_splits[s : e + 1] - inner_splits[s])
                for s, e in itertools.pairwise(splits.tolist())
            ]
        if nulls is not None:
            for i in np.flatnonzero(nulls).tolist():
                rows[i] = empty
        return rows

    if nested:
        return RaggedTensorSpec((None, None), dtype, ragged_rank=1), lists
    return TensorSpec((size,), dtype), lists


def _no_null_items(pc: Any, items: Any, splits: np.ndarray, path: str, first: int, name: str) -> None:
    """A null among the items of the rows' lists (row ``r``'s are ``items[splits[r]:splits[r + 1]]``) is an error
    naming its row."""
    if items.null_count:
        row = int(np.searchsorted(splits, _first_null(pc, items), side="right")) - 1
        raise InvalidArgumentError(
            f"{STEP}: {path}, row {first + row}: column {name!r} holds a null item in its list; fill it when writing "
            "the file (defaults= replaces a null list, not a null in one)"
        )


def _default_list(default: Any, dtype: Any, nested: bool, name: str) -> Any:
    """A list column's value for nulls: an array, or for a list of lists a RaggedTensor."""
    kind = object if dtype == STRING else dtype
    if not nested:
        return np.asarray(default, dtype=kind).reshape(-1)
    try:
        parts = [np.asarray(row, dtype=kind).reshape(-1) for row in default]
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{STEP}: the default of column {name!r} must be a list of lists") from None
    splits = np.cumsum([0, *map(len, parts)], dtype=np.int64)
    return RaggedTensor(np.concatenate(parts) if parts else np.zeros(0, kind), splits)


def _splits(pc: Any, a: Any) -> np.ndarray:
    """Where each row's values begin and end in ``a.flatten()`` (a null row has none)."""
    lengths = pc.fill_null(pc.list_value_length(a), 0).to_numpy(zero_copy_only=False)
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])


class Columns:
    """What is read of a file's rows: the columns (all by default), their specs and converters, and nulls' defaults.
    Built from one file's schema; every other file must have the chosen columns with the same types."""

    def __init__(self, schema: Any, columns: Sequence[str] | None, defaults: dict | None, path: str):
        names = list(schema.names)
        chosen = names if columns is None else list(columns)
        missing = [c for c in chosen if c not in names]
        if missing:
            raise InvalidArgumentError(f"{STEP}: {path} has no column(s) {missing}; its columns are {names}")
        defaults = dict(defaults or {})
        unknown = sorted(set(defaults) - set(chosen))
        if unknown:
            raise InvalidArgumentError(f"{STEP}: `defaults` names column(s) {unknown} that are not read ({chosen})")
        self.names = chosen
        self.types = [schema.field(c).type for c in chosen]
        readers = [column_reader(schema.field(c), defaults.get(c), c) for c in chosen]
        self.spec = {c: spec for c, (spec, _) in zip(chosen, readers)}
        self.converters = [convert for _, convert in readers]

    def check(self, schema: Any, path: str) -> None:
        """``schema`` (another file's) has the chosen columns with the types of the first file."""
        for name, t in zip(self.names, self.types):
            if name not in schema.names:
                raise InvalidArgumentError(f"{STEP}: {path} has no column {name!r} (the first file has it)")
            if schema.field(name).type != t:
                raise InvalidArgumentError(
                    f"{STEP}: column {name!r} is {schema.field(name).type} in {path} but {t} in the first file"
                )

    def rows(self, batch: Any, path: str, first: int) -> list[dict]:
        """The rows of a record batch (whose first row is row ``first`` of the file) as dicts."""
        values = [convert(batch.column(k), path, first) for k, convert in enumerate(self.converters)]
        names = self.names
        return [dict(zip(names, row)) for row in zip(*values)]


# ------------------------------------------------------------------------------------------------ reading


class ParquetFileReader(DatasetIterator):
    """The rows of one Parquet file in order. State: ``{"row_group", "row"}`` (the row within its group)."""

    def __init__(self, path: str, columns: Callable[[Any, str], Columns], storage_options: dict | None = None):
        super().__init__()
        self._path = path
        self._file = open_parquet(path, storage_options)
        self._columns = columns(self._file.schema_arrow, path)
        meta = self._file.metadata
        self._group_rows = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        self._firsts = np.cumsum([0, *self._group_rows]).tolist()
        self._group = 0  # the next row's position: row _base + _i of row group _group
        self._base = 0
        self._batches: Iterator[list[dict]] | None = None  # the current group's decoded batches, from the position
        self._pending: list[dict] = []  # the current batch's rows (the first is row _base of the group)
        self._i = 0

    def _group_batches(self, group: int, skip: int) -> Iterator[list[dict]]:
        """The rows of row group ``group`` from its row ``skip`` on, a decoded batch at a time."""
        path, columns = self._path, self._columns
        first = self._firsts[group]  # the batch's first row in the file
        try:
            for batch in self._file.iter_batches(BATCH_ROWS, row_groups=[group], columns=columns.names):
                start = max(0, skip - (first - self._firsts[group]))
                if start < batch.num_rows:
                    yield columns.rows(batch.slice(start), path, first + start)
                first += batch.num_rows
        except OSError as err:  # (pyarrow's ArrowInvalid / IOError on a damaged page)
            raise DataLossError(f"{STEP}: {path}, row group {group}: {err}") from err

    def __next__(self) -> dict:
        i = self._i
        try:
            row = self._pending[i]
        except IndexError:
            return self._next_batch()
        self._i = i + 1
        return row

    def _next_batch(self) -> dict:
        while self._group < len(self._group_rows):
            if self._batches is None:
                self._batches = self._group_batches(self._group, self._base + self._i)
            rows = next(self._batches, None)
            if rows is None:
                self._group, self._base, self._i, self._pending, self._batches = self._group + 1, 0, 0, [], None
                continue
            self._base, self._pending = self._base + self._i, rows
            self._i = 1
            return rows[0]
        raise StopIteration

    def _get_state(self) -> dict:
        return {"row_group": self._group, "row": self._base + self._i}

    def _set_state(self, state: dict) -> None:
        group, row = int(state["row_group"]), int(state["row"])
        if group > len(self._group_rows) or (group < len(self._group_rows) and row > self._group_rows[group]):
            raise StateError(f"set_state(): {self._path} has no row {row} of row group {group}")
        self._group, self._base, self._batches, self._pending, self._i = group, row, None, [], 0

    def close(self) -> None:
        self._batches, self._pending = None, []
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

"""Sources that read chosen records of a reader's files by position (``reader.open_positions``: uncompressed
TFRecord files seek with their index, Parquet files with their row groups' row counts).

* :class:`RecordsAtDataset`: the records at given positions of the files' concatenation (one replica's share of a
  label-balanced split).
* :class:`ShuffledShareDataset`: one replica's share of the global order that seeded shuffles give a reader's
  records. The order a shuffle buffer produces depends only on its seed, its iteration and the number of records,
  not on the records, so every replica computes the same global order of positions and reads only its own records
  (``r, r + n, ...``, from where a resumed pass begins).
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.dataset import Dataset
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import DatasetIterator, Scope, build_in, current_scope
from parafeed.errors import StateError


class _RecordsDataset(Dataset):
    kind = SOURCE

    def __init__(self, reader: Any, files: list[str], counts: list[int], parents: tuple = (), name: str | None = None):
        super().__init__(parents, name=name)
        self._reader = reader  # (not a parent: its open_positions and element spec)
        self._files = list(files)
        self._counts = list(counts)

    def _element_spec(self) -> Any:
        return self._reader.element_spec

    def _open(self) -> Any:
        return self._reader.open_positions(self._files, self._counts)


class RecordsAtDataset(_RecordsDataset):
    """The records of ``reader``'s files at ``positions`` of the concatenation of ``files`` (which hold ``counts``
    records), in order."""

    def __init__(self, reader: Any, files: list[str], counts: list[int], positions: Any):
        super().__init__(reader, files, counts, name=reader.name)
        self._positions = np.asarray(positions, dtype=np.int64)

    def _make_iterator(self) -> DatasetIterator:
        return _PositionsIterator(self._open(), lambda: self._positions)

    def _cardinality(self) -> int:
        return len(self._positions)


class ShuffledShareDataset(_RecordsDataset):
    """Replica ``replica_id`` of ``num_replicas``'s records of ``reader``'s global order after ``shuffles`` (seeded
    shuffle steps, innermost first). Its parent is the reader's dataset of file names."""

    def __init__(self, reader: Any, counts: list[int], shuffles: list, num_replicas: int, replica_id: int):
        super().__init__(reader, reader.file_list(), counts, reader.parents, reader.name)
        self._order_of = reader.record_order
        self._shuffles = list(shuffles)
        self._n, self._r = num_replicas, replica_id

    def share(self, scope: Scope) -> np.ndarray:
        """This replica's positions in ``scope`` (its iteration picks the shuffle orders; a resumed pass begins
        ``run.start`` samples into the global order)."""
        index = {f: k for k, f in enumerate(self._files)}
        names = [os.fsdecode(x) for x in _all(build_in(scope, self._parents[0]))]
        order = self._order_of([index[f] for f in names], self._counts)
        for shuffle in self._shuffles:
            order = order[shuffle.input_indices(len(order), scope)]
        start = scope.run.start if scope.run is not None and scope.top_level else 0
        return order[start + self._r :: self._n]

    def _make_iterator(self) -> DatasetIterator:
        scope = current_scope()
        return _PositionsIterator(self._open(), lambda: self.share(scope))

    def _cardinality(self) -> int:
        total = sum(self._counts)
        return total // self._n + (1 if total % self._n > self._r else 0)


def _all(it: DatasetIterator) -> list:
    try:
        return list(it)
    finally:
        it.close()


class _PositionsIterator(DatasetIterator):
    """Reads the records at ``positions()`` (computed on first use, and again after a restore: they may depend on
    the run's iteration, which a restore sets). Records of remote files are requested ``AHEAD`` at a time on the
    I/O threads, so their latency overlaps; a reader with ``read_many(positions)`` is asked for ``AHEAD`` at once."""

    AHEAD = 32

    def __init__(self, records: Any, positions: Callable[[], np.ndarray]):
        super().__init__()
        self._records = records  # (read(position), remote, close())
        self._positions_of = positions
        self._positions: np.ndarray | None = None
        self._index = 0
        self._ahead: collections.deque[concurrent.futures.Future] = collections.deque()  # records _index, ...
        self._read: collections.deque[Any] = collections.deque()  # records _index, ... read by read_many

    def _todo(self) -> np.ndarray:
        if self._positions is None:
            self._positions = self._positions_of()
        return self._positions

    def __next__(self) -> Any:
        positions = self._todo()
        if self._index >= len(positions):
            raise StopIteration
        read_many = getattr(self._records, "read_many", None)
        if read_many is not None:
            if not self._read:
                self._read.extend(read_many(positions[self._index : self._index + self.AHEAD].tolist()))
            record = self._read.popleft()
        elif not self._records.remote:
            record = self._records.read(int(positions[self._index]))
        else:
            from parafeed.io.remote import io_pool

            for p in positions[self._index + len(self._ahead) : self._index + self.AHEAD]:
                self._ahead.append(io_pool().submit(self._records.read, int(p)))
            record = self._ahead.popleft().result()
        self._index += 1
        return record

    def _drop_ahead(self) -> None:
        for future in self._ahead:
            future.cancel()
        self._ahead.clear()
        self._read.clear()

    def skip(self, n: int) -> int:
        done = max(0, min(n, len(self._todo()) - self._index))
        self._drop_ahead()
        self._index += done
        return done

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        self._drop_ahead()
        self._positions = None
        index = int(state["index"])
        if index > len(self._todo()):
            raise StateError(f"set_state(): the saved position {index} is past the {len(self._todo())} records here")
        self._index = index

    def close(self) -> None:
        self._drop_ahead()
        self._records.close()

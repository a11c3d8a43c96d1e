"""``shard``: every ``num_shards``-th element, starting at ``index``."""

from __future__ import annotations

from typing import Any

from parafeed.core.arguments import as_int, positive_int
from parafeed.core.dataset import Dataset, PassThroughDataset
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import InvalidArgumentError


class ShardDataset(PassThroughDataset):
    """Elements ``index``, ``index + num_shards``, ``index + 2 * num_shards`` ... of the input."""

    def __init__(self, parent: Dataset, num_shards: int, index: int, name: str | None = None):
        super().__init__(parent, name=name)
        self._num_shards = positive_int("shard()", "num_shards", num_shards)
        self._index = as_int("shard()", "index", index)
        if not 0 <= self._index < self._num_shards:
            raise InvalidArgumentError(
                f"shard(): `index` must be between 0 and {self._num_shards - 1} (num_shards - 1), got {self._index}"
            )

    def _make_iterator(self) -> DatasetIterator:
        return ShardIterator(self._parent._iter(), self._num_shards, self._index)

    def _cardinality(self) -> int:
        n = self._parent._cardinality()
        if n < 0:
            return n
        return n // self._num_shards + (1 if n % self._num_shards > self._index else 0)


class ShardIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, num_shards: int, index: int):
        super().__init__(parent)
        self._parent = parent
        self._num_shards = num_shards
        self._to_skip = index  # elements to drop before the next one to return

    def __next__(self) -> Any:
        if self._to_skip:
            skipped = self._parent.skip(self._to_skip)
            if skipped < self._to_skip:
                self._to_skip -= skipped
                raise StopIteration
        x = next(self._parent)
        self._to_skip = self._num_shards - 1
        return x

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "to_skip": self._to_skip}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._to_skip = int(state["to_skip"])

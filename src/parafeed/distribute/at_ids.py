"""The elements of a dataset at given indices: what a replica reads of an epoch's rest resumed on another number
of replicas, when its records cannot be read by position (the input before a DATA split, text and CSV files)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core.dataset import Dataset, PassThroughDataset
from parafeed.core.graph import MANY_TO_MANY
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import StateError


class IdsDataset(PassThroughDataset):
    """The elements of ``parent`` at the increasing indices ``ids`` (the others are skipped, by the input's own
    ``skip``: TFRecord files seek, ``map`` does not call its function)."""

    kind = MANY_TO_MANY

    def __init__(self, parent: Dataset, ids: np.ndarray):
        super().__init__(parent)
        self._ids = np.asarray(ids, dtype=np.int64)

    def _make_iterator(self) -> DatasetIterator:
        return _IdsIterator(self._parent._iter(), self._ids)

    def _cardinality(self) -> int:
        return len(self._ids)


class _IdsIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, ids: np.ndarray):
        super().__init__(parent)
        self._parent = parent
        self._ids = ids.tolist()
        self._next = 0  # the place in ids of the next element
        self._here = 0  # the input's index

    def __next__(self) -> Any:
        if self._next >= len(self._ids):
            raise StopIteration
        target = self._ids[self._next]
        if target > self._here and self._parent.skip(target - self._here) < target - self._here:
            raise StateError(f"resume(): the input ended before element {target} of the epoch's rest")
        x = next(self._parent)
        self._here, self._next = target + 1, self._next + 1
        return x

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "next": self._next, "here": self._here}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._next, self._here = int(state["next"]), int(state["here"])

"""``take`` and ``skip``: a prefix or all but a prefix of the input."""

from __future__ import annotations

from typing import Any

from parafeed.arguments import count_arg
from parafeed.dataset import INFINITE, UNKNOWN, Dataset, PassThroughDataset
from parafeed.iterator import DatasetIterator


class TakeDataset(PassThroughDataset):
    """The first ``count`` elements (all when -1)."""

    def __init__(self, parent: Dataset, count: int, name: str | None = None):
        super().__init__(parent, name=name)
        self._count = count_arg("take()", "count", count)

    def _make_iterator(self) -> DatasetIterator:
        return _TakeIterator(self._parent._iter(), self._count)

    def _cardinality(self) -> int:
        n = self._parent._cardinality()
        if n == UNKNOWN:
            return UNKNOWN
        if n == INFINITE:
            return self._count
        return n if self._count == -1 else min(n, self._count)


class _TakeIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, count: int):
        super().__init__(parent)
        self._parent = parent
        self._remaining = count  # -1: no limit

    def __next__(self) -> Any:
        if self._remaining == 0:
            raise StopIteration
        x = next(self._parent)
        if self._remaining > 0:
            self._remaining -= 1
        return x

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "remaining": self._remaining}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._remaining = int(state["remaining"])


class SkipDataset(PassThroughDataset):
    """All but the first ``count`` elements (none when -1)."""

    def __init__(self, parent: Dataset, count: int, name: str | None = None):
        super().__init__(parent, name=name)
        self._count = count_arg("skip()", "count", count)

    def _make_iterator(self) -> DatasetIterator:
        return _SkipIterator(self._parent._iter(), self._count)

    def _cardinality(self) -> int:
        n = self._parent._cardinality()
        if n < 0:
            return n
        return 0 if self._count == -1 else max(0, n - self._count)


class _SkipIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, count: int):
        super().__init__(parent)
        self._parent = parent
        self._to_skip = count

    def __next__(self) -> Any:
        if self._to_skip:
            if self._to_skip == -1:
                for _ in self._parent:
                    pass
            else:
                self._to_skip -= self._parent.skip(self._to_skip)
                if self._to_skip:
                    raise StopIteration
            self._to_skip = 0
        return next(self._parent)

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "to_skip": self._to_skip}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._to_skip = int(state["to_skip"])

"""``take`` and ``skip`` (a prefix or all but a prefix of the input), ``assert_cardinality`` and ``at``."""

from __future__ import annotations

from typing import Any

from parafeed.core.arguments import as_int, count_arg
from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset, PassThroughDataset
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import FailedPreconditionError, InvalidArgumentError, OutOfRangeError


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


class AssertCardinalityDataset(PassThroughDataset):
    """The input's elements, checked while iterating to number ``expected`` (``INFINITE``: never ending); its
    cardinality is ``expected`` (``pf.experimental.assert_cardinality``)."""

    def __init__(self, parent: Dataset, expected: int, name: str | None = None):
        super().__init__(parent, name=name)
        self._expected = as_int("assert_cardinality()", "expected_cardinality", expected)
        if self._expected < 0 and self._expected != INFINITE:
            raise InvalidArgumentError(
                "assert_cardinality(): `expected_cardinality` must be >= 0 or INFINITE_CARDINALITY (-1), got "
                f"{self._expected}"
            )

    def _make_iterator(self) -> DatasetIterator:
        return _AssertCardinalityIterator(self._parent._iter(), self._expected)

    def _cardinality(self) -> int:
        return self._expected


def _elements(n: int) -> str:
    if n == INFINITE:
        return "an infinite number of elements"
    return f"{n} element" if n == 1 else f"{n} elements"


class _AssertCardinalityIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, expected: int):
        super().__init__(parent)
        self._parent = parent
        self._expected = expected
        self._seen = 0

    def __next__(self) -> Any:
        try:
            x = next(self._parent)
        except StopIteration:
            if self._seen != self._expected:
                raise FailedPreconditionError(
                    f"assert_cardinality(): Input dataset was expected to contain {_elements(self._expected)} but "
                    f"contained only {_elements(self._seen)}."
                ) from None
            raise
        self._seen += 1
        if self._expected != INFINITE and self._seen > self._expected:
            raise FailedPreconditionError(
                f"assert_cardinality(): Input dataset was expected to contain {_elements(self._expected)} but "
                f"contained at least {_elements(self._seen)}."
            )
        return x

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "seen": self._seen}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._seen = int(state["seen"])


def element_at(dataset: Dataset, index: int) -> Any:
    """The element at ``index`` of ``dataset`` (``pf.experimental.at``), found by iterating a new run up to it.

    Raises OutOfRangeError for an index outside ``[0, cardinality)`` and FailedPreconditionError for an infinite
    dataset, as tf.data does; unlike tf.data it also works on steps without random access (``filter`` ...).
    """
    i = as_int("at()", "index", index)
    n = dataset._cardinality()
    if n == INFINITE:
        raise FailedPreconditionError(
            f"at(): the dataset has infinite cardinality, which does not support random access (index {i})"
        )
    if i < 0 or (n >= 0 and i >= n):
        bound = "?" if n < 0 else n
        raise OutOfRangeError(f"at(): Index out of range [0, {bound}): {i}")
    with iter(dataset) as it:
        if it.skip(i) == i:
            for x in it:
                return x
    raise OutOfRangeError(f"at(): Index out of range: the dataset ended before index {i}")

"""``zip`` and ``concatenate``: combining datasets side by side or one after another."""

from __future__ import annotations

from typing import Any

from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset
from parafeed.core.iterator import DatasetIterator, build_in, current_scope
from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError
from parafeed.values.structure import (
    TensorSpec,
    flatten,
    is_nested,
    map_structure,
    most_specific_compatible_spec,
    pack_as,
    specs_compatible,
)


class ZipDataset(Dataset):
    """Elements of a (nested) structure of datasets side by side; ends with the shortest dataset."""

    def __init__(self, datasets: Any, name: str | None = None):
        if isinstance(datasets, list):
            datasets = tuple(datasets)
        flat = flatten(datasets)
        bad = [d for d in flat if not isinstance(d, Dataset)]
        if bad or not flat:
            raise ArgumentTypeError(
                "zip(): `datasets` must be a (nested) tuple or dict of Datasets, got "
                f"{type(bad[0]).__name__ if bad else 'no dataset'} in {datasets!r:.100}"
            )
        super().__init__(tuple(flat), name=name)
        self._structure = pack_as(datasets, list(range(len(flat))))  # the structure, with parent numbers as leaves
        self._plain_tuple = type(datasets) is tuple and not any(is_nested(d) for d in datasets)

    def _make_iterator(self) -> DatasetIterator:
        return _ZipIterator([d._iter() for d in self._parents], self._structure, self._plain_tuple)

    def _element_spec(self) -> Any:
        return map_structure(lambda i: self._parents[i].element_spec, self._structure)

    def _sample_element(self) -> Any:
        return map_structure(lambda i: self._parents[i]._sample_element(), self._structure)

    def _cardinality(self) -> int:
        result = INFINITE
        for d in self._parents:
            n = d._cardinality()
            if n == UNKNOWN:
                return UNKNOWN
            if n != INFINITE and (result == INFINITE or n < result):
                result = n
        return result


class _ZipIterator(DatasetIterator):
    def __init__(self, iterators: list[DatasetIterator], structure: Any, plain_tuple: bool):
        super().__init__(*iterators)
        self._structure = structure
        self._plain_tuple = plain_tuple
        self._done = False

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        try:
            items = tuple([next(it) for it in self._parents])
        except StopIteration:
            self._done = True
            raise
        return items if self._plain_tuple else pack_as(self._structure, items)

    def _get_state(self) -> dict:
        return {"parents": [it.get_state() for it in self._parents], "done": self._done}

    def _set_state(self, state: dict) -> None:
        for it, s in zip(self._parents, state["parents"], strict=True):
            it.set_state(s)
        self._done = bool(state["done"])


class ConcatenateDataset(Dataset):
    """The elements of ``first`` followed by those of ``second``; both need the same structure and dtypes."""

    def __init__(self, first: Dataset, second: Dataset, name: str | None = None):
        if not isinstance(second, Dataset):
            raise InvalidArgumentError(f"concatenate(): `dataset` must be a Dataset, got {type(second).__name__}")
        super().__init__((first, second), name=name)
        a, b = first.element_spec, second.element_spec
        if not specs_compatible(_dtypes_only(a), _dtypes_only(b)):
            raise ElementTypeError(
                f"concatenate(): incompatible dataset elements: {a!r} vs. {b!r}. Both datasets need the same "
                "structure and dtypes (shapes may differ); convert one with map() first."
            )

    def _make_iterator(self) -> DatasetIterator:
        return _ConcatenateIterator(self._parents)

    def _element_spec(self) -> Any:
        return most_specific_compatible_spec(self._parents[0].element_spec, self._parents[1].element_spec)

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()

    def _cardinality(self) -> int:
        n1, n2 = self._parents[0]._cardinality(), self._parents[1]._cardinality()
        if INFINITE in (n1, n2):
            return INFINITE
        if UNKNOWN in (n1, n2):
            return UNKNOWN
        return n1 + n2


def _dtypes_only(spec: Any) -> Any:
    return map_structure(lambda s: TensorSpec(None, s.dtype) if isinstance(s, TensorSpec) else s, spec)


class _ConcatenateIterator(DatasetIterator):
    def __init__(self, datasets: tuple[Dataset, ...]):
        super().__init__()
        self._scope = current_scope()
        self._datasets = datasets
        self._pending = list(datasets)
        self._it: DatasetIterator | None = None

    def __next__(self) -> Any:
        while True:
            if self._it is None:
                if not self._pending:
                    raise StopIteration
                self._it = build_in(self._scope, self._pending.pop(0))
            try:
                return next(self._it)
            except StopIteration:
                self._it.close()
                self._it = None

    def _get_state(self) -> dict:
        return {"pending": len(self._pending), "current": None if self._it is None else self._it.get_state()}

    def _set_state(self, state: dict) -> None:
        self.close()
        self._pending = list(self._datasets[len(self._datasets) - int(state["pending"]) :])
        if state["current"] is not None:
            self._it = build_in(self._scope, self._datasets[len(self._datasets) - len(self._pending) - 1])
            self._it.set_state(state["current"])

    def close(self) -> None:
        if self._it is not None:
            self._it.close()
            self._it = None

"""Steps that keep or drop elements: ``filter``, ``take_while`` and ``unique``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.arguments import callable_arg
from parafeed.core.dataset import UNKNOWN, Dataset, PassThroughDataset
from parafeed.core.functions import as_bool, user_error
from parafeed.core.iterator import DatasetIterator
from parafeed.core.positions import tracking
from parafeed.errors import ElementTypeError, StateError
from parafeed.values.structure import STRING, TensorSpec


def _checked_spec(dataset: PassThroughDataset, step: str, predicate: Callable[..., Any]) -> Any:
    """The input's spec, after checking that ``predicate`` returns a boolean scalar for a sample element (tf.data
    checks the traced predicate's output when the step is built)."""
    spec = dataset._parent.element_spec
    try:
        sample = dataset._parent._sample_element()
        keep = predicate(*sample) if type(sample) is tuple else predicate(sample)
    except Exception:  # no sample (an empty input) or a value-dependent failure: checked per element
        return spec
    as_bool(step, predicate, keep)
    return spec


class FilterDataset(PassThroughDataset):
    """The elements for which ``predicate(element)`` is True."""

    def __init__(self, parent: Dataset, predicate: Callable[..., Any], name: str | None = None):
        super().__init__(parent, name=name)
        self._predicate = callable_arg("filter()", "predicate", predicate)

    def _make_iterator(self) -> DatasetIterator:
        consumption = tracking()
        if consumption is None:
            return _FilterIterator(self._parent._iter(), self._predicate)
        consumption.iterators[id(self)] = it = _TrackedFilterIterator(self._parent._iter(), self._predicate)
        return it

    def _element_spec(self) -> Any:
        return _checked_spec(self, "filter()", self._predicate)

    def _cardinality(self) -> int:
        return UNKNOWN


class _FilterIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, predicate: Callable[..., Any]):
        super().__init__(parent)
        self._parent = parent
        self._predicate = predicate
        self._index = 0  # input elements pulled
        self._kept = 0  # elements returned

    def __next__(self) -> Any:
        predicate = self._predicate
        for x in self._parent:
            try:
                keep = predicate(*x) if type(x) is tuple else predicate(x)
            except Exception as err:
                raise user_error(err, "filter()", predicate, self._index)
            self._index += 1
            if keep is True or keep is np.True_:
                self._kept += 1
                return x
            if keep is not False and keep is not np.False_ and as_bool("filter()", predicate, keep):
                self._kept += 1
                return x
        raise StopIteration

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "index": self._index, "kept": self._kept}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._index, self._kept = int(state["index"]), int(state["kept"])


class _TrackedFilterIterator(_FilterIterator):
    """A filter restored for an elastic resume: it records the input index of every element it returns, so that an
    index after it maps to one before it (:meth:`input_end`)."""

    def __init__(self, parent: DatasetIterator, predicate: Callable[..., Any]):
        super().__init__(parent, predicate)
        self._inputs: dict[int, int] = {}  # output index -> input index
        self._anchor = (0, 0)  # (kept, index) where the last restore left it

    def __next__(self) -> Any:
        x = super().__next__()
        self._inputs[self._kept - 1] = self._index - 1
        return x

    def _set_state(self, state: dict) -> None:
        super()._set_state(state)
        self._anchor = (self._kept, self._index)

    def _step_name(self) -> str:
        return "Filter"

    def input_index(self, output: int) -> int:
        """The input index of output element ``output`` (returned since the restore)."""
        return self._inputs[output]

    def input_end(self, outputs: int) -> int | None:
        """How many input elements the first ``outputs`` output elements took (the filtered ones after the last
        counted either way); None when the filter never returned that many (its input ran out first)."""
        if outputs == self._anchor[0]:
            return self._anchor[1]
        if outputs - 1 in self._inputs:
            return self._inputs[outputs - 1] + 1
        if outputs > self._kept:
            return None
        raise StateError(f"filter(): no record of the input index of element {outputs - 1} (internal error)")


class TakeWhileDataset(PassThroughDataset):
    """Elements up to (not including) the first for which ``predicate`` is False."""

    def __init__(self, parent: Dataset, predicate: Callable[..., Any], name: str | None = None):
        super().__init__(parent, name=name)
        self._predicate = callable_arg("take_while()", "predicate", predicate)

    def _make_iterator(self) -> DatasetIterator:
        return _TakeWhileIterator(self._parent._iter(), self._predicate)

    def _element_spec(self) -> Any:
        return _checked_spec(self, "take_while()", self._predicate)

    def _cardinality(self) -> int:
        return UNKNOWN


class _TakeWhileIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, predicate: Callable[..., Any]):
        super().__init__(parent)
        self._parent = parent
        self._predicate = predicate
        self._index = 0
        self._done = False

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        x = next(self._parent)
        try:
            keep = self._predicate(*x) if type(x) is tuple else self._predicate(x)
        except Exception as err:
            raise user_error(err, "take_while()", self._predicate, self._index)
        self._index += 1
        if as_bool("take_while()", self._predicate, keep):
            return x
        self._done = True
        raise StopIteration

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "index": self._index, "done": self._done}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._index, self._done = int(state["index"]), bool(state["done"])


class UniqueDataset(PassThroughDataset):
    """Each distinct element once, in order of first appearance (int32, int64 or string elements of any shape)."""

    def __init__(self, parent: Dataset, name: str | None = None):
        super().__init__(parent, name=name)
        spec = parent.element_spec
        ok = isinstance(spec, TensorSpec) and spec.dtype in (np.int32, np.int64, STRING)
        if not ok:
            raise ElementTypeError(
                f"unique(): only datasets of int32, int64 or string elements (one component) are supported, got "
                f"{spec!r}"
            )

    def _make_iterator(self) -> DatasetIterator:
        return _UniqueIterator(self._parent._iter())

    def _cardinality(self) -> int:
        return UNKNOWN


def _key(x: Any) -> Any:
    """A hashable, JSON-friendly key of an element: the value of a scalar, ``[shape, values]`` of an array (string
    values as hex)."""
    if type(x) is bytes:
        return x.hex()
    if isinstance(x, np.ndarray):
        values = [v.hex() for v in x.reshape(-1)] if x.dtype == object else x.reshape(-1).tolist()
        return (tuple(x.shape), tuple(values))
    return int(x)


class _UniqueIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator):
        super().__init__(parent)
        self._parent = parent
        self._seen: set = set()

    def __next__(self) -> Any:
        seen = self._seen
        for x in self._parent:
            key = _key(x)
            if key not in seen:
                seen.add(key)
                return x
        raise StopIteration

    def _get_state(self) -> dict:
        """Holds the values seen so far: the one state that grows with the data."""
        seen = [list(k) if type(k) is tuple else k for k in self._seen]
        return {"parent": self._parent.get_state(), "seen": seen}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._seen = {(tuple(k[0]), tuple(k[1])) if isinstance(k, list) else k for k in state["seen"]}

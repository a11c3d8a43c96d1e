"""``window``: sliding windows of elements, each window a (structure of) in-memory dataset(s)."""

from __future__ import annotations

from collections import deque
from typing import Any

from parafeed.core.arguments import positive_int
from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset
from parafeed.core.iterator import DatasetIterator
from parafeed.core.positions import Snapshots
from parafeed.errors import StateError
from parafeed.sources.memory import ElementsDataset
from parafeed.values.structure import DatasetSpec, flatten, map_structure, pack_as, spec_of


class WindowDataset(Dataset):
    """Windows of ``size`` elements taken every ``stride`` input elements, a new window every ``shift`` elements.

    Each window has the input's structure with a dataset at every leaf, like tf.data: for ``(x, y)`` elements a
    window is ``(dataset_of_x, dataset_of_y)``; use ``flat_map`` with ``batch`` or ``zip`` to turn it into tensors.
    """

    def __init__(
        self,
        parent: Dataset,
        size: int,
        shift: int | None = None,
        stride: int = 1,
        drop_remainder: bool = False,
        name: str | None = None,
    ):
        super().__init__((parent,), name=name)
        self._size = positive_int("window()", "size", size)
        self._shift = self._size if shift is None else positive_int("window()", "shift", shift)
        self._stride = positive_int("window()", "stride", stride)
        self._drop_remainder = bool(drop_remainder)

    def _make_iterator(self) -> DatasetIterator:
        return _WindowIterator(self._parents[0]._iter(), self._size, self._shift, self._stride, self._drop_remainder)

    def _element_spec(self) -> Any:
        return map_structure(DatasetSpec, self._parents[0].element_spec)

    def _sample_element(self) -> Any:
        return _window([self._parents[0]._sample_element()])

    def _cardinality(self) -> int:
        n = self._parents[0]._cardinality()
        if n in (INFINITE, UNKNOWN):
            return n
        if self._drop_remainder:
            rest = n - ((self._size - 1) * self._stride + 1)
            return 0 if rest < 0 else rest // self._shift + 1
        return -(-n // self._shift)


def _window(elements: list) -> Any:
    """The window element for a list of input elements: one dataset per component."""
    first = elements[0]
    flats = [flatten(e) for e in elements]
    specs = flatten(spec_of(first))
    return pack_as(first, [ElementsDataset([f[j] for f in flats], spec) for j, spec in enumerate(specs)])


class _WindowIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, size: int, shift: int, stride: int, drop_remainder: bool):
        super().__init__(parent)
        self._parent = parent
        self._size, self._shift, self._stride = size, shift, stride
        self._drop_remainder = drop_remainder
        self._buffer: deque = deque()
        self._input_done = False
        self._pulled = 0
        self._snapshots = Snapshots(parent, (size - 1) * stride + 1)

    def _pull(self) -> Any:
        """The next input element, or a :class:`_Failed` holding its error (raised only if a window uses it)."""
        try:
            return next(self._parent)
        except StopIteration:
            raise
        except Exception as error:  # kept, and raised only if a window uses the element
            return _Failed(error)

    def __next__(self) -> Any:
        buf = self._buffer
        target = (self._size - 1) * self._stride + 1
        while not self._input_done and len(buf) < target:
            try:
                buf.append(self._pull())
            except StopIteration:
                self._input_done = True
                break
            self._pulled += 1
            self._snapshots.note(self._pulled, lambda: self._pulled - len(buf))
        if not buf or (self._drop_remainder and len(buf) < target):
            raise StopIteration
        elements = list(buf)[:: self._stride][: self._size]
        if self._shift >= len(buf):
            for _ in range(self._shift - len(buf)):  # elements between windows: their errors are dropped
                if self._input_done:
                    break
                try:
                    self._pull()
                except StopIteration:
                    self._input_done = True
                    break
                self._pulled += 1
            buf.clear()
        else:
            for _ in range(self._shift):
                buf.popleft()
        for e in elements:  # as tf.data: the first error among the window's elements, not among those skipped
            if type(e) is _Failed:
                raise e.error
        return _window(elements)

    def _get_state(self) -> dict:
        held = list(range(self._pulled - len(self._buffer), self._pulled))
        return {"input": self._snapshots.state(held, self._pulled), "held": len(held), "input_done": self._input_done}

    def _set_state(self, state: dict) -> None:
        pulled = int(state["input"]["pulled"])
        low = pulled - int(state["held"])
        self._snapshots.restore({**state["input"], "pulled": low}, [])  # the input at the oldest element held
        self._buffer = deque()
        for _ in range(low, pulled):  # re-read, keeping errors as the first pass did
            try:
                self._buffer.append(self._pull())
            except StopIteration:
                raise StateError("set_state(): window(): the input ended before a buffered element") from None
        self._pulled, self._input_done = pulled, bool(state["input_done"])


class _Failed:
    """An input element whose computation raised: a window raises the error only if it includes the element."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error

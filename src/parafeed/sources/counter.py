"""``Dataset.counter``: ``start, start + step, ...`` forever, in one dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core.dataset import INFINITE, Dataset
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import ElementTypeError
from parafeed.values.structure import STRING, TensorSpec, as_dtype, dtype_name


def _cast(step: str, name: str, value: Any, dtype: np.dtype) -> Any:
    """``value`` as a scalar of ``dtype``, refused where tf.constant would refuse it (a float for an int dtype)."""
    if isinstance(value, (bool, np.bool_)) and dtype.kind != "b":
        raise ElementTypeError(f"{step}: Cannot convert {value!r} to a {dtype_name(dtype)} `{name}`")
    arr = np.asarray(value)
    if arr.shape != () or arr.dtype.kind not in "biuf" or (arr.dtype.kind == "f" and dtype.kind in "biu"):
        raise ElementTypeError(
            f"{step}: Cannot convert `{name}`={value!r} to {dtype_name(dtype)}; give a number of that dtype"
        )
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= int(arr) <= info.max:
            raise ElementTypeError(f"{step}: `{name}`={value!r} is out of range for {dtype_name(dtype)}")
    return dtype.type(arr)


class CounterDataset(Dataset):
    """``start, start + step, ...`` as scalars of ``dtype``, forever (integers wrap around as in tf.data).

    Example:
        >>> [int(x) for x in pf.Dataset.counter(10, 5).take(3)]
        [10, 15, 20]
    """

    kind = SOURCE

    def __init__(self, start: Any = 0, step: Any = 1, dtype: Any = np.int64, name: str | None = None):
        super().__init__(name=name)
        self._dtype = as_dtype(dtype)
        if self._dtype == STRING or self._dtype.kind not in "iuf":
            raise ElementTypeError(f"counter(): `dtype` must be an integer or float dtype, got {dtype!r}")
        self._start = _cast("counter()", "start", start, self._dtype)
        self._step = _cast("counter()", "step", step, self._dtype)

    def _make_iterator(self) -> DatasetIterator:
        return _CounterIterator(self._start, self._step, self._dtype)

    def _element_spec(self) -> Any:
        return TensorSpec((), self._dtype)

    def _sample_element(self) -> Any:
        return self._start

    def _cardinality(self) -> int:
        return INFINITE


class _CounterIterator(DatasetIterator):
    """Integers are computed from the index (cheap skips and states); floats add ``step`` one element at a time in
    their dtype, as tf.data's running sum does (so rounding accumulates the same way)."""

    def __init__(self, start: Any, step: Any, dtype: np.dtype):
        super().__init__()
        self._dtype = dtype
        self._ints = dtype.kind in "iu"
        self._start, self._step = start, step
        self._index = 0
        self._value = start

    def __next__(self) -> Any:
        if self._ints:
            bits = self._dtype.itemsize * 8
            wrapped = (int(self._start) + self._index * int(self._step)) % (1 << bits)
            if self._dtype.kind == "i" and wrapped >= 1 << (bits - 1):
                wrapped -= 1 << bits
            self._index += 1
            return self._dtype.type(wrapped)
        value = self._value
        self._value = self._dtype.type(value + self._step)
        self._index += 1
        return value

    def skip(self, n: int) -> int:
        if not self._ints:
            return super().skip(n)
        self._index += n
        return n

    def _get_state(self) -> dict:
        return {"index": self._index, "value": None if self._ints else float(self._value)}

    def _set_state(self, state: dict) -> None:
        self._index = int(state["index"])
        if not self._ints:
            self._value = self._dtype.type(state["value"])

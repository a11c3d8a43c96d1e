"""Arguments of the tensor operations: values to arrays with TensorFlow's conversion rules, dtypes, axes.

TensorFlow converts a Python value with ``tf.convert_to_tensor`` (ints int32, floats float32, strings bytes), keeps a
tensor's dtype, and refuses to mix dtypes in one operation (``tf.add(int32, int64)`` fails); a Python number next to
a tensor takes the tensor's dtype. The operations of this package follow these rules through the helpers here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.values.elements import to_leaf
from parafeed.values.structure import STRING, as_dtype, dtype_name
from parafeed.values.tensor import Tensor, as_tensor

_PYTHON_SCALARS = (bool, int, float, complex, str, bytes)


def is_python(value: Any) -> bool:
    """Whether ``value`` is a Python number, string or (nested) list of them: converted with the dtype of the tensor
    it meets, as TensorFlow converts it."""
    if isinstance(value, (list, tuple)):
        return all(is_python(v) for v in value)
    return isinstance(value, _PYTHON_SCALARS) and not isinstance(value, np.generic)


def array(value: Any, op: str, dtype: Any = None) -> np.ndarray:
    """``value`` as an array (``tf.convert_to_tensor``'s dtypes); with ``dtype``, a Python value is made that dtype
    (a float that is not a whole number refused for an integer dtype) and an array must have it already."""
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, np.generic):
        arr = np.asarray(value)
    elif is_python(value):
        return _python_array(value, op, None if dtype is None else as_dtype(dtype))
    elif isinstance(value, (list, tuple)):  # tensors and numbers mixed, as tf.stack would take them
        arr = np.asarray([array(v, op) for v in value])
    elif hasattr(value, "numpy"):  # a TensorFlow or PyTorch tensor
        arr = np.asarray(value.numpy())
    else:
        arr = np.asarray(to_leaf(value, op))
    if arr.dtype.kind in "SU":
        arr = arr.astype(object)
        arr.reshape(-1)[:] = [s.encode() if isinstance(s, str) else bytes(s) for s in arr.reshape(-1).tolist()]
    if dtype is not None and arr.dtype != as_dtype(dtype):
        target = as_dtype(dtype)
        if not isinstance(value, Tensor) and arr.dtype.kind in "biuf" and target.kind in "biuf":
            with np.errstate(all="ignore"):
                converted = arr.astype(target)  # NumPy values convert where no value changes, as in TensorFlow
            if np.array_equal(converted, arr, equal_nan=arr.dtype.kind == "f" and target.kind == "f"):
                return converted
        raise InvalidArgumentError(
            f"{op}: Tensor conversion requested dtype {dtype_name(as_dtype(dtype))} for a Tensor with dtype "
            f"{dtype_name(arr.dtype)}; cast it first (pf.cast)"
        )
    return arr


def _python_array(value: Any, op: str, dtype: np.dtype | None) -> np.ndarray:
    leaf = to_leaf(list(value) if isinstance(value, tuple) else value, op)
    arr = np.asarray(leaf, dtype=object if isinstance(leaf, bytes) else None)
    if dtype is None or arr.dtype == dtype:
        return arr
    if dtype == STRING or arr.dtype == STRING or (dtype.kind == "b") != (arr.dtype.kind == "b"):
        raise ArgumentTypeError(f"{op}: cannot convert {value!r:.60} to a tensor of dtype {dtype_name(dtype)}")
    converted = np.asarray(np.asarray(value, dtype=np.float64 if arr.dtype.kind == "f" else None)).astype(dtype)
    if dtype.kind in "iub" and arr.dtype.kind in "fc" and not np.array_equal(converted, np.asarray(value)):
        raise ArgumentTypeError(f"{op}: cannot convert {value!r:.60} to a tensor of dtype {dtype.name}")
    if dtype.kind in "iu" and arr.dtype.kind in "iu" and not np.array_equal(converted, np.asarray(value)):
        raise ArgumentTypeError(f"{op}: {value!r:.60} is out of range for a tensor of dtype {dtype.name}")
    return converted


def pair(x: Any, y: Any, op: str) -> tuple[np.ndarray, np.ndarray]:
    """The two operands of a binary operation, one dtype for both: a Python value takes the other's dtype; two tensors
    of different dtypes are refused (TensorFlow's InvalidArgumentError)."""
    if is_python(x) and not is_python(y):
        b = array(y, op)
        return array(x, op, b.dtype), b
    a = array(x, op)
    b = array(y, op, a.dtype if is_python(y) else None)
    if a.dtype != b.dtype:
        raise InvalidArgumentError(
            f"{op}: the operands have different dtypes, {dtype_name(a.dtype)} and {dtype_name(b.dtype)}; TensorFlow "
            "does not mix dtypes in one operation: cast one of them (pf.cast)"
        )
    return a, b


def axis_arg(axis: Any, rank: int, op: str) -> int:
    """One axis in ``[-rank, rank)`` as a non-negative int."""
    a = int(np.asarray(axis).reshape(()) if np.ndim(axis) else axis)
    if not -rank <= a < rank:
        raise InvalidArgumentError(f"{op}: axis {a} is out of range for a tensor of rank {rank} ([-{rank}, {rank}))")
    return a % rank


def axes_arg(axis: Any, rank: int, op: str) -> tuple[int, ...] | None:
    """None (every axis) or the given axes (an int, a list, a 1-D array) as non-negative ints."""
    if axis is None:
        return None
    values = np.asarray(axis).reshape(-1).tolist()
    return tuple(axis_arg(a, rank, op) for a in values)


def ints(value: Any, op: str, what: str) -> list[int]:
    """A list (or 1-D tensor) of ints, such as a shape or a permutation."""
    arr = np.asarray(value.numpy() if hasattr(value, "numpy") and not isinstance(value, np.ndarray) else value)
    if arr.dtype.kind not in "iu" and arr.size:
        raise ArgumentTypeError(f"{op}: `{what}` must hold integers, got {value!r:.60}")
    if arr.ndim > 1:
        raise InvalidArgumentError(f"{op}: `{what}` must be a scalar or a list, got shape {arr.shape}")
    return [int(v) for v in arr.reshape(-1)]


def out(value: Any) -> Tensor:
    """An operation's result, as a :class:`~parafeed.values.tensor.Tensor`."""
    return as_tensor(value)

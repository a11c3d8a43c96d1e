"""What the ``pf.strings`` modules share: string inputs as object arrays of ``bytes``, results shaped as TensorFlow
gives them, and element-wise loops that keep RaggedTensor row partitions.

A string tensor is an object array of ``bytes`` (``bytes`` itself when 0-d), as :mod:`parafeed.values.elements`
makes them; ``str`` inputs are encoded as UTF-8.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError
from parafeed.values.elements import short_repr, strings_to_object
from parafeed.values.ragged_tensor import RaggedTensor

STRING = np.dtype(object)
WHITESPACE = b" \t\n\v\f\r"
"""ASCII whitespace, as TensorFlow's kernels (absl's ``ascii_isspace``) and Python's ``bytes.split()`` define it."""


def as_strings(value: Any, op: str, what: str = "input", ragged: bool = True, empty_list: bool = True) -> Any:
    """``value`` as an object array of ``bytes`` of any rank, or (when ``ragged``) a RaggedTensor of them.

    Numbers raise :class:`ArgumentTypeError`, as ``tf.convert_to_tensor(..., dtype=tf.string)`` raises TypeError.
    Without ``empty_list``, an empty (nested) list raises InvalidArgumentError: the ops whose TensorFlow wrapper
    converts the input without asking for strings get a float32 tensor there, and fail.
    """
    if isinstance(value, RaggedTensor):
        if not ragged:
            raise ArgumentTypeError(f"{op}: `{what}` cannot be a RaggedTensor here; give a dense string array")
        if value.dtype != STRING:
            raise ArgumentTypeError(
                f"{op}: `{what}` must hold strings, got a RaggedTensor of {value.dtype}; convert it with "
                "strings.as_string() first"
            )
        return value
    if isinstance(value, bytes):
        return np.array(value, dtype=STRING)
    if isinstance(value, str):
        return np.array(value.encode(), dtype=STRING)
    if isinstance(value, (list, tuple)):
        if _is_empty(value):
            if not empty_list:
                raise InvalidArgumentError(
                    f"{op}: `{what}` is an empty list, which has no dtype (TensorFlow makes it float32); give "
                    "np.array([], dtype=object) for no strings"
                )
            return np.empty(_empty_shape(value), STRING)
        try:
            arr = np.array(value, dtype=object)
        except ValueError:
            arr = None
        if arr is None or any(not isinstance(x, (bytes, str, np.bytes_, np.str_)) for x in arr.reshape(-1)):
            if arr is None or any(isinstance(x, (list, tuple, np.ndarray)) for x in arr.reshape(-1)):
                raise InvalidArgumentError(
                    f"{op}: `{what}` is a ragged (non-rectangular) list {short_repr(value)}; build a RaggedTensor "
                    "with pf.ragged.constant() for rows of different lengths"
                )
            raise ArgumentTypeError(f"{op}: `{what}` must hold strings, got {short_repr(value)}")
        return strings_to_object(arr, f"{op} {what}")
    arr = np.asarray(value)
    if arr.dtype.kind in "USO":
        try:
            return strings_to_object(arr, f"{op} {what}")
        except ElementTypeError:
            pass
    raise ArgumentTypeError(
        f"{op}: `{what}` must be strings (bytes, str, or an array / list of them), got {type(value).__name__} "
        f"{short_repr(value)}"
    )


def _is_empty(value: Any) -> bool:
    return len(value) == 0 or all(isinstance(v, (list, tuple)) and _is_empty(v) for v in value)


def _empty_shape(value: Any) -> tuple[int, ...]:
    if len(value) == 0:
        return (0,)
    return (len(value), *_empty_shape(value[0]))


def as_ints(value: Any, op: str, what: str) -> np.ndarray:
    """An integer argument as an int32 or int64 array (Python ints: int32, int64 when they do not fit)."""
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{op}: `{what}` must be integers, got {value!r}")
    if isinstance(value, int):
        return np.asarray(value, np.int32 if -(2**31) <= value < 2**31 else np.int64)
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":
            return arr.astype(np.int32)
        raise InvalidArgumentError(
            f"{op}: `{what}` must be int32 or int64, got dtype {arr.dtype}: {short_repr(value)}; cast it first"
        )
    if arr.dtype in (np.int32, np.int64):
        return arr
    if isinstance(value, (list, tuple)):  # Python ints: int32 where they fit
        fits = arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31)
        return arr.astype(np.int32 if fits else np.int64)
    raise InvalidArgumentError(f"{op}: `{what}` must be int32 or int64, got dtype {arr.dtype}; cast it first")


def scalar_string(value: Any, op: str, what: str) -> bytes:
    """A string argument that must be a scalar (a separator, a pattern)."""
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    arr = as_strings(value, op, what, ragged=False)
    if arr.ndim != 0:
        raise InvalidArgumentError(f"{op}: `{what}` must be a scalar string, got shape {arr.shape}")
    out: bytes = arr[()]
    return out


def out(arr: np.ndarray) -> Any:
    """A result as TensorFlow's ``.numpy()`` gives it: 0-d arrays as ``bytes`` or NumPy scalars."""
    return arr[()] if arr.ndim == 0 else arr


def map_bytes(arr: np.ndarray, fn: Callable[[Any], Any], dtype: Any = STRING) -> np.ndarray:
    """``fn`` applied to every item (string) of an object array, into an array of ``dtype`` of the same shape."""
    items = [fn(s) for s in arr.reshape(-1).tolist()]
    if dtype == STRING:
        result = np.empty(len(items), STRING)
        result[:] = items
    else:
        result = np.array(items, dtype=dtype).reshape(len(items))
    return result.reshape(arr.shape)


def map_strings(value: Any, op: str, fn: Callable[[bytes], Any], dtype: Any = STRING) -> Any:
    """An element-wise string op: ``fn`` on every string of ``value`` (dense or ragged), shapes kept."""
    strings = as_strings(value, op)
    if isinstance(strings, RaggedTensor):
        return strings.with_flat_values(map_bytes(strings.flat_values, fn, dtype))
    return out(map_bytes(strings, fn, dtype))


def check_choice(value: Any, allowed: tuple[str, ...], op: str, what: str) -> str:
    if value not in allowed:
        raise InvalidArgumentError(f"{op}: `{what}` must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


def uniform_splits(shape: tuple[int, ...]) -> list[np.ndarray]:
    """The row splits of a dense array of ``shape`` seen as a RaggedTensor of ragged rank ``len(shape) - 1``."""
    return [np.arange(math.prod(shape[: k + 1]) + 1, dtype=np.int64) * shape[k + 1] for k in range(len(shape) - 1)]


def nest_rows(template: Any, rows: list[list[Any]], dtype: Any = STRING) -> Any:
    """A result with one row per string of ``template`` (rank + 1): ``rows[i]`` for its i-th string, in row-major
    order. A 0-d template gives the 1-D row itself; others a RaggedTensor (int64 row splits), as tf.strings does."""
    lengths = np.fromiter((len(r) for r in rows), np.int64, len(rows))
    splits = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=splits[1:])
    flat = np.empty(int(splits[-1]), dtype)
    if len(flat):
        flat[:] = [x for r in rows for x in r]
    if isinstance(template, RaggedTensor):
        return template.with_flat_values(nest_rows(template.flat_values, rows, dtype))
    if template.ndim == 0:
        return flat
    result = RaggedTensor(flat, splits)
    for outer in reversed(uniform_splits(template.shape)):
        result = RaggedTensor(result, outer)
    return result


def flat_strings(strings: Any) -> np.ndarray:
    """Every string of a dense or ragged input, in row-major order (a 1-D object array)."""
    if isinstance(strings, RaggedTensor):
        strings = strings.flat_values
    flat: np.ndarray = strings.reshape(-1)
    return flat

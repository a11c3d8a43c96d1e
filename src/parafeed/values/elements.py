"""Turning Python values into elements, with the dtypes tf.data would give.

tf.data converts what a source or a user function returns with ``tf.convert_to_tensor``; parafeed does the same on
NumPy so results match element for element:

* ``bool`` -> ``np.bool_``; ``int`` -> ``np.int32`` (``np.int64`` when it does not fit); ``float`` -> ``np.float32``;
* ``str`` and ``bytes`` -> ``bytes`` (UTF-8); NumPy string arrays -> object arrays of ``bytes``;
* lists -> arrays (Python ints -> int32, Python floats -> float32, as ``tf.constant``);
* NumPy scalars and numeric arrays keep their dtype; 0-d arrays become NumPy scalars, as ``tensor.numpy()`` gives;
* tuples, namedtuples and dicts are structures and are converted leaf by leaf.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError
from parafeed.values.structure import STRING

_NUMERIC_KINDS = frozenset("biufc")
_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)

SCALAR_TYPES: frozenset[type] = frozenset(
    {
        np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
        np.float16, np.float32, np.float64, np.complex64, np.complex128, bytes,
    }
)  # fmt: skip
"""Leaf types that are already elements as they are."""


def to_element(value: Any, what: str = "element") -> Any:
    """Convert a (nested) Python value to an element; ``what`` names the value in errors."""
    t = type(value)
    if t in SCALAR_TYPES:
        return value
    if t is np.ndarray:
        return _array_leaf(value, what)
    if isinstance(value, tuple):
        items = [to_element(v, what) for v in value]
        return type(value)(*items) if hasattr(t, "_fields") else tuple(items)
    if isinstance(value, dict):
        return type(value)((k, to_element(v, what)) for k, v in value.items())
    return to_leaf(value, what)


def to_leaf(value: Any, what: str = "element") -> Any:
    """Convert one non-nested value to a leaf."""
    t = type(value)
    if t in SCALAR_TYPES:
        return value
    if t is np.ndarray:
        return _array_leaf(value, what)
    if isinstance(value, np.ndarray):  # a subclass (pf.Tensor, what pf ops return): its data as a plain array
        return _array_leaf(np.asarray(value), what)
    if t is bool:
        return np.bool_(value)
    if t is int:
        return _python_int(value, what)
    if t is float:
        return np.float32(value)
    if t is str or t is np.str_:
        return value.encode()
    if t is np.bytes_:
        return bytes(value)
    if t is complex:
        return np.complex128(value)
    if isinstance(value, list):
        return _list_leaf(value, what)
    if isinstance(value, np.generic):
        return _array_leaf(np.asarray(value), what)
    if hasattr(value, "element_spec") or hasattr(value, "_leaf_spec"):  # datasets, sparse tensors
        return value
    if value is None:
        raise ElementTypeError(f"{what}: None is not a valid value; return an array, a number or bytes instead")
    if hasattr(value, "numpy"):  # a tf.Tensor or torch.Tensor handed over directly
        return to_leaf(value.numpy(), what)
    if hasattr(value, "__array__"):
        return _array_leaf(np.asarray(value), what)
    raise ElementTypeError(
        f"{what}: cannot convert {type(value).__name__} {short_repr(value)} to an array; "
        "elements are NumPy arrays or scalars, numbers, bytes/str, or tuples/dicts of those"
    )


def _python_int(value: int, what: str) -> np.integer:
    scalar: np.integer  # (annotated: numpy's stubs give Any on Python 3.10)
    if _INT32.min <= value <= _INT32.max:
        scalar = np.int32(value)
        return scalar
    if _INT64.min <= value <= _INT64.max:
        scalar = np.int64(value)
        return scalar
    raise ElementTypeError(f"{what}: Python int {value} does not fit in int64")


def _array_leaf(arr: np.ndarray, what: str) -> Any:
    kind = arr.dtype.kind
    if kind in _NUMERIC_KINDS:
        return arr[()] if arr.ndim == 0 else arr
    if kind in "US" or kind == "O":
        out = strings_to_object(arr, what)
        return out[()] if out.ndim == 0 else out
    raise ElementTypeError(f"{what}: arrays of dtype {arr.dtype} are not supported; use a numeric or string dtype")


def strings_to_object(arr: np.ndarray, what: str = "element") -> np.ndarray:
    """An object array of ``bytes`` from a NumPy string array (``U``, ``S`` or object of str/bytes)."""
    out = np.empty(arr.shape, dtype=STRING)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    for i, s in enumerate(flat_in.tolist()):
        if isinstance(s, str):
            flat_out[i] = s.encode()
        elif isinstance(s, bytes):
            flat_out[i] = s
        else:
            raise ElementTypeError(
                f"{what}: an object array may only hold bytes or str (a string tensor), "
                f"found {type(s).__name__} {short_repr(s)}"
            )
    return out


def _list_leaf(value: list[Any], what: str) -> Any:
    if not value:
        return np.zeros((0,), np.float32)  # tf.constant([]) is float32
    try:
        arr = np.array(value)
    except ValueError as err:
        raise ElementTypeError(
            f"{what}: cannot convert a ragged or mixed list to an array ({err}); give every row the same length, "
            "or yield rows separately and use padded_batch"
        ) from None
    kind = arr.dtype.kind
    if kind in "iu":
        typed = _numpy_ints(value)
        if typed:  # NumPy integers in the list keep their dtype, as tensors in tf.constant do
            return arr.astype(np.result_type(*typed))
        if arr.size == 0 or (arr.min() >= _INT32.min and arr.max() <= _INT32.max):
            return arr.astype(np.int32)
        return arr.astype(np.int64)
    if arr.dtype == np.float64 and not _holds_numpy_float64(value):
        return arr.astype(np.float32)
    if kind in "USO" and any(not isinstance(x, (str, bytes, np.str_, np.bytes_)) for x in _list_leaves(value)):
        raise ElementTypeError(f"{what}: cannot convert a list with mixed types to an array: {short_repr(value)}")
    if kind in "US":  # NumPy's fixed-width strings drop trailing NUL bytes: keep the values as given
        exact = np.empty(arr.shape, dtype=object)
        exact.reshape(-1)[:] = [bytes(x) if isinstance(x, bytes) else str(x) for x in _list_leaves(value)]
        arr = exact
    return _array_leaf(arr, what)


def _list_leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _list_leaves(v)]
    if isinstance(value, np.ndarray):
        leaves: list[Any] = value.reshape(-1).tolist()
        return leaves
    return [value]


def _numpy_ints(value: Any) -> list[np.dtype]:
    """The dtypes of the NumPy integers (scalars or arrays) in a nested list."""
    if isinstance(value, (list, tuple)):
        return [d for v in value for d in _numpy_ints(v)]
    if isinstance(value, (np.integer, np.ndarray)) and np.asarray(value).dtype.kind in "iu":
        return [np.asarray(value).dtype]
    return []


def _holds_numpy_float64(value: Any) -> bool:
    if isinstance(value, list):
        return any(_holds_numpy_float64(v) for v in value)
    return isinstance(value, (np.float64, np.ndarray)) and np.asarray(value).dtype == np.float64


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters: how error messages quote a value."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

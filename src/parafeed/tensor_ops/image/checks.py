"""What every ``pf.image`` op checks first, as TensorFlow checks it: images of rank 3 (``height, width, channels``)
or 4 (a batch), their dtypes, scalar and size arguments; and OpenCV, imported when first needed.

Errors name the op (``"resize(): ..."``), say what was wrong and how to fix it. TensorFlow's ``ValueError`` (a
static problem: a bad rank, a bad method name) and ``tf.errors.InvalidArgumentError`` (a bad value) both become
:class:`~parafeed.errors.InvalidArgumentError` (a ``ValueError``); a dtype the op has no kernel for is an
:class:`~parafeed.errors.ElementTypeError` (a ``TypeError``, as a tf.data function gets when it is traced).
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError

# the dtypes TensorFlow's image kernels are registered for (bfloat16 has no NumPy dtype)
INTEGERS = ("uint8", "int8", "uint16", "int16", "int32", "int64")
FLOATS = ("float16", "float32", "float64")
REALS = INTEGERS + FLOATS


def cv2() -> Any:
    """OpenCV, limited to one thread per call: parafeed parallelises across elements, and OpenCV's own threads
    would spin (sched_yield) against parafeed's workers for the same cores."""
    import cv2 as module

    if module.getNumThreads() != 1:
        module.setNumThreads(1)
    return module


def array(op: str, value: Any, name: str = "image") -> np.ndarray:
    """``value`` as a plain ndarray (ndarray subclasses, NumPy scalars and Python values included). Python numbers
    and lists convert as TensorFlow converts them: floats to float32, integers to int32 (int64 when they need it)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    try:
        x = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise InvalidArgumentError(f"{op}: `{name}` must be an array of pixels, got {type(value).__name__}: {err}")
    if x.dtype == np.float64:
        return x.astype(np.float32)
    if x.dtype == np.int64 and (x.size == 0 or (x.min() >= -(2**31) and x.max() < 2**31)):
        return x.astype(np.int32)
    return x


def image(
    op: str, value: Any, name: str = "image", dtypes: tuple[str, ...] = REALS, nonempty: bool = True
) -> np.ndarray:
    """``value`` as a 3-D image or 4-D batch of images of one of ``dtypes``; with ``nonempty``, height, width and
    channels must be > 0 (TensorFlow checks them; a batch may be empty)."""
    x = array(op, value, name)
    if x.ndim not in (3, 4):
        hint = "; add a channels axis (image[..., None]) to a grayscale image" if x.ndim == 2 else ""
        raise InvalidArgumentError(
            f"{op}: `{name}` must be 3-D (height, width, channels) or 4-D (batch, height, width, channels), "
            f"got shape {x.shape}{hint}"
        )
    if nonempty and 0 in x.shape[-3:]:
        raise InvalidArgumentError(
            f"{op}: `{name}` of shape {x.shape} is empty; height, width and channels must be > 0"
        )
    return dtype(op, x, dtypes, name)


@functools.lru_cache(maxsize=64)
def _native_dtypes(dtypes: tuple[str, ...]) -> frozenset[np.dtype]:
    return frozenset(np.dtype(d) for d in dtypes)


def dtype(op: str, x: np.ndarray, dtypes: tuple[str, ...], name: str = "image") -> np.ndarray:
    """``x`` if its dtype is one of ``dtypes``, else an ElementTypeError naming the dtypes the op takes."""
    if x.dtype in _native_dtypes(dtypes):  # (a set lookup: ``dtype.name`` is Python code in NumPy)
        return x
    if x.dtype.name not in dtypes:  # (a byte order other than the native one)
        fix = (
            "; cast it with astype()" if x.dtype.kind == "b"
            else "; convert it with pf.image.convert_image_dtype()" if x.dtype.kind in "iuf" else ""
        )  # fmt: skip
        supported = ", ".join(dtypes)
        raise ElementTypeError(f"{op}: `{name}` of dtype {x.dtype} is not supported; use one of {supported}{fix}")
    return x


def batch(x: np.ndarray) -> tuple[np.ndarray, bool]:
    """A 4-D view of ``x`` and whether it was a single 3-D image (give the result back with :func:`unbatch`)."""
    return (x[None], True) if x.ndim == 3 else (x, False)


def unbatch(x: np.ndarray, single: bool) -> np.ndarray:
    return x[0] if single else x


def integer(op: str, value: Any, name: str) -> int:
    """A scalar integer argument (a Python int, a NumPy integer or a 0-d integer array): an ArgumentTypeError for
    another type (TensorFlow's TypeError), an InvalidArgumentError for another shape."""
    x = _scalar(op, value, name, "iu", "an integer")
    return operator.index(x.item())


def number(op: str, value: Any, name: str) -> float:
    """A scalar real argument (int, float, NumPy scalar or 0-d array)."""
    return float(_scalar(op, value, name, "iuf", "a number"))


def _scalar(op: str, value: Any, name: str, kinds: str, what: str) -> np.ndarray:
    try:
        x = np.asarray(value)
    except ValueError:
        x = np.asarray(None)
    if x.dtype.kind not in kinds:
        raise ArgumentTypeError(f"{op}: `{name}` must be {what}, got {type(value).__name__} {value!r}")
    if x.ndim != 0:
        raise InvalidArgumentError(f"{op}: `{name}` must be a scalar ({what}), got shape {x.shape}: {value!r}")
    return x


def size(op: str, value: Any, name: str = "size") -> tuple[int, int]:
    """``(new_height, new_width)``: two integers, as TensorFlow's resize ops take them (checked for > 0 by
    :func:`positive`, which TensorFlow does when it runs)."""
    if type(value) in (tuple, list) and len(value) == 2 and type(value[0]) is int and type(value[1]) is int:
        return value[0], value[1]  # (the common case, without making an array)
    try:
        x = np.asarray(value)
    except ValueError:
        x = np.asarray(None)
    if x.shape != (2,) or x.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"{op}: `{name}` must be 1-D with 2 elements [new_height, new_width], got {value!r} (shape {x.shape})"
        )
    return int(x[0]), int(x[1])


def positive(op: str, height: int, width: int, what: str = "output size") -> None:
    if height <= 0 or width <= 0:
        raise InvalidArgumentError(f"{op}: the {what} must be positive, got {height}x{width} (height x width)")

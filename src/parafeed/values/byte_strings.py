"""String tensors as TensorFlow's ops take them: one ``bytes`` from a scalar string, or an array of ``bytes``.

Where TensorFlow takes a scalar string tensor, parafeed takes ``bytes`` (NumPy's ``bytes_`` too), a ``str`` (as
UTF-8, which is what ``tf.constant("...")`` holds), and a 0-d array of any of them: ``np.reshape(record, [])``,
an element of a dataset of strings indexed down to a scalar, or an eager ``tf.Tensor``. Ops that take a string
tensor of any shape get an object array of ``bytes`` (0-d for a scalar) from :func:`bytes_array`.

A 0-d ``S`` array (what ``np.reshape(b"...", [])`` makes) holds its bytes as NumPy does: without trailing NUL bytes,
as TensorFlow reads it too. Elements of parafeed's datasets are ``bytes`` or object arrays, which keep every byte.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError

_BYTES_LIKE = (bytes, bytearray, memoryview)
_STRING_KINDS = frozenset("OSU")


def _item_bytes(value: Any, text: bool = True) -> bytes | None:
    """``value`` as ``bytes`` if it is one string (bytes-like, or str when ``text``), else None."""
    if isinstance(value, bytes):
        return bytes(value) if type(value) is not bytes else value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if text and isinstance(value, str):
        return value.encode("utf-8")
    return None


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    return type(value).__name__


def scalar_bytes(
    step: str, value: Any, what: str = "input", error: type[Exception] = InvalidArgumentError, text: bool = True
) -> bytes:
    """The bytes of a scalar string: ``bytes`` (``np.bytes_``), ``bytearray``, ``memoryview``, ``str`` (UTF-8;
    refused unless ``text``: serialized protos are binary) or a 0-d array holding one of them; anything else raises
    ``error`` naming ``step`` and the argument ``what``."""
    if type(value) is bytes:  # the usual case first
        return value
    found = _item_bytes(value, text)
    if found is not None:
        return found
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # an eager tf.Tensor
        value = value.numpy()
        found = _item_bytes(value, text)
        if found is not None:
            return found
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in _STRING_KINDS:
        found = _item_bytes(value.item(), text)
        if found is not None:
            return found
    kinds = "bytes, str, or a 0-d array of them" if text else "bytes, or a 0-d array of bytes"
    raise error(f"{step}: `{what}` must be bytes: a scalar string ({kinds}), got {_describe(value)}")


def is_scalar_string(value: Any) -> bool:
    """Whether ``value`` is a scalar string as :func:`scalar_bytes` takes it (not an array of them)."""
    if isinstance(value, (*_BYTES_LIKE, str)):
        return True
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in _STRING_KINDS
    return hasattr(value, "numpy") and hasattr(value, "shape") and len(value.shape) == 0


def bytes_array(step: str, value: Any, what: str = "input") -> np.ndarray:
    """A string tensor of any shape as an object array of ``bytes`` (0-d for a scalar); ``str`` items become
    UTF-8. Anything that is not strings raises InvalidArgumentError naming ``step`` and ``what``."""
    if is_scalar_string(value):
        scalar = np.empty((), dtype=object)
        scalar[()] = scalar_bytes(step, value, what)
        return scalar
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if isinstance(value, np.ndarray) and value.dtype.kind in _STRING_KINDS:
        items = value.astype(object, copy=False)  # (S: bytes without trailing NULs; U: str)
    elif isinstance(value, (list, tuple)):
        items = np.asarray(value, dtype=object)
    else:
        raise InvalidArgumentError(f"{step}: `{what}` must be a string tensor (bytes, str or an array of them), got "
                                   f"{_describe(value)}")  # fmt: skip
    out: np.ndarray = np.empty(items.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(items.reshape(-1).tolist()):
        found = _item_bytes(item)
        if found is None:
            raise InvalidArgumentError(
                f"{step}: `{what}` must hold strings, but item {i} is {_describe(item)}: {item!r:.60}"
            )
        flat[i] = found
    return out

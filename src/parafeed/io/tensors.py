"""Tensors in bytes, as ``tf.io`` decodes them: ``decode_raw``, web-safe base64 (``encode_base64`` /
``decode_base64``) and ``decode_compressed`` (ZLIB, GZIP). ``serialize_tensor`` / ``parse_tensor`` are in
``tensor_proto.py``.

Each takes a string tensor of any shape, as TensorFlow does: ``bytes`` (or ``str``, or a 0-d array) for a scalar,
a list or array of them otherwise (:mod:`parafeed.values.byte_strings`). A scalar gives ``bytes`` back (a 1-D array
for ``decode_raw``); an array gives an array of the same shape (one more dimension for ``decode_raw``). Errors name
the element (its flat index) and say what to change.
"""

from __future__ import annotations

import base64
import zlib
from typing import Any, Literal

import numpy as np

from parafeed.errors import DataLossError, InvalidArgumentError
from parafeed.io.tensor_proto import out_dtype
from parafeed.values.byte_strings import bytes_array
from parafeed.values.structure import STRING, dtype_name

# decode_raw's out_types: TensorFlow's list (no uint32, uint64 or string)
_RAW_TYPES = frozenset(
    {"float16", "float32", "float64", "int32", "uint16", "uint8", "int16", "int8", "int64", "complex64",
     "complex128", "bool", "bfloat16"}
)  # fmt: skip


def _shaped(values: list[bytes], shape: tuple[int, ...]) -> Any:
    """``values`` as ``bytes`` for a scalar, else an object array of ``shape``."""
    if not shape:
        return values[0]
    out = np.empty(len(values), dtype=STRING)
    out[:] = values
    return out.reshape(shape)


def _where(shape: tuple[int, ...], i: int) -> str:
    return "" if not shape else f" element {i}:"


# ---------------------------------------------------------------------------------------------- decode_raw


def decode_raw(
    input_bytes: Any, out_type: Any, little_endian: bool = True, fixed_length: int | None = None,
    name: str | None = None,
) -> np.ndarray:  # fmt: skip
    """The bytes of each string as numbers of ``out_type`` (``tf.io.decode_raw``).

    A scalar string gives a 1-D array; a string tensor of shape ``S`` gives ``S + (n,)``. Without ``fixed_length``
    every string must have the same length, a multiple of ``out_type``'s size; with it, each string is cut or
    zero-padded to ``fixed_length`` bytes (a multiple of the size). ``little_endian=False`` reads big-endian data.

    Example:
        >>> pf.io.decode_raw(b"\\x01\\x00\\x02\\x00", pf.int16)
        array([1, 2], dtype=int16)
    """
    step = "decode_raw"
    dtype = out_dtype(out_type)
    if dtype == STRING or dtype.name not in _RAW_TYPES:
        raise InvalidArgumentError(
            f"{step}: out_type {dtype_name(dtype)} is not supported; use one of {', '.join(sorted(_RAW_TYPES))}"
        )
    strings = bytes_array(step, input_bytes, "input_bytes")
    shape = strings.shape
    items: list[bytes] = strings.reshape(-1).tolist()
    size = dtype.itemsize
    if fixed_length is not None:
        fixed = int(fixed_length)
        if fixed <= 0:
            raise InvalidArgumentError(f"{step}: fixed_length ({fixed}) must be greater than zero")
        if fixed % size:
            raise InvalidArgumentError(
                f"{step}: fixed_length ({fixed}) must be a multiple of the size of out_type {dtype_name(dtype)} "
                f"({size} bytes)"
            )
        data = b"".join(item[:fixed] + b"\0" * (fixed - len(item)) if len(item) != fixed else item for item in items)
        width = fixed // size
    else:
        length = len(items[0]) if items else 0
        for i, item in enumerate(items):
            if len(item) != length:
                raise InvalidArgumentError(
                    f"{step}: every string must have the same size, but element {i} has {len(item)} bytes and "
                    f"element 0 has {length}; pass fixed_length to cut or pad them to one size"
                )
        if length % size:
            raise InvalidArgumentError(
                f"{step}:{_where(shape, 0) or ' the input'} has {length} bytes, not a multiple of {size}, the size "
                f"of {dtype_name(dtype)}; check out_type, or pass fixed_length"
            )
        data = b"".join(items)
        width = length // size
    return _numbers(data, dtype, little_endian).reshape((*shape, width))


def _numbers(data: bytes, dtype: np.dtype, little_endian: bool) -> np.ndarray:
    """``data`` as a writable native array of ``dtype``, read in the given byte order."""
    if dtype == np.bool_:
        return np.frombuffer(data, dtype=np.uint8) != 0
    order: Literal["<", ">"] = "<" if little_endian else ">"
    if dtype.itemsize == 1:
        return np.frombuffer(data, dtype=dtype).copy()
    if dtype.kind not in "iufc":  # bfloat16 (ml_dtypes): swap its 2-byte words
        words = np.frombuffer(data, dtype=np.dtype(np.uint16).newbyteorder(order))
        return words.astype(np.uint16).view(dtype)
    return np.frombuffer(data, dtype=dtype.newbyteorder(order)).astype(dtype)


# ---------------------------------------------------------------------------------------------- base64

_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _first_bad(data: bytes) -> int:
    """The index of the first byte of ``data`` outside web-safe base64's alphabet, or -1."""
    if not data.translate(None, bytes(_ALPHABET)):  # (every byte in the alphabet)
        return -1
    return next(i for i, b in enumerate(data) if b not in _ALPHABET)


def _b64decode(data: bytes, step: str, where: str) -> bytes:
    """Web-safe base64 as TensorFlow decodes it: padding optional (only a last group of 4 may hold it: ``xx==`` or
    ``xxx=``), ``+``, ``/`` and whitespace refused, unused bits of the last character ignored."""
    if not data:
        return b""
    tail_at = (len(data) - 1) // 4 * 4  # the last group (1 to 4 characters); padding only there
    body = data
    if len(data) % 4 == 0:
        if data.endswith(b"=="):
            body = data[:-2]
        elif data.endswith(b"="):
            body = data[:-1]
    bad = _first_bad(body)
    if 0 <= bad < tail_at or (bad >= 0 and len(body) % 4 != 1):
        raise InvalidArgumentError(
            f"{step}:{where} Invalid character found in base64 ({body[bad : bad + 1]!r} at byte {bad}); it must be "
            "web-safe base64 ('-' and '_', not '+' and '/'), without whitespace"
        )
    if len(body) % 4 == 1:
        raise InvalidArgumentError(f"{step}:{where} Base64 string length cannot be 1 modulo 4 (it has {len(body)})")
    return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))


def decode_base64(input: Any, name: str | None = None) -> Any:  # (`input`: tf's name)
    """Decode web-safe base64 strings (``tf.io.decode_base64``): ``-`` and ``_`` for ``+`` and ``/``, padding
    optional. A scalar gives ``bytes``, an array an array of the same shape."""
    step = "decode_base64"
    strings = bytes_array(step, input, "input")
    items = strings.reshape(-1).tolist()
    decoded = [_b64decode(item, step, _where(strings.shape, i)) for i, item in enumerate(items)]
    return _shaped(decoded, strings.shape)


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Any:
    """Encode strings as web-safe base64 (``tf.io.encode_base64``), with ``=`` padding only when ``pad``. A scalar
    gives ``bytes``, an array an array of the same shape."""
    strings = bytes_array("encode_base64", input, "input")
    encoded = [base64.urlsafe_b64encode(item) for item in strings.reshape(-1).tolist()]
    if not pad:
        encoded = [e.rstrip(b"=") for e in encoded]
    return _shaped(encoded, strings.shape)


# ---------------------------------------------------------------------------------------------- decode_compressed


def _inflate(data: bytes, compression: str, step: str, where: str) -> bytes:
    if not data:
        return b""
    parts, rest = [], data
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS if compression == "GZIP" else zlib.MAX_WBITS)
        try:
            parts.append(inflater.decompress(rest))
            parts.append(inflater.flush())
        except zlib.error as err:
            raise DataLossError(f"{step}:{where} not valid {compression} data: {err}") from None
        if not inflater.eof:
            raise DataLossError(
                f"{step}:{where} the {compression} data ({len(data)} bytes) is truncated: it ends inside its stream"
            )
        rest = inflater.unused_data
        if compression == "ZLIB":
            break  # (bytes after a ZLIB stream are ignored, as TensorFlow does; GZIP members follow one another)
    return b"".join(parts)


def decode_compressed(bytes: Any, compression_type: str = "", name: str | None = None) -> Any:
    """Decompress strings (``tf.io.decode_compressed``): ``compression_type`` ``"ZLIB"``, ``"GZIP"`` (several
    members one after another are decoded in turn) or ``""`` (as they are). A scalar gives ``bytes``, an array an
    array of the same shape. Damaged or truncated data raises DataLossError (TensorFlow returns what a truncated
    stream decodes to)."""
    step = "decode_compressed"
    if compression_type not in ("", "ZLIB", "GZIP"):
        if compression_type == "ZSTD":
            raise InvalidArgumentError(f"{step}: ZSTD is not supported by parafeed; use ZLIB, GZIP or ''")
        raise InvalidArgumentError(f"{step}: compression_type must be 'ZLIB', 'GZIP' or '', got {compression_type!r}")
    strings = bytes_array(step, bytes, "bytes")
    items = strings.reshape(-1).tolist()
    if compression_type:
        items = [_inflate(item, compression_type, step, _where(strings.shape, i)) for i, item in enumerate(items)]
    return _shaped(items, strings.shape)

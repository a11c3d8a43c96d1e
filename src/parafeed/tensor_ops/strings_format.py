"""``strings.format``: tensors written into a template as TensorFlow summarises them (``[1 2 ... 9 10]``, strings in
double quotes, floats with the fewest of 6/9 (float32) or 15/17 (float64) significant digits that read back)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.convert import array
from parafeed.tensor_ops.strings_base import STRING, scalar_string

_ESCAPES = {ord("\n"): b"\\n", ord("\r"): b"\\r", ord("\t"): b"\\t", ord('"'): b'\\"', ord("'"): b"\\'", 92: b"\\\\"}


def format(template: Any, inputs: Any, placeholder: str = "{}", summarize: int = 3, name: Any = None) -> bytes:
    """``tf.strings.format``: ``template`` with each ``placeholder`` replaced by the next of ``inputs`` (a tensor or a
    list of them) as TensorFlow prints it; ``summarize`` values at each end of every dimension (negative: all).

    Example:
        >>> pf.strings.format("x: {}, y: {}", [pf.range(10), "a"])
        b'x: [0 1 2 ... 7 8 9], y: "a"'
    """
    op = "strings.format()"
    text = scalar_string(template, op, "template").decode()
    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    parts = text.split(placeholder)
    if len(parts) - 1 != len(values):
        raise InvalidArgumentError(
            f"{op}: the template has {len(parts) - 1} placeholders ({placeholder!r}) for {len(values)} inputs; give "
            "one input per placeholder"
        )
    out = [parts[0].encode()]
    for value, part in zip(values, parts[1:]):
        arr = array(value, op)
        out += [summary(arr, arr.size if summarize < 0 else summarize), part.encode()]
    return b"".join(out)


def summary(arr: np.ndarray, at_ends: int) -> bytes:
    """``arr`` as TensorFlow's ``print_v2`` writes it: ``at_ends`` values at each end of every dimension."""
    if arr.dtype.kind == "c":  # (TensorFlow writes complex values as "?", flat: its older summary)
        if arr.ndim == 0:
            return b"?" if at_ends else b"..."
        shown = min(arr.size, at_ends)
        return b"[" + b" ".join([b"?"] * shown) + (b"..." if shown < arr.size else b"") + b"]"
    if arr.size == 0 or at_ends == 0:  # (TensorFlow's writing when nothing is shown)
        if arr.ndim == 0:
            return b"..."
        return b"[]" if arr.shape[0] == 0 else b"[" + b"\n" * (arr.ndim - 1) + b" ...]"
    pieces: list[bytes] = []
    _dimension(arr, at_ends, 0, pieces)
    return b"".join(pieces)


def _dimension(arr: np.ndarray, at_ends: int, depth: int, pieces: list[bytes]) -> None:
    if arr.ndim == 0:
        pieces.append(_element(arr[()], arr.dtype))
        return
    spacing = b" " if arr.ndim == 1 else b"\n" * (arr.ndim - 1) + b" " * (depth + 1)
    count = len(arr)
    shown = list(range(count)) if count <= 2 * at_ends else [*range(at_ends), -1, *range(count - at_ends, count)]
    pieces.append(b"[")
    for k, i in enumerate(shown):
        if k:
            pieces.append(spacing)
        if i < 0:
            pieces.append(b"...")
        else:
            _dimension(arr[i, ...], at_ends, depth + 1, pieces)
    pieces.append(b"]")


def _element(value: Any, dtype: np.dtype) -> bytes:
    if dtype == STRING:
        return b'"' + _escaped(value) + b'"'
    if dtype.kind == "b":
        return b"1" if value else b"0"
    if dtype.kind in "iu":
        return str(int(value)).encode()
    if dtype.kind == "c":
        return b"?"
    return _float(float(value), dtype.itemsize == 8).encode()


def _float(value: float, double: bool) -> str:
    if value != value:
        return "nan"
    if value in (np.inf, -np.inf):
        return "inf" if value > 0 else "-inf"
    short, long = (15, 17) if double else (6, 9)
    text = f"{value:.{short}g}"
    same = float(text) == value if double else np.float32(text) == np.float32(value)
    return text if same else f"{value:.{long}g}"


def _escaped(value: bytes) -> bytes:
    """C escapes for quotes, backslashes and control bytes; bytes from 0x80 up as they are (UTF-8 kept readable)."""
    out = bytearray()
    for byte in value:
        if byte in _ESCAPES:
            out += _ESCAPES[byte]
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out)

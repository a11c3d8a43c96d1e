"""Unicode code points and encodings: ``strings.unicode_decode``, ``unicode_encode``, ``unicode_split`` and
``unicode_transcode``, with TensorFlow's ``errors`` modes (``"replace"``, ``"ignore"``, ``"strict"``).

Input encodings: UTF-8, UTF-16-BE / -LE, UTF-32-BE / -LE, ISO-8859-1 and US-ASCII (names as ICU spells them, in any
case, with or without dashes); output encodings: "UTF-8", "UTF-16-BE" and "UTF-32-BE", as TensorFlow allows. An
invalid input sequence counts as one error per maximal invalid part (the W3C / Unicode practice ICU and Python share).
"""

from __future__ import annotations

import codecs
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.strings_base import (
    STRING,
    as_strings,
    check_choice,
    flat_strings,
    map_bytes,
    nest_rows,
    out,
)
from parafeed.values.elements import short_repr
from parafeed.values.ragged_tensor import RaggedTensor

_DECODERS = {
    "UTF8": "utf-8", "UTF16BE": "utf-16-be", "UTF16LE": "utf-16-le", "UTF32BE": "utf-32-be", "UTF32LE": "utf-32-le",
    "ISO88591": "latin-1", "LATIN1": "latin-1", "USASCII": "ascii", "ASCII": "ascii",
}  # fmt: skip
_ENCODERS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_ERRORS = ("strict", "replace", "ignore")
_MARK = 0xD800  # stands for one invalid input sequence while decoding (decoders never give a lone surrogate)


def _mark_errors(err: UnicodeError) -> tuple[str, int]:
    assert isinstance(err, UnicodeDecodeError)
    return chr(_MARK), err.end


codecs.register_error("parafeed.strings_mark", _mark_errors)


def _decoder(encoding: Any, op: str) -> str:
    key = str(encoding).upper().replace("-", "").replace("_", "")
    if key not in _DECODERS:
        raise InvalidArgumentError(
            f"{op}: cannot decode {encoding!r}: parafeed decodes UTF-8, UTF-16-BE/LE, UTF-32-BE/LE, ISO-8859-1 and "
            "US-ASCII"
        )
    return _DECODERS[key]


def _encoder(encoding: Any, op: str) -> str:
    if encoding not in _ENCODERS:
        raise InvalidArgumentError(
            f"{op}: output encoding must be one of 'UTF-8', 'UTF-16-BE', 'UTF-32-BE', got {encoding!r}"
        )
    return _ENCODERS[encoding]


def _replacement(char: Any, op: str) -> int:
    if not 0 <= int(char) <= 0x10FFFF or 0xD800 <= int(char) <= 0xDFFF:
        raise InvalidArgumentError(f"{op}: replacement_char must be a Unicode code point, got {char!r}")
    return int(char)


def _decode_one(s: bytes, codec: str, errors: str, subst: int, control: bool, op: str,
                strict_control: bool = False) -> list[int]:  # fmt: skip
    """The code points of ``s``. Control characters, when replaced, count as errors (``errors="ignore"`` drops them)
    but pass ``errors="strict"`` unless ``strict_control`` (unicode_transcode's rule)."""
    points = [ord(c) for c in s.decode(codec, "parafeed.strings_mark")]
    if control:
        if strict_control and errors == "strict" and any(p < 0x20 for p in points):
            raise InvalidArgumentError(f"{op}: {short_repr(s)} has control characters (errors='strict')")
        points = [(_MARK if errors == "ignore" else subst) if p < 0x20 else p for p in points]
    if _MARK in points:
        if errors == "strict":
            raise InvalidArgumentError(f"{op}: {short_repr(s)} is not valid {codec} (errors='strict')")
        points = (
            [subst if p == _MARK else p for p in points] if errors == "replace" else [p for p in points if p != _MARK]
        )
    return points


def _decode_rows(input: Any, input_encoding: Any, errors: Any, replacement_char: Any, control: bool,
                 op: str) -> tuple[Any, list[list[int]]]:  # fmt: skip
    codec = _decoder(input_encoding, op)
    mode = check_choice(errors, _ERRORS, op, "errors")
    subst = _replacement(replacement_char, op)
    strings = as_strings(input, op, empty_list=False)
    return strings, [_decode_one(s, codec, mode, subst, control, op) for s in flat_strings(strings).tolist()]


def unicode_decode(input: Any, input_encoding: Any, errors: Any = "replace", replacement_char: Any = 0xFFFD,
                   replace_control_characters: bool = False, name: Any = None) -> Any:  # fmt: skip
    """The code points of every string (``tf.strings.unicode_decode``): int32, rank N + 1 (ragged unless N is 0).

    Example:
        >>> pf.strings.unicode_decode(["hé", "a"], "UTF-8").to_list()
        [[104, 233], [97]]
    """
    op = "strings.unicode_decode()"
    strings, rows = _decode_rows(input, input_encoding, errors, replacement_char, replace_control_characters, op)
    return nest_rows(strings, rows, np.int32)


def unicode_split(input: Any, input_encoding: Any, errors: Any = "replace", replacement_char: Any = 0xFFFD,
                  name: Any = None) -> Any:  # fmt: skip
    """Every string as its characters, each encoded in ``input_encoding`` (``tf.strings.unicode_split``).

    Example:
        >>> pf.strings.unicode_split("hé", "UTF-8").tolist()
        [b'h', b'\\xc3\\xa9']
    """
    op = "strings.unicode_split()"
    codec = _encoder(input_encoding, op)
    strings, rows = _decode_rows(input, input_encoding, errors, replacement_char, False, op)
    return nest_rows(strings, [[chr(p).encode(codec) for p in row] for row in rows])


def unicode_transcode(input: Any, input_encoding: Any, output_encoding: Any, errors: Any = "replace",
                      replacement_char: Any = 0xFFFD, replace_control_characters: bool = False,
                      name: Any = None) -> Any:  # fmt: skip
    """Every string decoded from ``input_encoding`` and encoded in ``output_encoding`` (shape kept).

    Example:
        >>> pf.strings.unicode_transcode(b"a\\xff", "UTF-8", "UTF-8")
        b'a\\xef\\xbf\\xbd'
    """
    op = "strings.unicode_transcode()"
    codec_in, codec_out = _decoder(input_encoding, op), _encoder(output_encoding, op)
    mode = check_choice(errors, _ERRORS, op, "errors")
    subst = _replacement(replacement_char, op)
    strings = as_strings(input, op)

    def transcode(s: bytes) -> bytes:
        points = _decode_one(s, codec_in, mode, subst, replace_control_characters, op, strict_control=True)
        return "".join(map(chr, points)).encode(codec_out)

    if isinstance(strings, RaggedTensor):
        return strings.with_flat_values(map_bytes(strings.flat_values, transcode))
    return out(map_bytes(strings, transcode))


def unicode_encode(input: Any, output_encoding: Any, errors: Any = "replace", replacement_char: Any = 65533,
                   name: Any = None) -> Any:  # fmt: skip
    """Rows of int32 code points (the last dimension, dense or ragged) as strings (``tf.strings.unicode_encode``):
    rank N - 1. Code points outside Unicode (negative, over 0x10FFFF, surrogates) follow ``errors``.

    Example:
        >>> pf.strings.unicode_encode([[104, 233], [97, 98]], "UTF-8").tolist()
        [b'h\\xc3\\xa9', b'ab']
    """
    op = "strings.unicode_encode()"
    codec = _encoder(output_encoding, op)
    mode = check_choice(errors, _ERRORS, op, "errors")
    subst = _replacement(replacement_char, op)
    points = _code_points(input, op)
    return _encode(points, codec, mode, subst, op)


def _code_points(value: Any, op: str) -> Any:
    if isinstance(value, RaggedTensor):
        arr = value.flat_values
    else:
        try:
            arr = np.asarray(value)
        except ValueError:
            raise InvalidArgumentError(
                f"{op}: `input` is a ragged list {short_repr(value)}; build it with pf.ragged.constant()"
            ) from None
        if arr.dtype == object:
            raise InvalidArgumentError(f"{op}: `input` is a ragged list; build it with pf.ragged.constant()")
        if isinstance(value, (list, tuple)) and arr.dtype.kind == "i":
            arr = value = arr.astype(np.int32)
        if arr.ndim == 0:
            raise InvalidArgumentError(f"{op}: `input` must have rank >= 1 (rows of code points), got a scalar")
    if arr.dtype != np.int32:  # (an empty list is float32 to TensorFlow too)
        raise InvalidArgumentError(f"{op}: code points must be int32, got dtype {arr.dtype}; cast them first")
    return value


def _encode(points: Any, codec: str, mode: str, subst: int, op: str) -> Any:
    if isinstance(points, RaggedTensor):
        if points.flat_values.ndim > 1:
            return points.with_flat_values(_encode(points.flat_values, codec, mode, subst, op))
        if isinstance(points.values, RaggedTensor):
            return RaggedTensor.from_row_splits(_encode(points.values, codec, mode, subst, op), points.row_splits)
        values, splits = points.values.tolist(), points.row_splits.tolist()
        rows = [values[splits[i] : splits[i + 1]] for i in range(len(splits) - 1)]
        result = np.empty(len(rows), STRING)
        result[:] = [_encode_row(r, codec, mode, subst, op) for r in rows]
        return result
    arr = np.asarray(points)
    flat = arr.reshape(int(np.prod(arr.shape[:-1])), arr.shape[-1]).tolist()
    result = np.empty(len(flat), STRING)
    result[:] = [_encode_row(r, codec, mode, subst, op) for r in flat]
    return out(result.reshape(arr.shape[:-1]))


def _encode_row(row: list[int], codec: str, mode: str, subst: int, op: str) -> bytes:
    chars = []
    for p in row:
        if 0 <= p <= 0x10FFFF and not 0xD800 <= p <= 0xDFFF:
            chars.append(chr(p))
        elif mode == "replace":
            chars.append(chr(subst))
        elif mode == "strict":
            raise InvalidArgumentError(
                f"{op}: code point {p} is out of range for Unicode, or is a surrogate (errors='strict')"
            )
    return "".join(chars).encode(codec)

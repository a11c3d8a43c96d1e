"""``pf.strings``: TensorFlow's ``tf.strings`` operations on NumPy, for ``map()`` functions ported from tf.data.

Strings are ``bytes`` (a 0-d result) or object arrays of ``bytes``; ``str`` inputs are encoded as UTF-8. Results have
TensorFlow's shapes and dtypes: ``split`` and its kin give RaggedTensors (int64 row splits), ``length`` int32,
``to_hash_bucket_fast`` int64. Element-wise ops take RaggedTensors and keep their rows. Errors name the op.

This module holds the element-wise basics (``join``, ``reduce_join``, ``length``, ``substr``, ``strip``, ``lower``,
``upper``); ``strings_split``, ``strings_regex``, ``strings_unicode`` and ``strings_convert`` the rest, all exported
here. TF1's ``string_split`` (a SparseTensor) is here as :func:`string_split`.

``strings_format`` holds ``format`` (TensorFlow's tensor summaries). Not provided: the ``*_with_offsets`` variants.

Example:
    >>> pf.strings.split(["a b", "c"]).to_list()
    [[b'a', b'b'], [b'c']]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.strings_base import (
    STRING,
    WHITESPACE,
    as_ints,
    as_strings,
    check_choice,
    map_strings,
    out,
    scalar_string,
)
from parafeed.tensor_ops.strings_convert import as_string, to_hash_bucket_fast, to_number
from parafeed.tensor_ops.strings_format import format
from parafeed.tensor_ops.strings_regex import regex_full_match, regex_replace
from parafeed.tensor_ops.strings_split import bytes_split, ngrams, split, string_split, string_split_v2
from parafeed.tensor_ops.strings_unicode import unicode_decode, unicode_encode, unicode_split, unicode_transcode
from parafeed.values.elements import short_repr
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.tensor import export_tensor_results

__all__ = [
    "as_string", "bytes_split", "format", "join", "length", "lower", "ngrams", "reduce_join", "regex_full_match",
    "regex_replace", "split", "string_split", "string_split_v2", "strip", "substr", "to_hash_bucket_fast",
    "to_number", "unicode_decode", "unicode_encode", "unicode_split", "unicode_transcode", "upper",
]  # fmt: skip

_UNITS = ("BYTE", "UTF8_CHAR")
_TRAIL_BYTES = bytes(range(0x80, 0xC0))  # bytes that continue a UTF-8 character


def join(inputs: Any, separator: Any = "", name: Any = None) -> Any:
    """Join strings element-wise across ``inputs`` (``tf.strings.join``): arrays of one shape, scalars broadcast.

    Example:
        >>> pf.strings.join(["a", ["x", "y"]], separator="-").tolist()
        [b'a-x', b'a-y']
    """
    op = "strings.join()"
    sep = scalar_string(separator, op, "separator")
    if isinstance(inputs, (str, bytes, np.ndarray, RaggedTensor)):
        inputs = [inputs]
    parts = [as_strings(x, op, f"inputs[{i}]") for i, x in enumerate(inputs)]
    ragged = [p for p in parts if isinstance(p, RaggedTensor)]
    if ragged:
        splits = ragged[0].nested_row_splits
        for i, p in enumerate(parts):
            same = (
                isinstance(p, RaggedTensor)
                and len(p.nested_row_splits) == len(splits)
                and all(np.array_equal(a, b) for a, b in zip(p.nested_row_splits, splits))
            )
            if not same and not (isinstance(p, np.ndarray) and p.ndim == 0):
                raise InvalidArgumentError(
                    f"{op}: inputs[{i}] must have the row partition of the first RaggedTensor, or be a scalar"
                )
        flat = [p.flat_values if isinstance(p, RaggedTensor) else p for p in parts]
        return ragged[0].with_flat_values(_join_dense(flat, sep, op))
    return out(_join_dense(parts, sep, op))


def _join_dense(parts: list[np.ndarray], sep: bytes, op: str) -> np.ndarray:
    shapes = {p.shape for p in parts if p.ndim}
    if len(shapes) > 1:
        raise InvalidArgumentError(
            f"{op}: inputs must have one shape or be scalars, got shapes {sorted(shapes)}; broadcast them first"
        )
    shape = shapes.pop() if shapes else ()
    columns = [np.broadcast_to(p, shape).reshape(-1).tolist() for p in parts]
    result = np.empty(int(np.prod(shape)), STRING)
    result[:] = [sep.join(row) for row in zip(*columns)] if columns else [b""] * len(result)
    return result.reshape(shape)


def reduce_join(inputs: Any, axis: Any = None, keepdims: bool = False, separator: Any = "", name: Any = None) -> Any:
    """Join strings along ``axis`` (``tf.strings.reduce_join``; None: all of them, in row-major order).

    With several axes, the first one listed varies fastest (``axis=[0, 1]`` of ``[["a", "b"], ["c", "d"]]`` is
    ``b"acbd"``), as TensorFlow joins them. RaggedTensors are joined over all values, or along one axis of a ragged
    rank 1 tensor; there, as in TensorFlow, a separator follows only a non-empty start (``["", "b"]`` joins to
    ``b"b"``).

    Example:
        >>> pf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-").tolist()
        [b'a-b', b'c-d']
    """
    op = "strings.reduce_join()"
    sep = scalar_string(separator, op, "separator")
    strings = as_strings(inputs, op, "inputs", empty_list=False)
    if isinstance(strings, RaggedTensor):
        return _reduce_join_ragged(strings, axis, keepdims, sep, op)
    rank = strings.ndim
    axes = list(range(rank)) if axis is None else _axes(axis, rank, op)
    kept = [d for d in range(rank) if d not in axes]
    moved = np.transpose(strings, kept + axes[::-1]) if axis is not None else strings
    outer = tuple(strings.shape[d] for d in kept)
    rows = moved.reshape(int(np.prod(outer)), -1) if moved.size else np.empty((int(np.prod(outer)), 0), STRING)
    result = np.empty(len(rows), STRING)
    result[:] = [sep.join(r) for r in rows.tolist()]
    shape = tuple(1 if d in axes else strings.shape[d] for d in range(rank)) if keepdims else outer
    return out(result.reshape(shape))


def _axes(axis: Any, rank: int, op: str) -> list[int]:
    given = [int(a) for a in np.asarray(axis).reshape(-1).tolist()]
    axes = []
    for a in given:
        if not -rank <= a < rank:
            raise InvalidArgumentError(f"{op}: axis {a} is out of range for an input of rank {rank}")
        if a % rank in axes:
            raise InvalidArgumentError(f"{op}: axis {a} is given twice")
        axes.append(a % rank)
    return axes


def _segment_join(items: list[bytes], sep: bytes) -> bytes:
    """TensorFlow's join of a ragged row: a separator goes in only once the row's result is not empty."""
    result = b""
    for item in items:
        result = result + sep + item if result else item
    return result


def _reduce_join_ragged(rt: RaggedTensor, axis: Any, keepdims: bool, sep: bytes, op: str) -> Any:
    if axis is None and not keepdims:
        return sep.join(rt.flat_values.reshape(-1).tolist())
    if rt.ragged_rank != 1 or rt.flat_values.ndim != 1 or keepdims or axis is None:
        raise InvalidArgumentError(
            f"{op}: parafeed joins a RaggedTensor over all its values, or along axis 0 or 1 of a 2-D one without "
            "keepdims; convert it with .to_tensor() for other reductions"
        )
    a = _axes(axis, 2, op)
    if len(a) != 1:
        raise InvalidArgumentError(f"{op}: give one axis for a RaggedTensor, got {axis!r}")
    rows = [r.tolist() for r in rt]
    if a[0] == 0:
        width = max((len(r) for r in rows), default=0)
        rows = [[r[j] for r in rows if j < len(r)] for j in range(width)]
    result = np.empty(len(rows), STRING)
    result[:] = [_segment_join(r, sep) for r in rows]
    return result


def length(input: Any, unit: str = "BYTE", name: Any = None) -> Any:
    """The length of every string (``tf.strings.length``): int32, in bytes or (``unit="UTF8_CHAR"``) in UTF-8
    characters (bytes that do not continue a character, as TensorFlow counts them).

    Example:
        >>> pf.strings.length(["héllo", ""], unit="UTF8_CHAR").tolist()
        [5, 0]
    """
    op = "strings.length()"
    if check_choice(unit, _UNITS, op, "unit") == "BYTE":
        return map_strings(input, op, len, np.int32)
    return map_strings(input, op, lambda s: len(s.translate(None, _TRAIL_BYTES)), np.int32)


def substr(input: Any, pos: Any, len: Any, unit: str = "BYTE", name: Any = None) -> Any:
    """The substrings of ``len`` units from ``pos`` (``tf.strings.substr``), in bytes or UTF-8 characters.

    A negative ``pos`` counts from the end; ``pos`` must lie within the string (its length included) or the op raises
    InvalidArgumentError. ``len`` past the end stops there; a negative ``len`` means the rest (bytes) or nothing
    (characters). ``pos`` and ``len`` have one shape: a scalar, the input's shape, or one that broadcasts with it.

    Example:
        >>> pf.strings.substr(["hello", "world"], 1, 3).tolist()
        [b'ell', b'orl']
    """
    op = "strings.substr()"
    utf8 = check_choice(unit, _UNITS, op, "unit") == "UTF8_CHAR"
    strings = as_strings(input, op)
    starts, counts = as_ints(pos, op, "pos"), as_ints(len, op, "len")
    if starts.shape != counts.shape:
        raise InvalidArgumentError(f"{op}: pos and len must have the same shape, got {starts.shape} and {counts.shape}")
    cut = _utf8_substr if utf8 else _byte_substr
    if isinstance(strings, RaggedTensor):
        if starts.ndim:
            raise InvalidArgumentError(f"{op}: with a RaggedTensor input, pos and len must be scalars")
        flat = strings.flat_values
        return strings.with_flat_values(_substr_all(flat, starts, counts, cut, op))
    if starts.ndim == 0 or starts.shape == strings.shape:
        return out(_substr_all(strings, starts, counts, cut, op))
    try:
        shape = np.broadcast_shapes(strings.shape, starts.shape)
    except ValueError:
        raise InvalidArgumentError(
            f"{op}: the input's shape {strings.shape} and pos/len's shape {starts.shape} do not broadcast"
        ) from None
    wide = np.broadcast_to(strings, shape)
    return out(_substr_all(wide, np.broadcast_to(starts, shape), np.broadcast_to(counts, shape), cut, op))


def _substr_all(strings: np.ndarray, starts: np.ndarray, counts: np.ndarray, cut: Any, op: str) -> np.ndarray:
    flat = strings.reshape(-1).tolist()
    p = np.broadcast_to(starts, strings.shape).reshape(-1).tolist()
    n = np.broadcast_to(counts, strings.shape).reshape(-1).tolist()
    result = np.empty(len(flat), STRING)
    for i, s in enumerate(flat):
        piece = cut(s, p[i], n[i])
        if piece is None:
            where = np.unravel_index(i, strings.shape) if strings.ndim else ()
            raise InvalidArgumentError(
                f"{op}: pos {p[i]} is out of range for {short_repr(s)} at index {tuple(map(int, where))}; pos must "
                "lie within the string (-length <= pos <= length)"
            )
        result[i] = piece
    return result.reshape(strings.shape)


def _byte_substr(s: bytes, pos: int, count: int) -> bytes | None:
    size = len(s)
    start = pos + size if pos < 0 else pos
    if not 0 <= start <= size:
        return None
    return s[start:] if count < 0 else s[start : start + count]


def _utf8_substr(s: bytes, pos: int, count: int) -> bytes | None:
    # character boundaries: the start, every byte that does not continue a character, and the end
    size = len(s)
    bounds = [0, *(i for i in range(1, size) if (s[i] & 0xC0) != 0x80), size] if size else [0]
    chars = len(bounds) - 1
    if pos >= 0:
        if pos > chars:
            return None
        end = min(pos + max(count, 0), chars)
        return s[bounds[pos] : bounds[end]]
    skip = max(0, -pos - count)  # characters left out at the end
    back = -pos - skip  # characters in the substring
    if skip > chars or back < 0 or back > chars - skip:
        return None
    return s[bounds[chars - skip - back] : bounds[chars - skip]]


def strip(input: Any, name: Any = None) -> Any:
    """Every string without leading and trailing ASCII whitespace (``tf.strings.strip``).

    Example:
        >>> pf.strings.strip(" a b\\n")
        b'a b'
    """
    return map_strings(input, "strings.strip()", lambda s: s.strip(WHITESPACE))


def lower(input: Any, encoding: str = "", name: Any = None) -> Any:
    """Every string in lower case (``tf.strings.lower``): ASCII letters only, or all of Unicode with
    ``encoding="utf-8"`` (invalid UTF-8 becomes U+FFFD and a NUL byte ends the string, as TensorFlow's ICU does).

    Example:
        >>> pf.strings.lower("ÀB", encoding="utf-8").decode()
        'àb'
    """
    return _case(input, encoding, "strings.lower()", bytes.lower, str.lower)


def upper(input: Any, encoding: str = "", name: Any = None) -> Any:
    """Every string in upper case (``tf.strings.upper``): ASCII letters only, or all of Unicode with
    ``encoding="utf-8"``.

    Example:
        >>> pf.strings.upper("straße", encoding="utf-8").decode()
        'STRASSE'
    """
    return _case(input, encoding, "strings.upper()", bytes.upper, str.upper)


def _case(value: Any, encoding: str, op: str, ascii_fn: Any, unicode_fn: Any) -> Any:
    if encoding not in ("", "utf-8"):
        raise InvalidArgumentError(f"{op}: encoding must be 'utf-8' or '' (ASCII only), got {encoding!r}")
    if encoding == "":
        return map_strings(value, op, ascii_fn)
    # (TensorFlow's ICU conversion ends the string at its first NUL byte)
    return map_strings(value, op, lambda s: unicode_fn(s.split(b"\0", 1)[0].decode("utf-8", "replace")).encode())


_MISSING = {
    "unicode_decode_with_offsets": "use unicode_decode (offsets: the byte lengths of unicode_split's pieces)",
    "unicode_split_with_offsets": "use unicode_split (offsets: the cumulative byte lengths of its pieces)",
    "unicode_script": "use Python's unicodedata on the decoded code points",
    "unsorted_segment_join": "group the strings in Python and join them with b''.join",
    "to_hash_bucket": "use to_hash_bucket_fast (a different hash: the buckets differ from TensorFlow's)",
    "to_hash_bucket_strong": "use to_hash_bucket_fast (a different hash: the buckets differ from TensorFlow's)",
}


def __getattr__(name: str) -> Any:
    if name in _MISSING:
        raise AttributeError(f"pf.strings.{name} is tf.strings API that parafeed does not have: {_MISSING[name]}")
    raise AttributeError(f"module 'parafeed.strings' has no attribute {name!r}")


export_tensor_results(globals())  # (results as Tensors, as TensorFlow's operations return them)

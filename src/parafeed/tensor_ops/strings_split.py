"""Splitting strings into tokens: ``strings.split`` (TF2's, a RaggedTensor), TF1's ``string_split`` (a
SparseTensor), ``strings.bytes_split`` and ``strings.ngrams``."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.tensor_ops.strings_base import (
    STRING,
    as_strings,
    flat_strings,
    nest_rows,
    scalar_string,
    uniform_splits,
)
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor


def split(input: Any, sep: Any = None, maxsplit: int = -1, name: Any = None) -> Any:
    """Split every string at ``sep`` (``tf.strings.split``): a RaggedTensor of rank N + 1 (int64 row splits), or a
    1-D array of tokens for a scalar input.

    With ``sep`` None or empty, runs of ASCII whitespace separate tokens and no token is empty; otherwise every
    ``sep`` separates two tokens, empty ones included (as Python's ``bytes.split``). ``maxsplit`` > 0 limits the
    splits per string (the rest stays in the last token); -1 splits everywhere.

    Example:
        >>> pf.strings.split(["hello world", "a  b"]).to_list()
        [[b'hello', b'world'], [b'a', b'b']]
    """
    op = "strings.split()"
    strings = as_strings(input, op)
    delimiter = b"" if sep is None else scalar_string(sep, op, "sep")
    limit = _maxsplit(maxsplit, op)
    if delimiter:
        rows = [s.split(delimiter, limit) for s in flat_strings(strings).tolist()]
    else:
        rows = [_split_whitespace(s, limit) for s in flat_strings(strings).tolist()]
    return nest_rows(strings, rows)


def _split_whitespace(s: bytes, limit: int) -> list[bytes]:
    """TensorFlow's whitespace split: Python's ``bytes.split()``, except that with ``maxsplit`` the rest after the
    last split is a token even when empty (``b"ab"`` with maxsplit 1 gives ``[b"ab", b""]``), and maxsplit 0 gives
    the string untouched."""
    if limit < 0:
        return s.split()
    if limit == 0:
        return [s]
    tokens = s.split(None, limit)
    return [*tokens, b""] if len(tokens) == limit else tokens  # the limit-th split reached the end


string_split_v2 = split


def _maxsplit(maxsplit: Any, op: str) -> int:
    if isinstance(maxsplit, (bool, np.bool_)) or not isinstance(maxsplit, (int, np.integer)):
        raise ArgumentTypeError(f"{op}: `maxsplit` must be an int, got {maxsplit!r}")
    return int(maxsplit) if maxsplit >= 0 else -1


def string_split(source: Any, sep: Any = None, skip_empty: bool = True, delimiter: Any = None,
                 result_type: str = "SparseTensor", name: Any = None) -> Any:  # fmt: skip
    """TF1's ``tf.string_split`` (``tf.compat.v1.string_split``): split a 1-D array of strings at any of the bytes
    of ``sep`` (default ``" "``; empty: into single bytes), into a 2-D :class:`~parafeed.SparseTensor` (or a
    RaggedTensor with ``result_type="RaggedTensor"``). ``skip_empty`` drops empty tokens; an empty string has none.

    Example:
        >>> st = pf.strings.string_split(["a b", "c"])
        >>> st.values.tolist(), st.dense_shape.tolist()
        ([b'a', b'b', b'c'], [2, 2])
    """
    op = "string_split()"
    if sep is not None and delimiter is not None:
        raise InvalidArgumentError(f"{op}: give `sep` or its deprecated alias `delimiter`, not both")
    chosen = delimiter if sep is None else sep
    delims = b" " if chosen is None else scalar_string(chosen, op, "sep")
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise InvalidArgumentError(f"{op}: result_type must be 'RaggedTensor' or 'SparseTensor', got {result_type!r}")
    strings = as_strings(source, op, "source", ragged=False)
    if strings.ndim != 1:
        raise InvalidArgumentError(
            f"{op}: `source` must be a vector (1-D) of strings, got shape {strings.shape}; reshape it to 1-D, or use "
            "strings.split(), which takes any rank"
        )
    rows = [_split_any(s, delims, bool(skip_empty)) for s in strings.tolist()]
    if result_type == "RaggedTensor":
        return nest_rows(strings, rows)
    counts = np.fromiter((len(r) for r in rows), np.int64, len(rows))
    n = int(counts.sum())
    row_ids = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    indices = np.stack([row_ids, np.arange(n, dtype=np.int64) - starts], axis=1)
    values = np.empty(n, STRING)
    values[:] = [t for r in rows for t in r]
    width = int(counts.max()) if len(counts) else 0
    return SparseTensor._trusted(indices, values, np.array([len(rows), width], np.int64))


def _split_any(s: bytes, delims: bytes, skip_empty: bool) -> list[bytes]:
    if not s:
        return []
    if not delims:
        return [s[i : i + 1] for i in range(len(s))]
    if len(delims) > 1:
        s = s.translate(bytes.maketrans(delims, delims[:1] * len(delims)))
    tokens = s.split(delims[:1])
    return [t for t in tokens if t] if skip_empty else tokens


def bytes_split(input: Any, name: Any = None) -> Any:
    """Every string as its single bytes (``tf.strings.bytes_split``): rank N + 1, ragged unless N is 0.

    Example:
        >>> pf.strings.bytes_split("abc").tolist()
        [b'a', b'b', b'c']
    """
    strings = as_strings(input, "strings.bytes_split()", empty_list=False)
    return nest_rows(strings, [[s[i : i + 1] for i in range(len(s))] for s in flat_strings(strings).tolist()])


def ngrams(data: Any, ngram_width: Any, separator: Any = " ", pad_values: Any = None, padding_width: Any = None,
           preserve_short_sequences: bool = False, name: Any = None) -> Any:  # fmt: skip
    """N-grams of the innermost dimension (``tf.strings.ngrams``): windows of ``ngram_width`` adjacent strings
    joined with ``separator``, all widths in order when ``ngram_width`` is a list.

    ``pad_values`` (one string, or a (left, right) pair) pads each sequence by ``padding_width`` on each side
    (default ``width - 1``, never more); ``preserve_short_sequences`` gives a sequence too short for any n-gram one
    n-gram of all of it (padded). A dense input keeps its shape but for the last dimension; a ragged one stays
    ragged.

    Example:
        >>> pf.strings.ngrams(["a", "b", "c"], 2).tolist()
        [b'a b', b'b c']
    """
    op = "strings.ngrams()"
    if pad_values is None:
        left = right = b""
    elif isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2 or not all(isinstance(p, (str, bytes)) for p in pad_values):
            raise ArgumentTypeError(f"{op}: pad_values must be a string, a (left, right) pair of strings, or None")
        left, right = (p.encode() if isinstance(p, str) else p for p in pad_values)
    elif isinstance(pad_values, (str, bytes)):
        left = right = pad_values.encode() if isinstance(pad_values, str) else pad_values
    else:
        raise ArgumentTypeError(f"{op}: pad_values must be a string, a (left, right) pair of strings, or None")
    if padding_width is not None and padding_width < 1:
        raise InvalidArgumentError(f"{op}: padding_width must be greater than 0, got {padding_width}")
    if padding_width is not None and pad_values is None:
        raise InvalidArgumentError(f"{op}: padding_width needs pad_values: give the strings to pad with")
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    if any(int(w) < 1 for w in widths):
        raise InvalidArgumentError(f"{op}: all ngram widths must be greater than 0, got {ngram_width!r}")
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    strings = as_strings(data, op, "data")
    if not isinstance(strings, RaggedTensor) and strings.ndim == 0:
        raise InvalidArgumentError(f"{op}: `data` must have rank > 0, got a scalar; give a list of tokens")
    pad = 0 if pad_values is None else (-1 if padding_width is None else int(padding_width))
    spec = (sep, left, right, pad, [int(w) for w in widths], bool(preserve_short_sequences))
    if isinstance(strings, RaggedTensor):
        return _ngrams_ragged(strings, spec)
    shape = strings.shape
    rows = RaggedTensor(strings.reshape(-1), uniform_splits((int(np.prod(shape[:-1])), shape[-1]))[0])
    return _dense_grams(_ngrams_ragged(rows, spec), shape)


def _dense_grams(grams: RaggedTensor, shape: tuple[int, ...]) -> np.ndarray:
    # every row of a dense input has as many n-grams; with no rows, TensorFlow's reshape to (..., -1) divides 1 by the
    # other dimensions that are not 0
    per_row = len(grams.values) // grams.nrows() if grams.nrows() else 1 // int(np.prod([d for d in shape[:-1] if d]))
    values: np.ndarray = grams.values.reshape((*shape[:-1], per_row))
    return values


def _ngrams_ragged(rt: RaggedTensor, spec: tuple[Any, ...]) -> RaggedTensor:
    if isinstance(rt.values, RaggedTensor):
        return RaggedTensor(_ngrams_ragged(rt.values, spec), rt.row_splits)
    if rt.values.ndim > 1:  # uniform inner dimensions: n-grams of the innermost one
        inner = rt.values
        lines = RaggedTensor(inner.reshape(-1), uniform_splits((int(np.prod(inner.shape[:-1])), inner.shape[-1]))[0])
        return RaggedTensor(_dense_grams(_ngrams_ragged(lines, spec), inner.shape), rt.row_splits)
    sep, left, right, pad, widths, preserve = spec
    values, splits = rt.values.tolist(), rt.row_splits.tolist()
    rows: list[list[bytes]] = []
    for i in range(len(splits) - 1 if values else 0):  # (no tokens at all: TensorFlow gives no n-grams, even padded)
        tokens = values[splits[i] : splits[i + 1]]
        grams: list[bytes] = []
        for width in widths:
            p = min(width - 1, width - 1 if pad < 0 else pad)
            padded = [left] * p + tokens + [right] * p
            grams.extend(sep.join(padded[k : k + width]) for k in range(len(padded) - width + 1))
        if preserve and not grams and tokens:
            grams.append(sep.join([left] * max(pad, 0) + tokens + [right] * max(pad, 0)))
        rows.append(grams)
    rows += [[] for _ in range(len(splits) - 1 - len(rows))]
    flat = np.empty(sum(len(r) for r in rows), STRING)
    flat[:] = [g for r in rows for g in r]
    lengths = np.array([len(r) for r in rows], np.int64)
    return RaggedTensor(flat, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))

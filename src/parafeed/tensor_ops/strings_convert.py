"""Strings to numbers and back: ``strings.to_number``, ``strings.as_string`` and ``strings.to_hash_bucket_fast``."""

from __future__ import annotations

import importlib
import re
from fractions import Fraction
from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.tensor_ops.strings_base import WHITESPACE, map_bytes, map_strings, out
from parafeed.values.elements import short_repr, to_leaf
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.structure import as_dtype, dtype_name

_NUMBER_TYPES = {
    np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint32),
    np.dtype(np.uint64),
}  # fmt: skip
_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")
_SPECIAL = re.compile(rb"([+-]?)(inf|infinity|nan(?:\([0-9A-Za-z_]*\))?)", re.I)
_INTEGER = re.compile(rb"[+-]?\d+")


def to_number(string_tensor: Any, out_type: Any = np.float32, name: Any = None) -> Any:
    """Parse every string as a number of ``out_type`` (``tf.strings.to_number``): float32 (default), float64,
    int32, int64, uint32 or uint64.

    Floats accept what TensorFlow's parser accepts: decimals with an optional exponent, hexadecimal (``0x1.8p3``),
    ``inf`` / ``infinity`` / ``nan`` in any case, surrounding ASCII whitespace; out-of-range values become
    infinities; float32 is rounded correctly from the decimal (not through float64), as TensorFlow rounds it.
    Integers are decimal digits with an optional sign; out of range is an error. A string that does not parse
    raises :class:`~parafeed.errors.InvalidArgumentError`.

    Example:
        >>> pf.strings.to_number(["1.5", " -2 "]).tolist()
        [1.5, -2.0]
    """
    op = "strings.to_number()"
    dtype = as_dtype(out_type)
    if dtype not in _NUMBER_TYPES:
        raise InvalidArgumentError(
            f"{op}: out_type must be float32, float64, int32, int64, uint32 or uint64, got {dtype_name(dtype)}"
        )
    parse = _parse_float if dtype.kind == "f" else _parse_int

    def convert(s: bytes) -> Any:
        value = parse(s.strip(WHITESPACE), dtype)
        if value is None:
            raise InvalidArgumentError(
                f"{op}: cannot convert {short_repr(s)} to {dtype_name(dtype)}; clean the strings first (e.g. "
                "with strings.regex_replace) or filter them out"
            )
        return value

    return map_strings(string_tensor, op, convert, dtype)


def _parse_int(s: bytes, dtype: np.dtype) -> int | None:
    if not _INTEGER.fullmatch(s):
        return None
    value = int(s)
    info = np.iinfo(dtype)
    if (dtype.kind == "u" and s.startswith(b"-")) or not info.min <= value <= info.max:
        return None
    return value


def _parse_float(s: bytes, dtype: np.dtype) -> Any:
    special = _SPECIAL.fullmatch(s)
    if special:
        value = float("nan") if special.group(2)[:1].lower() == b"n" else float("inf")
        return -value if special.group(1) == b"-" else value
    if _DECIMAL.fullmatch(s):
        double = float(s)
    elif _HEX.fullmatch(s):
        try:
            double = float.fromhex(s.decode())
        except OverflowError:
            double = float("-inf") if s.startswith(b"-") else float("inf")
    else:
        return None
    if dtype == np.float64:
        return double
    with np.errstate(over="ignore"):
        single = np.float32(double)
        toward = np.float32(np.inf if double > float(single) else -np.inf)
        other = np.nextafter(single, toward)
    # rounding twice (to float64, then float32) errs only where float64 lands on a tie of float32 neighbours
    if np.isfinite(other) and float(single) != double and (float(single) + float(other)) / 2 == double:
        exact = _exact(s)
        if exact != Fraction(double):
            return other if (exact > Fraction(double)) == (double > float(single)) else single
    return single


def _exact(s: bytes) -> Fraction:
    """The exact value of a decimal or hexadecimal number."""
    text = s.decode().lower()
    if "x" not in text:
        return Fraction(text)
    sign = -1 if text.startswith("-") else 1
    mantissa, _, exponent = text.lstrip("+-")[2:].partition("p")
    whole, _, frac = mantissa.partition(".")
    return sign * Fraction(int(whole + frac or "0", 16), 16 ** len(frac)) * Fraction(2) ** int(exponent or "0")


def as_string(input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False, width: int = -1,
              fill: str = "", name: Any = None) -> Any:  # fmt: skip
    """Format every number as a string (``tf.strings.as_string``), as C's printf does: ``%d`` for integers, ``%f``
    (``%e`` with ``scientific``, ``%g`` with ``shortest``) for floats, ``(re,im)`` for complex numbers,
    ``true`` / ``false`` for bools; ``precision``, ``width`` and a ``fill`` of ``" "``, ``"0"``, ``"-"``, ``"+"``
    or ``"#"`` (printf's flags) as TensorFlow adds them.

    Example:
        >>> pf.strings.as_string([1.5, 2.0], precision=1).tolist()
        [b'1.5', b'2.0']
    """
    op = "strings.as_string()"
    values = input.flat_values if isinstance(input, RaggedTensor) else np.asarray(to_leaf(input, op))
    kind = values.dtype.kind
    if kind not in "biufcOSU":
        raise ArgumentTypeError(f"{op}: cannot format values of dtype {values.dtype}")
    fill = fill.decode() if isinstance(fill, bytes) else str(fill)
    if len(fill) > 1:
        raise InvalidArgumentError(f"{op}: fill must be one character or empty, got {fill!r}")
    if fill and fill not in " +-0#":
        raise InvalidArgumentError(f"{op}: fill {fill!r} is not supported; use ' ', '0', '-', '+' or '#'")
    floating = kind in "fc"
    if (scientific or shortest) and not floating:
        raise InvalidArgumentError(f"{op}: scientific and shortest formats need floats, got {values.dtype}")
    if scientific and shortest:
        raise InvalidArgumentError(f"{op}: choose scientific or shortest notation, not both")
    if precision > -1 and not floating:
        raise InvalidArgumentError(f"{op}: precision is not supported for {values.dtype}; it needs floats")
    spec = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    if kind in "iu":
        fmt = (spec.replace("+", "").replace(" ", "") if kind == "u" else spec) + "d"  # (C's %u has no sign)
        result = map_bytes(values.astype(object), lambda v: (fmt % v).encode())
    elif kind == "b":
        result = map_bytes(values.astype(object), lambda v: b"true" if v else b"false")
    elif kind in "OSU":
        fmt = spec + "s"
        strings = values if kind == "O" else values.astype(object)
        result = map_bytes(strings, lambda v: (fmt % _text(v)).encode("utf-8", "surrogateescape"))
    else:
        fmt = spec + ("e" if scientific else "g" if shortest else "f")
        if kind == "c":
            result = map_bytes(values.astype(object), lambda v: f"({_c(fmt, v.real)},{_c(fmt, v.imag)})".encode())
        else:
            result = map_bytes(values.astype(object), lambda v: _c(fmt, v).encode())
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(result)
    return out(result)


def _text(v: Any) -> str:
    return v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else str(v)


def _c(fmt: str, v: Any) -> str:
    if np.isfinite(v):
        return fmt % float(v)
    fmt = fmt.replace("%0", "%", 1)  # C pads infinities and NaNs with spaces, never zeros
    if np.isnan(v) and np.signbit(v):  # C prints a NaN's sign, Python does not
        return (fmt % float("-inf")).replace("inf", "nan")
    return fmt % float(v)


def to_hash_bucket_fast(input: Any, num_buckets: int, name: Any = None) -> Any:
    """Every string's FarmHash Fingerprint64 modulo ``num_buckets`` (``tf.strings.to_hash_bucket_fast``): int64,
    the same buckets as TensorFlow. Needs the ``pyfarmhash`` package (``pip install pyfarmhash``).

    Example:
        >>> int(pf.strings.to_hash_bucket_fast("hello", 2**31 - 1))
        441440317
    """
    op = "strings.to_hash_bucket_fast()"
    if isinstance(num_buckets, (bool, np.bool_)) or not isinstance(num_buckets, (int, np.integer)):
        raise ArgumentTypeError(f"{op}: num_buckets must be an int, got {num_buckets!r}")
    if num_buckets < 1:
        raise InvalidArgumentError(f"{op}: num_buckets must be at least 1, got {num_buckets}")
    try:
        farmhash = importlib.import_module("farmhash")  # (pyfarmhash: optional, untyped)
    except ImportError:
        raise ImportError(
            f"{op}: needs FarmHash's Fingerprint64, from the pyfarmhash package: pip install 'parafeed[text]'"
        ) from None
    buckets = int(num_buckets)
    return map_strings(input, op, lambda s: farmhash.fingerprint64(s) % buckets, np.int64)

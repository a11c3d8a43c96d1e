"""``pf.math``: TensorFlow's math operations on NumPy (arithmetic, comparisons, logic, reductions, elementwise
functions), with its dtype rules: both operands of one dtype (a Python number takes the tensor's), integer division
rounding toward negative infinity for ``//`` and ``floormod``, ``divide`` of integers giving floats, ``round`` to
even, ``reduce_mean`` of integers an integer. Every result a :class:`~parafeed.values.tensor.Tensor`; TensorFlow's
top-level names (``pf.maximum``, ``pf.reduce_sum``, ``pf.equal`` ...) are these functions.

Checked against TensorFlow by tests/differential/test_tensor_ops.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.tensor_ops.convert import array, axes_arg, axis_arg, is_python, out, pair
from parafeed.values.structure import STRING, as_dtype, dtype_name
from parafeed.values.tensor import Tensor

_NUMBERS = "iufc"


def _binary(op: str, fn: Callable[[np.ndarray, np.ndarray], Any], kinds: str = _NUMBERS + "b",
            kernel_first: bool = False) -> Callable[..., Any]:  # fmt: skip
    """``kernel_first``: the dtype is checked before a Python operand is converted (TensorFlow's order for ``add``)."""

    def apply(x: Any, y: Any, name: str | None = None) -> Tensor:
        if kernel_first:
            supported(op, array(y if is_python(x) else x, f"{op}()").dtype, kinds)
        a, b = pair(x, y, f"{op}()")
        supported(op, a.dtype, kinds)
        try:
            with np.errstate(all="ignore"):
                return out(np.asarray(fn(a, b)))
        except ValueError as err:  # shapes that do not broadcast
            raise InvalidArgumentError(
                f"{op}(): Incompatible shapes: {list(a.shape)} vs. {list(b.shape)} ({err})"
            ) from None

    apply.__name__ = apply.__qualname__ = op
    return apply


def supported(op: str, dtype: np.dtype, kinds: str) -> None:
    """TensorFlow's InvalidArgumentError for an operation it has no kernel of ``dtype`` for (``kinds``: NumPy's
    dtype kinds, ``S`` for strings)."""
    if ("S" not in kinds) if dtype == STRING else (dtype.kind not in kinds):
        raise InvalidArgumentError(f"{op}(): not defined for {dtype_name(dtype)} tensors; cast them first (pf.cast)")


def _string_equal(fn: Callable[[Any, Any], Any]) -> Callable[[np.ndarray, np.ndarray], Any]:
    def compare(a: np.ndarray, b: np.ndarray) -> Any:
        if a.dtype == STRING:
            return np.asarray(np.frompyfunc(fn, 2, 1)(a, b), dtype=bool)  # (a Python bool for 0-d inputs)
        return fn(a, b)

    return compare


add = _binary("add", lambda a, b: np.char.add(a.astype(bytes), b.astype(bytes)).astype(object) if a.dtype == STRING
              else a + b, _NUMBERS + "S", kernel_first=True)  # fmt: skip
subtract = _binary("subtract", np.subtract, _NUMBERS)
multiply = _binary("multiply", np.multiply, _NUMBERS)
maximum = _binary("maximum", np.maximum, _NUMBERS)
minimum = _binary("minimum", np.minimum, _NUMBERS)
equal = _binary("equal", _string_equal(lambda a, b: a == b), _NUMBERS + "bS")
not_equal = _binary("not_equal", _string_equal(lambda a, b: a != b), _NUMBERS + "bS")
less = _binary("less", np.less, "iuf")
less_equal = _binary("less_equal", np.less_equal, "iuf")
greater = _binary("greater", np.greater, "iuf")
greater_equal = _binary("greater_equal", np.greater_equal, "iuf")
logical_and = _binary("logical_and", np.logical_and, "b")
logical_or = _binary("logical_or", np.logical_or, "b")
logical_xor = _binary("logical_xor", np.logical_xor, "b")
squared_difference = _binary("squared_difference", lambda a, b: (a - b) * np.conj(a - b), _NUMBERS)
pow = _binary("pow", np.power, _NUMBERS)
atan2 = _binary("atan2", np.arctan2, "f")


def _int_div(op: str, floor: bool) -> Callable[..., Any]:
    def apply(x: Any, y: Any, name: str | None = None) -> Tensor:
        a, b = pair(x, y, f"{op}()")
        supported(op, a.dtype, "iuf")
        if a.dtype.kind in "iu" and (np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)) == 0).any():
            raise InvalidArgumentError(f"{op}(): Integer division by zero")
        with np.errstate(all="ignore"):
            if floor:  # (of floats: floor(x / y), as TensorFlow computes it)
                return out(np.floor_divide(a, b) if a.dtype.kind in "iu" else np.floor(a / b))
            return out(np.remainder(a, b))

    apply.__name__ = apply.__qualname__ = op
    return apply


floordiv = _int_div("floordiv", True)
floor_div = floordiv
floormod = _int_div("floormod", False)
mod = floormod


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.truediv``: integers become floats first (int8/16/uint8/16 float32, int32/64 float64)."""
    a, b = array(x, "truediv()"), array(y, "truediv()")
    if not is_python(x) and not is_python(y) and a.dtype != b.dtype:
        raise ArgumentTypeError(
            f"truediv(): x and y must have the same dtype, got {dtype_name(a.dtype)} != {dtype_name(b.dtype)}"
        )
    a, b = pair(x, y, "truediv()")
    if a.dtype.kind not in _NUMBERS:
        raise ArgumentTypeError(f"truediv(): Invalid dtype {dtype_name(a.dtype)} in truediv; cast it to a number first")
    if a.dtype.kind in "iu":
        target = np.float32 if a.dtype.itemsize <= 2 else np.float64
        a, b = a.astype(target), b.astype(target)
    with np.errstate(all="ignore"):
        return out(np.true_divide(a, b))


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    return truediv(x, y)


def div_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    a, b = pair(x, y, "div_no_nan()")
    with np.errstate(all="ignore"):
        return out(np.where(b == 0, np.zeros((), a.dtype), np.true_divide(a, b)).astype(a.dtype))


def logical_not(x: Any, name: str | None = None) -> Tensor:
    a = array(x, "logical_not()")
    supported("logical_not", a.dtype, "b")
    return out(np.logical_not(a))


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Tensor:
    a = array(t, "clip_by_value()")
    lo, _ = pair(clip_value_min, a, "clip_by_value()")
    hi, _ = pair(clip_value_max, a, "clip_by_value()")
    return out(np.minimum(np.maximum(a, lo), hi))


def _unary(op: str, fn: Callable[[np.ndarray], Any], kinds: str = "f") -> Callable[..., Any]:
    def apply(x: Any, name: str | None = None) -> Tensor:
        a = array(x, f"{op}()")
        supported(op, a.dtype, kinds)
        with np.errstate(all="ignore"):
            return out(np.asarray(fn(a)).astype(a.dtype if a.dtype.kind != "c" or op != "abs" else a.real.dtype))

    apply.__name__ = apply.__qualname__ = op
    return apply


abs = _unary("abs", np.abs, "ifc")
negative = _unary("negative", np.negative, "ifc")
sign = _unary("sign", np.sign, "ifc")
square = _unary("square", np.square, "iufc")
sqrt = _unary("sqrt", np.sqrt, "fc")
rsqrt = _unary("rsqrt", lambda a: 1 / np.sqrt(a), "fc")
exp = _unary("exp", np.exp, "fc")
log = _unary("log", np.log, "fc")
log1p = _unary("log1p", np.log1p, "fc")
floor = _unary("floor", np.floor)
ceil = _unary("ceil", np.ceil)
round = _unary("round", np.rint, "iuf")
rint = _unary("rint", np.rint, "f")
sigmoid = _unary("sigmoid", lambda a: 1 / (1 + np.exp(-a)), "fc")
tanh = _unary("tanh", np.tanh, "fc")
sin, cos, tan = _unary("sin", np.sin, "fc"), _unary("cos", np.cos, "fc"), _unary("tan", np.tan, "fc")
reciprocal = _unary("reciprocal", lambda a: 1 / a, "fc")
is_nan, is_inf, is_finite = (_unary(n, f, "f") for n, f in (("is_nan", np.isnan), ("is_inf", np.isinf),
                                                              ("is_finite", np.isfinite)))  # fmt: skip


def _reduction(op: str, fn: Callable[..., Any], kinds: str) -> Callable[..., Any]:
    def apply(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
        a = array(input_tensor, f"{op}()")
        supported(op, a.dtype, kinds)
        axes = axes_arg(axis, a.ndim, f"{op}()")
        with np.errstate(all="ignore"):
            return out(np.asarray(fn(a, axes, bool(keepdims))))

    apply.__name__ = apply.__qualname__ = op
    return apply


def _mean(a: np.ndarray, axes: Any, keepdims: bool) -> Any:
    if a.dtype.kind in "iu":  # an integer mean is an integer (the sum divided, toward zero)
        total = np.sum(a, axis=axes, keepdims=keepdims, dtype=np.int64 if a.dtype.kind == "i" else np.uint64)
        count = a.size // max(np.size(total), 1) if a.size else 0
        if not count:
            return np.zeros_like(total).astype(a.dtype)
        return np.where(total < 0, -(-total // count), total // count).astype(a.dtype)  # (toward zero, exactly)
    return np.mean(a, axis=axes, keepdims=keepdims).astype(a.dtype)


def _extreme(fn: Callable[..., Any]) -> Callable[..., Any]:
    def reduce(a: np.ndarray, axes: Any, keepdims: bool) -> Any:
        if a.size == 0:  # TensorFlow's identity of max / min: the lowest / highest value of the dtype
            shape = np.sum(np.zeros(a.shape, np.int8), axis=axes, keepdims=keepdims).shape
            info = np.finfo(a.dtype) if a.dtype.kind == "f" else np.iinfo(a.dtype)
            value = (-np.inf if a.dtype.kind == "f" else info.min) if fn is np.max else (
                np.inf if a.dtype.kind == "f" else info.max)  # fmt: skip
            return np.full(shape, value, a.dtype)
        return fn(a, axis=axes, keepdims=keepdims)

    return reduce


reduce_sum = _reduction("reduce_sum", lambda a, x, k: np.sum(a, axis=x, keepdims=k, dtype=a.dtype), _NUMBERS)
reduce_prod = _reduction("reduce_prod", lambda a, x, k: np.prod(a, axis=x, keepdims=k, dtype=a.dtype), _NUMBERS)
reduce_mean = _reduction("reduce_mean", _mean, _NUMBERS)
reduce_max = _reduction("reduce_max", _extreme(np.max), "iuf")
reduce_min = _reduction("reduce_min", _extreme(np.min), "iuf")
reduce_any = _reduction("reduce_any", lambda a, x, k: np.any(a, axis=x, keepdims=k), "b")
reduce_all = _reduction("reduce_all", lambda a, x, k: np.all(a, axis=x, keepdims=k), "b")
reduce_std = _reduction("reduce_std", lambda a, x, k: np.std(a, axis=x, keepdims=k).astype(a.dtype), "fc")
reduce_variance = _reduction("reduce_variance", lambda a, x, k: np.var(a, axis=x, keepdims=k).astype(a.dtype), "fc")
reduce_logsumexp = _reduction(
    "reduce_logsumexp", lambda a, x, k: np.log(np.sum(np.exp(a), axis=x, keepdims=k)).astype(a.dtype), "f"
)


def _arg(op: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def apply(input: Any, axis: Any = None, output_type: Any = "int64", name: str | None = None) -> Tensor:
        a = array(input, f"{op}()")
        ax = axis_arg(0 if axis is None else axis, a.ndim, f"{op}()")
        if a.shape[ax] == 0:
            raise InvalidArgumentError(f"{op}(): Reduction axis {ax} is empty in shape {list(a.shape)}")
        return out(fn(a, axis=ax).astype(as_dtype(output_type)))

    apply.__name__ = apply.__qualname__ = op
    return apply


argmax = _arg("argmax", np.argmax)
argmin = _arg("argmin", np.argmin)


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    a = array(x, "cumsum()")
    supported("cumsum", a.dtype, _NUMBERS)
    if a.ndim == 0:
        raise InvalidArgumentError("cumsum(): the input must have rank >= 1, got a scalar")
    ax = axis_arg(axis, a.ndim, "cumsum()")
    b = np.flip(a, ax) if reverse else a
    c = np.cumsum(b, axis=ax, dtype=a.dtype)
    if exclusive:  # each sum moved one place on, a zero first
        shifted, to, source = np.zeros_like(c), [slice(None)] * c.ndim, [slice(None)] * c.ndim
        to[ax], source[ax] = slice(1, None), slice(None, -1)
        shifted[tuple(to)] = c[tuple(source)]
        c = shifted
    return out(np.flip(c, ax) if reverse else c)


def count_nonzero(input: Any, axis: Any = None, keepdims: bool = False, dtype: Any = "int64",
                  name: str | None = None) -> Tensor:  # fmt: skip
    a = array(input, "count_nonzero()")
    nonzero = a != (b"" if a.dtype == STRING else 0)
    axes = axes_arg(axis, a.ndim, "count_nonzero()")
    return out(np.asarray(np.sum(nonzero, axis=axes, keepdims=keepdims)).astype(as_dtype(dtype)))


def _segments(op: str, data: Any, segment_ids: Any, num_segments: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    values, ids = array(data, f"{op}()"), array(segment_ids, f"{op}()")
    if ids.dtype.kind not in "iu" or ids.shape != values.shape[: ids.ndim]:
        raise InvalidArgumentError(f"{op}(): `segment_ids` must be integers shaped like the start of `data`'s shape")
    n = int(ids.max(initial=-1)) + 1 if num_segments is None else int(np.asarray(num_segments))
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise InvalidArgumentError(f"{op}(): segment ids must be in [0, {n})")
    return values.reshape(-1, *values.shape[ids.ndim :]), ids.reshape(-1), n


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """``tf.math.unsorted_segment_sum``: the rows of ``data`` summed into ``num_segments`` segments by id."""
    values, ids, n = _segments("unsorted_segment_sum", data, segment_ids, num_segments)
    total = np.zeros((n, *values.shape[1:]), values.dtype)
    np.add.at(total, ids, values)
    return out(total)


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """``tf.math.segment_sum``: as :func:`unsorted_segment_sum` with sorted ids, as many segments as the last id."""
    ids = array(segment_ids, "segment_sum()")
    if ids.size > 1 and (np.diff(ids.reshape(-1)) < 0).any():
        raise InvalidArgumentError("segment_sum(): segment ids are not increasing")
    return unsorted_segment_sum(data, ids, None)


def add_n(inputs: Any, name: str | None = None) -> Tensor:
    arrays = [array(v, "add_n()") for v in inputs]
    total = arrays[0]
    for a in arrays[1:]:
        total = add(total, a)
    return out(total)


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, name: str | None = None) -> Tensor:
    x, y = pair(a, b, "matmul()")
    x = np.swapaxes(x, -1, -2) if transpose_a else x
    y = np.swapaxes(y, -1, -2) if transpose_b else y
    try:
        return out(np.matmul(x, y))
    except ValueError as err:
        raise InvalidArgumentError(f"matmul(): {err}") from None


def top_k(input: Any, k: int = 1, sorted: bool = True, name: str | None = None) -> tuple[Tensor, Tensor]:
    a = array(input, "top_k()")
    if a.ndim == 0 or not 0 <= int(k) <= a.shape[-1]:
        raise InvalidArgumentError(f"top_k(): input must have at least {k} columns, got shape {list(a.shape)}")
    order = np.argsort(-a if a.dtype.kind != "u" else a.max(initial=0) - a, axis=-1, kind="stable")[..., : int(k)]
    return out(np.take_along_axis(a, order, -1)), out(order.astype(np.int32))


def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:
    """``tf.complex``: float32 parts give complex64, float64 parts complex128 (both of one dtype, broadcast)."""
    a, b = array(real, "complex()"), array(imag, "complex()")
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        raise ArgumentTypeError(
            f"complex(): the parts must both be float32 or float64, got {dtype_name(a.dtype)} and {dtype_name(b.dtype)}"
        )
    result = np.empty(np.broadcast_shapes(a.shape, b.shape), np.complex64 if a.dtype == np.float32 else np.complex128)
    result.real, result.imag = a, b
    return out(result)


def real(input: Any, name: str | None = None) -> Tensor:
    """``tf.math.real``: the real part of a complex tensor; a real number tensor as it is."""
    return out(np.real(_numeric(input, "real()", "iufc")))


def imag(input: Any, name: str | None = None) -> Tensor:
    """``tf.math.imag``: the imaginary part of a complex tensor; zeros for a real one."""
    return out(np.imag(_numeric(input, "imag()", "biufc")))


def conj(x: Any, name: str | None = None) -> Tensor:
    """``tf.math.conj``: the complex conjugate; a real number tensor as it is."""
    return out(np.conj(_numeric(x, "conj()", "iufc")))


def angle(input: Any, name: str | None = None) -> Tensor:
    """``tf.math.angle``: the argument of complex values; pi for negative real values, 0 for the others."""
    a = _numeric(input, "angle()", "fc")
    return out(np.asarray(np.angle(a) if a.dtype.kind == "c" else np.where(a < 0, np.pi, 0.0), a.real.dtype))


def _numeric(value: Any, op: str, kinds: str) -> np.ndarray:
    a = array(value, op)
    if a.dtype == STRING or a.dtype.kind not in kinds:
        raise ArgumentTypeError(f"{op}: not defined for {dtype_name(a.dtype)} tensors")
    return a


__all__ = [
    "abs",
    "add",
    "add_n",
    "angle",
    "argmax",
    "argmin",
    "atan2",
    "ceil",
    "clip_by_value",
    "complex",
    "conj",
    "cos",
    "count_nonzero",
    "cumsum",
    "div_no_nan",
    "divide",
    "equal",
    "exp",
    "floor",
    "floor_div",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "imag",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "pow",
    "real",
    "reciprocal",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_std",
    "reduce_sum",
    "reduce_variance",
    "rint",
    "round",
    "rsqrt",
    "segment_sum",
    "sigmoid",
    "sign",
    "sin",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tan",
    "tanh",
    "top_k",
    "truediv",
    "unsorted_segment_sum",
]

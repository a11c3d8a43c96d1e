"""TensorFlow's array operations on NumPy (``pf.cast``, ``pf.reshape``, ``pf.shape``, ``pf.concat`` ...), with its
dtypes, shape checks and error classes; every result a :class:`~parafeed.values.tensor.Tensor`.

Checked against TensorFlow by tests/differential/test_tensor_ops.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.tensor_ops.convert import array, axes_arg, axis_arg, ints, is_python, out, pair
from parafeed.values.elements import to_element
from parafeed.values.sparse import SparseTensor
from parafeed.values.structure import STRING, as_dtype, dtype_name, spec_of
from parafeed.values.tensor import Tensor, TensorShape

# ------------------------------------------------------------------------------------------------ dtypes and values


def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    """``tf.cast``: floats to integers truncate toward zero, numbers to bool are ``!= 0``, complex to real drops the
    imaginary part; strings cannot be cast (``pf.strings.to_number``). A SparseTensor's values are cast."""
    if isinstance(x, SparseTensor):
        return SparseTensor(x.indices, cast(x.values, dtype), x.dense_shape)
    target = as_dtype(dtype)
    arr = array(x, "cast()")
    if (arr.dtype == STRING) != (target == STRING):
        raise ArgumentTypeError(
            f"cast(): cannot cast {dtype_name(arr.dtype)} to {dtype_name(target)}; use pf.strings.to_number or "
            "pf.strings.as_string"
        )
    with np.errstate(invalid="ignore", over="ignore"):
        if arr.dtype.kind == "c" and target.kind != "c":
            arr = arr.real
        return out(arr.astype(target))


def _caster(dtype: Any) -> Callable[..., Any]:
    def to(x: Any, name: str | None = None) -> Any:
        return cast(x, dtype)

    return to


to_int32, to_int64, to_float, to_double = _caster("int32"), _caster("int64"), _caster("float32"), _caster("float64")


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """``tf.dtypes.saturate_cast``: values clipped to the target's range before the cast."""
    target, arr = as_dtype(dtype), array(value, "saturate_cast()")
    if target.kind in "iu" and arr.dtype.kind in "iuf":
        info = np.iinfo(target)
        arr = np.clip(arr, max(info.min, _lowest(arr.dtype)), info.max)
    return cast(arr, target)


def _lowest(dtype: np.dtype) -> Any:
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Tensor:
    """``tf.constant``: ``value`` converted (to ``dtype`` if given); with ``shape``, a scalar is broadcast and a
    value of as many elements reshaped."""
    arr = array(value, "constant()", dtype) if is_python(value) or dtype is None else _converted(value, dtype)
    if shape is not None:
        dims = ints(shape, "constant()", "shape")
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), dims).copy()
        elif arr.size == int(np.prod(dims, dtype=np.int64)):
            arr = arr.reshape(dims)
        else:
            raise ArgumentTypeError(
                f"constant(): Eager execution of tf.constant with unsupported shape: value has {arr.size} elements, "
                f"shape is {TensorShape(dims)} with {int(np.prod(dims))} elements"
            )
    return out(arr)


def _converted(value: Any, dtype: Any) -> np.ndarray:
    arr, target = array(value, "constant()"), as_dtype(dtype)
    if arr.dtype == target:
        return arr
    if (arr.dtype == STRING) != (target == STRING):
        raise ArgumentTypeError(f"constant(): cannot convert a {dtype_name(arr.dtype)} value to {dtype_name(target)}")
    return arr.astype(target)


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: str | None = None) -> Any:
    """``tf.convert_to_tensor``: a tensor keeps its dtype (another ``dtype`` is an error), a Python value takes
    ``dtype``, else ``dtype_hint`` where it fits, else TensorFlow's default."""
    if isinstance(value, SparseTensor):
        return value
    if dtype is None and dtype_hint is not None and is_python(value):
        try:
            return out(array(value, "convert_to_tensor()", dtype_hint))
        except (InvalidArgumentError, ArgumentTypeError):
            pass
    return out(array(value, "convert_to_tensor()", dtype))


def identity(input: Any, name: str | None = None) -> Any:
    return input if isinstance(input, SparseTensor) else out(array(input, "identity()"))


# ------------------------------------------------------------------------------------------------ shapes


def shape(input: Any, out_type: Any = "int32", name: str | None = None) -> Tensor:
    """``tf.shape``: the dimensions as a 1-D tensor (of a SparseTensor, its dense shape)."""
    dims = input.dense_shape if isinstance(input, SparseTensor) else np.shape(array(input, "shape()"))
    return out(np.asarray(dims, dtype=as_dtype(out_type)))


def size(input: Any, out_type: Any = "int32", name: str | None = None) -> Tensor:
    dims = input.dense_shape if isinstance(input, SparseTensor) else np.shape(array(input, "size()"))
    return out(np.asarray(int(np.prod(dims, dtype=np.int64)), dtype=as_dtype(out_type)))


def rank(input: Any, name: str | None = None) -> Tensor:
    dims = input.dense_shape if isinstance(input, SparseTensor) else np.shape(array(input, "rank()"))
    return out(np.int32(len(dims)))


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """``tf.reshape``: one dimension may be -1 (inferred); the sizes must agree (InvalidArgumentError)."""
    arr, dims = array(tensor, "reshape()"), ints(shape, "reshape()", "shape")
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise InvalidArgumentError(f"reshape(): only one dimension may be -1 and none below it, got {dims}")
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if (-1 not in dims and known != arr.size) or (-1 in dims and (known == 0 or arr.size % known)):
        raise InvalidArgumentError(
            f"reshape(): Input to reshape is a tensor with {arr.size} values, but the requested shape "
            f"{'requires a multiple of' if -1 in dims else 'has'} {known}"
        )
    return out(arr.reshape(dims))


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """``tf.ensure_shape``: ``x`` if its shape is compatible with ``shape``, else InvalidArgumentError."""
    arr = array(x, "ensure_shape()")
    if not TensorShape(np.shape(arr)).is_compatible_with(shape):
        raise InvalidArgumentError(
            f"ensure_shape(): Shape of tensor {TensorShape(np.shape(arr))} is not compatible with expected shape "
            f"{TensorShape(shape)}"
        )
    return out(arr)


def expand_dims(input: Any, axis: Any, name: str | None = None) -> Tensor:
    arr = array(input, "expand_dims()")
    a = int(np.asarray(axis).reshape(-1)[0]) if np.ndim(axis) else int(axis)
    if not -arr.ndim - 1 <= a <= arr.ndim:
        raise InvalidArgumentError(f"expand_dims(): axis {a} is out of range for a tensor of rank {arr.ndim}")
    return out(np.expand_dims(arr, a % (arr.ndim + 1)))


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Tensor:
    arr = array(input, "squeeze()")
    axes = axes_arg(axis, arr.ndim, "squeeze()")
    if axes is not None and any(arr.shape[a] != 1 for a in axes):
        bad = next(a for a in axes if arr.shape[a] != 1)
        raise InvalidArgumentError(
            f"squeeze(): Can not squeeze dim[{bad}], expected a dimension of 1, got {arr.shape[bad]}"
        )
    return out(np.squeeze(arr, axis=axes))


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:
    arr = array(input, "broadcast_to()")
    try:
        return out(np.broadcast_to(arr, ints(shape, "broadcast_to()", "shape")).copy())
    except ValueError as err:
        raise InvalidArgumentError(f"broadcast_to(): {err}") from None


# ------------------------------------------------------------------------------------------------ making tensors


def zeros(shape: Any, dtype: Any = "float32", name: str | None = None) -> Tensor:
    dt = as_dtype(dtype)
    return out(np.full(ints(shape, "zeros()", "shape"), b"" if dt == STRING else 0, dtype=dt))


def ones(shape: Any, dtype: Any = "float32", name: str | None = None) -> Tensor:
    return out(np.ones(ints(shape, "ones()", "shape"), dtype=as_dtype(dtype)))


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    v = array(value, "fill()")
    if v.ndim:
        raise InvalidArgumentError(f"fill(): `value` must be a scalar, got shape {v.shape}")
    return out(np.full(ints(dims, "fill()", "dims"), v[()], dtype=v.dtype))


def zeros_like(input: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    arr = array(input, "zeros_like()")
    return zeros(arr.shape, arr.dtype if dtype is None else dtype)


def ones_like(input: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    arr = array(input, "ones_like()")
    return ones(arr.shape, arr.dtype if dtype is None else dtype)


_RANGE_ORDER = [np.dtype(t) for t in ("int32", "int64", "float32", "float64")]  # (tf.range's widest of the arguments)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str | None = "range") -> Tensor:
    """``tf.range``: ints give int32, floats float32 (the widest of the arguments' dtypes when they are tensors)."""
    if limit is None:
        start, limit = 0, start
    values = [array(v, "range()") for v in (start, limit, delta)]
    dt = as_dtype(dtype) if dtype is not None else max((v.dtype for v in values), key=_RANGE_ORDER.index)
    if float(values[2]) == 0:
        raise InvalidArgumentError("range(): Requires delta != 0")
    return out(np.arange(values[0].item(), values[1].item(), values[2].item()).astype(dt))


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None, axis: Any = None, dtype: Any = None,
            name: str | None = None) -> Tensor:  # fmt: skip
    """``tf.one_hot``: an index out of ``[0, depth)`` gives a row of ``off_value``."""
    idx = array(indices, "one_hot()")
    given = on_value if on_value is not None else off_value
    dt = as_dtype(dtype) if dtype is not None else array(given, "one_hot()").dtype if given is not None else np.dtype(
        np.float32)  # fmt: skip
    n = int(depth)
    hot = idx[..., None] == np.arange(n)
    on = np.asarray(1 if on_value is None else array(on_value, "one_hot()"), dtype=dt)
    off = np.asarray(0 if off_value is None else array(off_value, "one_hot()"), dtype=dt)
    result = np.where(hot, on, off)
    a = -1 if axis is None else int(axis)
    return out(np.moveaxis(result, -1, a) if a != -1 else result)


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = "bool", name: str | None = None) -> Tensor:
    n = array(lengths, "sequence_mask()")
    m = int(n.max(initial=0)) if maxlen is None else int(maxlen)
    return out((np.arange(m) < n[..., None]).astype(as_dtype(dtype)))


# ------------------------------------------------------------------------------------------------ joining, splitting


def _joined(values: Any, op: str) -> list[np.ndarray]:
    """The tensors ``concat`` / ``stack`` join: Python values take the dtype of the tensors among them."""
    given = list(values)
    tensors = [array(v, op) for v in given if not is_python(v)]
    dtype = tensors[0].dtype if tensors else None
    return [array(v, op, dtype) if is_python(v) else array(v, op) for v in given]


def concat(values: Any, axis: Any, name: str | None = "concat") -> Tensor:
    arrays = _joined(values, "concat()")
    if not arrays:
        raise InvalidArgumentError("concat(): needs at least one tensor")
    _same_dtype(arrays, "concat()")
    a = axis_arg(axis, arrays[0].ndim, "concat()")
    try:
        return out(np.concatenate(arrays, axis=a))
    except ValueError as err:
        raise InvalidArgumentError(f"concat(): {err}") from None


def stack(values: Any, axis: Any = 0, name: str | None = "stack") -> Tensor:
    arrays = _joined(values, "stack()")
    if not arrays:
        raise InvalidArgumentError("stack(): needs at least one tensor")
    _same_dtype(arrays, "stack()")
    if len({a.shape for a in arrays}) > 1:
        raise InvalidArgumentError(f"stack(): the shapes differ: {sorted({a.shape for a in arrays})}")
    a = int(axis)
    if not -arrays[0].ndim - 1 <= a <= arrays[0].ndim:
        raise InvalidArgumentError(f"stack(): axis {a} is out of range for tensors of rank {arrays[0].ndim}")
    return out(np.stack(arrays, axis=a))


def unstack(value: Any, num: Any = None, axis: Any = 0, name: str | None = "unstack") -> list[Tensor]:
    arr = array(value, "unstack()")
    a = axis_arg(axis, arr.ndim, "unstack()")
    if num is not None and int(num) != arr.shape[a]:
        raise InvalidArgumentError(f"unstack(): num={num} but the dimension {a} is {arr.shape[a]}")
    return [out(x) for x in np.moveaxis(arr, a, 0)]


def split(value: Any, num_or_size_splits: Any, axis: Any = 0, num: Any = None, name: str | None = "split") -> list:
    arr = array(value, "split()")
    a = axis_arg(axis, arr.ndim, "split()")
    if np.ndim(num_or_size_splits) == 0:
        n = int(num_or_size_splits)
        if n <= 0 or arr.shape[a] % n:
            raise InvalidArgumentError(f"split(): Number of ways to split should evenly divide the split dimension, "
                                       f"but got split_dim {a} (size = {arr.shape[a]}) and num_split {n}")  # fmt: skip
        return [out(p) for p in np.split(arr, n, axis=a)]
    sizes = ints(num_or_size_splits, "split()", "num_or_size_splits")
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = arr.shape[a] - (sum(sizes) + 1)
    if sum(sizes) != arr.shape[a] or min(sizes, default=0) < 0:
        raise InvalidArgumentError(f"split(): the sizes {sizes} do not add up to the dimension's {arr.shape[a]}")
    return [out(p) for p in np.split(arr, np.cumsum(sizes)[:-1], axis=a)]


def _same_dtype(arrays: list[np.ndarray], op: str) -> None:
    if len({a.dtype for a in arrays}) > 1:
        raise InvalidArgumentError(
            f"{op}: the tensors have different dtypes ({', '.join(dtype_name(a.dtype) for a in arrays)}); cast them to "
            "one (pf.cast)"
        )


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:
    arr, reps = array(input, "tile()"), ints(multiples, "tile()", "multiples")
    if len(reps) != arr.ndim:
        raise InvalidArgumentError(f"tile(): Expected multiples argument to be a vector of length {arr.ndim} but got "
                                   f"length {len(reps)}")  # fmt: skip
    return out(np.tile(arr, reps))


def repeat(input: Any, repeats: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """``tf.repeat``: each value ``repeats`` times (a scalar, or one count per value along ``axis``); without an
    axis, of the flattened tensor."""
    arr = array(input, "repeat()")
    counts = np.asarray(repeats)
    counts = counts.astype(np.int64) if counts.size == 0 else counts
    if counts.dtype.kind not in "iu" or counts.ndim > 1 or (counts < 0).any():
        raise InvalidArgumentError(f"repeat(): `repeats` must be integers >= 0 (a scalar or a vector), got {repeats}")
    if axis is None or arr.ndim == 0:  # (a scalar repeats as a vector of one, as in TensorFlow)
        arr = arr.reshape(-1)
    ax = 0 if axis is None else axis_arg(axis, arr.ndim, "repeat()")
    if counts.ndim == 1 and counts.size not in (1, arr.shape[ax]):
        raise InvalidArgumentError(
            f"repeat(): {counts.size} repeats for {arr.shape[ax]} values along axis {ax}; give one count or one each"
        )
    return out(np.repeat(arr, counts.reshape(-1) if counts.ndim else int(counts), axis=ax))


def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0, name: str | None = None
) -> Tensor:
    arr = array(tensor, "pad()")
    widths = np.asarray(paddings).astype(np.int64)
    if widths.shape != (arr.ndim, 2) or (widths < 0).any():
        raise InvalidArgumentError(f"pad(): `paddings` must be {arr.ndim} pairs of values >= 0, got {widths.tolist()}")
    how = str(mode).upper()
    if how == "CONSTANT":
        fill = np.asarray(constant_values).astype(arr.dtype) if is_python(constant_values) else array(
            constant_values, "pad()", arr.dtype)  # fmt: skip
        return out(np.pad(arr, widths, constant_values=fill[()]))
    if how not in ("REFLECT", "SYMMETRIC"):
        raise InvalidArgumentError(f"pad(): `mode` must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")
    limit = np.asarray(arr.shape) - (how == "REFLECT")
    if (widths > limit[:, None]).any():
        raise InvalidArgumentError(f"pad(): paddings {widths.tolist()} are too large for {how} on shape {arr.shape}")
    return out(np.pad(arr, widths, mode="reflect" if how == "REFLECT" else "symmetric"))


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    arr = array(tensor, "reverse()")
    if arr.ndim == 0:
        return out(arr)  # (TensorFlow's: a scalar is its own reverse, whatever the axis)
    return out(np.flip(arr, axes_arg(axis, arr.ndim, "reverse()")))


def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: str | None = "transpose") -> Tensor:
    arr = array(a, "transpose()")
    order = None if perm is None else ints(perm, "transpose()", "perm")
    if order is not None and sorted(order) != list(np.arange(arr.ndim)):
        raise InvalidArgumentError(f"transpose(): `perm` {order} is not a permutation of 0..{arr.ndim - 1}")
    result = np.transpose(arr, order)
    return out(np.conj(result) if conjugate else result)


# ------------------------------------------------------------------------------------------------ picking


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:
    """``tf.slice``: ``size[i]`` of -1 takes the rest of dimension i; out of range is InvalidArgumentError."""
    arr = array(input_, "slice()")
    starts, sizes = ints(begin, "slice()", "begin"), ints(size, "slice()", "size")
    if len(starts) != arr.ndim or len(sizes) != arr.ndim:
        raise InvalidArgumentError(f"slice(): `begin` and `size` must have {arr.ndim} values (the rank)")
    index = []
    for b, s, d in zip(starts, sizes, arr.shape):
        e = d if s == -1 else b + s
        if b < 0 or s < -1 or e > d:
            raise InvalidArgumentError(f"slice(): Expected begin {b} and size {s} to lie in [0, {d}]")
        index.append(np.s_[b:e])
    return out(arr[tuple(index)])


def gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None, batch_dims: int = 0,
           name: str | None = None) -> Tensor:  # fmt: skip
    """``tf.gather``: an index out of range is InvalidArgumentError (as on TensorFlow's CPU)."""
    arr, idx = array(params, "gather()"), array(indices, "gather()")
    if idx.dtype.kind not in "iu":
        raise ArgumentTypeError(f"gather(): `indices` must be integers, got {dtype_name(idx.dtype)}")
    a = axis_arg(batch_dims if axis is None else axis, arr.ndim, "gather()")
    if int(np.prod(arr.shape[a + 1 :])) == 0 and not batch_dims:  # (TensorFlow takes nothing, checks nothing)
        return out(np.zeros(arr.shape[:a] + idx.shape + arr.shape[a + 1 :], arr.dtype))
    bad = (idx < 0) | (idx >= arr.shape[a])
    if bad.any():
        raise InvalidArgumentError(
            f"gather(): indices[{np.argwhere(bad)[0].tolist()}] = {idx[bad][0]} is not in [0, {arr.shape[a]})"
        )
    if batch_dims:
        return out(_batched_take(arr, idx, a, int(batch_dims) % max(idx.ndim, 1)))
    return out(np.take(arr, idx, axis=a))


def _batched_take(arr: np.ndarray, idx: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    if batch_dims == 0:
        return np.take(arr, idx, axis=axis)
    return np.stack([_batched_take(p, i, axis - 1, batch_dims - 1) for p, i in zip(arr, idx)])


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Tensor:
    arr, idx = array(params, "gather_nd()"), array(indices, "gather_nd()")
    if batch_dims:
        return out(np.stack([gather_nd(p, i, batch_dims - 1) for p, i in zip(arr, idx)]))
    depth = idx.shape[-1]
    if depth > arr.ndim:
        raise InvalidArgumentError(f"gather_nd(): index depth {depth} is larger than the rank {arr.ndim}")
    limits = np.asarray(arr.shape[:depth])
    bad = ((idx < 0) | (idx >= limits)).any(axis=-1)
    if bad.any():
        raise InvalidArgumentError(
            f"gather_nd(): indices{np.argwhere(bad)[0].tolist()} = {idx[bad][0].tolist()} does not index into "
            f"param shape {list(arr.shape)}"
        )
    return out(arr[tuple(np.moveaxis(idx, -1, 0))])


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """``tf.where``: with one argument the coordinates of the true values (int64, one row each); with three, ``x``
    where ``condition`` else ``y``, broadcast together."""
    cond = array(condition, "where()")
    if x is None and y is None:
        if cond.ndim == 0:
            raise InvalidArgumentError("where(): with one argument, `condition` must have rank >= 1")
        return out(np.argwhere(cond.astype(bool)).astype(np.int64))
    if x is None or y is None:
        raise InvalidArgumentError("where(): give both `x` and `y`, or neither")
    a, b = pair(x, y, "where()")
    if cond.dtype != np.bool_:
        raise ArgumentTypeError(f"where(): `condition` must be bool, got {dtype_name(cond.dtype)}")
    try:
        return out(np.where(cond, a, b))
    except ValueError as err:
        raise InvalidArgumentError(f"where(): {err}") from None


def boolean_mask(tensor: Any, mask: Any, axis: Any = None, name: str | None = "boolean_mask") -> Tensor:
    arr, m = array(tensor, "boolean_mask()"), array(mask, "boolean_mask()")
    a = 0 if axis is None else axis_arg(axis, arr.ndim, "boolean_mask()")
    if m.ndim == 0 or arr.shape[a : a + m.ndim] != m.shape:
        raise InvalidArgumentError(f"boolean_mask(): mask shape {m.shape} does not match the tensor's {arr.shape}")
    flat = arr.reshape((*arr.shape[:a], m.size, *arr.shape[a + m.ndim :]))
    return out(np.compress(m.reshape(-1).astype(bool), flat, axis=a))


def type_spec_from_value(value: Any) -> Any:
    """``tf.type_spec_from_value``: the spec of a value (a structure of them included), as an element's."""
    return spec_of(to_element(value, "type_spec_from_value()"))


def unique(x: Any, out_idx: Any = "int32", name: str | None = None) -> tuple[Tensor, Tensor]:
    """``tf.unique``: the values in order of first appearance, and each element's index into them."""
    arr = array(x, "unique()")
    if arr.ndim != 1:
        raise InvalidArgumentError(f"unique(): `x` must be 1-D, got shape {arr.shape}")
    values, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.size)
    return out(values[order]), out(rank_of[inverse.reshape(-1)].astype(as_dtype(out_idx)))


__all__ = [
    "boolean_mask",
    "broadcast_to",
    "cast",
    "concat",
    "constant",
    "convert_to_tensor",
    "ensure_shape",
    "expand_dims",
    "fill",
    "gather",
    "gather_nd",
    "identity",
    "one_hot",
    "ones",
    "ones_like",
    "pad",
    "range",
    "rank",
    "repeat",
    "reshape",
    "reverse",
    "saturate_cast",
    "sequence_mask",
    "shape",
    "size",
    "slice",
    "split",
    "squeeze",
    "stack",
    "tile",
    "to_double",
    "to_float",
    "to_int32",
    "to_int64",
    "transpose",
    "type_spec_from_value",
    "unique",
    "unstack",
    "where",
    "zeros",
    "zeros_like",
]

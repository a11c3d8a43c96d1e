"""``pf.sparse``: TensorFlow's ``tf.sparse`` operations on :class:`~parafeed.SparseTensor` (NumPy indices, values
and dense shape), with tf.sparse's names, arguments and results.

Indices are int64; values keep their dtype. Ops that TensorFlow documents as giving indices in row-major order
(``reorder``, ``concat``, ``transpose``, ``reduce_sum(output_is_sparse=True)``, ``fill_empty_rows`` by rows) do;
the others keep the input's order, as TensorFlow does. ``add`` of two SparseTensors merges them as TensorFlow's
kernel does, which assumes both in row-major order (``reorder`` them first if they are not).

Differences from TensorFlow: ``transpose`` refuses a ``perm`` that is not a permutation (TensorFlow gives a
meaningless result); out-of-bounds indices raise InvalidArgumentError where TensorFlow raises another error
(``reduce_sum``: InternalError).

Example:
    >>> st = pf.sparse.from_dense([[0, 5], [7, 0]])
    >>> st.indices.tolist(), pf.sparse.reduce_sum(st, axis=1).tolist()
    ([[0, 1], [1, 0]], [5, 7])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.values.elements import short_repr, to_leaf
from parafeed.values.sparse import SparseTensor
from parafeed.values.structure import STRING, dtype_name
from parafeed.values.tensor import export_tensor_results

__all__ = [
    "SparseTensor", "add", "concat", "expand_dims", "fill_empty_rows", "from_dense", "reduce_sum", "reorder",
    "reshape", "retain", "slice", "to_dense", "to_indicator", "transpose",
]  # fmt: skip


def _sparse(value: Any, op: str, what: str = "sp_input") -> SparseTensor:
    if isinstance(value, SparseTensor):
        return value
    if all(hasattr(value, f) for f in ("indices", "values", "dense_shape")):  # TensorFlow's SparseTensor(Value)
        fields = [np.asarray(f.numpy() if hasattr(f, "numpy") else f) for f in (value.indices, value.values,
                                                                               value.dense_shape)]  # fmt: skip
        return SparseTensor(*fields)
    raise ArgumentTypeError(f"{op}: `{what}` must be a SparseTensor, got {type(value).__name__} {short_repr(value)}")


def _make(indices: np.ndarray, values: np.ndarray, dense_shape: Any) -> SparseTensor:
    shape = np.asarray(dense_shape, np.int64).reshape(-1)
    return SparseTensor._trusted(
        np.ascontiguousarray(indices, np.int64).reshape(len(values), len(shape)), values, shape
    )


def _scalar(value: Any, dtype: np.dtype, op: str, what: str) -> Any:
    """A Python or NumPy scalar as a value of ``dtype``, as ``tf.convert_to_tensor(value, dtype)`` would take it."""
    arr = np.asarray(to_leaf(value, op))
    if arr.ndim:
        raise InvalidArgumentError(f"{op}: `{what}` must be a scalar, got shape {arr.shape}")
    kind, want = arr.dtype.kind, dtype.kind
    ok = (
        (want == "O" and kind in "OS")
        or (want in "iu" and kind in "iu")
        or (want in "fc" and kind in "iufc")
        or (want == "b" and kind == "b")
    )
    if not ok:
        raise ArgumentTypeError(f"{op}: cannot use {short_repr(value)} as a {dtype_name(dtype)} `{what}`")
    if isinstance(value, np.generic) and arr.dtype != dtype and kind != "O":
        raise InvalidArgumentError(f"{op}: `{what}` has dtype {arr.dtype}, the values {dtype_name(dtype)}")
    return arr.astype(dtype)[()] if want != "O" else bytes(arr[()])


def _order(indices: np.ndarray) -> np.ndarray:
    """The stable row-major order of ``indices``."""
    if indices.shape[1] == 0:
        return np.arange(len(indices))
    return np.lexsort(indices.T[::-1])


def _check_bounds(st: SparseTensor, op: str) -> None:
    bad = ((st.indices < 0) | (st.indices >= st.dense_shape)).any(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidArgumentError(
            f"{op}: indices[{k}] = {st.indices[k].tolist()} is out of bounds for dense shape {st.dense_shape.tolist()}"
        )


def _axis(axis: Any, rank: int, op: str) -> int:
    a = int(axis)
    if not -rank <= a < rank:
        raise InvalidArgumentError(f"{op}: axis {a} is out of range for rank {rank}")
    return a % rank


def reorder(sp_input: Any, name: Any = None) -> SparseTensor:
    """The same SparseTensor with its indices in row-major order (stable: repeated indices keep their order)."""
    st = _sparse(sp_input, "sparse.reorder()")
    order = _order(st.indices)
    return _make(st.indices[order], st.values[order], st.dense_shape)


def to_dense(sp_input: Any, default_value: Any = None, validate_indices: bool = True, name: Any = None) -> Any:
    """The dense array, ``default_value`` (0 or b"") where no value is given (``tf.sparse.to_dense``).

    With ``validate_indices``, indices must be in row-major order without repeats (``reorder`` first if they are
    not); without it, a repeated index takes its last value. Out-of-bounds indices always raise.
    """
    op = "sparse.to_dense()"
    st = _sparse(sp_input, op)
    dtype = st.values.dtype
    fill = (b"" if dtype == STRING else 0) if default_value is None else _scalar(default_value, dtype, op, "default")
    _check_bounds(st, op)
    if validate_indices and len(st.indices) > 1:
        diff = np.diff(st.indices, axis=0)
        moved = diff != 0
        first = moved.argmax(axis=1)
        step = diff[np.arange(len(diff)), first] if diff.shape[1] else np.zeros(len(diff), np.int64)
        bad = ~moved.any(axis=1) | (step < 0)
        if bad.any():
            k = int(np.argmax(bad)) + 1
            what = "repeated" if not moved[k - 1].any() else "out of order"
            raise InvalidArgumentError(
                f"{op}: indices[{k}] = {st.indices[k].tolist()} is {what}; call sparse.reorder() first (repeats "
                "must be removed), or pass validate_indices=False"
            )
    out = np.full(tuple(st.dense_shape.tolist()), fill, dtype=dtype)
    if len(st.values):
        if out.ndim:
            out[tuple(st.indices.T)] = st.values
        else:
            out[()] = st.values[-1]
    return out[()] if out.ndim == 0 else out


def from_dense(tensor: Any, name: Any = None) -> SparseTensor:
    """A SparseTensor of the non-zero (non-empty) values of a dense array, in row-major order."""
    op = "sparse.from_dense()"
    arr = np.asarray(to_leaf(tensor, op))
    if arr.ndim == 0:
        raise InvalidArgumentError(f"{op}: `tensor` must have rank >= 1, got a scalar")
    mask = arr != (b"" if arr.dtype == STRING else arr.dtype.type(0))
    return _make(np.argwhere(mask), arr[mask], arr.shape)


def reshape(sp_input: Any, shape: Any, name: Any = None) -> SparseTensor:
    """The same values in a dense shape of as many elements (one dimension may be -1); indices keep their order."""
    op = "sparse.reshape()"
    st = _sparse(sp_input, op)
    new = [int(d) for d in np.asarray(shape).reshape(-1).tolist()]
    total = int(np.prod(st.dense_shape))
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in new):
        raise InvalidArgumentError(f"{op}: shape {new} may have one -1 and no other negative dimension")
    known = int(np.prod([d for d in new if d != -1]))
    if unknown:
        if known == 0 or total % known:
            raise InvalidArgumentError(f"{op}: cannot infer the -1 in {new} for a dense shape of {total} elements")
        new[unknown[0]] = total // known
    if int(np.prod(new)) != total:
        raise InvalidArgumentError(
            f"{op}: dense shape {st.dense_shape.tolist()} has {total} elements, shape {new} has {int(np.prod(new))}"
        )
    linear = st.indices @ _strides(st.dense_shape.tolist()) if st.indices.shape[1] else np.zeros(len(st.values), int)
    columns = []
    for stride in _strides(new):
        columns.append(linear // stride)
        linear = linear % stride
    return _make(np.stack(columns, axis=1) if columns else np.zeros((len(st.values), 0)), st.values, new)


def _strides(shape: list[int]) -> np.ndarray:
    return np.array([int(np.prod(shape[k + 1 :])) for k in range(len(shape))], np.int64)


def slice(sp_input: Any, start: Any, size: Any, name: Any = None) -> SparseTensor:
    """The values within ``[start, start + size)`` of every dimension, their indices shifted by ``start``; the
    dense shape is cut at the input's end. Indices keep their order."""
    op = "sparse.slice()"
    st = _sparse(sp_input, op)
    rank = len(st.dense_shape)
    lo, n = (np.asarray(v, np.int64).reshape(-1) for v in (start, size))
    if len(lo) != rank or len(n) != rank:
        raise InvalidArgumentError(f"{op}: start and size must have {rank} values (the rank), got {len(lo)}, {len(n)}")
    # a slice that reaches the end is cut there; only one that ends inside needs a size >= 0 (TensorFlow's rule)
    shape = np.where(lo + n >= st.dense_shape, np.maximum(0, st.dense_shape - lo), n)
    if (shape < 0).any():
        raise InvalidArgumentError(f"{op}: size must be non-negative, got {n.tolist()}")
    keep = ((st.indices >= lo) & (st.indices < lo + n)).all(axis=1)
    return _make(st.indices[keep] - lo, st.values[keep], shape)


def concat(axis: Any, sp_inputs: Any, expand_nonconcat_dims: bool = False, name: Any = None) -> SparseTensor:
    """SparseTensors joined along ``axis`` (``tf.sparse.concat``), indices in row-major order. Other dimensions
    must match, unless ``expand_nonconcat_dims`` takes the largest of each. One input comes back as it is."""
    op = "sparse.concat()"
    inputs = [_sparse(x, op, f"sp_inputs[{i}]") for i, x in enumerate(sp_inputs)]
    if not inputs:
        raise InvalidArgumentError(f"{op}: sp_inputs is empty; give at least one SparseTensor")
    if len(inputs) == 1:  # (as TensorFlow: the input itself, in its order)
        return inputs[0]
    rank = len(inputs[0].dense_shape)
    for i, st in enumerate(inputs):
        if len(st.dense_shape) != rank or st.values.dtype != inputs[0].values.dtype:
            raise InvalidArgumentError(
                f"{op}: sp_inputs[{i}] has rank {len(st.dense_shape)} and dtype {dtype_name(st.values.dtype)}, "
                f"sp_inputs[0] rank {rank} and {dtype_name(inputs[0].values.dtype)}; they must be equal"
            )
    a = _axis(axis, rank, op)
    shapes = np.stack([st.dense_shape for st in inputs])
    others = np.delete(shapes, a, axis=1)
    if not expand_nonconcat_dims and (others != others[0]).any():
        raise InvalidArgumentError(
            f"{op}: shapes {shapes.tolist()} differ outside axis {a}; pass expand_nonconcat_dims=True to pad them"
        )
    shape = shapes.max(axis=0)
    shape[a] = shapes[:, a].sum()
    offsets = np.concatenate([[0], np.cumsum(shapes[:-1, a])])
    pieces = []
    for st, offset in zip(inputs, offsets):
        moved = st.indices.copy()
        moved[:, a] += offset
        pieces.append(moved)
    indices, values = np.concatenate(pieces), np.concatenate([st.values for st in inputs])
    order = _order(indices)
    return _make(indices[order], values[order], shape)


def to_indicator(sp_input: Any, vocab_size: int, name: Any = None) -> np.ndarray:
    """A dense bool array of the dense shape with the last dimension replaced by ``vocab_size``: True at each
    value of each row (``tf.sparse.to_indicator``); values must be in ``[0, vocab_size)``."""
    op = "sparse.to_indicator()"
    st = _sparse(sp_input, op)
    if st.values.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"{op}: the values must be integer ids, got {dtype_name(st.values.dtype)}")
    if len(st.dense_shape) == 0:
        raise InvalidArgumentError(f"{op}: sp_input must have rank >= 1, got a sparse scalar")
    ids = st.values.astype(np.int64)
    shape = [*st.dense_shape[:-1].tolist(), int(vocab_size)]
    indices = np.concatenate([st.indices[:, :-1], ids[:, None]], axis=1)
    _check_bounds(_make(indices, ids, shape), op)
    out = np.zeros(shape, np.bool_)
    out[tuple(indices.T)] = True
    return out


def retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The values where ``to_retain`` (one flag per value) is true; indices keep their order."""
    op = "sparse.retain()"
    st = _sparse(sp_input, op)
    keep = np.asarray(to_retain)
    if keep.shape != (len(st.values),):
        raise InvalidArgumentError(f"{op}: to_retain must have shape ({len(st.values)},), got {keep.shape}")
    keep = keep.astype(np.bool_)
    return _make(st.indices[keep], st.values[keep], st.dense_shape)


def fill_empty_rows(sp_input: Any, default_value: Any, name: Any = None) -> tuple[SparseTensor, np.ndarray]:
    """Every row (first dimension) without values gets ``default_value`` at index ``[row, 0, ...]``
    (``tf.sparse.fill_empty_rows``). Returns the SparseTensor, its values grouped by row (a row's values in their
    order), and a bool array marking the rows that were empty."""
    op = "sparse.fill_empty_rows()"
    st = _sparse(sp_input, op)
    if len(st.dense_shape) == 0:
        raise InvalidArgumentError(f"{op}: sp_input must have rank >= 1, got a sparse scalar")
    fill = _scalar(default_value, st.values.dtype, op, "default_value")
    rows = int(st.dense_shape[0])
    row_ids = st.indices[:, 0]
    bad = (row_ids < 0) | (row_ids >= rows)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidArgumentError(f"{op}: indices[{k}] = {st.indices[k].tolist()} has a row outside [0, {rows})")
    empty = np.bincount(row_ids, minlength=rows)[:rows] == 0 if rows else np.zeros(0, np.bool_)
    missing = np.flatnonzero(empty)
    extra = np.zeros((len(missing), len(st.dense_shape)), np.int64)
    extra[:, 0] = missing
    indices = np.concatenate([st.indices, extra])
    values = np.concatenate([st.values, np.full(len(missing), fill, dtype=st.values.dtype)])
    order = np.argsort(indices[:, 0], kind="stable")
    return _make(indices[order], values[order], st.dense_shape), empty


def reduce_sum(sp_input: Any, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False,
               name: Any = None) -> Any:  # fmt: skip
    """The sum of the values over ``axis`` (None: all), as a dense array or (``output_is_sparse``) a SparseTensor
    of the sums of the positions that had values, in row-major order (``tf.sparse.reduce_sum``)."""
    op = "sparse.reduce_sum()"
    st = _sparse(sp_input, op)
    if st.values.dtype.kind not in "iufc":
        raise InvalidArgumentError(f"{op}: cannot sum values of dtype {dtype_name(st.values.dtype)}")
    rank = len(st.dense_shape)
    given = range(rank) if axis is None else np.asarray(axis).reshape(-1).tolist()
    axes = sorted({_axis(a, rank, op) for a in given})
    _check_bounds(st, op)
    kept = [d for d in range(rank) if d not in axes]
    if keepdims:
        shape = [1 if d in axes else int(st.dense_shape[d]) for d in range(rank)]
        indices = st.indices * np.array([d not in axes for d in range(rank)], np.int64)
    else:
        shape = [int(st.dense_shape[d]) for d in kept]
        indices = st.indices[:, kept]
    if output_is_sparse:
        if len(st.values) == 0:
            return _make(np.zeros((0, len(shape))), st.values[:0], shape)
        unique, group = np.unique(indices, axis=0, return_inverse=True)
        sums = np.zeros(len(unique), st.values.dtype)
        np.add.at(sums, group.reshape(-1), st.values)
        return _make(unique, sums, shape)
    if not shape:
        total: Any = np.add.reduce(st.values, dtype=st.values.dtype)
        return total
    out = np.zeros(shape, st.values.dtype)
    np.add.at(out, tuple(indices.T), st.values)
    return out


def add(a: Any, b: Any, threshold: Any = 0) -> Any:
    """``a + b`` where one or both are SparseTensors (``tf.sparse.add``).

    Sparse + dense gives a dense array (the dense operand's shape must be the dense shape). Sparse + sparse merges
    the two index lists (TensorFlow's merge of row-major lists): values at one index are summed, and a sum is kept
    only when its magnitude is at least ``threshold``.
    """
    op = "sparse.add()"
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise ArgumentTypeError(f"{op}: at least one input must be a SparseTensor; for two dense arrays use a + b")
    if not isinstance(a, SparseTensor):
        a, b = b, a
    if not isinstance(b, SparseTensor):
        return _add_dense(a, b, op)
    if a.values.dtype != b.values.dtype:
        raise InvalidArgumentError(
            f"{op}: dtypes differ: {dtype_name(a.values.dtype)} and {dtype_name(b.values.dtype)}; cast one first"
        )
    if a.values.dtype.kind not in "iufc":
        raise ArgumentTypeError(f"{op}: cannot add values of dtype {dtype_name(a.values.dtype)}")
    if not np.array_equal(a.dense_shape, b.dense_shape):
        raise InvalidArgumentError(f"{op}: dense shapes differ: {a.dense_shape.tolist()} and {b.dense_shape.tolist()}")
    limit = float(abs(threshold))
    ai, bi = [tuple(r) for r in a.indices.tolist()], [tuple(r) for r in b.indices.tolist()]
    av, bv = a.values.tolist(), b.values.tolist()
    indices: list[tuple[int, ...]] = []
    values = []
    i = j = 0
    while i < len(ai) and j < len(bi):
        if ai[i] < bi[j]:
            indices.append(ai[i])
            values.append(av[i])
            i += 1
        elif bi[j] < ai[i]:
            indices.append(bi[j])
            values.append(bv[j])
            j += 1
        else:
            total = a.values.dtype.type(av[i]) + a.values.dtype.type(bv[j])
            if abs(total) >= limit:
                indices.append(ai[i])
                values.append(total)
            i, j = i + 1, j + 1
    indices += ai[i:] + bi[j:]
    values += av[i:] + bv[j:]
    return _make(np.array(indices, np.int64), np.array(values, a.values.dtype).reshape(-1), a.dense_shape)


def _add_dense(st: SparseTensor, dense: Any, op: str) -> np.ndarray:
    dtype = st.values.dtype
    if isinstance(dense, (np.ndarray, np.generic)):
        arr = np.asarray(dense)
        if arr.dtype != dtype:
            raise InvalidArgumentError(f"{op}: the dense operand is {arr.dtype}, the values {dtype_name(dtype)}")
    else:
        arr = np.asarray(to_leaf(dense, op))
        if arr.dtype.kind == "f" and dtype.kind in "iu":
            raise ArgumentTypeError(f"{op}: cannot add float {short_repr(dense)} to {dtype_name(dtype)} values")
        arr = arr.astype(dtype)
    if arr.shape != tuple(st.dense_shape.tolist()):
        raise InvalidArgumentError(
            f"{op}: the dense operand has shape {arr.shape}, the SparseTensor {st.dense_shape.tolist()}; they must "
            "be equal (no broadcasting)"
        )
    _check_bounds(st, op)
    out = arr.copy()
    np.add.at(out, tuple(st.indices.T), st.values)
    return out


def expand_dims(sp_input: Any, axis: Any = None, name: Any = None) -> SparseTensor:
    """A dimension of size 1 inserted at ``axis`` (None: at the end), as ``tf.sparse.expand_dims``."""
    op = "sparse.expand_dims()"
    st = _sparse(sp_input, op)
    rank = len(st.dense_shape)
    a = _axis(-1 if axis is None else axis, rank + 1, op)
    indices = np.insert(st.indices, a, 0, axis=1)
    return _make(indices, st.values, np.insert(st.dense_shape, a, 1))


def transpose(sp_input: Any, perm: Any = None, name: Any = None) -> SparseTensor:
    """Dimensions permuted by ``perm`` (default: reversed), indices in row-major order (``tf.sparse.transpose``)."""
    op = "sparse.transpose()"
    st = _sparse(sp_input, op)
    rank = len(st.dense_shape)
    order = list(range(rank))[::-1] if perm is None else [int(p) for p in np.asarray(perm).reshape(-1).tolist()]
    if sorted(order) != list(range(rank)):
        raise InvalidArgumentError(f"{op}: perm must be a permutation of 0..{rank - 1}, got {order}")
    indices = st.indices[:, order]
    rows = _order(indices)
    return _make(indices[rows], st.values[rows], st.dense_shape[order])


export_tensor_results(globals())  # (results as Tensors, as TensorFlow's operations return them)

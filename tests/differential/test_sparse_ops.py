"""pf.sparse against tf.sparse on the same SparseTensors, made by hypothesis: 1 to 3 dimensions, empty rows and empty
tensors, indices out of row-major order and repeated, numbers and strings. Same indices (in the same order), values,
dtypes and dense shapes, or the same kind of error (its Python base: ValueError / TensorFlow's InvalidArgumentError,
or TypeError)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from parafeed.errors import ParafeedError
from parafeed.tensor_ops import sparse as pfsp
from parafeed.values.sparse import SparseTensor
from parafeed.values.tensor import Tensor

tf = pytest.importorskip("tensorflow", reason="compared with tf.sparse (make test installs TensorFlow)")

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
TF = SimpleNamespace(sparse=tf.sparse, dense=tf.constant)
PF = SimpleNamespace(sparse=pfsp, dense=lambda x: x)


def canon(x):
    if isinstance(x, (tuple, list)):
        return tuple(canon(v) for v in x)
    if isinstance(x, tf.SparseTensor):
        return ("sparse", x.indices.numpy().tolist(), _plain(x.values.numpy()), _dtype(x.values.dtype.as_numpy_dtype),
                x.dense_shape.numpy().tolist(), x.indices.dtype.name, x.dense_shape.dtype.name)  # fmt: skip
    if isinstance(x, SparseTensor):
        return ("sparse", x.indices.tolist(), _plain(x.values), _dtype(x.values.dtype), x.dense_shape.tolist(),
                x.indices.dtype.name, x.dense_shape.dtype.name)  # fmt: skip
    if isinstance(x, tf.Tensor):
        value = x.numpy()  # (a 0-d string is bytes: through NumPy, its trailing NUL bytes would be lost)
        plain = [value] if isinstance(value, bytes) else _plain(value)
        return ("dense", plain, _dtype(x.dtype.as_numpy_dtype), tuple(x.shape))
    if isinstance(x, Tensor):  # (pf.s operations return Tensors, 0-d ones included, as TensorFlow's do)
        x = x.numpy()
    if isinstance(x, bytes):
        return ("dense", [x], "string", ())
    arr = np.asarray(x)
    return ("dense", _plain(arr), _dtype(arr.dtype), arr.shape)


def _dtype(dtype):
    return "string" if np.dtype(dtype) == object else np.dtype(dtype).name


def _plain(arr):
    arr = np.asarray(arr)
    if arr.dtype.kind in "fc":
        return [("nan" if isinstance(v, float) and math.isnan(v) else v) for v in arr.reshape(-1).tolist()]
    return arr.reshape(-1).tolist()


def outcome(fn, lib):
    try:
        return "ok", canon(fn(lib))
    except TypeError as err:
        return "error", "type", err
    except (ValueError, tf.errors.InvalidArgumentError, tf.errors.InternalError, IndexError) as err:
        # (TensorFlow's InternalError for an index out of bounds in reduce_sum, IndexError for a perm too long for a
        # 1-D transpose: parafeed raises InvalidArgumentError)
        return "error", "value", err


def check(fn):
    want, got = outcome(fn, TF), outcome(fn, PF)
    assert got[:2] == want[:2], (got, want)
    if got[0] == "error":
        assert isinstance(got[2], ParafeedError), got
        assert str(got[2]).split(":")[0].endswith("()"), f"the message names the op: {got[2]}"


# ------------------------------------------------------------------------------------------------ inputs

DTYPES = st.sampled_from([np.int32, np.int64, np.float32, np.float64, object])


def _values(dtype, n):
    if dtype is object:
        return st.lists(st.sampled_from([b"", b"a", b"bc", b"\xff"]), min_size=n, max_size=n).map(
            lambda v: np.array([*v, b""], dtype=object)[:n]
        )
    return hnp.arrays(dtype, n, elements=st.integers(-5, 5))  # (integer floats: sums in any order agree)


@st.composite
def sparse(draw, rank=None, dtype=None, ordered=None, in_bounds=True, shape=None, max_entries=6):
    """``(indices, values, dense_shape)`` as NumPy arrays."""
    if shape is None:
        rank = draw(st.integers(1, 3)) if rank is None else rank
        shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    dtype = draw(DTYPES) if dtype is None else dtype
    size = math.prod(shape)
    if size == 0 or not in_bounds:
        n = 0 if in_bounds else draw(st.integers(1, 3))
        indices = [[draw(st.integers(-1, d + 1)) for d in shape] for _ in range(n)]
    else:
        flat = draw(st.lists(st.integers(0, size - 1), max_size=max_entries, unique=not draw(st.booleans())))
        indices = [list(np.unravel_index(f, shape)) for f in flat]
    if ordered if ordered is not None else draw(st.booleans()):
        indices.sort()
    values = draw(_values(dtype, len(indices)))
    return np.array(indices, np.int64).reshape(len(indices), len(shape)), values, np.array(shape, np.int64)


def make(lib, parts):
    indices, values, shape = parts
    if lib is TF:
        return tf.SparseTensor(tf.constant(indices, tf.int64), tf.constant(values, _tf_dtype(values)),
                               tf.constant(shape, tf.int64))  # fmt: skip
    return SparseTensor(indices, values, shape)


def _tf_dtype(values):
    return tf.string if values.dtype == object else tf.as_dtype(values.dtype)


def unique_ordered(parts):
    """The same tensor without repeated indices, in row-major order (what most kernels expect)."""
    indices, values, shape = parts
    seen = {}
    for k, idx in enumerate(map(tuple, indices.tolist())):
        seen.setdefault(idx, k)
    keep = [seen[idx] for idx in sorted(seen)]
    return indices[keep].reshape(len(keep), len(shape)), values[keep], shape


# ------------------------------------------------------------------------------------------------ the ops


@SETTINGS
@given(sparse(), st.booleans(), st.sampled_from([None, 7, 2.5, "z"]))
def test_to_dense(parts, validate, default):
    if default is not None and parts[1].dtype != object and isinstance(default, str):
        default = None
    check(lambda L: L.sparse.to_dense(make(L, parts), default_value=default, validate_indices=validate))


@SETTINGS
@given(sparse(in_bounds=False), st.booleans())
def test_to_dense_out_of_bounds(parts, validate):
    check(lambda L: L.sparse.to_dense(make(L, parts), validate_indices=validate))


@SETTINGS
@given(st.sampled_from([np.int32, np.float32, np.bool_, np.uint8]).flatmap(
    lambda d: hnp.arrays(d, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
                         elements=st.sampled_from([0, 1, -2]) if d != np.bool_ and d != np.uint8 else None)))  # fmt: skip
def test_from_dense(dense):
    check(lambda L: L.sparse.from_dense(L.dense(dense)))
    check(lambda L: L.sparse.from_dense(L.dense(dense.astype(str).astype(object))))


@SETTINGS
@given(sparse())
def test_reorder(parts):
    check(lambda L: L.sparse.reorder(make(L, parts)))


@SETTINGS
@given(sparse(), st.data())
def test_reshape(parts, data):
    size = int(np.prod(parts[2]))
    rank = data.draw(st.integers(0, 3))
    target = data.draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank))
    if data.draw(st.booleans()) and rank:  # a shape of the same size
        target = [size] + [1] * (rank - 1)
        if data.draw(st.booleans()):
            target[data.draw(st.integers(0, rank - 1))] = -1
    if data.draw(st.booleans()) and rank >= 2:
        target[0] = target[1] = -1
    check(lambda L: L.sparse.reshape(make(L, parts), target))


@SETTINGS
@given(sparse(), st.data())
def test_slice(parts, data):
    rank = len(parts[2])
    start = [data.draw(st.integers(-1, int(d) + 1)) for d in parts[2]]
    size = [data.draw(st.integers(0, int(d) + 1)) for d in parts[2]]
    if data.draw(st.booleans()):
        size[0] = -1 if data.draw(st.booleans()) else size[0]
        start = start[: data.draw(st.integers(0, rank))]
    check(lambda L: L.sparse.slice(make(L, parts), start, size))


@SETTINGS
@given(st.data(), st.integers(1, 3), st.booleans())
def test_concat(data, count, expand):
    rank = data.draw(st.integers(1, 3))
    axis = data.draw(st.integers(-rank, rank - 1))
    base = data.draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    dtype = data.draw(DTYPES)
    inputs = []
    for _ in range(count):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        if data.draw(st.integers(0, 4)) == 0:  # another size elsewhere: an error, unless expanded
            shape[(axis + 1) % rank] += 1
        inputs.append(data.draw(sparse(shape=tuple(shape), dtype=dtype)))
    check(lambda L: L.sparse.concat(axis, [make(L, p) for p in inputs], expand_nonconcat_dims=expand))


@SETTINGS
@given(sparse(dtype=np.int64), st.integers(1, 5))
def test_to_indicator(parts, vocab):
    indices, values, shape = parts
    ids = np.clip(values, -1, vocab)  # sometimes out of range: an error
    check(lambda L: L.sparse.to_indicator(make(L, (indices, ids, shape)), vocab))


@SETTINGS
@given(sparse(), st.data())
def test_retain(parts, data):
    n = len(parts[1]) + data.draw(st.sampled_from([0, 0, 0, 1]))
    keep = data.draw(hnp.arrays(np.bool_, n))
    check(lambda L: L.sparse.retain(make(L, parts), keep))


@SETTINGS
@given(sparse(), st.sampled_from([0, -1, 9]))
def test_fill_empty_rows(parts, default):
    fill = str(default).encode() if parts[1].dtype == object else default
    check(lambda L: L.sparse.fill_empty_rows(make(L, parts), fill))


@SETTINGS
@given(sparse(dtype=np.int32) | sparse(dtype=np.float64), st.data(), st.sampled_from([None, False, True]),
       st.booleans())  # fmt: skip
def test_reduce_sum(parts, data, keepdims, output_is_sparse):
    rank = len(parts[2])
    axis = data.draw(st.sampled_from([None, [], [0, 0]]) | st.integers(-rank, rank - 1) |
                     st.lists(st.integers(-rank, rank - 1), max_size=2).map(list))  # fmt: skip
    check(lambda L: L.sparse.reduce_sum(make(L, parts), axis=axis, keepdims=keepdims,
                                        output_is_sparse=output_is_sparse))  # fmt: skip


@SETTINGS
@given(sparse(dtype=np.int32) | sparse(dtype=object), st.data())
def test_reduce_sum_errors(parts, data):
    axis = data.draw(st.sampled_from([None, 3, -4]))
    check(lambda L: L.sparse.reduce_sum(make(L, parts), axis=axis))


@SETTINGS
@given(st.data(), st.sampled_from([np.int32, np.float32, np.int64]), st.sampled_from([0, 0, 1, 3]))
def test_add_sparse_and_sparse(data, dtype, threshold):
    shape = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple))
    a = data.draw(sparse(shape=shape, dtype=dtype))
    b = data.draw(sparse(shape=shape, dtype=dtype))
    if data.draw(st.booleans()):  # what the kernel expects: no repeats, row-major order
        a, b = unique_ordered(a), unique_ordered(b)
    check(lambda L: L.sparse.add(make(L, a), make(L, b), threshold))


@SETTINGS
@given(st.data(), st.sampled_from([np.int32, np.float64]))
def test_add_sparse_and_dense(data, dtype):
    shape = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple))
    a = data.draw(sparse(shape=shape, dtype=dtype))
    dense_shape = shape if data.draw(st.integers(0, 3)) else shape[1:]
    dense = data.draw(hnp.arrays(dtype, dense_shape, elements=st.integers(-3, 3)))
    if data.draw(st.booleans()):
        check(lambda L: L.sparse.add(make(L, a), L.dense(dense)))
    else:
        check(lambda L: L.sparse.add(L.dense(dense), make(L, a)))


def test_add_mismatches():
    a = (np.array([[0, 0]]), np.array([1], np.int32), np.array([2, 2]))
    b = (np.array([[0, 0]]), np.array([1.0], np.float32), np.array([2, 2]))
    c = (np.array([[0, 0]]), np.array([1], np.int32), np.array([2, 3]))
    check(lambda L: L.sparse.add(make(L, a), make(L, b)))
    check(lambda L: L.sparse.add(make(L, a), make(L, c)))
    check(lambda L: L.sparse.add(make(L, a), [[1, 2], [3, 4]]))
    check(lambda L: L.sparse.add(make(L, a), L.dense(np.ones((2, 2), np.float32))))
    check(lambda L: L.sparse.add(L.dense(np.ones((2, 2))), L.dense(np.ones((2, 2)))))


@SETTINGS
@given(sparse(), st.data())
def test_expand_dims(parts, data):
    rank = len(parts[2])
    axis = data.draw(st.none() | st.integers(-rank - 2, rank + 1))
    check(lambda L: L.sparse.expand_dims(make(L, parts), axis))


@SETTINGS
@given(sparse(), st.data())
def test_transpose(parts, data):
    rank = len(parts[2])
    perm = data.draw(st.none() | st.permutations(list(range(rank))) | st.just(list(range(rank + 1))))
    check(lambda L: L.sparse.transpose(make(L, parts), perm))


def test_inputs_must_be_sparse():
    check(lambda L: L.sparse.to_dense(L.dense(np.ones(2))))
    check(lambda L: L.sparse.reorder([1, 2]))
    check(lambda L: L.sparse.concat(0, [make(L, (np.zeros((0, 1)), np.zeros(0, np.int32), np.array([2]))), [1]]))


def test_sparse_tensor_is_the_value_class():
    assert pfsp.SparseTensor is SparseTensor
    st_ = pfsp.from_dense(np.array([[0, 5], [7, 0]], np.int32))
    assert pfsp.to_dense(st_).tolist() == [[0, 5], [7, 0]]
    assert type(pfsp.reduce_sum(st_).numpy()) is np.int32

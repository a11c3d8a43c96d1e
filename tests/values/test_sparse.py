"""Sparse elements: SparseTensor conversion, batching, unbatching, rebatching, sparse_batch and as_numpy_iterator,
compared with tf.data where TensorFlow is installed."""

import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import DataLossError, ElementTypeError, InvalidArgumentError


def one_value(i):
    return pf.SparseTensor([[0]], [i], [1])


def fields(st):
    return st.indices.tolist(), st.values.tolist(), st.dense_shape.tolist()


def test_values_convert_as_tf_sparse_tensor_does():
    assert pf.SparseTensor([[0]], [1], [2]).values.dtype == np.int32
    assert pf.SparseTensor([[0]], [1.5], [2]).values.dtype == np.float32
    assert pf.SparseTensor([[0]], [2**40], [2]).values.dtype == np.int64
    assert pf.SparseTensor([[0]], np.array([1.0]), [2]).values.dtype == np.float64
    assert pf.SparseTensor([[0]], [np.int64(1)], [2]).values.dtype == np.int64  # NumPy scalars stand for tensors
    assert pf.SparseTensor([[0]], ["a"], [2]).values.tolist() == [b"a"]
    st = pf.SparseTensor(np.int32([[0]]), [1], [2])
    assert st.indices.dtype == np.int64 and st.dense_shape.dtype == np.int64 and st.shape == (2,)


def test_malformed_sparse_tensors_are_refused():
    with pytest.raises(InvalidArgumentError, match="rank 2"):
        pf.SparseTensor([0, 2], [1, 2], [4])
    with pytest.raises(InvalidArgumentError, match="rank 1"):
        pf.SparseTensor([[0]], 1, [2])
    with pytest.raises(InvalidArgumentError, match="need 2 values"):
        pf.SparseTensor([[0], [2]], [1, 2, 3], [4])
    with pytest.raises(ElementTypeError, match="integers"):
        pf.SparseTensor([[0.5]], [1], [2])


def test_spec_surface():
    spec = pf.SparseTensorSpec([None, 3], "int64")
    assert spec.value_type is pf.SparseTensor and spec.shape == (None, 3) and spec.dtype == np.int64
    assert pf.SparseTensorSpec().dtype == np.float32 and pf.SparseTensorSpec().shape is None
    assert spec.is_compatible_with(pf.SparseTensor([[0, 0]], np.int64([1]), [2, 3]))
    assert not spec.is_compatible_with(pf.SparseTensor([[0, 0]], [1], [2, 3]))  # int32 values


def test_batch_gives_one_sparse_tensor_of_rank_plus_one():
    ds = pf.Dataset.range(4).map(lambda i: pf.SparseTensor(np.arange(i)[:, None], np.full(int(i), i), [i])).batch(2)
    first, second = list(ds)
    assert fields(first) == ([[1, 0]], [1], [2, 1])
    assert fields(second) == ([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]], [2, 2, 3, 3, 3], [2, 3])
    assert ds.element_spec == pf.SparseTensorSpec((None, 0), "int64")  # read off the first (empty) element
    nested = list(pf.Dataset.range(4).map(one_value).batch(2).batch(2))
    assert fields(nested[0])[2] == [2, 2, 1] and fields(nested[0])[0][-1] == [1, 1, 0]


def test_window_of_sparse_elements_batches_to_sparse():
    ds = pf.Dataset.range(6).map(one_value).window(3, shift=2, drop_remainder=True).flat_map(lambda w: w.batch(3))
    assert [fields(b)[1] for b in ds] == [[0, 1, 2], [2, 3, 4]]


def test_batch_refuses_sparse_mixed_with_dense_and_ranks_that_differ():
    mixed = pf.Dataset.range(2).map(lambda i: one_value(i) if i == 0 else np.int64([i]))
    with pytest.raises(ElementTypeError, match="SparseTensor"):
        list(mixed.batch(2))
    ranks = pf.Dataset.range(2).map(lambda i: one_value(i) if i == 0 else pf.SparseTensor([[0, 0]], [i], [1, 1]))
    with pytest.raises(InvalidArgumentError, match="different ranks"):
        list(ranks.batch(2))


def test_unbatch_and_rebatch_split_rows():
    st = pf.SparseTensor([[i, i] for i in range(4)], list(range(4)), [4, 4])
    rows = list(pf.Dataset.from_tensors(st).unbatch())
    assert [fields(r) for r in rows] == [([[i]], [i], [4]) for i in range(4)]
    assert pf.Dataset.from_tensors(st).unbatch().cardinality() == pf.UNKNOWN  # as tf.data, for sparse components
    again = list(pf.Dataset.from_tensors(st).repeat(2).rebatch(3))
    assert [fields(b)[2] for b in again] == [[3, 4], [3, 4], [2, 4]]
    assert fields(again[1])[0] == [[0, 3], [1, 0], [2, 1]]
    with pytest.raises(InvalidArgumentError, match="rank 1"):
        list(pf.Dataset.from_tensors(pf.SparseTensor([[0]], [1], [2])).unbatch())
    with pytest.raises(InvalidArgumentError, match="sparse scalar"):
        pf.Dataset.from_tensors(pf.SparseTensor(np.zeros((1, 0), np.int64), [1], np.zeros(0, np.int64))).unbatch()


def test_sparse_batch():
    ds = pf.Dataset.from_tensor_slices(np.int32([1, 0, 3])).map(lambda x: np.full(x, x)).sparse_batch(2, [4])
    assert ds.element_spec == pf.SparseTensorSpec((None, 4), "int32") and ds.cardinality() == 2
    assert [fields(b) for b in ds] == [([[0, 0]], [1], [2, 4]), ([[0, 0], [0, 1], [0, 2]], [3, 3, 3], [1, 4])]
    squares = (
        pf.Dataset.from_tensor_slices(np.int32([1, 2])).map(lambda x: np.full((x, x), x)).sparse_batch(2, [3, None])
    )
    assert fields(next(iter(squares)))[2] == [2, 3, 2]
    assert fields(next(iter(ds.apply(lambda d: d)))) == fields(next(iter(ds)))
    with pytest.raises(InvalidArgumentError):
        pf.Dataset.from_tensors(np.int32([[1]])).sparse_batch(4, [-2])
    with pytest.raises(InvalidArgumentError, match="incompatible with the row shape"):
        list(pf.Dataset.from_tensors(np.int32([[1]])).sparse_batch(4, [12]))
    with pytest.raises(DataLossError, match="larger than the row shape"):
        list(pf.Dataset.from_tensors(np.arange(13, dtype=np.int32)).sparse_batch(4, [12]))


def test_sparse_steps_resume_exactly():
    sparse = pf.Dataset.range(11).map(lambda i: pf.SparseTensor(np.arange(i % 3)[:, None], np.full(i % 3, i), [3]))
    check_restores(sparse.batch(3))
    check_restores(sparse.batch(2).unbatch())
    check_restores(sparse.batch(3).rebatch([2, 0, 1]))
    check_restores(pf.Dataset.range(9).map(lambda x: np.full(x % 4, x)).sparse_batch(2, [None]))


def test_from_generator_takes_sparse_tensor_specs():
    def gen():
        yield pf.SparseTensor([[0]], np.int64([1]), [2])
        yield pf.SparseTensor([[0], [1]], np.int64([1, 3]), [2])

    ds = pf.Dataset.from_generator(gen, output_signature=pf.SparseTensorSpec([None], "int64"))
    assert ds.element_spec == pf.SparseTensorSpec((None,), "int64")
    assert fields(next(iter(ds.batch(2)))) == ([[0, 0], [1, 0], [1, 1]], [1, 1, 3], [2, 2])
    with pytest.raises(ElementTypeError):
        list(pf.Dataset.from_generator(lambda: iter([1]), output_signature=pf.SparseTensorSpec([None], "int64")))


def test_as_numpy_iterator_gives_sparse_tensors_dense_as_tf_data_2_21():
    tf = pytest.importorskip("tensorflow")
    st = tf.sparse.SparseTensor([[0, 1], [1, 0]], [1, 2], [2, 3])
    want = list(tf.data.Dataset.from_tensors({"s": st, "n": 1}).repeat(2).as_numpy_iterator())
    got = list(pf.Dataset.from_tensors({"s": pf.SparseTensor([[0, 1], [1, 0]], [1, 2], [2, 3]), "n": 1}).repeat(2)
               .as_numpy_iterator())  # fmt: skip
    assert len(got) == len(want)
    for w, g in zip(want, got):
        assert g["s"].dtype == w["s"].dtype and g["s"].tolist() == w["s"].tolist() and g["n"] == w["n"]
    mapped = pf.Dataset.range(2).map(lambda i: pf.SparseTensor([[0]], [i], [2]))  # spec not static: first element
    assert [a.tolist() for a in mapped.as_numpy_iterator()] == [[0, 0], [1, 0]]
    assert isinstance(next(iter(mapped)), pf.SparseTensor)
    with pf.Dataset.range(3).as_numpy_iterator() as it:
        assert next(it) == 0

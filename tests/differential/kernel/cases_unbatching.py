"""Ported from tf.data's kernel tests: unbatch, rebatch, window, sparse_batch / dense_to_sparse_batch."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.cases_batching import fill_seq
from tests.differential.kernel.harness import kcase

COMPONENTS = (np.arange(7), np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis], np.array(37.0) * np.arange(7))


def sparse(L, indices, values, dense_shape):
    """tf.sparse.SparseTensor or pf.SparseTensor."""
    make = L.tf.sparse.SparseTensor if L.name == "tf" else L.pf.SparseTensor
    return make(indices, values, dense_shape)


def fields(ds):
    """Each sparse element as its (indices, values, dense_shape)."""
    return ds.map(lambda s: (s.indices, s.values, s.dense_shape))


def one_value(L, i):
    """batch_test's ``_sparse``: a sparse vector holding ``i`` at 0 (``i * [1]`` repeats a list in NumPy)."""
    return sparse(L, [[0]], i * [1] if L.name == "tf" else [i], [1])


def first_i(L, i):
    """batch_test's ``_sparse`` of different dense shapes: ``i`` values ``i`` at 0..i-1, dense shape [i]."""
    if L.name == "tf":
        tf = L.tf
        idx = tf.expand_dims(tf.range(i, dtype=tf.int64), 1)
        return sparse(L, idx, tf.fill([tf.cast(i, tf.int32)], i), [i])
    return sparse(L, np.arange(i)[:, None], np.full(int(i), i), [i])


def as_string(L, x):
    if L.name == "tf":
        return L.tf.strings.as_string(x)
    return np.array([str(v).encode() for v in np.asarray(x).reshape(-1)], dtype=object).reshape(np.shape(x))


def square(L):
    return lambda x, y, z: (x * x, y * y, z * z)


# ----------------------------------------------------------------------------------------------- unbatch_test.py


@kcase("unbatch_test.py::testUnbatchWithUnknownRankInput")
def unbatch_unknown_rank_input(L, tmp):
    return L.Dataset.from_tensors([0, 1, 2, 3]).unbatch()


@kcase("unbatch_test.py::testUnbatchScalarDataset")
def unbatch_scalar_dataset(L, tmp):
    data = tuple(np.arange(10, dtype=np.int32) for _ in range(3))
    return L.Dataset.from_tensor_slices(data).batch(2).unbatch()


@kcase("unbatch_test.py::testUnbatchDatasetWithStrings")
def unbatch_strings(L, tmp):
    data = tuple(np.arange(10, dtype=np.int32) for _ in range(3))
    ds = L.Dataset.from_tensor_slices(data).map(lambda x, y, z: (x, as_string(L, y), z))
    return ds.batch(2).unbatch()


@kcase("unbatch_test.py::testUnbatchDatasetWithSparseTensor")
def unbatch_sparse(L, tmp):
    st = sparse(L, [[i, i] for i in range(10)], list(range(10)), [10, 10])
    return fields(L.Dataset.from_tensors(st).unbatch().batch(5).unbatch())


@kcase("unbatch_test.py::testUnbatchDatasetWithDenseSparseAndRaggedTensor (dense and sparse)")
def unbatch_dense_and_sparse(L, tmp):
    st = sparse(L, [[i, i] for i in range(10)], list(range(10)), [10, 10])
    ds = L.Dataset.from_tensors((list(range(10)), st)).unbatch().batch(5).unbatch()
    return ds.map(lambda x, s: (x, s.indices, s.values, s.dense_shape))


@kcase("unbatch_test.py::testUnbatchDatasetWithSparseTensor (rank 1: rows would be sparse scalars)")
def unbatch_sparse_rank1(L, tmp):
    return L.Dataset.from_tensors(sparse(L, [[0], [2]], [1, 2], [4])).unbatch()


@kcase("unbatch_test.py::testUnbatchDatasetWithSparseTensor (sparse scalar)")
def unbatch_sparse_scalar(L, tmp):
    st = sparse(L, np.zeros((1, 0), np.int64), [1], np.zeros(0, np.int64))
    return L.Dataset.from_tensors(st).unbatch()


@kcase("unbatch_test.py::testUnbatchDatasetWithSparseTensor (sparse from a map)")
def unbatch_sparse_from_map(L, tmp):
    ds = L.Dataset.range(3).map(lambda i: sparse(L, [[0, 0], [1, 1]], [i, i], [2, 3]))
    return fields(ds.unbatch())


@kcase("unbatch_test.py::testUnbatchSingleElementTupleDataset")
def unbatch_single_element_tuple(L, tmp):
    data = tuple((np.arange(10, dtype=np.int32),) for _ in range(3))
    return L.Dataset.from_tensor_slices(data).batch(2).unbatch()


@kcase("unbatch_test.py::testUnbatchMultiElementTupleDataset")
def unbatch_multi_element_tuple(L, tmp):
    data = tuple((np.arange(10 * i, 10 * i + 10, dtype=np.int32), np.full(10, b"hi", dtype=object)) for i in range(3))
    return L.Dataset.from_tensor_slices(data).batch(2).unbatch()


@kcase("unbatch_test.py::testUnbatchEmpty")
def unbatch_empty(L, tmp):
    return L.Dataset.from_tensors(
        (np.zeros(0, np.float32), np.zeros((0, 4), np.float32), np.zeros((0, 4, 0), np.float32))
    ).unbatch()


@kcase("unbatch_test.py::testUnbatchStaticShapeMismatch")
def unbatch_static_shape_mismatch(L, tmp):
    return L.Dataset.from_tensors((np.arange(7), np.arange(8), np.arange(9))).unbatch()


@kcase("unbatch_test.py::testUnbatchScalarDataset (scalars)")
def unbatch_scalars(L, tmp):
    return L.Dataset.range(3).unbatch()


@kcase("unbatch_test.py::testUnbatchDatasetWithUintDtypes")
def unbatch_uint_dtypes(L, tmp):
    components = (
        np.tile(np.array([[0], [1], [2], [3]], dtype=np.uint8), 2),
        np.tile(np.array([[1], [2], [3], [256]], dtype=np.uint16), 2),
        np.tile(np.array([[2], [3], [4], [65536]], dtype=np.uint32), 2),
        np.tile(np.array([[3], [4], [5], [4294967296]], dtype=np.uint64), 2),
    )
    return L.Dataset.from_tensor_slices(components).batch(2).unbatch()


@kcase("unbatch_test.py::testName")
def unbatch_name(L, tmp):
    return L.Dataset.from_tensors([42]).unbatch(name="unbatch")


@kcase("unbatch_test.py::UnbatchCheckpointTest::test")
def unbatch_checkpoint_dataset(L, tmp):
    comps = (np.arange(8), np.array([[1, 2, 3]]) * np.arange(8)[:, np.newaxis], np.array(15.0) * np.arange(8))
    return L.Dataset.from_tensor_slices(comps).batch(2).unbatch()


@kcase("unbatch_test.py::UnbatchRandomAccessTest::test")
def unbatch_after_drop_remainder(L, tmp):
    return L.Dataset.range(10).batch(4, drop_remainder=True).unbatch()


# ----------------------------------------------------------------------------------------------- rebatch_test.py

DROP = {"drop": True, "keep": False}


@kcase("rebatch_test.py::testShapeInferenceNotAllBatchSizesEqual")
def rebatch_sizes_not_equal(L, tmp):
    return L.Dataset.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[2, 1, 1])


@kcase("rebatch_test.py::testShapeInferenceInputBatchDimDivisible", params=DROP)
def rebatch_divisible(L, tmp, drop):
    return L.Dataset.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[2, 2], drop_remainder=drop)


@kcase("rebatch_test.py::testShapeInferenceInputBatchDimUnknownWithDropRemainder")
def rebatch_unknown_dim_drop(L, tmp):
    return L.Dataset.range(8).batch(4).rebatch(batch_size=[2, 2], drop_remainder=True)


@kcase("rebatch_test.py::testShapeInferenceInputBatchDimIndivisible", params=DROP)
def rebatch_indivisible(L, tmp, drop):
    return L.Dataset.range(10).batch(5, drop_remainder=True).rebatch(batch_size=[2, 2], drop_remainder=drop)


@kcase("rebatch_test.py::testPartialBatch", params=DROP)
def rebatch_partial(L, tmp, drop):
    return L.Dataset.range(5).batch(4).rebatch(batch_size=[2, 2], drop_remainder=drop)


@kcase("rebatch_test.py::testBatchSizeGreaterThanOriginal", params=DROP)
def rebatch_greater(L, tmp, drop):
    return L.Dataset.range(12).batch(4).rebatch(batch_size=[6], drop_remainder=drop)


EQUAL = {f"{b}-{d}": (b, d) for b in (2, 3, 4) for d in (True, False)}


@kcase("rebatch_test.py::testBatchSizeEqualToOriginal", params=EQUAL)
def rebatch_equal(L, tmp, p):
    batch_size, drop = p
    return L.Dataset.range(11).batch(batch_size, drop_remainder=drop).rebatch(batch_size=batch_size)


@kcase("rebatch_test.py::testEmptySplits", params=DROP)
def rebatch_empty_splits(L, tmp, drop):
    return L.Dataset.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[1, 1, 1, 1, 0], drop_remainder=drop)


@kcase("rebatch_test.py::testEmptyFirstSplits", params=DROP)
def rebatch_empty_first(L, tmp, drop):
    return L.Dataset.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[0, 1], drop_remainder=drop)


@kcase("rebatch_test.py::testEmptyLastSplits", params=DROP)
def rebatch_empty_last(L, tmp, drop):
    return L.Dataset.range(8).batch(4, drop_remainder=True).rebatch(batch_size=[1, 0], drop_remainder=drop)


@kcase("rebatch_test.py::testEmptyTensors", params=DROP)
def rebatch_empty_tensors(L, tmp, drop):
    empty = (lambda x: L.tf.reshape((), (5, 0))) if L.name == "tf" else (lambda x: np.zeros((5, 0), np.float32))
    return L.Dataset.range(8).map(empty).batch(2).rebatch(batch_size=4, drop_remainder=drop)


@kcase("rebatch_test.py::testScalarBatchSizeInput", params=DROP)
def rebatch_scalar_size(L, tmp, drop):
    return L.Dataset.range(8).batch(4, drop_remainder=True).rebatch(batch_size=2, drop_remainder=drop)


@kcase("rebatch_test.py::testMultipleBatches")
def rebatch_multiple_batches(L, tmp):
    return L.Dataset.range(16).batch(2, drop_remainder=True).batch(4, drop_remainder=True).rebatch([2, 2])


@kcase("rebatch_test.py::testNestedDictionaryOutput")
def rebatch_nested_dict(L, tmp):
    ds = L.Dataset.range(8).map(lambda x: {"a": x, "b": {"c": x + 1}}).batch(4, drop_remainder=True)
    return ds.rebatch([2, 2])


@kcase("rebatch_test.py::testBasic (sparse)")
def rebatch_sparse(L, tmp):
    st = sparse(L, [[0, 0], [1, 2]], [1, 2], [3, 4])
    return fields(L.Dataset.from_tensors(st).repeat(2).rebatch(2))


@kcase("rebatch_test.py::RebatchDatasetCheckpointTest::test")
def rebatch_checkpoint_dataset(L, tmp):
    return L.Dataset.range(64).batch(8, drop_remainder=True).rebatch(batch_size=[4, 4])


# ----------------------------------------------------------------------------------------------- window_test.py

WINDOWS = {f"{c}-{si}-{sh}-{st}-{d}": (c, si, sh, st, d) for c, si, sh, st, d in [
    (20, 10, 7, 1, True), (20, 14, 14, 2, False), (20, 17, 7, 6, True), (20, 10, 14, 6, False),
    (20, 17, 14, 1, False), (0, 10, 4, 1, True), (1, 10, 4, 1, False)]}  # fmt: skip


@kcase("window_test.py::testWindowDataset", params=WINDOWS)
def window_basic(L, tmp, p):
    count, size, shift, stride, drop = p

    def batches(x, y, z):
        return L.Dataset.zip((x.batch(batch_size=size), y.batch(batch_size=size), z.batch(batch_size=size)))

    ds = L.Dataset.from_tensor_slices(COMPONENTS).map(square(L)).repeat(count)
    return ds.window(size=size, shift=shift, stride=stride, drop_remainder=drop).flat_map(batches)


INVALID_WINDOWS = {"size": (0, 3, 1), "shift": (3, 0, 1), "stride": (3, 3, 0)}


@kcase("window_test.py::testWindowDatasetInvalid", params=INVALID_WINDOWS)
def window_invalid(L, tmp, p):
    size, shift, stride = p
    ds = L.Dataset.range(10).map(lambda x: x).repeat(20).window(size=size, shift=shift, stride=stride)
    return ds.flat_map(lambda x: x.batch(batch_size=max(size, 1)))


@kcase("window_test.py::testWindowSparse")
def window_sparse(L, tmp):
    ds = L.Dataset.range(10).map(lambda i: one_value(L, i)).window(size=5, shift=3, drop_remainder=True)
    return fields(ds.flat_map(lambda x: x.batch(batch_size=5)))


@kcase("window_test.py::testWindowSparseWithDifferentDenseShapes")
def window_sparse_different_shapes(L, tmp):
    ds = L.Dataset.range(10).map(lambda i: first_i(L, i)).window(size=5, shift=3, drop_remainder=True)
    return fields(ds.flat_map(lambda x: x.batch(batch_size=5)))


@kcase("window_test.py::testNestedWindowSparse")
def window_sparse_nested(L, tmp):
    ds = L.Dataset.range(10).map(lambda i: one_value(L, i))
    ds = ds.window(size=4, shift=2, drop_remainder=True).flat_map(lambda x: x.batch(batch_size=4))
    ds = ds.window(size=3, shift=1, drop_remainder=True).flat_map(lambda x: x.batch(batch_size=3))
    return fields(ds)


@kcase("window_test.py::testWindowShapeError")
def window_shape_error(L, tmp):
    def gen():
        yield [1.0, 2.0, 3.0]
        yield [4.0, 5.0, 6.0]
        yield [7.0, 8.0, 9.0, 10.0]

    ds = L.Dataset.from_generator(gen, L.float32, output_shapes=[None]).window(size=3, shift=1)
    return ds.flat_map(lambda x: x.batch(batch_size=3))


WINDOW_ERRORS = {
    "stride-drop": ([1.0, np.nan, 2.0, np.nan, 3.0], (2, 2, 2, True)),
    "stride-keep": ([1.0, np.nan, 2.0, np.nan, 3.0, np.nan], (2, 2, 2, False)),
    "shift": ([1.0, 2.0, np.nan, 4.0, 5.0, 6.0], (2, 3, 1, False)),
    "in-window": ([1.0, np.nan, 2.0, 4.0, 5.0, 6.0], (2, 2, 1, False)),
    "skipped-then-used": ([1.0, np.nan, 2.0, 3.0, 4.0], (2, 1, 2, True)),
}


@kcase("window_test.py::testWindowIgnoreErrors", params=WINDOW_ERRORS)
def window_errors(L, tmp, p):
    values, (size, shift, stride, drop) = p
    ds = L.Dataset.from_tensor_slices(np.float32(values)).map(L.check_numerics)
    ds = ds.window(size=size, shift=shift, stride=stride, drop_remainder=drop)
    return ds.flat_map(lambda x: x.batch(batch_size=size))


@kcase("window_test.py::testDropRemainderOutput")
def window_drop_remainder_output(L, tmp):
    ds = L.Dataset.range(100).window(30, drop_remainder=True).flat_map(lambda x: x.batch(30))
    return ds.batch(4)


@kcase("window_test.py::testName")
def window_name(L, tmp):
    return L.Dataset.from_tensors(42).window(1, name="window").flat_map(lambda x: x)


@kcase("window_test.py::WindowCheckpointTest::test")
def window_interleave(L, tmp):
    return L.Dataset.range(42).window(6).interleave(lambda x: x, cycle_length=2, num_parallel_calls=2)


# ------------------------------------------------------------------------ sparse_batch_test.py, dense_to_sparse_batch

SPARSE_ROWS = np.random.RandomState(3).randint(12, size=(30,)).astype(np.int32)
SQUARES = np.random.RandomState(4).randint(5, size=(18,)).astype(np.int32)


def sparse_batch(L, ds, batch_size, row_shape, experimental):
    if experimental:
        return ds.apply(L.experimental.dense_to_sparse_batch(batch_size, row_shape))
    return ds.sparse_batch(batch_size, row_shape)


HOW = {"method": False, "experimental": True}


@kcase("sparse_batch_test.py::testBasic", params=HOW)
def sparse_batch_basic(L, tmp, experimental):
    ds = L.Dataset.from_tensor_slices(SPARSE_ROWS).map(fill_seq(L))
    return fields(sparse_batch(L, ds, 4, [12], experimental))


@kcase("sparse_batch_test.py::testWithUnknownShape", params=HOW)
def sparse_batch_unknown_shape(L, tmp, experimental):
    square_fill = (lambda x: L.tf.fill([x, x], x)) if L.name == "tf" else (lambda x: np.full((x, x), x))
    ds = L.Dataset.from_tensor_slices(SQUARES).map(square_fill)
    return fields(sparse_batch(L, ds, 4, [5, None], experimental))


@kcase("sparse_batch_test.py::testWithInvalidShape")
def sparse_batch_invalid_shape(L, tmp):
    return L.Dataset.from_tensors(np.int32([[1]])).sparse_batch(4, [-2])


@kcase("sparse_batch_test.py::testShapeErrors (rank)")
def sparse_batch_rank_error(L, tmp):
    return L.Dataset.from_tensors(np.int32([[1]])).sparse_batch(4, [12])


@kcase("sparse_batch_test.py::testShapeErrors (larger than the row shape)")
def sparse_batch_too_large(L, tmp):
    return L.Dataset.from_tensors(np.int32(range(13))).sparse_batch(4, [12])


@kcase("sparse_batch_test.py::testBasic (scalars)")
def sparse_batch_scalars(L, tmp):
    return fields(L.Dataset.range(5).sparse_batch(2, []))


@kcase("sparse_batch_test.py::testBasic (tuple elements)")
def sparse_batch_tuples(L, tmp):
    return L.Dataset.from_tensors(([1], [2])).sparse_batch(4, [12])


@kcase("sparse_batch_test.py::testBasic (batch size 0)")
def sparse_batch_zero(L, tmp):
    return L.Dataset.range(3).sparse_batch(0, [])


@kcase("sparse_batch_test.py::DenseToSparseBatchCheckpointTest::test")
def sparse_batch_checkpoint_dataset(L, tmp):
    rows = np.random.RandomState(5).randint(5, size=(40,)).astype(np.int32)
    return fields(L.Dataset.from_tensor_slices(rows).map(fill_seq(L)).sparse_batch(4, [12]))

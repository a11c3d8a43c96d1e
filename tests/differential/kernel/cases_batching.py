"""Batching, ported from tf.data's kernel tests: batch and padded_batch (sparse elements included)."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.harness import kcase

SEQ_32 = np.random.RandomState(0).randint(20, size=32).astype(np.int32)
SEQ_34 = np.random.RandomState(1).randint(20, size=34).astype(np.int32)
COMPONENTS = (np.arange(7), np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis], np.array(37.0) * np.arange(7))


def sparse(L, indices, values, dense_shape):
    """tf.sparse.SparseTensor or pf.SparseTensor."""
    make = L.tf.sparse.SparseTensor if L.name == "tf" else L.pf.SparseTensor
    return make(indices, values, dense_shape)


def sparse_spec(L, shape, dtype):
    return L.tf.SparseTensorSpec(shape, dtype) if L.name == "tf" else L.pf.SparseTensorSpec(shape, dtype)


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


# ----------------------------------------------------------------------------------------------- batch_test.py

BASIC = {f"{c}-{b}-{d}": (c, b, d) for c in (0, 28) for b in (14, 15) for d in (True, False)}


@kcase("batch_test.py::testBasic", params=BASIC)
def batch_basic(L, tmp, p):
    count, batch_size, drop = p
    ds = L.Dataset.from_tensor_slices(COMPONENTS).map(square(L)).repeat(count)
    return ds.batch(batch_size, drop, num_parallel_calls=2 if batch_size == 15 else None)


@kcase("batch_test.py::testInvalidBatchSize")
def batch_invalid_size(L, tmp):
    return L.Dataset.range(10).batch(0)


@kcase("batch_test.py::testSparse")
def batch_sparse(L, tmp):
    return fields(L.Dataset.range(10).map(lambda i: one_value(L, i)).batch(5))


@kcase("batch_test.py::testSparseWithDifferentDenseShapes")
def batch_sparse_different_shapes(L, tmp):
    return fields(L.Dataset.range(10).map(lambda i: first_i(L, i)).batch(5))


@kcase("batch_test.py::testSparseNested")
def batch_sparse_nested(L, tmp):
    return fields(L.Dataset.range(10).map(lambda i: one_value(L, i)).batch(5).batch(2))


@kcase("batch_test.py::testSparse (from_tensors, strings)")
def batch_sparse_strings(L, tmp):
    return fields(L.Dataset.from_tensors(sparse(L, [[0], [2]], ["a", "b"], [3])).repeat(3).batch(2))


@kcase("batch_test.py::testSparse (with a dense component)")
def batch_sparse_and_dense(L, tmp):
    ds = L.Dataset.range(3).map(lambda i: (sparse(L, [[0, 0]], [i], [i + 1, 2]), i)).batch(2)
    return ds.map(lambda s, i: (s.indices, s.values, s.dense_shape, i))


@kcase("batch_test.py::testSparse (sparse from Python values)")
def batch_sparse_python_values(L, tmp):
    return fields(L.Dataset.from_tensors(sparse(L, [[0, 1], [1, 0]], [1.5, 2.5], [2, 2])).repeat(2).batch(2))


@kcase("batch_test.py::testSparse (ranks differ)")
def batch_sparse_ranks_differ(L, tmp):
    def gen():
        make = L.tf.sparse.SparseTensor if L.name == "tf" else L.pf.SparseTensor
        yield make([[0]], np.int32([1]), [2])
        yield make([[0, 0]], np.int32([1]), [2, 2])

    ds = L.Dataset.from_generator(gen, output_signature=sparse_spec(L, None, L.int32))
    return fields(ds.batch(2))


@kcase("batch_test.py::testShapeError")
def batch_shape_error(L, tmp):
    def gen():
        yield [1.0, 2.0, 3.0]
        yield [4.0, 5.0, 6.0]
        yield [7.0, 8.0, 9.0, 10.0]

    return L.Dataset.from_generator(gen, L.float32, output_shapes=[None]).batch(3)


@kcase("batch_test.py::testName")
def batch_name(L, tmp):
    return L.Dataset.range(5).batch(5, name="batch")


@kcase("batch_test.py::BatchCheckpointTest::test")
def batch_checkpoint_dataset(L, tmp):
    comps = (np.arange(8), np.array([[1, 2, 3]]) * np.arange(8)[:, np.newaxis], np.array(15.0) * np.arange(8))
    return L.Dataset.from_tensor_slices(comps).batch(2)


RANDOM_ACCESS = {f"{c}-{b}-{d}": (c, b, d) for c, b, d in
                 [(0, 1, False), (10, 3, True), (10, 3, False), (20, 20, False), (50, 7, True), (40, 10, False)]}  # fmt: skip


@kcase("batch_test.py::BatchRandomAccessTest::testBasic", params=RANDOM_ACCESS)
def batch_random_access_basic(L, tmp, p):
    count, batch_size, drop = p
    return L.Dataset.from_tensor_slices(list(range(count))).batch(batch_size, drop_remainder=drop)


@kcase("batch_test.py::BatchRandomAccessTest::testEmptyDataset")
def batch_empty(L, tmp):
    return L.Dataset.from_tensor_slices([]).batch(2)


# ----------------------------------------------------------------------------------------------- padded_batch_test.py


def fill_seq(L):
    return lambda x: L.fill(x, x)


PADDED = {f"{n}-{s}-{d}": (n, s, d) for n in (32, 34) for s in ("None", "25") for d in (True, False)}


@kcase("padded_batch_test.py::testPaddedBatchDataset", params=PADDED)
def padded_batch_basic(L, tmp, p):
    count, shape, drop = p
    seq = SEQ_32 if count == 32 else SEQ_34
    padded = [None] if shape == "None" else [25]
    return L.Dataset.from_tensor_slices(seq).map(fill_seq(L)).padded_batch(4, padded_shapes=padded, drop_remainder=drop)


@kcase("padded_batch_test.py::testPaddedBatchShortPadding")
def padded_batch_short_padding(L, tmp):
    return L.Dataset.from_tensor_slices([6, 5, 5, 5, 5]).map(fill_seq(L)).padded_batch(4, padded_shapes=[5])


@kcase("padded_batch_test.py::testPaddedBatchShortPadding (in a later batch)")
def padded_batch_short_padding_later(L, tmp):
    return L.Dataset.from_tensor_slices([1, 2, 3, 6]).map(fill_seq(L)).padded_batch(2, padded_shapes=[5])


@kcase("padded_batch_test.py::testPaddedBatchEmptyTensors")
def padded_batch_empty_tensors(L, tmp):
    return L.Dataset.from_tensor_slices([0, 0, 0, 0]).map(fill_seq(L)).padded_batch(4, padded_shapes=[-1])


@kcase("padded_batch_test.py::testDefaultPaddedShapes")
def padded_batch_default_shapes(L, tmp):
    return L.Dataset.from_tensor_slices([1, 2, 3, 4]).map(fill_seq(L)).padded_batch(batch_size=2)


@kcase("padded_batch_test.py::testNestedDefaultPaddedShapes")
def padded_batch_nested_default_shapes(L, tmp):
    return L.Dataset.from_tensor_slices([1, 2, 3, 4]).map(lambda x: (x, L.fill(x, x))).padded_batch(batch_size=2)


NON_DEFAULT = {"all": (-1, "<end>", {"structure": ""}), "none": (-1, "<end>", None)}


@kcase("padded_batch_test.py::testPaddedBatchDatasetNonDefaultPadding", params=NON_DEFAULT)
def padded_batch_non_default_padding(L, tmp, values):
    def fill_tuple(x):
        filled = L.fill(x, x)
        return filled, as_string(L, filled), {"structure": as_string(L, filled)}

    ds = L.Dataset.from_tensor_slices(SEQ_32).map(fill_tuple)
    return ds.padded_batch(4, padded_shapes=([-1], [-1], {"structure": [-1]}), padding_values=values)


@kcase("padded_batch_test.py::testPaddedBatchDatasetUnicode")
def padded_batch_unicode(L, tmp):
    def gen():
        yield ["Простой", "тест", "юникода"], [0, 1, 2, 3]
        yield ["никогда", "не", "бывает", "простым"], [0, 1, 2, 3]

    ds = L.Dataset.from_generator(gen, (L.string, L.int32), ([None], [None]))
    return ds.padded_batch(2, padded_shapes=([None], [None]), padding_values=("", 0))


@kcase("padded_batch_test.py::testPaddedBatchSparseError")
def padded_batch_sparse_error(L, tmp):
    return L.Dataset.from_tensors(sparse(L, [[0, 0]], [42], [1, 1])).repeat(10).padded_batch(10)


@kcase("padded_batch_test.py::testPaddedBatchSparseError (datasets of datasets)")
def padded_batch_dataset_error(L, tmp):
    return L.Dataset.range(3).window(2).padded_batch(2)


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorWrongRank")
def padded_batch_wrong_rank(L, tmp):
    return L.Dataset.range(10).padded_batch(5, padded_shapes=[1])


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorTooSmall")
def padded_batch_too_small(L, tmp):
    return L.Dataset.from_tensors([1, 2, 3]).padded_batch(5, padded_shapes=[1])


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorShapeNotRank1")
def padded_batch_shape_not_rank1(L, tmp):
    return L.Dataset.from_tensors([1, 2, 3]).padded_batch(5, padded_shapes=[[1, 1], [1, 1]])


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorShapeNotInt")
def padded_batch_shape_not_int(L, tmp):
    shape = L.tf.constant([1.5, 2.0, 3.0]) if L.name == "tf" else np.float32([1.5, 2.0, 3.0])
    return L.Dataset.from_tensors([1, 2, 3]).padded_batch(5, padded_shapes=shape)


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorWrongRankFromTensor")
def padded_batch_wrong_rank_from_tensor(L, tmp):
    shape = L.tf.constant([1], dtype=L.int64) if L.name == "tf" else np.int64([1])
    return L.Dataset.range(10).padded_batch(5, padded_shapes=shape)


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorDefaultShapeWithUnknownRank")
def padded_batch_unknown_rank(L, tmp):
    return L.Dataset.from_generator(lambda: iter([1, 2, 3]), output_types=L.int32).padded_batch(2)


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorDefaultShapeWithUnknownRank (shapes given)")
def padded_batch_unknown_rank_with_shapes(L, tmp):
    ds = L.Dataset.from_generator(lambda: iter([[1], [2, 3], [[4]]]), output_types=L.int32)
    return ds.padded_batch(2, padded_shapes=[None])


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorTooSmall (padded shapes of the wrong structure)")
def padded_batch_shapes_structure(L, tmp):
    return L.Dataset.from_tensors(([1, 2, 3], [1])).padded_batch(5, padded_shapes=[4])


@kcase("padded_batch_test.py::testPaddedBatchShapeErrorTooSmall (too many padded shapes)")
def padded_batch_shapes_too_many(L, tmp):
    return L.Dataset.from_tensors(([1, 2, 3], [1])).padded_batch(5, padded_shapes=([4], [4], [4]))


@kcase("padded_batch_test.py::testDefaultPaddedValueShapes")
def padded_batch_default_value_shapes(L, tmp):
    ds = L.Dataset.zip(
        (
            L.Dataset.from_tensor_slices([1, 2, 3, 4]).map(fill_seq(L)),
            L.Dataset.from_tensor_slices([1, 2, 3, 4]).map(fill_seq(L)),
        )
    )
    return ds.padded_batch(batch_size=2, padding_values=-1)


@kcase("padded_batch_test.py::testPaddedBatchDatasetNonDefaultPadding (None for one component)")
def padded_batch_none_padding_value(L, tmp):
    ds = L.Dataset.range(3).map(lambda x: (L.fill(x, x), L.fill(x, "a")))
    return ds.padded_batch(2, padding_values=(None, "z"))


@kcase("padded_batch_test.py::testDefaultPaddedValueShapes (int64 scalar broadcast)")
def padded_batch_scalar_broadcast(L, tmp):
    ds = L.Dataset.range(3).map(lambda x: (L.fill(x, x), L.fill(x, x + 1)))
    return ds.padded_batch(2, padding_values=np.int64(7))


@kcase("padded_batch_test.py::testDefaultPaddedValueShapes (a value of another dtype)")
def padded_batch_padding_dtype_mismatch(L, tmp):
    ds = L.Dataset.range(3).map(lambda x: (L.fill(x, x), L.fill(x, "a")))
    return ds.padded_batch(2, padding_values=np.int64(7))


@kcase("padded_batch_test.py::testDefaultPaddedValueShapes (a padding value that is not a scalar)")
def padded_batch_padding_not_scalar(L, tmp):
    return L.Dataset.range(3).map(lambda x: L.fill(x, x)).padded_batch(2, padding_values=np.int64([1, 2]))


@kcase("padded_batch_test.py::testDefaultPaddedValueShapes (Python int for an int64 component)",
       differs="padded-batch-python-padding-values")  # fmt: skip
def padded_batch_python_int_for_int64(L, tmp):
    return L.Dataset.range(3).map(lambda x: L.fill(x, x)).padded_batch(2, padding_values=-1)


@kcase("padded_batch_test.py::PaddedBatchCheckpointTest::testPaddedBatchNonDefaultPadding")
def padded_batch_checkpoint_non_default(L, tmp):
    seq = np.random.RandomState(2).randint(1, 20, size=32).astype(np.int32)
    ds = L.Dataset.from_tensor_slices(seq).map(lambda x: (L.fill(x, x), as_string(L, L.fill(x, x))))
    return ds.padded_batch(4, padded_shapes=([-1], [-1]), padding_values=(-1, "<end>"))

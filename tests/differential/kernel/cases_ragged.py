"""Ragged elements: ``ragged_batch`` / ``dense_to_ragged_batch``, ``batch``/``unbatch``/``from_tensor_slices`` of
RaggedTensors, and ``RaggedFeature`` parsing, ported from tf.data's kernel tests."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.harness import kcase

# ---------------------------------------------------------------------------------------------- helpers


def _ragged(L, rows, **kwargs):
    """``tf.ragged.constant`` / ``pf.ragged.constant``."""
    return (L.tf if L.name == "tf" else L.pf).ragged.constant(rows, **kwargs)


def _fill(L, shape, x):
    return L.tf.fill(shape, x) if L.name == "tf" else np.full(shape, x)


def _arange(L, x):
    return L.tf.range(x) if L.name == "tf" else np.arange(x)


def _scalar_ds(L, nrows):
    return L.Dataset.from_tensor_slices(np.arange(nrows))


def _vector_ds(L, nrows):
    return _scalar_ds(L, nrows).map(lambda x: _fill(L, [x], x))


def _matrix_ds1(L, nrows):
    return _scalar_ds(L, nrows).map(lambda x: _fill(L, [x, 2], x))


def _matrix_ds2(L, nrows):
    return _scalar_ds(L, nrows).map(lambda x: _fill(L, [2, x], x))


def _matrix_ds_fully_defined(L, nrows):
    return _scalar_ds(L, nrows).map(lambda x: _fill(L, [2, 3], x))


def _5dtensor_ds(L, nrows):
    return _scalar_ds(L, nrows).map(lambda x: _fill(L, [2, x, 3, 2 * x, 4], x))


def _ragged_ds(L, nrows):
    values = [[[i] * (i % 3) for i in range(j)] * (j % 3) for j in range(nrows)]
    return L.Dataset.from_tensor_slices(_ragged(L, values))


def _dict_ds(L, nrows):
    def transform(x):
        return {
            "shape=[]": x,
            "shape=[x]": _arange(L, x),
            "shape=[x, 2]": _fill(L, [x, 2], x),
            "shape=[2, x]": _fill(L, [2, x], x),
            "shape=[2, x, 3, 2x, 4]": _fill(L, [2, x, 3, 2 * x, 4], x),
        }

    return _scalar_ds(L, nrows).map(transform)


def _tuple_ds(L, nrows):
    return _scalar_ds(L, nrows).map(lambda x: (x, _arange(L, x), _fill(L, [x, 2], x)))


_MAKERS = {
    "scalar": _scalar_ds,
    "vector": _vector_ds,
    "matrix1": _matrix_ds1,
    "matrix2": _matrix_ds2,
    "ragged": _ragged_ds,
    "5dtensor": _5dtensor_ds,
    "dict": _dict_ds,
    "tuple": _tuple_ds,
    "fully_defined": _matrix_ds_fully_defined,
}
_SIZES = {"n23": (23, False), "n23-drop": (23, True), "n0": (0, False)}
_BASIC = {f"{m}-{s}": (m, *_SIZES[s]) for m in _MAKERS for s in _SIZES}


# ---------------------------------------------------------------------------------------------- ragged_batch


@kcase("ragged_batch_test.py::testBasic", params=_BASIC)
def ragged_batch_basic(L, tmp, param):
    maker, nrows, drop_remainder = param
    return _MAKERS[maker](L, nrows).ragged_batch(4, drop_remainder)


@kcase(
    "dense_to_ragged_batch_test.py::testBasic",
    params={k: _BASIC[k] for k in ("vector-n23", "dict-n23-drop", "ragged-n23", "tuple-n0")},
)
def dense_to_ragged_batch_basic(L, tmp, param):
    maker, nrows, drop_remainder = param
    return _MAKERS[maker](L, nrows).apply(L.experimental.dense_to_ragged_batch(4, drop_remainder))


def _structured(L, x):
    if L.name == "tf":
        tf = L.tf
        return {
            "dense": tf.fill([x], x),
            "ragged": tf.ragged.stack([tf.stack([x]), tf.stack([x, x])]),
            "sparse": tf.SparseTensor([[x]], [x], [100]),
        }
    return {
        "dense": np.full([x], x),
        "ragged": L.pf.RaggedTensor.from_row_lengths(np.array([x, x, x]), np.array([1, 2], np.int32)),
        "sparse": L.pf.SparseTensor([[x]], np.array([x]), [100]),
    }


@kcase("ragged_batch_test.py::testWithStructuredElements")
def ragged_batch_structured(L, tmp):
    return _scalar_ds(L, 20).map(lambda x: _structured(L, x)).ragged_batch(4)


@kcase("dense_to_ragged_batch_test.py::testWithStructuredElements")
def dense_to_ragged_batch_structured(L, tmp):
    return _scalar_ds(L, 20).map(lambda x: _structured(L, x)).apply(L.experimental.dense_to_ragged_batch(4))


@kcase("ragged_batch_test.py::testBasic (row_splits_dtype=int32)")
def ragged_batch_int32_splits(L, tmp):
    return _tuple_ds(L, 10).ragged_batch(3, row_splits_dtype=L.int32)


@kcase("ragged_batch_test.py::testBasic (unknown dimensions from a spec)")
def ragged_batch_from_generator_spec(L, tmp):
    def gen():
        for i in range(5):
            yield np.full([2, 2], i, np.int64)  # every shape equal, but the spec says (None, 2): ragged anyway

    ds = L.Dataset.from_generator(gen, output_signature=L.TensorSpec([None, 2], L.int64))
    return ds.ragged_batch(2)


@kcase("ragged_batch_test.py::testBasic (strings)")
def ragged_batch_strings(L, tmp):
    return L.Dataset.from_tensor_slices(_ragged(L, [["a", "b"], [], ["c"]])).ragged_batch(2)


@kcase("ragged_batch_test.py::testBasic (ragged_batch then unbatch)")
def ragged_batch_unbatch(L, tmp):
    return _vector_ds(L, 7).ragged_batch(3).unbatch()


@kcase("ragged_batch_test.py::testBasic (ragged_batch then batch)")
def ragged_batch_batch(L, tmp):
    return _vector_ds(L, 9).ragged_batch(2).batch(2)


# ---------------------------------------------------------------------------------------------- batch


@kcase("batch_test.py::testRagged")
def batch_ragged(L, tmp):
    def fn(i):
        rt = L.tf.RaggedTensor if L.name == "tf" else L.pf.RaggedTensor
        return rt.from_tensor(i * np.array([[1]]) if L.name == "pf" else i * [[1]])

    return L.Dataset.range(10).map(fn).batch(5)


@kcase("batch_test.py::testRaggedWithDifferentShapes")
def batch_ragged_different_shapes(L, tmp):
    if L.name == "tf":
        return L.Dataset.range(10).map(L.tf.ragged.range).batch(5)
    return L.Dataset.range(10).map(lambda i: L.pf.RaggedTensor.from_row_lengths(np.arange(i), [i])).batch(5)


@kcase("batch_test.py::testRaggedNested")
def batch_ragged_nested(L, tmp):
    def fn(i):
        rt = L.tf.RaggedTensor if L.name == "tf" else L.pf.RaggedTensor
        return rt.from_tensor(i * np.array([[1]]) if L.name == "pf" else i * [[1]])

    return L.Dataset.range(10).map(fn).batch(5).batch(2)


@kcase("batch_test.py::testRagged (rows of from_tensor_slices)")
def batch_ragged_slices(L, tmp):
    return L.Dataset.from_tensor_slices(_ragged(L, [[1, 2], [3], [], [4, 5, 6], [7]])).batch(2)


@kcase("batch_test.py::testRagged (from_tensors, drop_remainder)")
def batch_ragged_tensors(L, tmp):
    rt = _ragged(L, [[1, 2], [3], [], [4, 5, 6]], row_splits_dtype=L.int32)
    return L.Dataset.from_tensors(rt).repeat(5).batch(2, drop_remainder=True)


# ---------------------------------------------------------------------------------------------- unbatch


def _sparse(L, **kwargs):
    return (L.tf.SparseTensor if L.name == "tf" else L.pf.SparseTensor)(**kwargs)


@kcase("unbatch_test.py::testUnbatchDatasetWithDenseSparseAndRaggedTensor")
def unbatch_dense_sparse_ragged(L, tmp):
    st = _sparse(L, indices=[[i, i] for i in range(10)], values=list(range(10)), dense_shape=[10, 10])
    rt = _ragged(L, [[[i]] for i in range(10)])
    return L.Dataset.from_tensors((list(range(10)), st, rt)).unbatch().batch(5).unbatch()


@kcase("unbatch_test.py::testUnbatchDatasetWithRaggedTensor")
def unbatch_ragged(L, tmp):
    rt = _ragged(L, [[[i]] for i in range(10)])
    return L.Dataset.from_tensors(rt).unbatch().batch(5).batch(2).unbatch()


@kcase("unbatch_test.py::testUnbatchDatasetWithRaggedTensor (rows of a ragged rank 1 tensor)")
def unbatch_ragged_rows(L, tmp):
    return L.Dataset.from_tensors(_ragged(L, [[1, 2], [3], [], [4, 5, 6]])).unbatch()


# ---------------------------------------------------------------------------------------------- from_tensor_slices


@kcase("from_tensor_slices_test.py::testFromTensorSlicesRagged")
def from_tensor_slices_ragged(L, tmp):
    return L.Dataset.from_tensor_slices((_ragged(L, [[[0]], [[1]], [[2]]]), _ragged(L, [[[3]], [[4]], [[5]]])))


@kcase("from_tensor_slices_test.py::testFromTensorSlicesMixedRagged")
def from_tensor_slices_mixed_ragged(L, tmp):
    components = (
        np.tile(np.array([[1], [2], [3]]), 20),
        np.tile(np.array([[12], [13], [14]]), 22),
        np.array([37.0, 38.0, 39.0]),
        _sparse(
            L, indices=np.array([[0, 0], [1, 0], [2, 0]]), values=np.array([0, 0, 0]), dense_shape=np.array([3, 1])
        ),
        _sparse(
            L, indices=np.array([[0, 0], [1, 1], [2, 2]]), values=np.array([1, 2, 3]), dense_shape=np.array([3, 3])
        ),
        _ragged(L, [[[0]], [[1]], [[2]]]),
    )
    return L.Dataset.from_tensor_slices(components)


@kcase("from_tensor_slices_test.py::testFromTensorSlicesRagged (dict, ragged rank 1)")
def from_tensor_slices_ragged_dict(L, tmp):
    return L.Dataset.from_tensor_slices({"a": _ragged(L, [[1.5], [], [2.5, 3.5]]), "b": np.arange(3)})


# ---------------------------------------------------------------------------------------------- RaggedFeature


def _example(**features):
    from tensorflow.core.example import example_pb2, feature_pb2

    def feature(v):
        if v is None:
            return feature_pb2.Feature()
        kind, values = v
        if kind == "f":
            return feature_pb2.Feature(float_list=feature_pb2.FloatList(value=values))
        if kind == "i":
            return feature_pb2.Feature(int64_list=feature_pb2.Int64List(value=values))
        return feature_pb2.Feature(bytes_list=feature_pb2.BytesList(value=values))

    features = {k: feature(v) for k, v in features.items()}
    return example_pb2.Example(features=feature_pb2.Features(feature=features)).SerializeToString()


def _parsed(L, serialized, features):
    io = L.tf.io if L.name == "tf" else L.pf.io
    specs = features(io)
    serialized = np.array(serialized, dtype=object)  # a list of bytes loses trailing NULs in parafeed (a bug)
    return L.Dataset.from_tensors(serialized).map(lambda s: io.parse_example(s, specs))


@kcase("parse_example_dataset_test.py::testSerializedContainingRaggedFeatureWithNoPartitions")
def parse_ragged_no_partitions(L, tmp):
    serialized = [
        _example(rt_c=("f", [3, 4, 5, 6, 7, 8]), rt_f_values=("f", [0, 1, 2, 3, 4])),
        _example(rt_c=("f", [])),
        _example(rt_d=None),
        _example(rt_c=("f", [1, 2, -1]), rt_d=("b", [b"hi"]), rt_f_values=("f", [0, 1, 2])),
    ]
    return _parsed(L, serialized, lambda io: {
        "rt_c": io.RaggedFeature(L.float32),
        "rt_d": io.RaggedFeature(L.string, row_splits_dtype=L.int64),
        "rt_f": io.RaggedFeature(L.float32, value_key="rt_f_values"),
    })  # fmt: skip


_ONE_PARTITION = [
    dict(rt_values=("f", [3, 4, 5, 6]), rt_splits=("i", [0, 1, 4]), rt_lengths=("i", [1, 3]),
         rt_starts=("i", [0, 1]), rt_limits=("i", [1, 4]), rt_rowids=("i", [0, 1, 1, 1])),
    dict(rt_values=("f", []), rt_splits=("i", [0]), rt_lengths=("i", []), rt_starts=("i", []),
         rt_limits=("i", []), rt_rowids=("i", [])),
    dict(rt_values=None, rt_splits=("i", [0]), rt_lengths=None, rt_starts=None, rt_limits=None, rt_rowids=None),
    dict(rt_values=("f", [1, 2, -1, 8, 9, 5]), rt_splits=("i", [0, 3, 3, 5, 6]), rt_lengths=("i", [3, 0, 2, 1]),
         rt_starts=("i", [0, 3, 3, 5]), rt_limits=("i", [3, 3, 5, 6]), rt_rowids=("i", [0, 0, 0, 2, 2, 3])),
]  # fmt: skip


def _one_partition_features(L, io):
    R = io.RaggedFeature
    return {
        "rt1": R(value_key="rt_values", partitions=[R.RowSplits("rt_splits")], dtype=L.float32),
        "rt2": R(value_key="rt_values", partitions=[R.RowLengths("rt_lengths")], dtype=L.float32),
        "rt3": R(value_key="rt_values", partitions=[R.RowStarts("rt_starts")], dtype=L.float32),
        "rt4": R(value_key="rt_values", partitions=[R.RowLimits("rt_limits")], dtype=L.float32),
        "rt5": R(value_key="rt_values", partitions=[R.ValueRowIds("rt_rowids")], dtype=L.float32),
        "uniform1": R(value_key="rt_values", partitions=[R.UniformRowLength(2)], dtype=L.float32),
        "uniform2": R(value_key="rt_values", partitions=[R.UniformRowLength(2), R.RowSplits("rt_splits")],
                      dtype=L.float32),
    }  # fmt: skip


@kcase("parse_example_dataset_test.py::testSerializedContainingRaggedFeatureWithOnePartition")
def parse_ragged_one_partition(L, tmp):
    serialized = [_example(**e) for e in _ONE_PARTITION]
    return _parsed(L, serialized, lambda io: _one_partition_features(L, io))


@kcase("parse_example_dataset_test.py::testSerializedContainingRaggedFeatureWithOnePartition (single examples)")
def parse_single_ragged_one_partition(L, tmp):
    io = L.tf.io if L.name == "tf" else L.pf.io
    specs = _one_partition_features(L, io)
    serialized = np.array([_example(**e) for e in _ONE_PARTITION], dtype=object)
    return L.Dataset.from_tensor_slices(serialized).map(lambda s: io.parse_single_example(s, specs))


@kcase("parse_example_dataset_test.py::testSerializedContainingRaggedFeatureWithMultiplePartitions")
def parse_ragged_multiple_partitions(L, tmp):
    serialized = [
        _example(rt_values=("f", [1, 2, 3, 4, 5, 6, 7]), lengths_axis2=("i", [1, 2, 0, 1]),
                 lengths_axis3=("i", [1, 2, 1, 3]), splits_axis3=("i", [0, 1, 3, 4, 7])),
        _example(rt_values=("f", [1, 2, 3, 4, 5, 6, 7, 8]), lengths_axis2=("i", [2, 3]),
                 lengths_axis3=("i", [3, 1, 1, 1, 2]), splits_axis3=("i", [0, 3, 4, 5, 6, 8])),
    ]  # fmt: skip

    def features(io):
        R = io.RaggedFeature
        partitions = [R.UniformRowLength(2), R.RowLengths("lengths_axis2"), R.RowSplits("splits_axis3")]
        return {"rt1": R(value_key="rt_values", partitions=partitions, dtype=L.float32, row_splits_dtype=L.int64)}

    return _parsed(L, serialized, features)


@kcase("parse_example_dataset_test.py::testSerializedContainingRaggedFeatureWithNoPartitions (wrong type)")
def parse_ragged_type_mismatch(L, tmp):
    io = L.tf.io if L.name == "tf" else L.pf.io
    serialized = np.array([_example(rt=("f", [1.0])), _example(rt=("i", [1]))], dtype=object)
    specs = {"rt": io.RaggedFeature(L.float32)}
    return L.Dataset.from_tensor_slices(serialized).map(lambda s: io.parse_single_example(s, specs))


@kcase("ragged_batch_test.py::testBasic (batches of one after a function)", differs="ragged-batch-shapes")
def ragged_batch_first_batch_uniform(L, tmp):
    return _vector_ds(L, 5).ragged_batch(1)

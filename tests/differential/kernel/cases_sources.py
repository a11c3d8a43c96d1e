"""Sources, ported from tf.data's kernel tests: range, from_tensors, from_tensor_slices, from_generator, list_files,
and tf.data.experimental's from_list and at (random access)."""

from __future__ import annotations

import collections
import os

import numpy as np

from tests.differential.kernel.harness import kcase

DTYPES = ("int32", "int64", "float32", "float64")


def _dtype(L, name):
    return getattr(L.tf, name) if L.name == "tf" else np.dtype(name)


def _at(L, ds, index):
    return lambda: L.experimental.at(ds, index)


def _all(L, x):
    return L.tf.reduce_all(x) if L.name == "tf" else np.all(x)


def _signature(L, shape, dtype):
    return L.TensorSpec(shape, _dtype(L, dtype) if isinstance(dtype, str) else dtype)


# ---------------------------------------------------------------------------------------------------- range_test.py


@kcase("range_test.py::testStop", params={d: d for d in DTYPES})
def range_stop(L, tmp, dtype):
    return L.Dataset.range(5, output_type=_dtype(L, dtype))


@kcase("range_test.py::testStartStop", params={d: d for d in ("int32", "float64")})
def range_start_stop(L, tmp, dtype):
    return L.Dataset.range(2, 5, output_type=_dtype(L, dtype))


@kcase("range_test.py::testStartStopStep", params={d: d for d in ("int64", "float32")})
def range_start_stop_step(L, tmp, dtype):
    return L.Dataset.range(2, 10, 2, output_type=_dtype(L, dtype))


@kcase("range_test.py::testZeroStep")
def range_zero_step(L, tmp):
    return L.Dataset.range(2, 10, 0)


@kcase("range_test.py::testNegativeStep")
def range_negative_step(L, tmp):
    return L.Dataset.range(2, 10, -1)


@kcase("range_test.py::testStopLessThanStart")
def range_stop_less_than_start(L, tmp):
    return L.Dataset.range(10, 2)


@kcase("range_test.py::testStopLessThanStartWithPositiveStep")
def range_stop_less_than_start_positive_step(L, tmp):
    return L.Dataset.range(10, 2, 2)


@kcase("range_test.py::testStopLessThanStartWithNegativeStep", params={d: d for d in ("int64", "float32")})
def range_stop_less_than_start_negative_step(L, tmp, dtype):
    return L.Dataset.range(10, 2, -1, output_type=_dtype(L, dtype))


@kcase("range_test.py::testName")
def range_name(L, tmp):
    return L.Dataset.range(5, name="range")


@kcase("range_test.py (float arguments are refused)")
def range_float_argument(L, tmp):
    return L.Dataset.range(0, 1, 0.5)


@kcase("range_test.py::RangeRandomAccessTest::testBasic", params={"first": 0, "middle": 3, "last": 9})
def range_at(L, tmp, index):
    return _at(L, L.Dataset.range(10), index)


@kcase("range_test.py::RangeRandomAccessTest::testInvalidIndex", params={"negative": -1, "past_end": 10})
def range_at_invalid(L, tmp, index):
    return _at(L, L.Dataset.range(10), index)


@kcase("range_test.py::RangeRandomAccessTest::testStartStopStep")
def range_at_step(L, tmp):
    return _at(L, L.Dataset.range(2, 20, 3), 4)


# ---------------------------------------------------------------------------------------------------- from_tensors_test.py


@kcase("from_tensors_test.py::testFromTensors")
def from_tensors_tuple(L, tmp):
    return L.Dataset.from_tensors((np.array(1), np.array([1, 2, 3]), np.array(37.0)))


@kcase("from_tensors_test.py::testNestedStructure")
def from_tensors_nested_chain(L, tmp):
    components = (np.array([1, 2, 3], dtype=np.int64), (np.array([4.0, 5.0]), np.array([6.0, 7.0])),
                  np.array([8, 9, 10], dtype=np.int64))  # fmt: skip
    ds = L.Dataset.from_tensors(components).shuffle(10, 10).repeat(-1).filter(lambda x, y, z: True).take(5)
    return ds.map(lambda x, y, z: ((x, z), (y[0], y[1])))


@kcase("from_tensors_test.py::testNestedDict")
def from_tensors_nested_dict(L, tmp):
    return L.Dataset.from_tensors({"a": {"aa": 1, "ab": [2.0, 2.0]}, "b": [3, 3, 3]})


@kcase("from_tensors_test.py::testNonSequenceNestedStructure")
def from_tensors_non_sequence(L, tmp):
    components = np.array([1, 2, 3], dtype=np.int64)
    ds = L.Dataset.from_tensors(components).filter(lambda x: _all(L, L.equal(x, components)))
    return ds.map(lambda x: L.stack([x, x]))


@kcase("from_tensors_test.py::testFromTensorsEmptyComponent")
def from_tensors_empty(L, tmp):
    return L.Dataset.from_tensors(())


@kcase("from_tensors_test.py::testFromTensorsDataset")
def from_tensors_dataset(L, tmp):
    return L.Dataset.from_tensors(L.Dataset.range(10)).flat_map(lambda x: x)


@kcase("from_tensors_test.py::testName")
def from_tensors_name(L, tmp):
    return L.Dataset.from_tensors(42, name="from_tensors")


@kcase("from_tensors_test.py::testStrings")
def from_tensors_strings(L, tmp):
    return L.Dataset.from_tensors(("hello", [b"a", b"bc"]))


@kcase("from_tensors_test.py::FromTensorsRandomAccessTest::testBasic", params={"0": 0, "1": 1, "-1": -1})
def from_tensors_at(L, tmp, index):
    return _at(L, L.Dataset.from_tensors((1, [2.0, 3.0])), index)


# ---------------------------------------------------------------------------------------------------- from_tensor_slices_test.py


@kcase("from_tensor_slices_test.py::testFromTensorSlicesEmptyComponent")
def slices_empty_component(L, tmp):
    return L.Dataset.from_tensor_slices(())


@kcase("from_tensor_slices_test.py::testFromTensorSlices")
def slices_tuple(L, tmp):
    return L.Dataset.from_tensor_slices((np.tile(np.array([[1], [2], [3], [4]]), 20),
                                         np.tile(np.array([[12], [13], [14], [15]]), 22),
                                         np.array([37.0, 38.0, 39.0, 40.0])))  # fmt: skip


@kcase("from_tensor_slices_test.py::testFromTensorSlicesDataset")
def slices_of_datasets(L, tmp):
    return L.Dataset.from_tensor_slices([L.Dataset.range(10) for _ in range(10)]).flat_map(lambda x: x)


@kcase("from_tensor_slices_test.py::testFromTensorSlicesDatasetOfOrderedDict")
def slices_of_datasets_of_ordered_dicts(L, tmp):
    dss = [L.Dataset.range(10).map(lambda x: collections.OrderedDict([("x", x)])) for _ in range(10)]
    return L.Dataset.from_tensor_slices(dss).flat_map(lambda x: x)


@kcase("from_tensor_slices_test.py::testFromTensorSlicesWithDict")
def slices_dict(L, tmp):
    return L.Dataset.from_tensor_slices({"foo": [1, 2, 3], "bar": [[4.0], [5.0], [6.0]]})


@kcase("from_tensor_slices_test.py::testFromTensorSlicesWithUintDtypes")
def slices_uint(L, tmp):
    return L.Dataset.from_tensor_slices((np.tile(np.array([[0], [1]], dtype=np.uint8), 2),
                                         np.tile(np.array([[2], [256]], dtype=np.uint16), 2),
                                         np.tile(np.array([[4], [65536]], dtype=np.uint32), 2),
                                         np.tile(np.array([[8], [4294967296]], dtype=np.uint64), 2)))  # fmt: skip


@kcase("from_tensor_slices_test.py::testFromTensorSlicesScalar")
def slices_scalar(L, tmp):
    return L.Dataset.from_tensor_slices(1)


@kcase("from_tensor_slices_test.py::testFromTensorSlicesMismatchedLengths")
def slices_mismatched(L, tmp):
    return L.Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))


@kcase("from_tensor_slices_test.py::testFromTensorSlicesStrings")
def slices_strings(L, tmp):
    return L.Dataset.from_tensor_slices((["a", "bc", ""], np.array([b"x", b"y", b"z"])))


@kcase("from_tensor_slices_test.py::testFromTensorSlicesEmpty")
def slices_zero_rows(L, tmp):
    return L.Dataset.from_tensor_slices(np.zeros((0, 3), np.float32))


@kcase("from_tensor_slices_test.py::testName")
def slices_name(L, tmp):
    return L.Dataset.from_tensor_slices([42], name="from_tensor_slices")


@kcase("from_tensor_slices_test.py::FromTensorSlicesRandomAccessTest::testInvalidIndex", params={"-1": -1, "3": 3})
def slices_at_invalid(L, tmp, index):
    return _at(L, L.Dataset.from_tensor_slices([1, 2, 3]), index)


@kcase("from_tensor_slices_test.py::FromTensorSlicesRandomAccessTest::testOneDimensionalArray")
def slices_at_one_dimensional(L, tmp):
    return _at(L, L.Dataset.from_tensor_slices([1, 2, 3]), 2)


@kcase("from_tensor_slices_test.py::FromTensorSlicesRandomAccessTest::testTwoDimensionalArray")
def slices_at_two_dimensional(L, tmp):
    return _at(L, L.Dataset.from_tensor_slices([[1, 2], [3, 4]]), 1)


@kcase("from_tensor_slices_test.py::FromTensorSlicesRandomAccessTest::testMultipleComponents")
def slices_at_multiple_components(L, tmp):
    return _at(L, L.Dataset.from_tensor_slices(([1, 2], [3, 4], [5, 6])), 1)


@kcase("from_tensor_slices_test.py::FromTensorSlicesRandomAccessTest::testDictionary")
def slices_at_dict(L, tmp):
    return _at(L, L.Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]}), 0)


@kcase("from_tensor_slices_test.py::FromTensorSlicesRandomAccessTest::testNumpy")
def slices_at_numpy(L, tmp):
    components = (np.tile(np.array([[0], [1]], dtype=np.uint8), 2),
                  np.tile(np.array([[8], [4294967296]], dtype=np.uint64), 2))  # fmt: skip
    return _at(L, L.Dataset.from_tensor_slices(components), 1)


# ---------------------------------------------------------------------------------------------------- from_generator_test.py


def _gen_arrays():
    for _ in range(3):
        yield np.array([1, 2, 3], dtype=np.int64)
        yield np.array([4, 5, 6], dtype=np.int64)


@kcase("from_generator_test.py::testFromGeneratorUsingFunction")
def gen_function(L, tmp):
    return L.Dataset.from_generator(_gen_arrays, output_signature=_signature(L, (3,), "int64"))


@kcase("from_generator_test.py::testFromGeneratorUsingList")
def gen_list(L, tmp):
    rows = [[1, 2, 3], [4, 5, 6]]
    return L.Dataset.from_generator(lambda: iter(rows), output_types=L.int64, output_shapes=(3,))


@kcase("from_generator_test.py::testFromGeneratorUsingNdarray")
def gen_ndarray(L, tmp):
    arr = np.arange(12, dtype=np.int64).reshape(4, 3)
    return L.Dataset.from_generator(lambda: iter(arr), output_signature=_signature(L, (3,), "int64"))


@kcase("from_generator_test.py::testFromGeneratorUsingGeneratorExpression")
def gen_expression(L, tmp):
    return L.Dataset.from_generator(lambda: (i * i for i in range(5)), output_types=L.int64)


@kcase("from_generator_test.py::testFromGeneratorString")
def gen_string(L, tmp):
    return L.Dataset.from_generator(lambda: iter(["foo", b"bar", "baz"]), output_types=L.string)


@kcase("from_generator_test.py::testFromGeneratorTypeError")
def gen_type_error(L, tmp):
    def gen():
        yield np.array([1, 2, 3], dtype=np.int64)
        yield np.array([4, 5, 6], dtype=np.int64)
        yield "ERROR"
        yield np.array([7, 8, 9], dtype=np.int64)

    return L.Dataset.from_generator(gen, output_types=L.int64, output_shapes=(3,))


@kcase("from_generator_test.py::testFromGeneratorShapeError")
def gen_shape_error(L, tmp):
    def gen():
        yield np.array([1, 2, 3], dtype=np.int64)
        yield np.array([4, 5, 6], dtype=np.int64)
        yield np.array([7, 8, 9, 10], dtype=np.int64)

    return L.Dataset.from_generator(gen, output_types=L.int64, output_shapes=(3,))


@kcase("from_generator_test.py::testFromGeneratorStructureError")
def gen_structure_error(L, tmp):
    def gen():
        yield 1, 2
        yield 3, 4
        yield 5
        yield 6, 7, 8

    return L.Dataset.from_generator(gen, output_types=(L.int64, L.int64))


@kcase("from_generator_test.py::testFromGeneratorHeterogeneous")
def gen_heterogeneous(L, tmp):
    def gen():
        for i in range(1, 5):
            yield [i] * i

    return L.Dataset.from_generator(gen, output_types=L.int64, output_shapes=(None,))


@kcase("from_generator_test.py::testFromGeneratorImplicitConversion", params={"int64": "int64", "float32": "float32"})
def gen_implicit_conversion(L, tmp, dtype):
    def gen():
        yield 1
        yield 2
        yield 3

    return L.Dataset.from_generator(gen, output_types=_dtype(L, dtype))


@kcase("from_generator_test.py::testFromGeneratorWithArgs")
def gen_with_args(L, tmp):
    def gen(n):
        yield from range(n)

    return L.Dataset.from_generator(gen, args=(5,), output_types=L.int64)


@kcase("from_generator_test.py::testFromGeneratorWithTwoArgs")
def gen_with_two_args(L, tmp):
    def gen(n, s):
        for i in range(n):
            yield i, s

    return L.Dataset.from_generator(gen, args=(3, "hi"), output_types=(L.int64, L.string))


@kcase("from_generator_test.py::testFromGeneratorDictStructure")
def gen_dict(L, tmp):
    def gen():
        for i in range(3):
            yield {"a": i, "b": [float(i)] * 2}

    signature = {"a": _signature(L, (), "int32"), "b": _signature(L, (2,), "float32")}
    return L.Dataset.from_generator(gen, output_signature=signature)


@kcase("from_generator_test.py::testFromGeneratorStopShort")
def gen_stop_short(L, tmp):
    return L.Dataset.from_generator(lambda: iter(range(100)), output_types=L.int64).take(3)


@kcase("from_generator_test.py::testFromGeneratorMultipleIterations")
def gen_repeated(L, tmp):
    return L.Dataset.from_generator(lambda: iter(range(3)), output_types=L.int64).repeat(3)


@kcase("from_generator_test.py::testFromGeneratorNotCallable")
def gen_not_callable(L, tmp):
    return L.Dataset.from_generator(iter([1, 2]), output_types=L.int64)


@kcase("from_generator_test.py::testFromGeneratorCardinality")
def gen_cardinality(L, tmp):
    return L.Dataset.from_generator(lambda: iter([1, 2, 3]), output_types=L.int32).map(lambda x: x + 1)


@kcase("from_generator_test.py::testName")
def gen_name(L, tmp):
    return L.Dataset.from_generator(lambda: iter([42]), output_types=L.int32, name="from_generator")


# ---------------------------------------------------------------------------------------------------- list_files_test.py


def _files(tmp, names):
    """Files in a directory both libraries share (the names they list must be equal)."""
    root = os.path.join(os.path.dirname(tmp), "shared_files")
    os.makedirs(root, exist_ok=True)
    for name in names:
        open(os.path.join(root, name), "a").close()
    return root


@kcase("list_files_test.py::testEmptyDirectory")
def list_files_empty_directory(L, tmp):
    root = os.path.join(os.path.dirname(tmp), "empty_dir")
    os.makedirs(root, exist_ok=True)
    return L.Dataset.list_files(os.path.join(root, "*"))


@kcase("list_files_test.py::testSimpleDirectory", ordered=False)
def list_files_simple(L, tmp):
    return L.Dataset.list_files(os.path.join(_files(tmp, ["a", "b", "c"]), "*"))


@kcase("list_files_test.py::testSimpleDirectoryNotShuffled")
def list_files_not_shuffled(L, tmp):
    return L.Dataset.list_files(os.path.join(_files(tmp, ["b", "c", "a"]), "*"), shuffle=False)


@kcase("list_files_test.py::testFileSuffixes")
def list_files_suffixes(L, tmp):
    root = _files(tmp, ["a.py", "b.py", "c.pyc", "d.txt"])
    return L.Dataset.list_files(os.path.join(root, "*.py"), shuffle=False)


@kcase("list_files_test.py::testFileMiddles")
def list_files_middles(L, tmp):
    root = _files(tmp, ["aa.py", "bb.py", "cc.pyc"])
    return L.Dataset.list_files(os.path.join(root, "*b*.py*"), shuffle=False)


@kcase("list_files_test.py::testMultiplePatternsAsList")
def list_files_several_patterns(L, tmp):
    root = _files(tmp, ["a.py", "b.txt", "c.py", "d.txt"])
    return L.Dataset.list_files([os.path.join(root, "*.txt"), os.path.join(root, "*.py")], shuffle=False)


@kcase("list_files_test.py::testFrozenSeed", ordered=False)
def list_files_seeded(L, tmp):
    return L.Dataset.list_files(os.path.join(_files(tmp, ["a", "b", "c", "d"]), "*"), seed=37)


# ---------------------------------------------------------------------------------------------------- from_list_test.py


@kcase("from_list_test.py::testInvalidInputs", params={"empty_input": [], "non-list_input": (1, 2, 3)})
def from_list_invalid(L, tmp, elements):
    return L.experimental.from_list(elements)


@kcase("from_list_test.py::testLargeNInputs")
def from_list_large(L, tmp):
    return L.experimental.from_list(list(range(1000)))


@kcase("from_list_test.py::testTupleInputs")
def from_list_tuples(L, tmp):
    return L.experimental.from_list([(1, 2), (3, 4)])


@kcase("from_list_test.py::testNonRectangularInputs")
def from_list_non_rectangular(L, tmp):
    return L.experimental.from_list([[[1]], [[2, 3]], [[4, 5, 6]]])


@kcase("from_list_test.py::testDictInputs")
def from_list_dicts(L, tmp):
    return L.experimental.from_list([{"foo": [1, 2, 3], "bar": [[4.0], [5.0], [6.0]]},
                                     {"foo": [4, 5, 6], "bar": [[7.0], [8.0], [9.0]]}])  # fmt: skip


@kcase("from_list_test.py::testUintInputs")
def from_list_uint(L, tmp):
    return L.experimental.from_list([(np.tile(np.array([[0], [1]], dtype=np.uint8), 2),
                                      np.tile(np.array([[2], [256]], dtype=np.uint16), 2),
                                      np.tile(np.array([[4], [65536]], dtype=np.uint32), 2),
                                      np.tile(np.array([[8], [4294967296]], dtype=np.uint64), 2))])  # fmt: skip


@kcase("from_list_test.py::testStructureMismatch")
def from_list_structure_mismatch(L, tmp):
    return L.experimental.from_list([(1, 2), (3,)])


@kcase("from_list_test.py::testStrings")
def from_list_strings(L, tmp):
    return L.experimental.from_list([(1, "a"), (2, "b"), (3, "c")])


@kcase("from_list_test.py::FromListRandomAccessTest::testInvalidIndex", params={"-1": -1, "3": 3})
def from_list_at_invalid(L, tmp, index):
    return _at(L, L.experimental.from_list([1, 2, 3]), index)


@kcase("from_list_test.py::FromListRandomAccessTest::testTwoDimensionalArray")
def from_list_at_two_dimensional(L, tmp):
    return _at(L, L.experimental.from_list([[1, 2], [3, 4]]), 1)


@kcase("from_list_test.py::FromListRandomAccessTest::testDictionary")
def from_list_at_dict(L, tmp):
    return _at(L, L.experimental.from_list([{"a": 1, "b": 3}, {"a": 2, "b": 4}]), 1)


@kcase("from_list_test.py::testName")
def from_list_name(L, tmp):
    return L.experimental.from_list([42], name="from_list")


# ---------------------------------------------------------------------------------------------------- sparse slices


def _sparse(L, indices, values, shape):
    if L.name == "tf":
        return L.tf.sparse.SparseTensor(indices, values, shape)
    return L.pf.SparseTensor(indices, values, shape)


def _fields(L, element):
    return (element.indices, element.values, element.dense_shape)


@kcase("from_tensor_slices_test.py::testFromTensorSlicesSparse")
def slices_of_sparse(L, tmp):
    st = _sparse(L, [[0, 0], [1, 0], [2, 0]], np.array([0, 1, 2], np.int64), [3, 1])
    return L.Dataset.from_tensor_slices(st).map(lambda s: _fields(L, s))


@kcase("from_tensor_slices_test.py::testFromTensorSlicesMixed (sparse beside dense)")
def slices_of_sparse_and_dense(L, tmp):
    st = _sparse(L, [[0, 0], [1, 2], [2, 1]], np.array([1.5, 2.5, 3.5], np.float32), [3, 4])
    return L.Dataset.from_tensor_slices((st, np.arange(3))).map(lambda s, x: (_fields(L, s), x))


@kcase("from_tensor_slices_test.py::testFromTensorSlicesSparse (rank 1 is refused)")
def slices_of_sparse_rank_1(L, tmp):
    return L.Dataset.from_tensor_slices(_sparse(L, [[0]], np.array([1], np.int64), [3]))

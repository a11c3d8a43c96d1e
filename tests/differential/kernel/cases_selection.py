"""Steps that select elements, ported from tf.data's kernel tests: shard, take_while, unique, ignore_errors."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.harness import kcase


def _elements(L, ds) -> list:
    return list(ds.as_numpy_iterator()) if L.name == "tf" else list(ds)


# ---------------------------------------------------------------------------------------------------- shard_test.py


@kcase("shard_test.py::testSimpleCase")
def shard_simple(L, tmp):
    return L.Dataset.range(10).shard(5, 2)


@kcase("shard_test.py::testNestedData")
def shard_nested(L, tmp):
    return L.Dataset.zip((L.Dataset.range(10), L.Dataset.range(10, 0, -1))).shard(5, 2)


@kcase("shard_test.py::testOffsetZero")
def shard_offset_zero(L, tmp):
    return L.Dataset.range(10).shard(5, 0)


@kcase(
    "shard_test.py::testInvalidArguments",
    params={
        "offset>num_shards": (5, 7),
        "negative offset": (5, -3),
        "negative num_shards": (-3, 1),
        "zero num_shards": (0, 1),
    },
)
def shard_invalid(L, tmp, args):
    return L.Dataset.range(10).shard(*args)


@kcase("shard_test.py::testIteratorEndsBeforeFirstElem")
def shard_ends_before_first(L, tmp):
    return L.Dataset.range(1).shard(5, 2)


@kcase("shard_test.py::testLargerWorkerPool", params={"7-5": (7, 5), "5-4": (5, 4), "4-3": (4, 3), "20-5": (20, 5)})
def shard_sizes(L, tmp, args):
    return L.Dataset.range(10).shard(*args)


@kcase("shard_test.py::testShardInfinite", take=4)
def shard_infinite(L, tmp):
    return L.Dataset.range(3).repeat().shard(2, 1)


@kcase("shard_test.py::testName")
def shard_name(L, tmp):
    return L.Dataset.from_tensors(42).shard(1, 0, name="shard")


@kcase("shard_test.py::ShardRandomAccessTest::testInvalidIndex", params={"-1": -1, "2": 2, "4": 4})
def shard_at_invalid(L, tmp, index):
    return lambda: L.experimental.at(L.Dataset.range(4).shard(num_shards=2, index=0), index)


@kcase("shard_test.py::ShardRandomAccessTest::testNumShardsAndIndexLessThanNumElements")
def shard_at(L, tmp):
    return lambda: L.experimental.at(L.Dataset.range(10).shard(5, 0), 1)


# ---------------------------------------------------------------------------------------------------- take_while_test.py


@kcase("take_while_test.py::testTakeWhileDataset", params={"14-2": (14, 2), "15-3": (15, 3), "100-3": (100, 3)})
def take_while_window(L, tmp, args):
    num_elements, window_size = args
    ds = L.Dataset.range(num_elements).batch(window_size)
    return ds.take_while(lambda x: L.equal(L.length(x), window_size)).unbatch()


@kcase("take_while_test.py::testTakeWhileDatasetRange", params={"10-2": (10, 2), "16-7": (16, 7), "100-99": (100, 99)})
def take_while_range(L, tmp, args):
    num_elements, upper = args
    return L.Dataset.range(num_elements).take_while(lambda x: x < upper)


@kcase("take_while_test.py::testTakeWhileDatasetString")
def take_while_string(L, tmp):
    ds = L.Dataset.from_tensor_slices(["this", "is", "the", "test"])
    return ds.take_while(lambda s: L.str_len(s) > 2)


@kcase("take_while_test.py::testTakewhileDatasetShortCircuit")
def take_while_short_circuit(L, tmp):
    ds = L.Dataset.from_tensor_slices([True, True, False, True])
    return ds.take_while(lambda x: x)


@kcase("take_while_test.py::testTakeWhileDatasetWithRepeat")
def take_while_repeat(L, tmp):
    return L.Dataset.range(10).take_while(lambda x: x < 2).repeat(5)


@kcase("take_while_test.py::testTakeWhileNonBool")
def take_while_non_bool(L, tmp):
    return L.Dataset.range(10).take_while(lambda x: x)


@kcase("take_while_test.py::testName")
def take_while_name(L, tmp):
    return L.Dataset.from_tensors(42).take_while(lambda _: True, name="take_while")


# ---------------------------------------------------------------------------------------------------- unique_test.py


@kcase("unique_test.py::testSimpleInt", params={"int32": "int32", "int64": "int64"})
def unique_ints(L, tmp, dtype):
    values = np.array([0, 5, 1, 2, 5, 0, 2, 1, 8, 8, 4, 0], dtype=dtype)
    return L.Dataset.from_tensor_slices(values).repeat(2).unique()


@kcase("unique_test.py::testSimpleString")
def unique_strings(L, tmp):
    return L.Dataset.from_tensor_slices(["hello", "world", "hello", "", "world", ""]).unique()


@kcase("unique_test.py::testUnsupportedTypes", params={"float32": "float32", "bool": "bool"})
def unique_unsupported(L, tmp, dtype):
    return L.Dataset.from_tensor_slices(np.zeros(3, dtype)).unique()


@kcase("unique_test.py::testUnsupportedShape")
def unique_non_scalar(L, tmp):
    return L.Dataset.from_tensor_slices(np.zeros((3, 2), np.int64)).unique()


@kcase("unique_test.py::testName")
def unique_name(L, tmp):
    return L.Dataset.from_tensors(42).unique(name="unique")


# ---------------------------------------------------------------------------------------------------- ignore_errors_test.py


@kcase("ignore_errors_test.py::testMapIgnoreError")
def ignore_errors_map(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, np.nan, 3.0], np.float32))
    return ds.map(lambda x: L.check_numerics(x * 2.0)).ignore_errors()


@kcase("ignore_errors_test.py::testParallelMapIgnoreError")
def ignore_errors_parallel_map(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, np.nan, 3.0], np.float32))
    return ds.map(lambda x: L.check_numerics(x * 2.0), num_parallel_calls=2).prefetch(2).ignore_errors()


@kcase("ignore_errors_test.py::testZipIgnoreError")
def ignore_errors_zip(L, tmp):
    a = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, np.nan, 3.0], np.float32))
    b = a.map(lambda x: L.check_numerics(x * 2.0))
    return L.Dataset.zip((a, b)).ignore_errors()


@kcase("ignore_errors_test.py::testCardinality")
def ignore_errors_cardinality(L, tmp):
    return L.Dataset.range(10).ignore_errors()


@kcase("ignore_errors_test.py::testName")
def ignore_errors_name(L, tmp):
    return L.Dataset.from_tensors(42).ignore_errors(name="ignore_errors")


@kcase("ignore_errors_test.py::testExperimentalIgnoreErrors")
def ignore_errors_experimental(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.array([1.0, np.nan, 3.0], np.float32))
    return ds.map(lambda x: L.check_numerics(x * 2.0)).apply(L.experimental.ignore_errors())

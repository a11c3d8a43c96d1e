"""The core transformations, ported from tf.data's kernel tests: map, filter, shuffle, take, skip, repeat, shard,
take_while, unique, ignore_errors, cache, prefetch, options, len, apply and iterators, and tf.data.experimental's
assert_cardinality and pad_to_cardinality.

A shuffle's random stream differs by design (see docs/porting.md), so shuffle cases compare multisets
(``ordered=False``), orders a buffer of one keeps, and whether two passes agree.
"""

from __future__ import annotations

import collections
import os

import numpy as np

from tests.differential.kernel.harness import kcase

Example = collections.namedtuple("Example", ["label", "image"])

COMPONENTS = (np.arange(7), np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis], np.array(37.0) * np.arange(7))


def _elements(L, ds) -> list:
    return list(ds.as_numpy_iterator()) if L.name == "tf" else list(ds)


def _ints(L, ds) -> list[int]:
    return [int(x) for x in _elements(L, ds)]


def _options(L, **values):
    options = L.tf.data.Options() if L.name == "tf" else L.pf.Options()
    for name, value in values.items():
        setattr(options, name, value)
    return options


def _square3(x, y, z):
    return x * x, y * y, z * z


# ---------------------------------------------------------------------------------------------------- map_test.py


@kcase("map_test.py::testMapDataset")
def map_square_repeat(L, tmp):
    return L.Dataset.from_tensor_slices(COMPONENTS).map(_square3).repeat(14)


@kcase("map_test.py::testParallelMapDataset", params={"1-1": (1, 1), "2-4": (2, 4), "8-16": (8, 16)})
def map_parallel_prefetch_repeat(L, tmp, calls_and_buffer):
    calls, buffer = calls_and_buffer
    ds = L.Dataset.from_tensor_slices(COMPONENTS).map(_square3, num_parallel_calls=calls)
    return ds.prefetch(buffer).repeat(14)


@kcase("map_test.py::testParallelMapDataset[AUTOTUNE]")
def map_parallel_autotune(L, tmp):
    return L.Dataset.range(100).map(lambda x: x * x, num_parallel_calls=L.AUTOTUNE)


@kcase("map_test.py::testParallelMapDataset[deterministic=False]", ordered=False)
def map_parallel_not_deterministic(L, tmp):
    return L.Dataset.range(50).map(lambda x: x + 1, num_parallel_calls=4, deterministic=False)


@kcase("map_test.py::testParallelMapError")
def map_parallel_error(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, 3.0, np.nan, 5.0], np.float32))
    return ds.map(L.check_numerics, num_parallel_calls=2)


@kcase("map_test.py::testPrefetchError")
def map_prefetch_error(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, 3.0, np.nan, 5.0], np.float32))
    return ds.map(L.check_numerics).prefetch(2)


@kcase("map_test.py::testMapDict")
def map_dict(L, tmp):
    ds = L.Dataset.range(10).map(lambda x: {"foo": x * 2, "bar": x * x})
    return ds.map(lambda d: d["foo"] + d["bar"])


@kcase("map_test.py::testMapNamedtuple")
def map_namedtuple(L, tmp):
    labels = L.Dataset.range(10)
    ds = L.Dataset.zip((labels, labels.map(lambda x: -x))).map(Example)
    return ds.map(lambda e: e._replace(image=2 * e.image))


@kcase("map_test.py::testMapNamedtuple[tuple]")
def map_tuple_arguments(L, tmp):
    labels = L.Dataset.range(10)
    return L.Dataset.zip((labels, labels.map(lambda x: -x))).map(lambda label, image: (label, 2 * image))


@kcase("map_test.py::testCaseAndCondInMap", params={"2": 2, "4": 4})
def map_python_conditionals(L, tmp, num):
    def control(x):
        if num in (2, 3):
            if x % 2 == 0:
                return x * 2
            return x // 2
        return x * 2

    return L.Dataset.from_tensor_slices(np.arange(6)).map(control)


@kcase("map_test.py::testNestedListMapDataset")
def map_nested_list(L, tmp):
    return L.Dataset.from_tensors([0, 1, 2]).repeat(10).map(lambda a: ([a[1], a[0] + a[2]], a[1]))


@kcase("map_test.py::testReturnList")
def map_return_list(L, tmp):
    return L.Dataset.range(10).map(lambda x: [x, 37.0])


@kcase("map_test.py::testConstantOutput")
def map_constant_output(L, tmp):
    return L.Dataset.range(10).map(lambda x: [x, "hello", 10])


@kcase("map_test.py::testNestedDatasetMap")
def map_nested_dataset(L, tmp):
    ds = L.Dataset.from_tensors([1.0, 2.0, 3.0]).map(L.Dataset.from_tensor_slices)
    return ds.map(lambda d: d.batch(3)).flat_map(lambda x: x)


@kcase("map_test.py::testReturnValueError")
def map_return_value_error(L, tmp):
    class Foo:
        pass

    return L.Dataset.from_tensors([1.0, 2.0, 3.0]).map(lambda x: Foo)


@kcase("map_test.py::testShortCircuit", params={"identity": lambda x: x, "replicate": lambda x: (x, x)})
def map_short_circuit(L, tmp, fn):
    return L.Dataset.from_tensors(np.int64(7)).repeat().map(fn, num_parallel_calls=12).take(3)


@kcase("map_test.py::testShortCircuit", params={"swap": lambda x, y: (y, x), "project": lambda x, y: x})
def map_short_circuit_pairs(L, tmp, fn):
    return L.Dataset.from_tensors((np.int64(1), np.float32(2.0))).repeat().map(fn).take(3)


@kcase("map_test.py::testNotCallable")
def map_not_callable(L, tmp):
    return L.Dataset.range(3).map(5)


@kcase("map_test.py::testName")
def map_name(L, tmp):
    return L.Dataset.from_tensors(21).map(lambda x: x * 2, name="map")


@kcase("map_test.py (int32 plus a Python int keeps int32)")
def map_int32_plus_python_int(L, tmp):
    return L.Dataset.range(5, output_type=L.int32).map(lambda x: x + 1)


@kcase("map_test.py (float32 times a Python float keeps float32)")
def map_float32_times_python_float(L, tmp):
    return L.Dataset.range(5, output_type=L.float32).map(lambda x: x * 2.5)


@kcase("map_test.py (true division of int64 gives float64)")
def map_int64_true_division(L, tmp):
    return L.Dataset.range(5).map(lambda x: (x / 2, x // 2, x % 3))


@kcase("map_test.py (Python scalars returned become int32, float32, bool, string)")
def map_python_scalars(L, tmp):
    return L.Dataset.range(3).map(lambda x: (x, 1, 2.5, True, "s"))


@kcase("map_test.py (comparisons give bool)")
def map_comparison(L, tmp):
    return L.Dataset.range(5).map(lambda x: x > 2)


@kcase("map_test.py (int64 times a Python float)", differs="numpy-promotes-python-floats")
def map_int64_times_python_float(L, tmp):
    return L.Dataset.range(5).map(lambda x: x * 2.5)


@kcase("map_test.py::testStatefulOperationInShortCircuit (a Python side effect)", differs="traced-once")
def map_python_side_effect(L, tmp):
    calls = []

    def count(x):
        calls.append(1)
        return x + len(calls)

    return L.Dataset.range(4).map(count)


@kcase("map_test.py (a closure read when the function runs)", differs="closures")
def map_closure_read_late(L, tmp):
    scale = [2]
    ds = L.Dataset.range(4).map(lambda x: x * scale[0])
    scale[0] = 3
    return ds


# ---------------------------------------------------------------------------------------------------- filter_test.py


@kcase("filter_test.py::testFilterDataset", params={"0": 0, "1": 1, "3": 3, "7": 7})
def filter_modulus(L, tmp, modulus):
    ds = L.Dataset.from_tensor_slices(COMPONENTS).map(_square3).repeat(3)
    return ds.filter(lambda x, _y, _z: L.equal(x % modulus if modulus else x, 0))


@kcase("filter_test.py::testFilterRange")
def filter_range(L, tmp):
    return L.Dataset.range(4).filter(lambda x: x % 3 != 2)


@kcase("filter_test.py::testFilterDict")
def filter_dict(L, tmp):
    ds = L.Dataset.range(10).map(lambda x: {"foo": x * 2, "bar": x * x})
    return ds.filter(lambda d: L.equal(d["bar"] % 2, 0)).map(lambda d: d["foo"] + d["bar"])


@kcase("filter_test.py::testReturnsPythonBool")
def filter_python_bool(L, tmp):
    return L.Dataset.range(5).filter(lambda x: True)


@kcase("filter_test.py::testReturnNonBool")
def filter_non_bool(L, tmp):
    return L.Dataset.range(10).filter(lambda x: x * 2)


@kcase("filter_test.py::testShortCircuit")
def filter_short_circuit(L, tmp):
    ds = L.Dataset.zip((L.Dataset.range(10), L.Dataset.from_tensors(True).repeat(None)))
    return ds.filter(lambda x, y: y)


@kcase("filter_test.py::testParallelFilters")
def filter_chained(L, tmp):
    return L.Dataset.range(20).filter(lambda x: x % 2 == 0).filter(lambda x: x % 3 == 0)


@kcase("filter_test.py::testFilterNotCallable")
def filter_not_callable(L, tmp):
    return L.Dataset.range(3).filter(5)


@kcase("filter_test.py::testName")
def filter_name(L, tmp):
    return L.Dataset.from_tensors(42).filter(lambda x: True, name="filter")


# ---------------------------------------------------------------------------------------------------- shuffle_test.py


@kcase("shuffle_test.py::testBasic", ordered=False)
def shuffle_multiset(L, tmp):
    return L.Dataset.range(20).repeat(2).shuffle(7, seed=37)


@kcase("shuffle_test.py::testBufferSizeOne")
def shuffle_buffer_of_one(L, tmp):
    return L.Dataset.range(10).shuffle(1, seed=5)


@kcase("shuffle_test.py::testShuffleSize0")
def shuffle_buffer_zero(L, tmp):
    return L.Dataset.range(10).shuffle(0)


@kcase("shuffle_test.py::testInvalidBufferSize")
def shuffle_buffer_negative(L, tmp):
    return L.Dataset.range(10).shuffle(-1)


@kcase("shuffle_test.py::testUnknownCardinalityBuffer", ordered=False)
def shuffle_whole_dataset(L, tmp):
    return L.Dataset.range(10).shuffle(-2, seed=1)


@kcase("shuffle_test.py::testEmptyDataset")
def shuffle_empty(L, tmp):
    return L.Dataset.range(0).shuffle(10, seed=1)


@kcase("shuffle_test.py::testShuffleCardinality", ordered=False)
def shuffle_cardinality(L, tmp):
    return L.Dataset.range(10).repeat(3).shuffle(4)


@kcase("shuffle_test.py::testShuffleUnknownCardinality", ordered=False)
def shuffle_unknown_cardinality(L, tmp):
    return L.Dataset.range(10).filter(lambda x: x > 3).shuffle(4)


@kcase("shuffle_test.py::testShuffleInfinite", take=6)
def shuffle_infinite_cardinality(L, tmp):
    return L.Dataset.from_tensors(np.int64(3)).repeat().shuffle(5)


@kcase("shuffle_test.py::testReshuffleRepeatEpochs[reshuffle=False]")
def shuffle_no_reshuffle_epochs_agree(L, tmp):
    ds = L.Dataset.range(20).shuffle(20, seed=7, reshuffle_each_iteration=False).repeat(2)
    return lambda: (lambda v: v[:20] == v[20:])(_ints(L, ds))


@kcase("shuffle_test.py::testReshuffleRepeatEpochs[reshuffle=True]")
def shuffle_reshuffle_epochs_differ(L, tmp):
    ds = L.Dataset.range(20).shuffle(20, seed=7, reshuffle_each_iteration=True).repeat(2)
    return lambda: (lambda v: v[:20] == v[20:])(_ints(L, ds))


@kcase("shuffle_test.py::testReshuffleIterationEpochs", params={"False": False, "True": True})
def shuffle_iterations(L, tmp, reshuffle):
    ds = L.Dataset.range(20).shuffle(20, seed=3, reshuffle_each_iteration=reshuffle)
    return lambda: _ints(L, ds) == _ints(L, ds)


@kcase("shuffle_test.py::testSeededOrderIsStable")
def shuffle_same_seed_same_order(L, tmp):
    return lambda: (_ints(L, L.Dataset.range(30).shuffle(10, seed=11)) ==
                    _ints(L, L.Dataset.range(30).shuffle(10, seed=11)))  # fmt: skip


@kcase("shuffle_test.py::testName", ordered=False)
def shuffle_name(L, tmp):
    return L.Dataset.from_tensors(42).shuffle(1, name="shuffle")


# ---------------------------------------------------------------------------------------------------- take_test.py / skip_test.py


@kcase("take_test.py::testTakeTensorDataset", params={"-1": -1, "0": 0, "4": 4, "25": 25})
def take_counts(L, tmp, count):
    return L.Dataset.from_tensor_slices(COMPONENTS).take(count)


@kcase("take_test.py::testTakeInfinite")
def take_infinite(L, tmp):
    return L.Dataset.range(3).repeat().take(7)


@kcase("take_test.py::testName")
def take_name(L, tmp):
    return L.Dataset.from_tensors(42).take(1, name="take")


@kcase("take_test.py::TakeRandomAccessTest::testInvalidIndex", params={"-1": -1, "5": 5})
def take_at_invalid(L, tmp, index):
    return lambda: L.experimental.at(L.Dataset.range(10).take(5), index)


@kcase("take_test.py::TakeRandomAccessTest::testBasic")
def take_at(L, tmp):
    return lambda: L.experimental.at(L.Dataset.range(10).take(5), 4)


@kcase("skip_test.py::testSkipTensorDataset", params={"-1": -1, "0": 0, "4": 4, "25": 25})
def skip_counts(L, tmp, count):
    return L.Dataset.from_tensor_slices(COMPONENTS).skip(count)


@kcase("skip_test.py::testSkipInfinite", take=4)
def skip_infinite(L, tmp):
    return L.Dataset.range(3).repeat().skip(5)


@kcase("skip_test.py::testName")
def skip_name(L, tmp):
    return L.Dataset.from_tensors(42).skip(0, name="skip")


@kcase("skip_test.py::SkipRandomAccessTest::testBasic", params={"0": 0, "4": 4, "5": 5})
def skip_at(L, tmp, index):
    return lambda: L.experimental.at(L.Dataset.range(10).skip(5), index)


# ---------------------------------------------------------------------------------------------------- repeat_test.py


@kcase("repeat_test.py::testFiniteRepeat", params={"1": 1, "3": 3, "0": 0})
def repeat_finite(L, tmp, count):
    return L.Dataset.from_tensors((np.array(1), np.array([1, 2, 3]), np.array(37.0))).repeat(count)


@kcase("repeat_test.py::testInfiniteRepeat", take=12)
def repeat_infinite(L, tmp):
    return L.Dataset.range(5).repeat(-1)


@kcase("repeat_test.py::testInfiniteRepeatNone", take=7)
def repeat_none(L, tmp):
    return L.Dataset.range(2).repeat()


@kcase("repeat_test.py::testRepeatRepeat")
def repeat_repeat(L, tmp):
    return L.Dataset.range(3).repeat(2).repeat(3)


@kcase("repeat_test.py::testInfiniteEmptyDataset")
def repeat_infinite_empty(L, tmp):
    return L.Dataset.range(0).repeat()


@kcase("repeat_test.py::testRepeatFilter")
def repeat_unknown(L, tmp):
    return L.Dataset.range(6).filter(lambda x: x % 2 == 0).repeat(2)


@kcase("repeat_test.py::testName")
def repeat_name(L, tmp):
    return L.Dataset.from_tensors(42).repeat(1, name="repeat")


@kcase("repeat_test.py::RepeatRandomAccessTest::testBasic", params={"0": 0, "7": 7, "14": 14, "15": 15})
def repeat_at(L, tmp, index):
    return lambda: L.experimental.at(L.Dataset.range(5).repeat(3), index)


@kcase("repeat_test.py::RepeatRandomAccessTest::testInfinite")
def repeat_at_infinite(L, tmp):
    return lambda: L.experimental.at(L.Dataset.range(5).repeat(), 3)


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


# ---------------------------------------------------------------------------------------------------- cache_test.py


@kcase("cache_test.py::testCacheDatasetPassthrough")
def cache_file(L, tmp):
    return L.Dataset.from_tensor_slices(COMPONENTS).cache(os.path.join(tmp, "cache")).repeat(2)


@kcase("cache_test.py::testReadingPastEndOfSequence")
def cache_file_replay(L, tmp):
    ds = L.Dataset.range(10).cache(os.path.join(tmp, "cache")).repeat(2)
    return lambda: (_ints(L, ds), _ints(L, ds))


@kcase("cache_test.py::testCacheZipped")
def cache_file_zipped(L, tmp):
    a = L.Dataset.range(5).cache(os.path.join(tmp, "a"))
    b = L.Dataset.range(5).map(lambda x: x * 2).cache(os.path.join(tmp, "b"))
    return L.Dataset.zip((a, b))


@kcase("cache_test.py::MemoryCacheTest::testEmptyCacheReading")
def cache_memory_empty(L, tmp):
    return L.Dataset.range(0).cache().repeat(3)


@kcase("cache_test.py::MemoryCacheTest::testCacheTakeRepeat")
def cache_memory_take_repeat(L, tmp):
    return L.Dataset.range(10).cache().take(5).repeat(2)


@kcase("cache_test.py::MemoryCacheTest::testCacheRepeatEpochs")
def cache_memory_repeat(L, tmp):
    return L.Dataset.range(3).map(lambda x: x * 10).cache().repeat(3)


@kcase("cache_test.py::MemoryCacheTest::testShuffleCacheOrder")
def cache_after_shuffle_replays_first_order(L, tmp):
    ds = L.Dataset.range(20).shuffle(20, seed=1).cache().repeat(2)
    return lambda: (lambda v: v[:20] == v[20:])(_ints(L, ds))


@kcase("cache_test.py::MemoryCacheTest::testCacheWithFilter")
def cache_memory_filter(L, tmp):
    return L.Dataset.range(10).filter(lambda x: x % 3 == 0).cache().repeat(2)


@kcase("cache_test.py::testCardinality")
def cache_cardinality(L, tmp):
    return L.Dataset.range(7).cache()


@kcase("cache_test.py::testName")
def cache_name(L, tmp):
    return L.Dataset.from_tensors(42).cache(name="cache")


@kcase("cache_test.py::CacheRandomAccessTest::testBasic", params={"2": 2, "10": 10})
def cache_at(L, tmp, index):
    return lambda: L.experimental.at(L.Dataset.range(5).map(lambda x: x * 3).cache(), index)


# ---------------------------------------------------------------------------------------------------- prefetch_test.py


@kcase("prefetch_test.py::testBufferSize", params={"-1": -1, "0": 0, "1": 1, "10": 10})
def prefetch_buffer(L, tmp, size):
    return L.Dataset.range(10).prefetch(size)


@kcase("prefetch_test.py::testInvalidBufferSize")
def prefetch_invalid(L, tmp):
    return L.Dataset.range(10).prefetch(-2)


@kcase("prefetch_test.py::testPrefetchInfinite", take=5)
def prefetch_infinite(L, tmp):
    return L.Dataset.range(2).repeat().prefetch(3)


@kcase("prefetch_test.py::testName")
def prefetch_name(L, tmp):
    return L.Dataset.from_tensors(42).prefetch(1, name="prefetch")


@kcase("prefetch_test.py::PrefetchRandomAccessTest::testBasic", params={"3": 3, "10": 10})
def prefetch_at(L, tmp, index):
    return lambda: L.experimental.at(L.Dataset.range(10).prefetch(2), index)


# ---------------------------------------------------------------------------------------------------- options_test.py


@kcase("options_test.py::testOptionsDefault")
def options_default(L, tmp):
    return lambda: L.Dataset.range(0).options().deterministic is None


@kcase("options_test.py::testOptionsOnce")
def options_once(L, tmp):
    ds = L.Dataset.range(3).with_options(_options(L, deterministic=False))
    return lambda: (ds.options().deterministic, _ints(L, ds))


@kcase("options_test.py::testOptionsTwiceDifferentOptions")
def options_twice(L, tmp):
    ds = L.Dataset.range(3).with_options(_options(L, deterministic=False))
    ds = ds.with_options(_options(L, deterministic=True))
    return lambda: ds.options().deterministic


@kcase("options_test.py::testOptionsMergeOptionsFromMultipleInputs")
def options_merge_inputs(L, tmp):
    a = L.Dataset.range(3).with_options(_options(L, deterministic=False))
    b = L.Dataset.range(3)
    return lambda: L.Dataset.zip((a, b)).options().deterministic


@kcase("options_test.py::testName")
def options_name(L, tmp):
    return L.Dataset.from_tensors(42).with_options(_options(L), name="options")


# ---------------------------------------------------------------------------------------------------- len_test.py


@kcase("len_test.py::testKnown")
def len_known(L, tmp):
    return lambda: len(L.Dataset.range(5).batch(2))


@kcase("len_test.py::testInfinite")
def len_infinite(L, tmp):
    return lambda: len(L.Dataset.range(5).repeat())


@kcase("len_test.py::testUnknown")
def len_unknown(L, tmp):
    return lambda: len(L.Dataset.range(5).filter(lambda x: True))


# ---------------------------------------------------------------------------------------------------- dataset_test.py / iterator_test.py


@kcase("dataset_test.py::testApply")
def dataset_apply(L, tmp):
    return L.Dataset.range(5).apply(lambda ds: ds.map(lambda x: x + 1))


@kcase("dataset_test.py::testApplyNotDataset")
def dataset_apply_not_dataset(L, tmp):
    return L.Dataset.range(5).apply(lambda ds: 5)


@kcase("dataset_test.py::testCardinality", params={"range": 0, "repeat": 1, "filter": 2, "take": 3, "skip": 4})
def dataset_cardinality(L, tmp, which):
    ds = L.Dataset.range(10)
    variants = [ds, ds.repeat(), ds.filter(lambda x: True), ds.repeat().take(4), ds.repeat(3).skip(25)]
    return lambda: int(variants[which].cardinality())


@kcase("dataset_test.py::testAsNumpyIteratorTwice")
def dataset_iterate_twice(L, tmp):
    ds = L.Dataset.range(4).map(lambda x: x * 3)
    return lambda: (_ints(L, ds), _ints(L, ds))


@kcase("iterator_test.py::testExhaustedIteratorStaysExhausted")
def iterator_exhausted(L, tmp):
    def run():
        it = iter(L.Dataset.range(2).as_numpy_iterator() if L.name == "tf" else L.Dataset.range(2))
        return [int(next(it, -1)) for _ in range(4)]

    return run


@kcase("iterator_test.py::testIndependentIterators")
def iterator_independent(L, tmp):
    def run():
        ds = L.Dataset.range(3)
        a, b = (iter(ds.as_numpy_iterator() if L.name == "tf" else ds) for _ in range(2))
        return [int(next(a)), int(next(a)), int(next(b)), int(next(a)), int(next(b))]

    return run


# ---------------------------------------------------------------------------------------------------- assert_cardinality_test.py


@kcase("assert_cardinality_test.py::testCorrectCardinality")
def assert_cardinality_correct(L, tmp):
    return L.Dataset.range(10).filter(lambda x: True).apply(L.experimental.assert_cardinality(10))


@kcase("assert_cardinality_test.py::testIncorrectCardinality",
       params={"10-20": (10, 20), "1-20": (1, 20), "10-inf": (10, -1), "1-inf": (1, -1), "10-5": (10, 5),
               "10-1": (10, 1)})  # fmt: skip
def assert_cardinality_incorrect(L, tmp, args):
    num_elements, asserted = args
    return L.Dataset.range(num_elements).apply(L.experimental.assert_cardinality(asserted))


@kcase("assert_cardinality_test.py::testIncorrectCardinality[message]")
def assert_cardinality_message(L, tmp):
    def run():
        ds = L.Dataset.range(10).apply(L.experimental.assert_cardinality(5))
        try:
            _elements(L, ds)
        except Exception as error:  # the message is the result
            return "expected to contain 5 elements but contained at least 6 elements." in str(error)
        return None

    return run


# ---------------------------------------------------------------------------------------------------- pad_to_cardinality_test.py


def _pad(L, cardinality):
    return L.experimental.pad_to_cardinality(cardinality)


@kcase("pad_to_cardinality_test.py::testBasic")
def pad_basic(L, tmp):
    return L.Dataset.from_tensor_slices({"a": [1, 2, 3, 4, 5]}).apply(_pad(L, 12))


@kcase("pad_to_cardinality_test.py::testNoPadding")
def pad_none(L, tmp):
    return L.Dataset.from_tensor_slices({"a": [1, 2, 3, 4, 5]}).apply(_pad(L, 5))


@kcase("pad_to_cardinality_test.py::testStructuredData")
def pad_structured(L, tmp):
    data = {"a": [1, 2, 3, 4, 5], "b": ([b"a", b"b", b"c", b"d", b"e"], [-1, -2, -3, -4, -5])}
    return L.Dataset.from_tensor_slices(data).apply(_pad(L, 12))


@kcase("pad_to_cardinality_test.py::testUnknownCardinality")
def pad_unknown(L, tmp):
    return L.Dataset.from_tensors({"a": 1}).filter(lambda x: True).apply(_pad(L, 5))


@kcase("pad_to_cardinality_test.py::testInfiniteCardinality")
def pad_infinite(L, tmp):
    return L.Dataset.from_tensors({"a": 1}).repeat().apply(_pad(L, 5))


@kcase("pad_to_cardinality_test.py::testNonMapping")
def pad_non_mapping(L, tmp):
    return L.Dataset.from_tensors(1).apply(_pad(L, 5))


@kcase("pad_to_cardinality_test.py::testRequestedCardinalityTooShort")
def pad_too_short(L, tmp):
    return L.Dataset.from_tensors({"a": 1}).repeat(5).apply(_pad(L, 3))


@kcase("pad_to_cardinality_test.py::testMaskKey")
def pad_mask_key(L, tmp):
    ds = L.Dataset.from_tensor_slices({"x": np.ones((2, 3), np.float32)})
    return ds.apply(L.experimental.pad_to_cardinality(4, mask_key="real"))

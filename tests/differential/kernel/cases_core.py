"""Core steps, ported from tf.data's kernel tests: map, filter, shuffle, take / skip, repeat."""

from __future__ import annotations

import collections

import numpy as np

from tests.differential.kernel.harness import kcase

Example = collections.namedtuple("Example", ["label", "image"])

COMPONENTS = (np.arange(7), np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis], np.array(37.0) * np.arange(7))


def _elements(L, ds) -> list:
    return list(ds.as_numpy_iterator()) if L.name == "tf" else list(ds)


def _ints(L, ds) -> list[int]:
    return [int(x) for x in _elements(L, ds)]


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

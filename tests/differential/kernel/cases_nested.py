"""Ported from tf.data's kernel tests: enumerate, scan, counter, get_single_element, cardinality, zip,
concatenate, reduce, random."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.cases_grouping import sum_reducer
from tests.differential.kernel.harness import kcase

INT64_MAX = np.iinfo(np.int64).max


def exp(L):
    """tf.data.experimental or pf.experimental."""
    return L.experimental


def failing(L, values):
    """int64 elements from float32 ``values``; a NaN fails in the input pipeline (check_numerics), as in the tests."""
    ds = L.Dataset.from_tensor_slices(np.array(values, np.float32)).map(L.check_numerics)
    return ds.map(lambda x: L.cast(x, L.int64))


# ---------------------------------------------------------------------------------------------- enumerate_test.py


@kcase("enumerate_test.py::testEnumerate", params={"start0": 0, "start3": 3, "negative": -5})
def enumerate_basic(L, tmp, start):
    components = (np.array([b"a", b"b"]), np.array([1, 2], np.int64), np.array([37.0, 38.0], np.float32))
    return L.Dataset.from_tensor_slices(components).enumerate(start)


@kcase("enumerate_test.py::testCardinality", take=3, params={"infinite": True, "finite": False})
def enumerate_cardinality(L, tmp, infinite):
    ds = L.Dataset.from_tensors(np.int64(0))
    return (ds.repeat() if infinite else ds.repeat(4)).enumerate()


@kcase("enumerate_test.py::testNearInt64Max")
def enumerate_near_int64_max(L, tmp):
    return L.Dataset.range(5).enumerate(start=INT64_MAX - 2)


@kcase("enumerate_test.py::testName")
def enumerate_name(L, tmp):
    return L.Dataset.from_tensors(42).enumerate(name="enumerate")


# ---------------------------------------------------------------------------------------------- scan_test.py

_COUNTS = {f"{s}_{st}_{t}": (s, st, t) for s, st, t in [(0, 1, 10), (0, 1, 0), (10, 1, 10), (10, 2, 10),
                                                         (10, -1, 10), (10, -2, 10)]}  # fmt: skip


@kcase("scan_test.py::testCount", params=_COUNTS)
def scan_count(L, tmp, args):
    start, step, take = args
    ds = L.Dataset.from_tensors(0).repeat().scan(start, lambda state, _: (state + step, state))
    return ds.take(take)


@kcase("scan_test.py::testFibonacci", take=8)
def scan_fibonacci(L, tmp):
    return L.Dataset.from_tensors(1).repeat(None).scan([0, 1], lambda a, _: ([a[1], a[0] + a[1]], a[1]))


@kcase("scan_test.py::testChangingStateShape")
def scan_changing_state_shape(L, tmp):
    def scan_fn(state, x):
        return L.concat([state, state]), (state, x)

    return L.Dataset.from_tensors(np.int64(0)).repeat(4).scan(np.array([1], np.int64), scan_fn)


@kcase("scan_test.py::testIncorrectStateType")
def scan_incorrect_state_type(L, tmp):
    return L.Dataset.range(10).scan(np.int32(1), lambda state, _: (np.int64(1), state))


@kcase("scan_test.py::testIncorrectReturnType")
def scan_incorrect_return_type(L, tmp):
    return L.Dataset.range(10).scan(np.int32(1), lambda state, _: np.int64(1))


@kcase("scan_test.py::testTupleState")
def scan_tuple_state_and_elements(L, tmp):
    ds = L.Dataset.zip((L.Dataset.range(5), L.Dataset.range(5).map(lambda x: x * 10)))
    return ds.scan((np.int64(0), np.int64(0)), lambda s, e: ((s[0] + e[0], s[1] + e[1]), {"a": s[0], "b": e[1]}))


@kcase("scan_test.py::testCheckpoint")
def scan_checkpoint_pipeline(L, tmp):
    ds = L.Dataset.from_tensors(1).repeat(10)
    return ds.scan([0, 1], lambda a, _: ([a[1], a[0] + a[1]], a[1]))


@kcase("scan_test.py::testCardinality", take=3, params={"finite": False, "infinite": True})
def scan_cardinality(L, tmp, infinite):
    ds = L.Dataset.range(7)
    return (ds.repeat() if infinite else ds).scan(np.int64(0), lambda s, x: (s + x, s))


@kcase("scan_test.py::testName")
def scan_name(L, tmp):
    return L.Dataset.from_tensors(42).scan(0, lambda x, y: (y, y), name="scan")


@kcase("scan_test.py::testExperimental")
def scan_experimental(L, tmp):
    return L.Dataset.range(5).apply(exp(L).scan(np.int64(0), lambda s, x: (s + x, s * 2)))


# ---------------------------------------------------------------------------------------------- counter_test.py

_COUNTER = {
    "default": (0, 1, None), "start3": (3, 1, None), "step2": (0, 2, None), "negative": (0, -1, None),
    "int32": (4, 3, "int32"), "float32": (0, 0.1, "float32"), "float64": (1, 0.5, "float64"),
    "int32_wraps": (2**31 - 2, 1, "int32"),
}  # fmt: skip


@kcase("counter_test.py::testCounter", take=6, params=_COUNTER)
def counter_values(L, tmp, args):
    start, step, dtype = args
    if dtype is None:
        return L.Dataset.counter(start, step)
    return L.Dataset.counter(start, step, dtype=getattr(L, dtype) if hasattr(L, dtype) else np.dtype(dtype))


@kcase("counter_test.py::testFloatStartForIntDtype")
def counter_float_start_for_int(L, tmp):
    return L.Dataset.counter(0.5)


@kcase("counter_test.py::testExperimentalCounter", take=4)
def counter_experimental(L, tmp):
    return exp(L).Counter(start=5, step=5)


# ---------------------------------------------------------------------------------------------- get_single_element_test.py

_SINGLE = {"one": (0, 1), "empty": (1, 0), "two": (2, 2), "skip_all": (100, 1)}


@kcase("get_single_element_test.py::testGetSingleElement", params=_SINGLE)
def get_single_element_counts(L, tmp, args):
    skip, take = args
    ds = L.Dataset.range(100).skip(skip).map(lambda x: (x * x, {"a": x})).take(take)
    return lambda: ds.get_single_element()


@kcase("get_single_element_test.py::testGetSingleElementError")
def get_single_element_error(L, tmp):
    ds = failing(L, [np.nan])
    return lambda: ds.get_single_element()


@kcase("get_single_element_test.py::testExperimental")
def get_single_element_experimental(L, tmp):
    ds = L.Dataset.from_tensors((np.int64(7), b"x"))
    return lambda: exp(L).get_single_element(ds)


@kcase("get_single_element_test.py::testName")
def get_single_element_name(L, tmp):
    ds = L.Dataset.from_tensors(42)
    return lambda: ds.get_single_element(name="get_single_element")


# ---------------------------------------------------------------------------------------------- cardinality_test.py

_CARDINALITY = {
    "concatenate_finite": lambda L: L.Dataset.range(5).concatenate(L.Dataset.range(3)),
    "concatenate_infinite": lambda L: L.Dataset.range(5).concatenate(L.Dataset.range(3).repeat()),
    "concatenate_unknown": lambda L: L.Dataset.range(5).concatenate(L.Dataset.range(3).filter(lambda x: x > 0)),
    "concatenate_unknown_infinite": lambda L: (
        L.Dataset.range(5).filter(lambda x: x > 0).concatenate(L.Dataset.range(3).repeat())
    ),
    "enumerate_finite": lambda L: L.Dataset.range(5).enumerate(),
    "enumerate_unknown": lambda L: L.Dataset.range(5).filter(lambda x: x > 0).enumerate(),
    "flat_map_finite": lambda L: L.Dataset.range(5).flat_map(lambda x: L.Dataset.range(2)),
    "flat_map_infinite": lambda L: L.Dataset.range(5).repeat().flat_map(lambda x: L.Dataset.range(2)),
    "interleave_infinite": lambda L: L.Dataset.range(5).repeat().interleave(lambda x: L.Dataset.range(2), 2),
    "parallel_interleave_infinite": lambda L: (
        L.Dataset.range(5).repeat().interleave(lambda x: L.Dataset.range(2), 2, num_parallel_calls=2)
    ),
    "parallel_interleave_finite": lambda L: L.Dataset.range(5).interleave(
        lambda x: L.Dataset.range(2), 2, num_parallel_calls=2
    ),
    "zip_finite": lambda L: L.Dataset.zip((L.Dataset.range(5), L.Dataset.range(3))),
    "zip_infinite_finite": lambda L: L.Dataset.zip((L.Dataset.range(5).repeat(), L.Dataset.range(3))),
    "zip_infinite": lambda L: L.Dataset.zip((L.Dataset.range(5).repeat(), L.Dataset.range(3).repeat())),
    "zip_unknown": lambda L: L.Dataset.zip((L.Dataset.range(5).repeat(), L.Dataset.range(3).filter(lambda x: True))),
    "counter": lambda L: L.Dataset.counter(),
    "random": lambda L: L.Dataset.random(seed=1).map(lambda x: x * 0),
    "range_to_int64_max": lambda L: L.Dataset.range(0, INT64_MAX, 2),
    "range_down_from_int64_max": lambda L: L.Dataset.range(INT64_MAX, INT64_MAX - 5, -1),
    "group_by_reducer_infinite": lambda L: (
        L.Dataset.range(5).repeat().take(20).apply(exp(L).group_by_reducer(lambda x: x % 2, sum_reducer(L)))
    ),
}


@kcase("cardinality_test.py::testCardinality", take=4, params=_CARDINALITY)
def cardinality_of(L, tmp, build):
    return build(L)


# ---------------------------------------------------------------------------------------------- zip_test.py


def _zip_components():
    return (np.arange(4, dtype=np.int64), np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]) * 2,
            np.array([37.0, 38.0, 39.0, 40.0], np.float64))  # fmt: skip


@kcase("zip_test.py::testZipEqual")
def zip_equal(L, tmp):
    return L.Dataset.zip(tuple(L.Dataset.from_tensor_slices(c) for c in _zip_components()))


@kcase("zip_test.py::testZipUnequal")
def zip_unequal(L, tmp):
    a, b, c = _zip_components()
    return L.Dataset.zip(tuple(L.Dataset.from_tensor_slices(x) for x in (a[:2], b, c[:3])))


@kcase("zip_test.py::testNested")
def zip_nested(L, tmp):
    a, b, c = (L.Dataset.from_tensor_slices(x) for x in _zip_components())
    return L.Dataset.zip((a, (b, c)))


@kcase("zip_test.py::testDict")
def zip_dict(L, tmp):
    a, b, _ = (L.Dataset.from_tensor_slices(x) for x in _zip_components())
    return L.Dataset.zip({"b": b, "a": a})


@kcase("zip_test.py::testZipVariadic")
def zip_variadic(L, tmp):
    return L.Dataset.zip(L.Dataset.range(3), L.Dataset.range(10, 14), L.Dataset.range(5))


@kcase("zip_test.py::testZipDatasetsKwarg")
def zip_datasets_kwarg(L, tmp):
    return L.Dataset.zip(datasets=(L.Dataset.range(3), L.Dataset.range(4)))


@kcase("zip_test.py::testZipSingle")
def zip_single(L, tmp):
    return L.Dataset.zip(L.Dataset.range(3))


@kcase("zip_test.py::testInvalidZipInputs", params={"int": 1, "mixed": "mixed"})
def zip_invalid_inputs(L, tmp, which):
    if which == "mixed":
        return L.Dataset.zip((L.Dataset.range(3), 5))
    return L.Dataset.zip((1, 2))


@kcase("zip_test.py::testZipNoDatasets")
def zip_no_datasets(L, tmp):
    return L.Dataset.zip()


@kcase("zip_test.py::testZipError")
def zip_error_in_one_input(L, tmp):
    return L.Dataset.zip((L.Dataset.range(4), failing(L, [1, 2, np.nan, 4])))


@kcase("zip_test.py::testName")
def zip_name(L, tmp):
    return L.Dataset.zip((L.Dataset.from_tensors(42), L.Dataset.from_tensors(43)), name="zip")


# ---------------------------------------------------------------------------------------------- concatenate_test.py


@kcase("concatenate_test.py::testConcatenateDataset")
def concatenate_shapes_differ(L, tmp):
    a = (np.tile(np.array([[1], [2], [3], [4]]), 20), np.tile(np.array([[12], [13], [14], [15]]), 15),
         np.array([37.0, 38.0, 39.0, 40.0]))  # fmt: skip
    b = (np.tile(np.array([[5], [6], [7], [8]]), 20), np.tile(np.array([[16], [17], [18], [19]]), 15),
         np.array([37.0, 38.0, 39.0, 40.0]))  # fmt: skip
    return L.Dataset.from_tensor_slices(a).concatenate(L.Dataset.from_tensor_slices(b))


@kcase("concatenate_test.py::testConcatenateDatasetDifferentShape")
def concatenate_rank_differs(L, tmp):
    a = L.Dataset.from_tensor_slices(np.zeros((3, 4), np.int64))
    b = L.Dataset.from_tensor_slices(np.ones((2, 4, 2), np.int64))
    return a.concatenate(b)


@kcase("concatenate_test.py::testConcatenateDatasetDifferentStructure")
def concatenate_structure_differs(L, tmp):
    return L.Dataset.range(3).concatenate(L.Dataset.range(3).map(lambda x: (x, x)))


@kcase("concatenate_test.py::testConcatenateDatasetDifferentKeys")
def concatenate_keys_differ(L, tmp):
    a = L.Dataset.range(3).map(lambda x: {"a": x})
    return a.concatenate(L.Dataset.range(3).map(lambda x: {"b": x}))


@kcase("concatenate_test.py::testConcatenateDatasetDifferentType")
def concatenate_dtypes_differ(L, tmp):
    return L.Dataset.range(3).concatenate(L.Dataset.from_tensor_slices(np.array([1.0, 2.0])))


@kcase("concatenate_test.py::testConcatenateEmpty", params={"first": 0, "second": 1})
def concatenate_empty(L, tmp, which):
    parts = [L.Dataset.range(0), L.Dataset.range(3)]
    return parts[which].concatenate(parts[1 - which])


@kcase("concatenate_test.py::testInfinite", take=5)
def concatenate_infinite(L, tmp):
    return L.Dataset.range(2).concatenate(L.Dataset.range(3).repeat())


@kcase("concatenate_test.py::testName")
def concatenate_name(L, tmp):
    return L.Dataset.from_tensors(42).concatenate(L.Dataset.from_tensors(43), name="concatenate")


# ---------------------------------------------------------------------------------------------- reduce_test.py


@kcase("reduce_test.py::testSum", params={"n0": 0, "n1": 1, "n10": 10})
def reduce_sum(L, tmp, n):
    ds = L.Dataset.range(1, n + 1)
    return lambda: ds.reduce(np.int64(0), lambda x, y: x + y)


@kcase("reduce_test.py::testSumTuple")
def reduce_sum_tuple(L, tmp):
    ds = L.Dataset.range(1, 11)
    ds = L.Dataset.zip((ds, ds))
    return lambda: ds.reduce(np.int64(0), lambda s, e: s + e[0] + e[1])


@kcase("reduce_test.py::testSumAndCount")
def reduce_sum_and_count(L, tmp):
    ds = L.Dataset.range(1, 11)
    return lambda: ds.reduce((np.int64(0), np.int64(0)), lambda s, x: (s[0] + x, s[1] + 1))


@kcase("reduce_test.py::testNested")
def reduce_nested(L, tmp):
    ds = L.Dataset.range(1, 6).map(lambda x: {"dense": x, "x": (x, x * 2)})
    return lambda: ds.reduce({"sum": np.int64(0), "max": np.int64(0)}, lambda s, e: {"sum": s["sum"] + e["x"][1],
                                                                                      "max": e["dense"]})  # fmt: skip


@kcase("reduce_test.py::testIncorrectStateType")
def reduce_incorrect_state_type(L, tmp):
    ds = L.Dataset.range(10)
    return lambda: ds.reduce(np.int32(0), lambda s, x: x)


@kcase("reduce_test.py::testError")
def reduce_error(L, tmp):
    ds = failing(L, [1, np.nan, 3])
    return lambda: ds.reduce(np.int64(0), lambda s, x: s + x)


@kcase("reduce_test.py::testName")
def reduce_name(L, tmp):
    ds = L.Dataset.from_tensors(42)
    return lambda: ds.reduce(0, lambda x, y: y, name="reduce")


# ---------------------------------------------------------------------------------------------- random_test.py


@kcase("random_test.py::testDeterminism", take=5, differs="random-stream")
def random_values(L, tmp):
    """The numbers themselves are NumPy's, not TensorFlow's Philox stream (their properties are tested in
    tests/ops/test_counter_random.py)."""
    return L.Dataset.random(seed=42)

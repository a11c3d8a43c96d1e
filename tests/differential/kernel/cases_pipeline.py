"""Whole-pipeline behaviour, ported from tf.data's kernel tests: cache, prefetch, options, len, Dataset and
iterator basics, assert_cardinality, pad_to_cardinality."""

from __future__ import annotations

import os

import numpy as np

from tests.differential.kernel.harness import kcase

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

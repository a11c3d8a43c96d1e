"""``tf.data.experimental``'s transformations through ``ds.apply(...)``, ported from experimental/kernel_tests
(map_and_batch, shuffle_and_repeat, enumerate_dataset, unique, take_while, scan, group_by_window, ignore_errors,
cardinality, get_single_element, parallel_interleave) and optional_test.py: the seed articles' spelling."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.harness import kcase

EXP = "experimental/kernel_tests/"


def _squares(L, x, y, z):
    return x * x, y * y, z * z


def _components():
    return (np.arange(7), np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis], np.array(37.0) * np.arange(7))


@kcase(
    EXP + "map_and_batch_test.py::testMapAndBatch",
    params={
        "default_28x_by_14": (None, None, 28, 14),
        "sequential_14x_by_8": (1, None, 14, 8),
        "parallel_calls_14x_by_8": (2, None, 14, 8),
        "parallel_batches_28x_by_14": (None, 10, 28, 14),
        "empty_input": (None, None, 0, 8),
    },
)
def exp_map_and_batch(L, tmp, args):
    calls, batches, count, batch_size = args
    ds = L.Dataset.from_tensor_slices(_components()).repeat(count)
    return ds.apply(
        L.experimental.map_and_batch(
            lambda x, y, z: _squares(L, x, y, z), batch_size, num_parallel_batches=batches, num_parallel_calls=calls
        )
    )


@kcase(EXP + "map_and_batch_test.py::testMapAndBatch (batch_size 0)")
def exp_map_and_batch_zero_batch(L, tmp):
    return L.Dataset.range(14).apply(L.experimental.map_and_batch(lambda x: x, 0))


@kcase(EXP + "map_and_batch_test.py::testMapAndBatchPartialBatch", params={"even": False, "uneven": True})
def exp_map_and_batch_partial(L, tmp, drop_remainder):
    reshape = (lambda x: L.tf.reshape(x * x, [1])) if L.name == "tf" else (lambda x: np.reshape(x * x, [1]))
    return L.Dataset.range(10).apply(L.experimental.map_and_batch(reshape, batch_size=4, drop_remainder=drop_remainder))


@kcase(EXP + "map_and_batch_test.py::testMapAndBatchParallelGetNextDropRemainder")
def exp_map_and_batch_parallel_drop_remainder(L, tmp):
    return L.Dataset.range(4099).apply(L.experimental.map_and_batch(lambda x: x, batch_size=100, drop_remainder=True))


@kcase(EXP + "map_and_batch_test.py::testMapAndBatchSparse")
def exp_map_and_batch_sparse(L, tmp):
    if L.name == "tf":
        ds = L.Dataset.range(10).apply(
            L.experimental.map_and_batch(lambda i: L.tf.sparse.SparseTensor([[0]], [i], [1]), 5)
        )
        return ds.map(lambda s: (s.indices, s.values, s.dense_shape))
    ds = L.Dataset.range(10).apply(L.experimental.map_and_batch(lambda i: L.pf.SparseTensor([[0]], [i], [1]), 5))
    return ds.map(lambda s: (s.indices, s.values, s.dense_shape))


@kcase(EXP + "map_and_batch_test.py::testMapAndBatchFails")
def exp_map_and_batch_input_error(L, tmp):
    ds = L.Dataset.from_tensor_slices([1.0, float("inf")]).map(L.check_numerics)
    return ds.apply(L.experimental.map_and_batch(lambda x: x, 14))


@kcase(EXP + "map_and_batch_test.py::testMapAndBatchShapeMismatch")
def exp_map_and_batch_shape_mismatch(L, tmp):
    def generator():
        yield [1]
        yield [2]
        yield [3]
        yield [[4, 5, 6]]

    ds = L.Dataset.from_generator(generator, output_types=L.int32)
    return ds.apply(L.experimental.map_and_batch(lambda x: x, 4))


@kcase(
    EXP + "map_and_batch_test.py::testMapAndBatchTypes",
    params={
        "bool": (False, "bool"),
        "int8": (-42, "int8"),
        "int16": (-42, "int16"),
        "int32": (-42, "int32"),
        "int64": (-42, "int64"),
        "uint8": (42, "uint8"),
        "uint16": (42, "uint16"),
        "float32": (42.0, "float32"),
        "float64": (42.0, "float64"),
        "string": (b"hello", "string"),
    },
)
def exp_map_and_batch_types(L, tmp, value_and_dtype):
    value, dtype = value_and_dtype
    element = (
        L.tf.constant(value, getattr(L.tf, dtype)) if L.name == "tf" else np.array(value, getattr(L.pf, dtype))[()]
    )
    return L.Dataset.from_tensors(element).repeat(10).apply(L.experimental.map_and_batch(lambda x: x, batch_size=10))


@kcase(EXP + "map_and_batch_test.py::testMapAndBatchMapError (a failing element inside a batch)")
def exp_map_and_batch_map_error(L, tmp):
    values = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, np.inf, 4.0, 5.0, 6.0], np.float32))
    return values.apply(L.experimental.map_and_batch(L.check_numerics, batch_size=2))


@kcase(EXP + "shuffle_and_repeat_test.py::testCorrectOutput", ordered=False)
def exp_shuffle_and_repeat_multiset(L, tmp):
    return L.Dataset.range(20).apply(L.experimental.shuffle_and_repeat(buffer_size=5, count=3, seed=7))


@kcase(EXP + "shuffle_and_repeat_test.py::testSeededOrder (buffer of one keeps the order)")
def exp_shuffle_and_repeat_buffer_one(L, tmp):
    return L.Dataset.range(10).apply(L.experimental.shuffle_and_repeat(buffer_size=1, count=2, seed=3))


@kcase(EXP + "shuffle_and_repeat_test.py::testInfiniteRepeat", take=25, ordered=False)
def exp_shuffle_and_repeat_infinite(L, tmp):
    return (
        L.Dataset.range(5)
        .apply(L.experimental.shuffle_and_repeat(buffer_size=5, seed=1))
        .batch(5)
        .map(lambda b: L.tf.sort(b) if L.name == "tf" else np.sort(b))
    )


@kcase(EXP + "shuffle_and_repeat_test.py::testRepeatZero")
def exp_shuffle_and_repeat_zero(L, tmp):
    return L.Dataset.range(10).apply(L.experimental.shuffle_and_repeat(buffer_size=5, count=0, seed=1))


@kcase(EXP + "enumerate_dataset_test.py::testEnumerateDataset", params={"start_0": 0, "start_5": 5})
def exp_enumerate_dataset(L, tmp, start):
    ds = L.Dataset.from_tensor_slices((np.array([7, 8, 9], np.int32), np.array([b"a", b"b", b"c"], object)))
    return ds.apply(L.experimental.enumerate_dataset(start))


@kcase(EXP + "unique_test.py::testSimpleInt", params={"int32": "int32", "int64": "int64"})
def exp_unique_ints(L, tmp, dtype):
    values = np.array([1, 1, 2, 3, 2, 4, 4, 4, 1], getattr(np, dtype))
    return L.Dataset.from_tensor_slices(values).apply(L.experimental.unique())


@kcase(EXP + "unique_test.py::testSimpleString")
def exp_unique_strings(L, tmp):
    return L.Dataset.from_tensor_slices(["hello", "world", "hello", "!", "world"]).apply(L.experimental.unique())


@kcase(EXP + "unique_test.py::testUnsupportedTypes")
def exp_unique_floats_refused(L, tmp):
    return L.Dataset.from_tensor_slices(np.array([1.0, 1.0, 2.0], np.float32)).apply(L.experimental.unique())


@kcase(EXP + "take_while_test.py::testTakeWhileDataset", params={"upto_7": 7, "none": 0, "all": 100})
def exp_take_while(L, tmp, upto):
    return L.Dataset.range(20).apply(L.experimental.take_while(lambda x: x < upto))


@kcase(EXP + "scan_test.py::testFibonacci")
def exp_scan_fibonacci(L, tmp):
    ds = L.Dataset.from_tensors(1).repeat(10)
    return ds.apply(
        L.experimental.scan((L.cast(0, L.int32), L.cast(1, L.int32)), lambda s, _: ((s[1], s[0] + s[1]), s[1]))
    )


@kcase(EXP + "group_by_window_test.py::testSimple (the seed article's apply form)")
def exp_group_by_window_apply(L, tmp):
    ds = L.Dataset.range(20)
    return ds.apply(
        L.experimental.group_by_window(key_func=lambda x: x % 3, reduce_func=lambda _, w: w.batch(4), window_size=4)
    )


@kcase(EXP + "parallel_interleave_test.py::testSingleThreaded (the seed article's apply form)")
def exp_parallel_interleave_apply(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.array([4, 5, 6], np.int64))
    return ds.apply(
        L.experimental.parallel_interleave(
            lambda x: L.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=3
        )
    )


@kcase(EXP + "parallel_interleave_test.py (cardinality of an endless input)", take=6)
def exp_parallel_interleave_endless_input(L, tmp):
    ds = L.Dataset.range(3).repeat()
    return ds.apply(L.experimental.parallel_interleave(lambda x: L.Dataset.from_tensors(x).repeat(2), cycle_length=2))


@kcase("interleave_test.py::testInterleaveEndlessInput (the modern interleave)", take=6)
def exp_interleave_endless_input(L, tmp):
    ds = L.Dataset.range(3).repeat()
    return ds.interleave(lambda x: L.Dataset.from_tensors(x).repeat(2), cycle_length=2, num_parallel_calls=2)


@kcase(EXP + "ignore_errors_test.py::testMapIgnoreError")
def exp_ignore_errors_apply(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, 0.0, 3.0], np.float32)).map(lambda x: 1.0 / x)
    return ds.map(L.check_numerics).apply(L.experimental.ignore_errors())


@kcase(EXP + "cardinality_test.py::testCardinality (experimental.cardinality)")
def exp_experimental_cardinality(L, tmp):
    return lambda: (
        L.experimental.cardinality(L.Dataset.range(10).batch(3)),
        L.experimental.cardinality(L.Dataset.range(10).repeat()),
        L.experimental.cardinality(L.Dataset.range(10).filter(lambda x: x > 2)),
    )


@kcase(EXP + "get_single_element_test.py::testBasic (experimental.get_single_element)")
def exp_experimental_get_single_element(L, tmp):
    return lambda: L.experimental.get_single_element(L.Dataset.range(10).skip(4).take(1))


@kcase("optional_test.py::testIteratorGetNextAsOptional", params={"one": 1, "none": 0})
def exp_get_next_as_optional(L, tmp, n):
    def run():
        it = iter(L.Dataset.range(n))
        first = it.get_next_as_optional()
        values = [first.has_value()]
        if n:
            values.append(first.get_value())
        values.append(it.get_next_as_optional().has_value())
        return tuple(values)

    return run

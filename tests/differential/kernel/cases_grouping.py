"""Grouping, ported from tf.data's kernel tests: group_by_window, bucket_by_sequence_length, group_by_reducer."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.harness import kcase


def exp(L):
    """tf.data.experimental or pf.experimental."""
    return L.experimental


def failing(L, values):
    """int64 elements from float32 ``values``; a NaN fails in the input pipeline (check_numerics), as in the tests."""
    ds = L.Dataset.from_tensor_slices(np.array(values, np.float32)).map(L.check_numerics)
    return ds.map(lambda x: L.cast(x, L.int64))


# ---------------------------------------------------------------------------------------------- group_by_window_test.py

_COMPONENTS = np.array([7, 3, 8, 1, 4, 4, 9, 2, 6, 5, 0, 7, 3, 3, 8, 2, 1, 6, 9, 4], np.int64)


@kcase("group_by_window_test.py::testSimple")
def group_by_window_simple(L, tmp):
    ds = L.Dataset.from_tensor_slices(_COMPONENTS).map(lambda x: x * x)
    return ds.group_by_window(lambda x: x % 2, lambda _, xs: xs.batch(4), window_size=4)


@kcase("group_by_window_test.py::testImmediateOutput", take=4)
def group_by_window_immediate_output(L, tmp):
    components = np.array([0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 2, 2, 0, 0, 2, 2], np.int64)
    ds = L.Dataset.from_tensor_slices(components).repeat(-1)
    return ds.group_by_window(lambda x: x % 3, lambda _, xs: xs.batch(4), window_size=4)


@kcase("group_by_window_test.py::testSmallGroups")
def group_by_window_small_groups(L, tmp):
    components = np.array([1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0], np.int64)
    ds = L.Dataset.from_tensor_slices(components)
    return ds.group_by_window(lambda x: x % 2, lambda _, xs: xs.batch(4), window_size=4)


@kcase("group_by_window_test.py::testEmpty")
def group_by_window_empty(L, tmp):
    return L.Dataset.range(0).group_by_window(lambda x: x % 2, lambda _, xs: xs.batch(4), window_size=4)


@kcase("group_by_window_test.py::testReduceFuncError")
def group_by_window_reduce_func_uses_key(L, tmp):
    ds = L.Dataset.from_tensor_slices(_COMPONENTS)
    return ds.group_by_window(lambda x: x % 3, lambda key, xs: xs.map(lambda x: x + key * 100).batch(3), 3)


@kcase("group_by_window_test.py::testWindowSizeFunc")
def group_by_window_size_func(L, tmp):
    ds = L.Dataset.range(20)
    return ds.group_by_window(lambda x: x % 3, lambda _, xs: xs.batch(10), window_size_func=lambda key: key + 2)


@kcase("group_by_window_test.py::testGroupByWindowCardinality", take=6, params={"infinite": True, "finite": False})
def group_by_window_cardinality(L, tmp, infinite):
    ds = L.Dataset.range(10)
    if infinite:
        ds = ds.repeat()
    return ds.group_by_window(lambda x: x % 2, lambda _, xs: xs.batch(2), window_size=2)


@kcase("group_by_window_test.py::testArguments", params={"neither": 0, "both": 1})
def group_by_window_size_arguments(L, tmp, which):
    sizes = {} if which == 0 else {"window_size": 2, "window_size_func": lambda key: 2}
    return L.Dataset.range(4).group_by_window(lambda x: x % 2, lambda _, xs: xs, **sizes)


@kcase("group_by_window_test.py::testTuple")
def group_by_window_tuple_elements(L, tmp):
    ds = L.Dataset.zip((L.Dataset.range(12), L.Dataset.range(12).map(lambda x: x * 10)))
    return ds.group_by_window(lambda a, b: a % 3, lambda _, xs: xs.batch(2), window_size=2)


@kcase("group_by_window_test.py::testName")
def group_by_window_name(L, tmp):
    return L.Dataset.from_tensors(np.int64(42)).group_by_window(
        lambda x: x, lambda _, xs: xs, window_size=1, name="group_by_window"
    )


# ---------------------------------------------------------------------------------------------- bucket_by_sequence_length


def _sequences(L, lengths):
    ds = L.Dataset.from_tensor_slices(np.array(lengths, np.int64))
    return ds.map(lambda n: L.fill(n, n))


@kcase("bucket_by_sequence_length_test.py::testBucket", params={"padded": False, "no_padding": True})
def bucket_basic(L, tmp, no_padding):
    ds = _sequences(L, [1, 5, 2, 7, 3, 3, 8, 1, 4, 6, 2, 9])
    return ds.bucket_by_sequence_length(L.length, [3, 6], [2, 2, 2], no_padding=no_padding)


@kcase("bucket_by_sequence_length_test.py::testPadToBoundary")
def bucket_pad_to_boundary(L, tmp):
    ds = _sequences(L, [1, 5, 2, 4, 3, 3, 1, 5])
    return ds.bucket_by_sequence_length(L.length, [3, 6], [2, 2, 2], pad_to_bucket_boundary=True)


@kcase("bucket_by_sequence_length_test.py::testBucketDropReminder")
def bucket_drop_remainder(L, tmp):
    ds = _sequences(L, [1, 5, 2, 7, 3, 3, 8, 1, 4])
    return ds.bucket_by_sequence_length(L.length, [3, 6], [2, 2, 2], drop_remainder=True)


@kcase("bucket_by_sequence_length_test.py::testPaddingValue")
def bucket_padding_value(L, tmp):
    ds = _sequences(L, [1, 3, 2, 4])
    return ds.bucket_by_sequence_length(L.length, [3], [2, 2], padding_values=np.int64(-1))


@kcase("bucket_by_sequence_length_test.py::testCardinality", take=4)
def bucket_infinite_cardinality(L, tmp):
    ds = _sequences(L, [1, 5, 2, 4]).repeat()
    return ds.bucket_by_sequence_length(L.length, [3], [2, 2])


# ---------------------------------------------------------------------------------------------- group_by_reducer_test.py


def sum_reducer(L):
    return exp(L).Reducer(init_func=lambda _: np.int64(0), reduce_func=lambda x, y: x + y,
                          finalize_func=lambda x: x)  # fmt: skip


@kcase("group_by_reducer_test.py::testSum", params={"n1": 1, "n5": 5, "n10": 10})
def group_by_reducer_sum(L, tmp, n):
    return L.Dataset.range(2 * n).apply(exp(L).group_by_reducer(lambda x: x % 2, sum_reducer(L)))


@kcase("group_by_reducer_test.py::testAverage")
def group_by_reducer_average(L, tmp):
    reducer = exp(L).Reducer(
        init_func=lambda _: (np.float64(0.0), np.float64(0.0)),
        reduce_func=lambda state, y: (state[0] + L.cast(y, np.float64), state[1] + 1.0),
        finalize_func=lambda s, n: s / n,
    )
    return L.Dataset.range(10).apply(exp(L).group_by_reducer(lambda x: x % 3, reducer))


@kcase("group_by_reducer_test.py::testChangingStateShape")
def group_by_reducer_changing_state_shape(L, tmp):
    reducer = exp(L).Reducer(
        init_func=lambda _: np.array([], np.int64), reduce_func=lambda s, x: L.concat([s, [x]]),
        finalize_func=lambda s: s,
    )  # fmt: skip
    return L.Dataset.range(10).apply(exp(L).group_by_reducer(lambda x: x % 3, reducer))


@kcase("group_by_reducer_test.py::testTypeMismatch")
def group_by_reducer_type_mismatch(L, tmp):
    reducer = exp(L).Reducer(init_func=lambda x: np.int32(0), reduce_func=lambda x, y: y,
                             finalize_func=lambda x: x)  # fmt: skip
    return L.Dataset.range(10).apply(exp(L).group_by_reducer(lambda _: np.int64(0), reducer))


@kcase("group_by_reducer_test.py::testInvalidKeyShape")
def group_by_reducer_invalid_key_shape(L, tmp):
    return L.Dataset.range(10).apply(exp(L).group_by_reducer(lambda _: np.int64((0, 0)), sum_reducer(L)))


@kcase("group_by_reducer_test.py::testInvalidKeyType")
def group_by_reducer_invalid_key_type(L, tmp):
    return L.Dataset.range(10).apply(exp(L).group_by_reducer(lambda _: "wrong", sum_reducer(L)))


@kcase("group_by_reducer_test.py::testTuple")
def group_by_reducer_tuple(L, tmp):
    reducer = exp(L).Reducer(
        init_func=lambda _: (np.int64(0), np.int64(0)),
        reduce_func=lambda state, x: (state[0] + x[0], state[1] + x[1]),
        finalize_func=lambda a, b: (a, b),
    )
    ds = L.Dataset.zip((L.Dataset.range(10), L.Dataset.range(10).map(lambda x: x * 3)))
    return ds.apply(exp(L).group_by_reducer(lambda a, b: a % 2, reducer))


@kcase("group_by_reducer_test.py::testKeyOrder")
def group_by_reducer_key_order(L, tmp):
    """Outputs come in increasing key order, whatever order the keys first appear in."""
    ds = L.Dataset.from_tensor_slices(np.array([5, 9, -3, 5, 0, 9, -3, 7], np.int64))
    return ds.apply(exp(L).group_by_reducer(lambda x: x * 2, sum_reducer(L)))


@kcase("group_by_reducer_test.py::testEmpty")
def group_by_reducer_empty(L, tmp):
    return L.Dataset.range(0).apply(exp(L).group_by_reducer(lambda x: x % 2, sum_reducer(L)))


@kcase("group_by_reducer_test.py::testError")
def group_by_reducer_error(L, tmp):
    return failing(L, [1, 2, np.nan]).apply(exp(L).group_by_reducer(lambda x: x % 2, sum_reducer(L)))

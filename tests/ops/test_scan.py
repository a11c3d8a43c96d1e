"""``scan``, ``get_single_element`` and ``pf.experimental.group_by_reducer``."""

import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError


def test_scan_carries_a_state_and_keeps_the_input_count():
    ds = pf.Dataset.range(5).scan(np.int64(0), lambda s, x: (s + x, s * 10))
    assert [int(x) for x in ds] == [0, 0, 10, 30, 60]
    assert ds.cardinality() == 5 and ds.element_spec == pf.TensorSpec((), np.int64)
    assert pf.Dataset.range(3).repeat().scan(0, lambda s, x: (s, x)).cardinality() == pf.INFINITE


def test_scan_state_dtypes_follow_tf_data():
    ds = pf.Dataset.from_tensors(0).repeat(4).scan(0, lambda s, _: (s + 1, s))  # a Python int state is int32
    assert [x.dtype for x in ds] == [np.int32] * 4
    fib = pf.Dataset.from_tensors(1).repeat(6).scan([0, 1], lambda a, _: ([a[1], a[0] + a[1]], a[1]))
    assert [int(x) for x in fib] == [1, 1, 2, 3, 5, 8]


def test_scan_refuses_a_state_that_changes_dtype_or_structure_when_built():
    with pytest.raises(ElementTypeError, match="new state must match the initial state"):
        pf.Dataset.range(10).scan(np.int32(1), lambda s, _: (np.int64(1), s))
    with pytest.raises(ElementTypeError, match="should return a pair"):
        pf.Dataset.range(10).scan(np.int32(1), lambda s, _: np.int64(1))
    with pytest.raises(ElementTypeError, match="structure of the initial state"):
        pf.Dataset.range(10).scan((np.int64(0), np.int64(0)), lambda s, x: (x, x))
    ds = pf.Dataset.range(3).scan(np.int64(0), lambda s, x: (s + x if x < 2 else np.float32(x), x))
    with pytest.raises(ElementTypeError, match="from int64 to float32"):  # found while iterating
        list(ds)


def test_scan_state_shapes_may_change_and_resume():
    ds = pf.Dataset.range(4).scan(np.array([1], np.int64), lambda s, x: (np.concatenate([s, [x]]), s))
    assert [x.tolist() for x in ds] == [[1], [1, 0], [1, 0, 1], [1, 0, 1, 2]]
    assert check_restores(ds) == 4 * 5 // 2
    strings = pf.Dataset.from_tensor_slices([b"a", b"b", b"c"]).scan(b"", lambda s, x: (s + x, {"s": s, "f": 1.5}))
    assert check_restores(strings) > 0
    assert [d["s"] for d in strings] == [b"", b"a", b"ab"]


def test_experimental_scan_is_the_method():
    ds = pf.Dataset.range(4).apply(pf.experimental.scan(np.int64(0), lambda s, x: (s + x, s + x)))
    assert [int(x) for x in ds] == [0, 1, 3, 6]


def test_get_single_element():
    assert pf.Dataset.range(5).skip(2).take(1).map(lambda x: (x, {"a": x})).get_single_element() == (2, {"a": 2})
    with pytest.raises(InvalidArgumentError, match="was empty"):
        pf.Dataset.range(0).get_single_element()
    with pytest.raises(InvalidArgumentError, match="more than one element"):
        pf.Dataset.range(2).get_single_element()
    assert pf.experimental.get_single_element(pf.Dataset.from_tensors(b"x")) == b"x"


def _sum_reducer():
    return pf.experimental.Reducer(lambda key: np.int64(0), lambda s, x: s + x, lambda s: s)


def test_group_by_reducer_outputs_every_key_in_increasing_order():
    ds = pf.Dataset.from_tensor_slices(np.array([5, 9, -3, 5, 0, 9, -3, 7], np.int64))
    out = ds.apply(pf.experimental.group_by_reducer(lambda x: x * 2, _sum_reducer()))
    assert [int(x) for x in out] == [-6, 0, 10, 7, 18]
    assert out.cardinality() == pf.UNKNOWN and out.element_spec == pf.TensorSpec((), np.int64)


def test_group_by_reducer_tuple_states_are_arguments_of_finalize():
    reducer = pf.experimental.Reducer(
        lambda _: (0.0, 0.0), lambda s, x: (s[0] + np.float32(x), s[1] + 1), lambda total, n: total / n
    )
    ds = pf.Dataset.range(10).apply(pf.experimental.group_by_reducer(lambda x: x % 3, reducer))
    assert [float(x) for x in ds] == [4.5, 4.0, 5.0]
    assert check_restores(ds) > 0


def test_group_by_reducer_resumes_while_reducing():
    reducer = pf.experimental.Reducer(
        lambda _: np.array([], np.int64), lambda s, x: np.concatenate([s, [x]]), lambda s: s[::-1]
    )
    ds = pf.Dataset.range(40).apply(pf.experimental.group_by_reducer(lambda x: x % 4, reducer)).take(3)
    it = iter(pf.Dataset.range(40).apply(pf.experimental.group_by_reducer(lambda x: x % 4, reducer)))
    assert check_restores(ds) > 0
    first = next(it)
    state = it.get_state()
    again = iter(pf.Dataset.range(40).apply(pf.experimental.group_by_reducer(lambda x: x % 4, reducer)))
    again.set_state(state)
    assert first.tolist() == list(range(36, -1, -4))
    assert [x.tolist() for x in again] == [x.tolist() for x in it]


def test_group_by_reducer_checks_keys_and_states_when_built():
    ds = pf.Dataset.range(10)
    with pytest.raises(InvalidArgumentError, match="scalar int64"):
        ds.apply(pf.experimental.group_by_reducer(lambda x: np.int64((0, 0)), _sum_reducer()))
    with pytest.raises(InvalidArgumentError, match="scalar int64"):
        ds.apply(pf.experimental.group_by_reducer(lambda x: 0, _sum_reducer()))  # an int32, as in tf.data
    mismatch = pf.experimental.Reducer(lambda k: np.int32(0), lambda s, x: x, lambda s: s)
    with pytest.raises(ElementTypeError, match="new state must match"):
        ds.apply(pf.experimental.group_by_reducer(lambda x: x % 2, mismatch))
    with pytest.raises(ArgumentTypeError, match="Reducer"):
        ds.apply(pf.experimental.group_by_reducer(lambda x: x % 2, lambda s: s))
    with pytest.raises(InvalidArgumentError, match="callable"):
        pf.experimental.Reducer(1, lambda s, x: s, lambda s: s)

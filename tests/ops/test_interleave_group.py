import os

import numpy as np
import pytest

import parafeed as pf
from parafeed.core.options import schedulable_cpus
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.ops.interleave import default_cycle_length


def test_interleave_order_and_default_cycle_length():
    ds = pf.Dataset.range(3).interleave(lambda n: pf.Dataset.range(n * 10, n * 10 + 3), cycle_length=2, block_length=2)
    assert [int(x) for x in ds] == [0, 1, 10, 11, 2, 12, 20, 21, 22]  # as tf.data gives
    default = pf.Dataset.range(2).interleave(lambda n: pf.Dataset.range(1))
    assert default.cycle_length == schedulable_cpus() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("cpus", "serial", "autotune", "calls2", "calls8"), [(1, 1, 1, 1, 1), (2, 2, 1, 2, 2), (3, 3, 1, 2, 3),
                                                         (4, 4, 2, 2, 4), (16, 16, 6, 2, 8), (96, 96, 32, 2, 8)]
)  # fmt: skip
def test_default_cycle_length_follows_tf_data_rule(cpus, serial, autotune, calls2, calls8):
    """tf.data: the serial interleave takes every schedulable core; a parallel one min(num_parallel_calls, cores),
    or with AUTOTUNE one slot per three cores (rounded up)."""
    assert default_cycle_length(None, cpus) == serial
    assert default_cycle_length(pf.AUTOTUNE, cpus) == autotune
    assert default_cycle_length(2, cpus) == calls2
    assert default_cycle_length(8, cpus) == calls8


def test_default_cycle_length_on_this_machine_orders_like_tf_data():
    ds = pf.Dataset.range(1, 4).interleave(
        lambda x: pf.Dataset.from_tensors(x).repeat(2), num_parallel_calls=pf.AUTOTUNE
    )
    width = default_cycle_length(pf.AUTOTUNE)
    expected = [1, 1, 2, 2, 3, 3] if width == 1 else None
    if expected is not None:  # 1 to 3 cores, as on the 2-core CI machine
        assert [int(x) for x in ds] == expected


def test_num_parallel_calls_over_cycle_length_is_refused():
    ds = pf.Dataset.range(4)
    with pytest.raises(InvalidArgumentError, match="at most `cycle_length`"):
        ds.interleave(lambda x: pf.Dataset.range(2), cycle_length=2, num_parallel_calls=3)
    derived = ds.interleave(lambda x: pf.Dataset.range(2), num_parallel_calls=schedulable_cpus() + 1)
    with pytest.raises(InvalidArgumentError, match="schedulable cores"):  # as tf.data, when the iterator is made
        iter(derived)


def _failing_input(values):
    def check(x):
        if not np.isfinite(x):
            raise InvalidArgumentError(f"NaN at {x}")
        return np.int64(x)

    return pf.Dataset.from_tensor_slices(np.array(values, np.float32)).map(check)


def _outcomes(ds, limit=20):
    out, it = [], iter(ds)
    while len(out) < limit:
        try:
            out.append(int(next(it)))
        except StopIteration:
            break
        except InvalidArgumentError:
            out.append("ERR")
    it.close()
    return out


@pytest.mark.parametrize(
    "kw",
    [{"cycle_length": 2}, {"cycle_length": 2, "num_parallel_calls": 2},
     {"cycle_length": 2, "num_parallel_calls": 2, "deterministic": False},
     {"cycle_length": 3, "block_length": 2, "num_parallel_calls": 1}],
)  # fmt: skip
def test_an_input_error_surfaces_where_tf_data_has_it(kw):
    """Regression: the parallel interleave read inputs ahead and raised an input's error one element early
    (``ERR, 1, ...`` where tf.data gives ``1, ERR, ...``)."""
    ds = _failing_input([1, np.nan, 2, 3]).interleave(lambda x: pf.Dataset.from_tensors(x).repeat(3), **kw)
    first = _outcomes(ds)[: _outcomes(ds).index("ERR") + 1]
    assert first == ([1, 1, "ERR"] if kw.get("block_length") == 2 else [1, "ERR"])
    flat = _failing_input([1, 2, np.nan, 3]).flat_map(lambda x: pf.Dataset.from_tensors(x).repeat(2))
    assert _outcomes(flat) == [1, 1, 2, 2, "ERR", 3, 3]


def test_a_map_func_error_read_ahead_waits_for_its_turn():
    def make(x):
        if x == 2:
            raise InvalidArgumentError("bad input 2")
        return pf.Dataset.from_tensors(x).repeat(2)

    ds = pf.Dataset.range(1, 5).interleave(make, cycle_length=3, num_parallel_calls=3)
    serial = pf.Dataset.range(1, 5).interleave(make, cycle_length=3)
    assert _outcomes(ds) == _outcomes(serial) == [1, "ERR", 3, 4, 1, 3, 4]  # as tf.data serial: the slot refilled


def test_interleave_resumes_with_a_failed_input_read_ahead():
    ds = _failing_input([1, 2, np.nan, 4, 5]).interleave(
        lambda x: pf.Dataset.from_tensors(x).repeat(2), cycle_length=3, num_parallel_calls=3
    )
    it = iter(ds)
    assert int(next(it)) == 1  # inputs 2 and NaN are read ahead: the NaN's error waits in its slot
    state = it.get_state()
    rest = _outcomes_from(it)
    again = iter(ds)
    again.set_state(state)
    assert _outcomes_from(again) == rest == [2, "ERR", 4, 1, 2, 4, 5, 5]  # the serial order


def _outcomes_from(it):
    out = []
    while True:
        try:
            out.append(int(next(it)))
        except StopIteration:
            return out
        except InvalidArgumentError:
            out.append("ERR")


def test_cardinalities_match_tf_data():
    infinite = pf.Dataset.from_tensors(np.int64(0)).repeat()
    assert infinite.enumerate().cardinality() == pf.INFINITE
    assert infinite.group_by_window(lambda x: x, lambda k, w: w, 2).cardinality() == pf.INFINITE
    assert pf.Dataset.range(4).group_by_window(lambda x: x, lambda k, w: w, 2).cardinality() == pf.UNKNOWN
    assert infinite.interleave(lambda x: pf.Dataset.range(2), 2).cardinality() == pf.UNKNOWN
    assert infinite.interleave(lambda x: pf.Dataset.range(2), 2, num_parallel_calls=2).cardinality() == pf.INFINITE
    assert pf.Dataset.range(0, np.iinfo(np.int64).max).cardinality() == pf.INFINITE
    assert [int(i) for i, _ in pf.Dataset.range(3).enumerate(-5)] == [-5, -4, -3]


def test_interleave_and_flat_map_need_datasets():
    with pytest.raises(ElementTypeError, match=r"flat_map\(\): `map_func` .* must return a Dataset"):
        list(pf.Dataset.range(2).flat_map(lambda x: [x]))
    with pytest.raises(InvalidArgumentError, match="block_length"):
        pf.Dataset.range(2).interleave(lambda x: pf.Dataset.range(1), block_length=0)


def test_interleave_closes_open_inputs_on_close():
    closed = []

    def gen():
        try:
            yield from range(100)
        finally:
            closed.append(1)

    ds = pf.Dataset.range(3).interleave(
        lambda _: pf.Dataset.from_generator(gen, output_signature=pf.TensorSpec((), "int64")), cycle_length=3
    )
    it = iter(ds)
    for _ in range(5):
        next(it)
    it.close()
    assert len(closed) == 3


def test_group_by_window_flushes_remaining_groups_in_key_order():
    ds = pf.Dataset.from_tensor_slices([5, 1, 3, 7, 2]).group_by_window(
        lambda x: -x % 3, lambda key, window: window.batch(10).map(lambda b: (key, b)), window_size=5
    )
    assert [(int(k), b.tolist()) for k, b in ds] == [(0, [3]), (1, [5, 2]), (2, [1, 7])]


def test_group_by_window_arguments_and_results():
    ds = pf.Dataset.range(4)
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        ds.group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        ds.group_by_window(lambda x: x, lambda k, w: w, window_size=2, window_size_func=lambda k: 2)
    with pytest.raises(ElementTypeError, match="int64 scalar"):
        list(ds.group_by_window(lambda x: 0.5, lambda k, w: w, window_size=2))
    with pytest.raises(ElementTypeError, match="must return a Dataset"):
        list(ds.group_by_window(lambda x: x % 2, lambda k, w: 1, window_size=2))
    with pytest.raises(InvalidArgumentError, match="window size must be > 0"):
        list(ds.group_by_window(lambda x: x % 2, lambda k, w: w, window_size_func=lambda k: 0))


def test_bucket_by_sequence_length_checks_its_arguments():
    ds = pf.Dataset.range(1, 5).map(lambda n: np.arange(n))
    with pytest.raises(InvalidArgumentError, match=r"len\(bucket_batch_sizes\) must equal"):
        ds.bucket_by_sequence_length(len, [2, 3], [1, 1])
    bounded = ds.bucket_by_sequence_length(len, [3], [2, 2], pad_to_bucket_boundary=True)
    with pytest.raises(InvalidArgumentError, match="pad_to_bucket_boundary"):
        list(bounded)


def test_parallel_interleave_opens_the_next_inputs_ahead_and_resumes_exactly():
    """The inputs after the open ones (one per slot) are opened, and start reading, before a slot needs them, so a
    slot whose input ends does not wait for the next file to open; order, errors and saved positions stay the serial
    interleave's."""
    opened = []

    def make(x):
        opened.append(int(x))
        if x == 6:
            raise InvalidArgumentError("bad input 6")
        return pf.Dataset.range(x * 10, x * 10 + 1 + x % 3)

    parallel = pf.Dataset.range(10).interleave(make, cycle_length=2, num_parallel_calls=2)
    serial = pf.Dataset.range(10).interleave(make, cycle_length=2)
    it = iter(parallel)
    assert int(next(it)) == 0
    assert sorted(opened) == [0, 1, 2, 3]  # inputs 0 and 1 in the slots, 2 and 3 opened ahead
    expected = _outcomes(serial, limit=100)
    assert [0, *_outcomes_from(it)] == expected
    for stop in range(1, len(expected)):  # a state saved at every position, with inputs opened ahead, resumes exactly
        it = iter(parallel)
        got = [next(it) for _ in range(stop)] if "ERR" not in expected[:stop] else None
        if got is None:
            break
        state = it.get_state()
        again = iter(parallel)
        again.set_state(state)
        assert [int(x) for x in got] + _outcomes_from(again) == expected, stop
        it.close()
        again.close()

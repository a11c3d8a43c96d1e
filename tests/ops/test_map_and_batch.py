"""``map`` then ``batch`` fused: the same batches as stacking, rows written where they are made, tf.data's errors."""

from __future__ import annotations

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.parallel.batch_rows import BatchRows, Placed
from parafeed.values import structure
from tests.differential.libs import pf_lib, tf_lib
from tests.helpers import assert_elements_equal

BIG = (64, 64, 3)  # float32 rows of 48 KiB: a batch of 32 is over buffers.MIN_BYTES, so rows are written in place


def unfused(ds):
    options = pf.Options()
    options.experimental_optimization.map_and_batch_fusion = False
    return ds.with_options(options)


def big(x):
    return {"image": np.full(BIG, x, np.float32), "label": np.int64(x), "pair": (np.float64(x), np.arange(3) + x)}


PARALLEL = [None, 2, pf.AUTOTUNE]


@pytest.mark.parametrize("calls", PARALLEL)
@pytest.mark.parametrize("drop", [False, True])
def test_fused_batches_equal_stacked_ones(calls, drop):
    ds = pf.Dataset.range(100).map(big, num_parallel_calls=calls).batch(32, drop_remainder=drop)
    expected = list(unfused(ds))
    assert_elements_equal(expected, list(ds))
    assert len(expected) == (3 if drop else 4) and expected[-1]["image"].shape[0] == (32 if drop else 4)


def test_rows_are_written_by_the_workers_when_the_order_is_fixed():
    rows = BatchRows(32)
    placed = rows.place(5, np.ones(BIG, np.float32))
    assert type(placed) is Placed and placed.nbytes == np.ones(BIG, np.float32).nbytes
    assert type(rows.place(6, np.ones(3, np.float32))) is not Placed  # another shape: left for batch() to stack
    ds = pf.Dataset.range(64).map(big, num_parallel_calls=2).batch(32)
    it = iter(ds.with_options(pf.Options(stats=True)))
    assert [b["label"].tolist() for b in it] == [list(range(32)), list(range(32, 64))]
    mapped = {s.name: s for s in it.stats()}["Map"]
    assert mapped.bytes == 64 * sum(leaf.nbytes for leaf in structure.flatten(big(0)))


@pytest.mark.parametrize("calls", PARALLEL)
def test_an_odd_row_is_stacked_as_batch_does(calls):
    def odd_shape(x):
        return np.zeros((40, 40, 3) if x == 37 else BIG, np.float32)

    def odd_dtype(x):
        return np.zeros(BIG, np.float64 if x == 37 else np.float32)

    with pytest.raises(InvalidArgumentError, match="element 5 had shape"):
        list(pf.Dataset.range(64).map(odd_shape, num_parallel_calls=calls).batch(32))
    fused = list(pf.Dataset.range(64).map(odd_dtype, num_parallel_calls=calls).batch(32))
    assert [b.dtype for b in fused] == [np.float32, np.float64]  # promoted, as np.stack does
    assert_elements_equal(list(unfused(pf.Dataset.range(64).map(odd_dtype, num_parallel_calls=calls).batch(32))), fused)


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_resume_between_fused_batches(executor):
    ds = pf.Dataset.range(200).map(big, num_parallel_calls=2, executor=executor).batch(32)
    it = iter(ds)
    first = [next(it) for _ in range(3)]
    state = it.get_state()
    rest = list(it)
    it2 = iter(ds)
    it2.set_state(state)
    assert_elements_equal(rest, list(it2))
    assert [int(b["label"][0]) for b in first + rest] == list(range(0, 200, 32))
    again = iter(unfused(ds))  # a fused checkpoint restores without fusion too
    again.set_state(state)
    assert_elements_equal(rest, list(again))


def failing(L, bad):
    def fn(x):
        value = L.cast(x, L.float32) * 1.0
        return L.check_numerics(value / (value - bad) if bad is not None else value)

    return fn


def run_with_errors(ds) -> list:
    out, it = [], iter(ds)
    while True:
        try:
            batch = next(it)
        except StopIteration:
            return out
        except Exception as err:
            out.append(type(err).__name__)
        else:
            out.append(np.asarray(batch).tolist())


@pytest.mark.filterwarnings("ignore:divide by zero")
@pytest.mark.parametrize("calls", [None, 2])
@pytest.mark.parametrize("fuse", [None, False])
@pytest.mark.parametrize("drop", [False, True])
def test_an_error_fails_its_batch_as_in_tf_data(calls, fuse, drop):
    pytest.importorskip("tensorflow", reason="the differential tests need TensorFlow (make test installs it)")
    outcomes = []
    for L in (tf_lib(), pf_lib()):
        ns = L.tf.data if L.name == "tf" else L.pf
        options = ns.Options()
        if fuse is not None:
            options.experimental_optimization.map_and_batch_fusion = fuse
        ds = L.Dataset.range(11).map(failing(L, 1.0), num_parallel_calls=calls).batch(4, drop_remainder=drop)
        outcomes.append(run_with_errors(ds.with_options(options)))
    tf_out, pf_out = outcomes
    assert pf_out[0] == "InvalidArgumentError" and tf_out[0] == "InvalidArgumentError"
    assert pf_out[1:] == tf_out[1:]
    kept = sum(len(batch) for batch in pf_out[1:])  # fused: the failing batch takes its 4 elements with it
    assert kept == ((4 if drop else 7) if fuse is None else (8 if drop else 9))

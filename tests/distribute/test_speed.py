import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from tests.distribute.test_sharding import SPEC, write_files


@given(
    global_batch=st.integers(1, 500),
    speeds=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=8),
    minimum=st.integers(0, 2),
)
def test_weighted_sizes_sum_to_the_global_batch_within_one_of_the_exact_share(global_batch, speeds, minimum):
    if global_batch < minimum * len(speeds):
        with pytest.raises(InvalidArgumentError, match="at least"):
            pf.distribute.weighted_sizes(global_batch, speeds, minimum)
        return
    sizes = pf.distribute.weighted_sizes(global_batch, speeds, minimum)
    assert sum(sizes) == global_batch and min(sizes) >= minimum
    exact = [global_batch * s / sum(speeds) for s in speeds]
    if min(exact) >= minimum:  # (else the floor of `minimum` rows takes rows from the others)
        assert all(abs(size - e) < 1 for size, e in zip(sizes, exact))


def test_weighted_sizes_examples_and_errors():
    assert pf.distribute.weighted_sizes(64, [1.0, 3.0]) == [16, 48]
    assert pf.distribute.weighted_sizes(10, [1, 1, 1]) == [4, 3, 3]  # ties go to the lowest replica id
    assert pf.distribute.weighted_sizes(3, [1, 100]) == [1, 2]  # at least one row each
    with pytest.raises(InvalidArgumentError, match="finite and > 0"):
        pf.distribute.weighted_sizes(8, [1, 0])
    with pytest.raises(InvalidArgumentError, match="at least 1 row"):
        pf.distribute.weighted_sizes(1, [1, 1])


def global_mean_gradient(x, y, theta):
    """Gradient of mean((x @ theta - y) ** 2) over the rows given."""
    return 2 * x.T @ (x @ theta - y) / len(x)


@pytest.mark.parametrize("sizes", [[3, 5], [1, 2, 5], [8, 8], [2, 7, 1, 3]])
def test_weighted_mean_losses_average_to_the_global_batch_mean_gradient(sizes):
    """What MirroredStrategy and DDP do (average the replicas' gradients of their weighted mean losses) gives exactly
    the gradient of the plain mean loss over the global batch: for full and for a short last global batch."""
    rng = np.random.default_rng(0)
    n, g = 45, sum(sizes)
    x, y, theta = rng.normal(size=(n, 3)), rng.normal(size=n), rng.normal(size=3)
    ds = pf.Dataset.from_tensor_slices((x, y))
    per_replica = [list(pf.distribute.weighted_batch(ds, sizes, r)) for r in range(len(sizes))]
    assert len({len(b) for b in per_replica}) == 1  # equal steps
    for step in range(len(per_replica[0])):
        grads = []
        for batches in per_replica:
            xb, yb, w = batches[step]
            grads.append(2 * xb.T @ (w.astype(np.float64) * (xb @ theta - yb)) / max(len(xb), 1))
        rows = slice(step * g, min(n, (step + 1) * g))
        np.testing.assert_allclose(np.mean(grads, axis=0), global_mean_gradient(x[rows], y[rows], theta), rtol=1e-6)
        np.testing.assert_array_equal(np.concatenate([b[step][0] for b in per_replica]), x[rows])  # in order


def test_loss_scale_is_the_row_weight():
    batches = list(pf.distribute.weighted_batch(pf.Dataset.range(16), [2, 6], 1))
    assert batches[0][1].tolist() == [pf.distribute.loss_scale([2, 6], 1)] * 6 == [1.5] * 6


def test_weighted_batch_reads_only_its_rows(tmp_path):
    files = write_files(tmp_path, [20, 13])
    calls = []

    def parse(record):
        calls.append(1)
        return pf.io.parse_single_example(record, SPEC)["id"]

    ds = pf.distribute.weighted_batch(pf.TFRecordDataset(files).map(parse), [2, 5, 3], 2, weights=False)
    batches = [b.tolist() for b in ds]
    everything = [1000 * f + j for f, n in enumerate([20, 13]) for j in range(n)]
    # the count of records is not known in advance: the last global batch (3 rows) is split in order, 2 + 1 + 0
    assert batches == [[everything[s + k] for k in range(7, 10)] for s in range(0, 30, 10)] + [[]]
    assert len(calls) == 9 + 1  # the map skipped the other replicas' rows (+1: the spec of the empty batch)
    assert ds.element_spec == pf.TensorSpec((None,), np.int64)
    known = pf.distribute.weighted_batch(pf.Dataset.from_tensor_slices(np.arange(33)), [2, 5, 3], 2)
    assert len(known) == 4 and list(known)[-1][0].tolist() == [32]  # known count: split 1, 1, 1 in proportion


def test_a_replica_with_no_rows_in_the_last_step_gets_an_empty_batch():
    ds = pf.Dataset.from_tensor_slices({"x": np.zeros((9, 2), np.float32)})
    last = [list(pf.distribute.weighted_batch(ds.filter(lambda e: True), [4, 4], r))[-1] for r in range(2)]
    assert last[0]["x"].shape == (1, 2) and last[1]["x"].shape == (0, 2)
    assert last[1]["sample_weight"].shape == (0,)


def test_weighted_batch_errors():
    with pytest.raises(InvalidArgumentError, match="replica_id"):
        pf.distribute.weighted_batch(pf.Dataset.range(4), [1, 1], 2)
    with pytest.raises(InvalidArgumentError, match="sizes"):
        pf.distribute.weighted_batch(pf.Dataset.range(4), [0, 0], 0)


def test_speed_balancer_moves_rows_to_the_faster_replica_two_windows_later():
    balancer = pf.distribute.SpeedBalancer(global_batch=30, num_replicas=2, every=4)
    assert balancer.sizes_at(0) == balancer.sizes_at(7) == [15, 15]
    for step in range(4):
        balancer.record(step, [0.2, 0.1])  # replica 1 is twice as fast
    assert balancer.sizes_at(8) == [10, 20]
    for step in range(4, 8):
        balancer.record(step, [0.2, 0.1])
    assert balancer.sizes_at(12) == [10, 20]  # speeds measured at the window's own sizes stay put
    assert balancer.sizes_at(0) == [15, 15]  # past windows keep their sizes
    balancer.record(3, [9.0, 9.0])  # a step recorded twice counts once
    with pytest.raises(InvalidArgumentError, match="2 step times"):
        balancer.record(8, [0.1])


def test_replicas_split_every_step_identically_while_training_records_times():
    """Two replicas' pipelines, each prefetching ahead, with their own balancers fed the same step times: every
    global batch is covered exactly once, even as the sizes change."""
    n, every = 400, 5
    balancers = [pf.distribute.SpeedBalancer(20, 2, every=every) for _ in range(2)]
    iterators = [
        iter(pf.distribute.weighted_batch(pf.Dataset.range(n), b, r, weights=False).prefetch(8))
        for r, b in enumerate(balancers)
    ]
    seen = []
    for step, (b0, b1) in enumerate(zip(*iterators)):
        assert len(b0) + len(b1) == 20
        seen.extend(b0.tolist() + b1.tolist())
        seconds = [len(b0) / 100.0, len(b1) / 300.0]  # replica 1 processes rows three times as fast
        for b in balancers:
            b.record(step, seconds)
    assert seen == list(range(n))
    assert balancers[0].sizes == [5, 15]


def test_closing_a_pipeline_waiting_for_step_times_does_not_hang():
    balancer = pf.distribute.SpeedBalancer(10, 2, every=2)
    before = set(threading.enumerate())  # threads of other tests' iterators may not be collected yet
    it = iter(pf.distribute.weighted_batch(pf.Dataset.range(1000), balancer, 0).prefetch(10))
    next(it)
    time.sleep(0.2)  # the prefetch thread now waits for the step times of window 0
    started = time.monotonic()
    it.close()
    assert time.monotonic() - started < 60  # a hang would be forever (a generous bound: CI is busy)
    assert not [t for t in set(threading.enumerate()) - before if t.name == "parafeed-prefetch"]


def test_steps_never_recorded_give_a_clear_error():
    balancer = pf.distribute.SpeedBalancer(10, 2, every=2, timeout=0.2)
    it = iter(pf.distribute.weighted_batch(pf.Dataset.range(100), balancer, 0))
    for _ in range(4):
        next(it)
    with pytest.raises(InvalidArgumentError, match=r"steps 0 to 1, which were not all recorded"):
        next(it)


def test_steps_count_on_across_epochs():
    balancer = pf.distribute.SpeedBalancer(10, 2, every=2)
    ds = pf.distribute.weighted_batch(pf.Dataset.range(40), balancer, 1, weights=False)
    step = 0
    for epoch in range(3):
        for batch in ds:
            balancer.record(step, [(10 - len(batch)) / 10.0, len(batch) / 40.0])  # rows/s: replica 0 10, replica 1 40
            step += 1
        assert balancer.next_step == step == 4 * (epoch + 1)
    assert balancer.sizes_at(step) == [2, 8]


def test_weighted_batches_restore_from_a_saved_state():
    """A state saved mid-epoch restores where it stood (its training step is kept apart from the step's name)."""
    balancer = pf.distribute.SpeedBalancer(8, 2, every=100)  # one window: the sizes never wait for step times
    ds = pf.distribute.weighted_batch(pf.Dataset.range(40), balancer, 0)
    it = iter(ds)
    taken = [next(it)[0].tolist() for _ in range(2)]
    state = it.get_state()
    rest = [batch[0].tolist() for batch in it]
    again = iter(ds)
    again.set_state(state)
    assert [batch[0].tolist() for batch in again] == rest
    assert sorted(i for batch in taken + rest for i in batch) == [i for i in range(40) if i % 8 < 4]  # its half

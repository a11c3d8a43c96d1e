"""offload(executor="process"): the whole pipeline so far in worker processes of this host (no Ray). The same
elements in the same order as on one host, errors in place, exactly once when a worker process is killed, when the
count changes mid-epoch and across a checkpoint restored on another number of workers."""

from __future__ import annotations

import json
import os
import signal
import time

import numpy as np
import pytest

import parafeed as pf

pytestmark = pytest.mark.timeout(120)


def slow(x):
    time.sleep(0.001)
    return x * 10


def pipeline(n=1200):
    return pf.Dataset.range(n).shuffle(200, seed=7).map(slow).batch(16)


def tolist(batch):
    return tuple(x.tolist() for x in batch) if isinstance(batch, tuple) else batch.tolist()


def batches(ds):
    return [tolist(b) for b in ds]


@pytest.fixture(scope="module")
def on_host():
    ds = pipeline()
    return [batches(ds) for _ in range(2)]  # iterations 0 and 1 (the shuffle reshuffles)


def test_same_batches_in_the_same_order_as_on_one_host_every_epoch(on_host):
    ds = pipeline().offload(workers=2, executor="process")
    for epoch in range(2):
        assert batches(ds) == on_host[epoch]


def test_worker_processes_compute_the_pipeline():
    ds = pf.Dataset.range(64).map(lambda x: (x, os.getpid())).batch(8).offload(workers=2, executor="process")
    pids = {p for _, pid in ds for p in pid.tolist()}
    assert len(pids) == 2 and os.getpid() not in pids


def test_unbatched_pipeline_with_a_partial_last_block_and_errors_in_place():
    def f(x):
        if x == 77:
            raise ValueError("element 77 is bad")
        return np.float32(x) / 2

    it = iter(pf.Dataset.range(1001).map(f).offload(workers=2, block=10, executor="process"))
    got, errors = [], []
    while True:
        try:
            got.append(float(next(it)))
        except StopIteration:
            break
        except ValueError as err:
            errors.append((len(got), err))
    assert got == [x / 2 for x in range(1001) if x != 77]
    ((position, err),) = errors
    assert position == 77 and "element 77 is bad" in str(err)


def test_a_killed_worker_process_is_replaced_from_its_last_state(on_host):
    it = iter(pipeline().offload(workers=2, executor="process"))
    got = [tolist(next(it)) for _ in range(10)]
    os.kill(it.actors[1].process.pid, signal.SIGKILL)
    with pytest.warns(RuntimeWarning, match="was killed by signal 9; replacing it"):
        got += [tolist(b) for b in it]
    assert got == on_host[0]
    assert it.replaced == 1


def test_resize_and_restore_on_another_worker_count(on_host):
    it = iter(pipeline().offload(workers=2, executor="process"))
    got = [tolist(next(it)) for _ in range(20)]
    assert it.resize(3) == 3
    got += [tolist(next(it)) for _ in range(15)]
    state = json.loads(json.dumps(it.get_state()))
    it.close()
    for workers in (1, 2):  # a restore on any number of workers
        resumed = iter(pipeline().offload(workers=workers, executor="process"))
        resumed.set_state(state)
        assert got + [tolist(b) for b in resumed] == on_host[0]


def test_replicas_offload_their_own_share_with_equal_steps():
    def make(r):
        ds = pf.Dataset.range(333).distribute(3, r).map(lambda x: x * 2).batch(16)
        return ds.offload(workers=2, executor="process").equal_steps()

    seen = [batches(make(r)) for r in range(3)]
    assert len({len(s) for s in seen}) == 1
    assert sorted(i for s in seen for x, w in s for i, keep in zip(x, w) if keep) == [2 * i for i in range(333)]


def test_executor_must_be_ray_or_process():
    with pytest.raises(pf.errors.InvalidArgumentError, match="'ray' or 'process'"):
        pf.Dataset.range(3).offload(executor="threads")

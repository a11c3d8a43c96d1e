"""offload() on a real multi-node Ray cluster: the same elements in the same order as on one host, for every
replica; exactly once when input workers or whole nodes die, when workers are added or removed mid-epoch, and across
a checkpoint restored on another number of workers or replicas."""

from __future__ import annotations

import contextlib
import gc
import threading
import time

import numpy as np
import pytest

import parafeed as pf
from tests import host
from tests.helpers import offload_errors_in_place

from .conftest import NODE, wait_for_cpus, wait_for_free_cpus

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("ray_cluster")]


def slow(x):
    time.sleep(0.001)
    return x * 10


def pipeline(n=2000, replicas=1, replica=0):
    return pf.Dataset.range(n).shuffle(200, seed=7).distribute(replicas, replica).map(slow).batch(16)


def batches(ds):
    return [tolist(b) for b in ds]


_ON_HOST: dict = {}


def host_batches(n=2000, epoch=0):
    """``batches(pipeline(n))`` in iteration ``epoch`` of one pipeline object, run on this host: the reference the
    offloaded runs are compared with. Computed once per session (a serial pass sleeps 1 ms per element)."""
    ds, epochs = _ON_HOST.setdefault(n, (pipeline(n), []))
    while len(epochs) <= epoch:
        epochs.append(batches(ds))
    return epochs[epoch]


def tolist(batch):
    return tuple(x.tolist() for x in batch) if isinstance(batch, tuple) else batch.tolist()


def test_same_batches_in_the_same_order_as_on_one_host_every_epoch():
    ds = pipeline().offload(workers=3)
    for epoch in range(2):  # the second epoch reshuffles, as on one host (iteration 1 of both)
        assert batches(ds) == host_batches(2000, epoch)


def test_unbatched_pipeline_with_a_partial_last_block_and_errors_in_place():
    err = offload_errors_in_place(workers=2, block=10)
    assert "raise ValueError" in str(err.__cause__)


def test_replicas_get_their_own_share_with_label_balance_and_equal_steps():
    labels = np.repeat(np.arange(4), [500, 300, 150, 50])
    rng = np.random.default_rng(0)
    rng.shuffle(labels)
    data = pf.Dataset.from_tensor_slices((np.arange(1000), labels))

    def make(replicas, replica, offload):
        ds = data.distribute(replicas, replica, balance="labels").map(lambda i, y: (i * 2, y)).batch(32)
        return (ds.offload(workers=2) if offload else ds).equal_steps()

    seen = []
    for r in range(3):
        host, remote = batches(make(3, r, False)), batches(make(3, r, True))
        assert remote == host
        seen.append(host)
    assert len({len(s) for s in seen}) == 1  # equal steps
    ids = [i for s in seen for (x, _, w) in s for i, keep in zip(x, w) if keep]
    assert sorted(ids) == [2 * i for i in range(1000)]  # every sample once across the replicas


def test_a_replica_that_falls_behind_does_not_stall_the_others():
    fast = iter(pipeline(1200, 2, 0).offload(workers=1, buffer=2))
    slow_replica = iter(pipeline(1200, 2, 1).offload(workers=1, buffer=2))
    first = next(slow_replica)  # started, then left behind
    done = threading.Event()
    got = []
    thread = threading.Thread(target=lambda: (got.extend(b.tolist() for b in fast), done.set()), daemon=True)
    thread.start()
    assert done.wait(120), "the fast replica stalled behind the slow one"
    assert got == batches(pipeline(1200, 2, 0))
    assert [first.tolist()] + [b.tolist() for b in slow_replica] == batches(pipeline(1200, 2, 1))


def test_killed_worker_is_replaced_and_nothing_is_lost_or_repeated():
    import ray

    it = iter(pipeline(3000).offload(workers=3))
    got = [next(it).tolist() for _ in range(20)]
    ray.kill(it.actors[1], no_restart=True)
    got += [next(it).tolist() for _ in range(40)]
    ray.kill(it.actors[0], no_restart=True)
    got += batches(it)
    assert got == host_batches(3000)
    assert it.replaced == 2


def test_node_killed_mid_epoch(ray_cluster, extra_node):
    import ray

    it = iter(pipeline(3000).offload(workers=4))
    got = [next(it).tolist() for _ in range(15)]
    nodes = {ray.get(a.where.remote())[0]: a for a in it.actors}
    victim = next(n for n in ray_cluster.worker_nodes if n.node_id in nodes)
    ray_cluster.remove_node(victim)  # a whole Ray node with an input worker on it
    got += batches(it)
    assert got == host_batches(3000)
    assert it.replaced >= 1
    if victim is not extra_node:  # keep the cluster's size for the tests after this one
        ray_cluster.add_node(**NODE)
        wait_for_cpus(5)


def test_workers_added_and_removed_mid_epoch():
    it = iter(pipeline(3000).offload(workers=1))
    got = [next(it).tolist() for _ in range(10)]
    assert it.resize(3) == 3
    got += [next(it).tolist() for _ in range(30)]
    assert it.resize(2) == 2 and it.num_workers == 2
    got += batches(it)
    assert got == host_batches(3000)


def test_checkpoint_restores_on_another_number_of_workers():
    ds = pipeline(2000).offload(workers=3)
    it = iter(ds)
    got = [next(it).tolist() for _ in range(17)]
    state = it.get_state()
    it.close()
    again = iter(ds)
    again.set_state(state)
    again.resize(1)
    assert got + batches(again) == host_batches(2000)


def test_elastic_resume_on_another_number_of_replicas():
    def make(replicas, replica):
        return pf.Dataset.range(900).distribute(replicas, replica, policy="DATA").map(slow).batch(10).offload(2)

    taken = []
    its = [iter(make(2, r)) for r in range(2)]
    for _ in range(5):
        for it in its:
            taken += next(it).tolist()
    state = pf.distribute.save_state(its[0], steps=5)
    for it in its:
        it.close()
    rest = [x for r in range(3) for b in pf.distribute.resume(make(3, r), state) for x in b.tolist()]
    assert sorted(taken + rest) == [x * 10 for x in range(900)]


def test_order_that_differs_between_workers_is_refused():
    ds = pf.Dataset.range(10).map(lambda x: x, num_parallel_calls=2, deterministic=False).filter(lambda x: True)
    with pytest.raises(pf.errors.InvalidArgumentError, match="deterministic=True"):
        next(iter(ds.offload(workers=2)))


def test_equal_steps_that_agree_at_run_time_must_follow_the_offload():
    agreeing = pf.Dataset.range(10).distribute(2, 0).filter(lambda x: x > 2).batch(2).equal_steps()
    with pytest.raises(pf.errors.InvalidArgumentError, match="put equal_steps\\(\\) after offload"):
        agreeing.offload(workers=1)


def test_replicas_launching_at_once_on_a_cluster_too_small_share_it_and_finish():
    """Two replicas in one process (as MirroredStrategy's) each ask for 3 input workers of the cluster's 4 CPUs at
    the same moment: they run on fewer, say so once, and every id comes once (no replica waits for CPUs the other
    holds)."""
    results, errors = {}, []
    # (both datasets stay alive, as a training loop keeps them: a finished replica's idle workers keep their CPUs)
    datasets = [pf.Dataset.range(2000).distribute(2, r).map(slow).batch(32).offload(workers=3).equal_steps()
                for r in range(2)]  # fmt: skip

    def run(replica):
        try:
            results[replica] = [x for batch, weights in datasets[replica] for x, w in zip(batch.tolist(), weights) if w]
        except Exception as err:  # (reported by the assertion below)
            errors.append(err)

    with pytest.warns(RuntimeWarning, match="asked for 3 input workers"):
        threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(host.seconds(180))
    assert not errors, errors
    assert not any(t.is_alive() for t in threads), "a replica hung"
    assert sorted(results[0] + results[1]) == [10 * i for i in range(2000)]
    assert len(results[0]) == len(results[1]) == 1000
    datasets.clear()  # (their idle workers give the CPUs back for the next tests)
    gc.collect()
    wait_for_free_cpus(4)


def test_a_frozen_worker_is_replaced_and_nothing_is_lost_or_repeated(monkeypatch):
    """A worker that neither answers nor dies (its process stopped with SIGSTOP) is replaced from its last state once
    a block takes far longer than any before it (here at least 10 s instead of the default 60)."""
    import os
    import signal

    import ray
    from parafeed.parallel import ray_cluster

    it = iter(pipeline(3000).offload(workers=3))
    got = [next(it).tolist() for _ in range(20)]
    monkeypatch.setattr(ray_cluster, "HUNG_SECONDS", 10.0)  # (after the workers' start: on a loaded machine it is slow)
    _, pid = ray.get(it.actors[-1].where.remote())
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.warns(RuntimeWarning, match="gave no block in"):
            got += batches(it)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)  # (killed by the replacement already, as a rule)
    assert got == host_batches(3000)
    assert (
        it.replaced >= 1
    )  # (on a loaded machine a replacement's start may pass the short deadline too: replaced again)


def _counted(folder):
    """A map function that sleeps 0.2 s and leaves a file in ``folder`` for every element it computes."""

    def compute(x):
        time.sleep(0.2)
        (folder / f"{int(x)}.{time.monotonic_ns()}").touch()
        return x

    return compute


def _computed_once_settled(folder, quiet=1.5, limit=20.0):
    """The files in ``folder`` once none has been added for ``quiet`` seconds."""
    count, since, deadline = -1, time.monotonic(), time.monotonic() + limit
    while time.monotonic() < deadline:
        now = len(list(folder.iterdir()))
        if now != count:
            count, since = now, time.monotonic()
        elif time.monotonic() - since > quiet:
            break
        time.sleep(0.1)
    return count


def test_close_mid_epoch_stops_the_work_in_flight_and_abandoned_epochs_give_their_workers_back(tmp_path):
    """Each worker has 3 blocks (one batch of 5 elements, 1 s) requested ahead: after one batch, close() (and an
    iterator dropped without close) cancel the queued ones and interrupt the running one at its next element, so
    each worker computes at most the element it is on (and, on a loaded machine, one or two more while the interrupt
    travels) instead of 10 or more; the next epoch runs on the same actors and gives every batch."""
    from parafeed.parallel import ray_cluster

    # earlier tests' warm workers (and a frozen one that was replaced) give their CPUs back first: a start that finds
    # them still taken runs short, on other actors than the later epochs
    ray_cluster.reclaim_idle()
    wait_for_free_cpus(2)
    ds = pf.Dataset.range(40).map(_counted(tmp_path)).batch(5).offload(workers=2, buffer=3)

    def computed():
        return len(list(tmp_path.iterdir()))

    it = iter(ds)
    assert next(it).tolist() == list(range(5))
    actors = [a._actor_id for a in it.actors]
    before = computed()
    it.close()
    assert _computed_once_settled(tmp_path) - before <= 2 * 3

    dropped = iter(ds)
    assert next(dropped).tolist() == list(range(5))
    before = computed()
    del dropped
    gc.collect()
    assert _computed_once_settled(tmp_path) - before <= 2 * 3

    it = iter(ds)
    got = [next(it).tolist()]
    assert [a._actor_id for a in it.actors] == actors  # (the pool kept warm between epochs)
    assert got + batches(it) == [list(range(i, i + 5)) for i in range(0, 40, 5)]


def _workers_over_an_epoch(it, pause=0.0):
    """The batches of the epoch and the worker counts seen after each one (the trainer takes ``pause`` s a batch)."""
    got, counts = [], []
    for batch in it:
        got.append(tolist(batch))
        counts.append(it.num_workers)
        time.sleep(pause)
    return got, counts


def test_autotune_adds_workers_while_the_trainer_waits_and_removes_them_when_it_does_not(monkeypatch):
    """workers=AUTOTUNE starts on 2 workers and re-sizes every window (0.5 s here, 2 s by default): a slow pipeline
    (10 ms per element) and a fast trainer grow it (the cluster has 4 CPUs), a cheap one and a slow trainer shrink it to one; every
    batch comes once, in the one-host order, across the re-sizes."""
    from parafeed.parallel import autotune, ray_cluster

    monkeypatch.setattr(autotune, "POOL_WINDOW_SECONDS", 0.5)
    ray_cluster.reclaim_idle()  # (earlier tests' warm workers give their CPUs back)
    wait_for_free_cpus(4)
    slow = pf.Dataset.range(600).map(lambda x: (time.sleep(0.01), x)[1]).batch(4)  # (waits, not CPU: even under load)
    it = iter(slow.offload())
    got, counts = _workers_over_an_epoch(it)
    assert got == [list(range(i, i + 4)) for i in range(0, 600, 4)]
    assert counts[0] == 2 and max(counts) > 2, (counts, it.autotune_windows)
    assert any(w.decided > w.workers and w.starved > 0.05 and w.room > 0 for w in it.autotune_windows)

    ray_cluster.reclaim_idle()  # (the first step's warm workers give their CPUs back)
    wait_for_free_cpus(4)
    it = iter(pf.Dataset.range(400).batch(4).offload())
    got, counts = _workers_over_an_epoch(it, pause=0.1)
    assert got == [list(range(i, i + 4)) for i in range(0, 400, 4)]
    assert counts[0] == 2 and 1 in counts, (counts, it.autotune_windows)
    assert any(w.decided < w.workers and w.starved < 0.01 for w in it.autotune_windows)

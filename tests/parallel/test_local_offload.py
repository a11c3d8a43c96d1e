"""offload(executor="process"): the whole pipeline so far in worker processes of this host (no Ray). The same
elements in the same order as on one host, errors in place, exactly once when a worker process is killed, when the
count changes mid-epoch and across a checkpoint restored on another number of workers; the shared-memory segments the
batches come back in are recycled, never while a batch still views one, and none is left behind."""

from __future__ import annotations

import json
import os
import secrets
import signal
import threading
import time

import numpy as np
import pytest

import parafeed as pf
from parafeed.core import iterator
from parafeed.core.dataset import start_run
from parafeed.core.iterator import RunContext
from parafeed.core.options import input_cores
from tests.helpers import offload_errors_in_place
from tests.reliability.resources import baseline, mapped_shm, our_shm, wait_until_released

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
    offload_errors_in_place(workers=2, block=10, executor="process")


def test_the_first_batch_comes_as_soon_as_a_worker_has_made_it(tmp_path):
    # (the elements after the first wait until the test has the first batch: a first call for several blocks would
    # wait for them, and the first batch would never come)
    go = tmp_path / "go"

    def held(i):
        while i and not os.path.exists(go):
            time.sleep(0.01)
        return i

    it = iter(pf.Dataset.range(6).map(held).batch(1).offload(executor="process", workers=1).as_numpy_iterator())
    first = []
    taker = threading.Thread(target=lambda: first.append(next(it)), daemon=True)
    taker.start()
    taker.join(30)
    go.touch()  # (whatever happened: so that the worker ends)
    assert first and first[0].tolist() == [0], "the first batch waited for the blocks after it"
    taker.join(30)
    assert [b.tolist() for b in it] == [[i] for i in range(1, 6)]


def test_a_killed_worker_process_is_replaced_from_its_last_state(on_host):
    it = iter(pipeline().offload(workers=2, executor="process"))
    got = [tolist(next(it)) for _ in range(10)]
    os.kill(it.actors[1].process.pid, signal.SIGKILL)
    with pytest.warns(RuntimeWarning, match="was killed by signal 9; replacing it"):
        got += [tolist(b) for b in it]
    assert got == on_host[0]
    assert it.replaced == 1


def test_a_worker_killed_while_sigterm_ends_the_process_is_not_replaced(monkeypatch):
    """SIGTERM's handler kills the workers while another thread (a prefetch's) waits for them: that thread gets a
    WorkerError, silently (no replacement, no warning on the stderr of a process that is ending)."""
    import warnings

    from parafeed.parallel import shutdown

    it = iter(pipeline().offload(workers=2, executor="process"))
    next(it)
    monkeypatch.setitem(shutdown._state, "terminating", True)
    for actor in it.actors:
        os.kill(actor.process.pid, signal.SIGKILL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(pf.errors.WorkerError, match="the process is ending"):
            for _ in it:
                pass
    assert it.replaced == 0


def rows(x):
    time.sleep(0.0005)
    return np.full(1024, x, np.float32)  # (4 KiB: batches go through shared memory, not the pickle)


def big_pipeline(n=800):
    return pf.Dataset.range(n).map(rows).batch(8)


def assert_batches(got, n=800):
    assert len(got) == n // 8
    for i, b in enumerate(got):
        np.testing.assert_array_equal(b, np.repeat(np.arange(8 * i, 8 * i + 8, dtype=np.float32)[:, None], 1024, 1))


def test_no_shared_memory_is_left_after_close_or_a_killed_worker():
    base = baseline()
    it = iter(big_pipeline().offload(workers=2, executor="process"))
    got = [next(it).copy() for _ in range(20)]
    seen = our_shm()
    os.kill(it.actors[1].process.pid, signal.SIGKILL)
    with pytest.warns(RuntimeWarning, match="was killed by signal 9; replacing it"):
        for b in it:
            got.append(b.copy())
            seen |= our_shm()
    del b  # (a view of the last segment)
    assert_batches(got)
    assert len(seen - base.ours) > 6  # (the answers' segments, besides the rings of 3 worker processes)
    wait_until_released(base, seen_shm=seen)  # (spare workers released: their segments go with them)


def test_batches_kept_by_the_user_never_change_while_memory_is_recycled():
    ds = big_pipeline().offload(workers=2, executor="process")
    for _ in ds:  # an epoch whose batches are dropped: their segments are free again
        pass
    kept = list(ds)  # every batch of an epoch, kept (views of the segments)
    for _ in ds:  # another epoch in recycled segments, never those the kept batches view
        pass
    assert_batches(kept)
    del kept  # their segments are free again: those beyond a few per worker are removed, and unmapped there
    it = iter(ds)
    next(it)
    pids = [process.process.pid for process in it.actors]
    for _ in it:
        pass
    assert all(len(mapped_shm(pid)) <= 8 for pid in pids)  # (2 rings and a few segments, not all the kept epoch used)


def test_the_segments_are_recycled_across_calls_and_epochs():
    ds = big_pipeline(1600).offload(workers=2, executor="process")  # 50 calls an epoch
    before, seen = mapped_shm(), set()
    for _ in range(3):
        for _ in ds:
            seen |= mapped_shm() - before
    assert len(seen) <= 24  # the rings and a few segments per worker (not one per call: 150)


def test_an_answer_that_arrives_while_the_segments_close_at_exit_is_removed_too(monkeypatch):
    from parafeed.parallel import local_input_workers
    from parafeed.parallel.shm import map_segment, own_segment

    def made_by_a_worker():
        name = "psm_" + secrets.token_hex(8)
        own_segment(name, made=False)  # (the name the trainer gives with a call)
        map_segment(name, create=4096)  # (the worker makes the segment)
        return name

    segments = local_input_workers._Segments()
    first, late = made_by_a_worker(), made_by_a_worker()
    segments.answered(None, first, first)
    remove = local_input_workers.remove_segment

    def remove_while_an_answer_arrives(name):
        remove(name)
        if name == first:  # the feed's thread takes an answer in the middle of the close (at exit, it did)
            segments.answered(None, late, late)

    monkeypatch.setattr(local_input_workers, "remove_segment", remove_while_an_answer_arrives)
    segments.close()
    assert not os.path.exists(f"/dev/shm/{first}") and not os.path.exists(f"/dev/shm/{late}")
    with pytest.raises(pf.errors.WorkerError, match="the process is ending"):
        segments.arrays((b"", late, [4096]))


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


def map_threads_here(x):
    """The map threads alive in the process that computes ``x`` (after 0.2 ms: worth threads to AUTOTUNE)."""
    time.sleep(0.0002)
    return sum(t.name == "parafeed-map" for t in threading.enumerate())


def test_each_worker_process_runs_its_autotune_map_on_its_share_of_the_cores():
    # one block of 64 per worker: its 16 probed calls inline, the rest in ~10 ms, before AUTOTUNE's first window ends
    ds = pf.Dataset.range(128).map(map_threads_here, num_parallel_calls=pf.AUTOTUNE).batch(64)
    got = np.concatenate(list(ds.offload(executor="process", workers=2)))
    share = max(1, input_cores() // 2)  # (before: every worker started input_cores() threads, 225 on 16 cores)
    assert 1 <= got.max() <= share, got.tolist()  # (the first calls, AUTOTUNE's probe, run inline: none yet)


def test_an_input_workers_run_starts_its_autotune_steps_on_the_cores_it_was_given(monkeypatch):
    monkeypatch.setattr(iterator, "input_cores", lambda: 8)  # (a many-core host, as this process sees it)
    options = pf.Options()
    options.stats, options.max_workers = True, 8
    for cores, start in ((0, 8), (3, 3)):
        ds = pf.Dataset.range(64).map(slow, num_parallel_calls=pf.AUTOTUNE).with_options(options)
        shared = dict(RunContext(ds, ds.options()).shared(ds), cores=cores)  # (what the trainer sends a worker)
        it = start_run(RunContext.joined(ds, shared, (4, 0, 0), threading.Event()))
        assert [int(x) for x in it] == list(range(0, 640, 10))
        assert {s.name: s for s in it.stats()}["Map"].parallelism == start

"""Worker processes started ahead, reused by the next pool, started as AUTOTUNE asks, and sent away when unused."""

import gc
import threading
import time

import pytest

import parafeed as pf
from parafeed.core import options
from parafeed.parallel import process_startup
from tests.reliability.resources import worker_pids

pytestmark = pytest.mark.timeout(120)


def plus_one(x):
    return x + 1


def times_ten(x):
    return x * 10


def wait_for(condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture(autouse=True)
def two_cores(monkeypatch):
    """What these tests count (2 warm workers, AUTOTUNE starting at 2, 2 spares kept) as on a 2-core host, whatever
    cores this one has (`taskset -c 0` keeps one spare; 16 cores start AUTOTUNE at 15)."""
    monkeypatch.setattr(process_startup, "schedulable_cpus", lambda: 2)
    monkeypatch.setattr(options, "schedulable_cpus", lambda: 2)


@pytest.fixture(autouse=True)
def no_spares(two_cores):
    gc.collect()  # other tests' steps: their pools' workers become spares
    process_startup.release_spares()
    yield
    process_startup.release_spares()


def spare_pids() -> set[int]:
    return {w.process.pid for w in process_startup._spares._idle}


def test_workers_start_when_the_step_is_built_and_serve_its_first_batch():
    process_startup.release_spares()
    before = worker_pids()  # pools of other tests' steps still alive
    ds = pf.Dataset.range(20).map(plus_one, num_parallel_calls=2, executor="process")
    warm = spare_pids()  # started now (or one handed back by another test's pool meanwhile)
    assert len(warm) >= 2  # before any iteration
    assert [int(x) for x in ds] == list(range(1, 21))
    assert worker_pids() - before <= warm  # no process started for the first batch
    assert len(warm - spare_pids()) >= 2  # the pool ran on the warm ones


def test_a_pipeline_built_anew_runs_on_the_last_ones_workers_with_its_own_function():
    before = worker_pids()
    ds = pf.Dataset.range(20).map(plus_one, num_parallel_calls=2, executor="process")
    assert [int(x) for x in ds] == list(range(1, 21))
    used = worker_pids() - before
    del ds
    gc.collect()  # the step is gone: its workers become spares
    again = pf.Dataset.range(20).map(times_ten, num_parallel_calls=2, executor="process")
    assert [int(x) for x in again] == [10 * i for i in range(20)]  # the new function, on the same processes
    assert worker_pids() - before == used


def test_spares_are_few_and_leave_when_unused(monkeypatch):
    monkeypatch.setattr(process_startup, "SPARE_SECONDS", 10.0)  # (a window a busy machine still sees)
    many = [process_startup.Worker() for _ in range(process_startup.schedulable_cpus() + 2)]
    process_startup.give_spares(many)
    assert wait_for(
        lambda: sum(w.alive() for w in many) == process_startup.schedulable_cpus()
    )  # the extra ones stopped
    assert wait_for(lambda: not any(w.alive() for w in many))  # unused: gone after SPARE_SECONDS


def test_autotune_starts_processes_as_it_raises_parallelism():
    def wait(x):
        time.sleep(0.01)  # I/O-like: more workers pay even on few cores
        return x

    options = pf.Options()
    options.max_workers = 4
    before = worker_pids()
    ds = pf.Dataset.range(1000).map(wait, num_parallel_calls=pf.AUTOTUNE, executor="process").with_options(options)
    assert len(worker_pids() - before) == 2  # AUTOTUNE starts with 2
    it = iter(ds)
    seen = 0
    for _ in it:
        seen = max(seen, len(worker_pids() - before))
        if seen > 2:
            break
    it.close()
    assert 2 < seen <= 4


def test_workers_given_back_by_a_finalizer_inside_the_locks_are_stopped_not_deadlocked():
    """The garbage collector may run a finalizer at any allocation, also inside the spares' or the idle pools' lock
    (CI hung there once: a collected step's pool given back to the spares from inside their own lock). Such a call
    waits until the lock is left instead of deadlocking; the workers it gave are stopped then."""
    from parafeed.parallel.processes import _IdlePools

    spares = process_startup._Spares()
    worker = process_startup.Worker()
    done = []

    def inside():
        with spares._lock.held():
            spares.give([worker])  # (what a finalizer run inside the lock does)
            done.append("gave")
        done.append("left")

    thread = threading.Thread(target=inside, daemon=True)
    thread.start()
    thread.join(20)
    assert done == ["gave", "left"]  # no deadlock
    assert wait_for(lambda: not worker.alive())
    pools = _IdlePools()
    pools._steps.add(12345)
    with pools._lock.held():
        pools._forget(12345)  # (a collected step's finalizer inside the lock: forgotten once it is left)
        assert 12345 in pools._steps and len(pools._lock.deferred) == 1
    assert 12345 not in pools._steps and pools._lock.deferred == []

"""map(executor="ray") on a real multi-node Ray cluster: the serial map's results in order, errors with the actor's
traceback, a killed actor's chunks run again elsewhere, AUTOTUNE bounded by the cluster's CPUs."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import parafeed as pf
from tests import host
from tests.helpers import drain

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("ray_cluster")]


def slow_square(x):
    time.sleep(0.001)
    return np.full(40_000, x * x, np.int64)  # 320 kB: through Ray's object store


def test_results_equal_the_serial_map_in_order():
    ds = pf.Dataset.range(300).map(slow_square, num_parallel_calls=3, executor="ray")
    got = [int(x[0]) for x in ds]
    assert got == [x * x for x in range(300)]
    opts = pf.Options()
    opts.executor = "ray"  # the pipeline-wide option picks the executor too
    again = pf.Dataset.range(50).map(lambda x: x + 1, num_parallel_calls=2).with_options(opts)
    assert [int(x) for x in again] == list(range(1, 51))


def test_user_error_keeps_the_actor_traceback_and_iteration_goes_on():
    def f(x):
        if x == 7:
            raise KeyError(f"no such key {x}")
        return x

    got, errors = drain(pf.Dataset.range(20).map(f, num_parallel_calls=2, executor="ray"), KeyError)
    assert [int(x) for x in got] == [x for x in range(20) if x != 7]
    assert len(errors) == 1
    err = errors[0][1]
    assert "no such key 7" in str(err)
    assert "raise KeyError" in str(err.__cause__)  # the traceback from the actor
    assert any("map()" in note for note in getattr(err, "__notes__", []))


def test_killed_actor_its_chunks_run_again_exactly_once():
    import ray

    ds = pf.Dataset.range(400).map(slow_square, num_parallel_calls=3, executor="ray")
    it = iter(ds)
    got = [int(next(it)[0]) for _ in range(50)]
    executor = it._executor  # the runner's executor: kill one of its actors mid-epoch
    ray.kill(executor._pool.actors[0], no_restart=True)
    got += [int(x[0]) for x in it]
    assert got == [x * x for x in range(400)]


def test_autotune_never_asks_for_more_actors_than_the_cluster_has_cpus():
    import ray

    ds = pf.Dataset.range(3000).map(lambda x: (time.sleep(0.002), x)[1], num_parallel_calls=pf.AUTOTUNE, executor="ray")
    it = iter(ds)
    assert sum(1 for _ in it) == 3000
    cpus = int(ray.cluster_resources()["CPU"])
    assert 1 <= it._workers <= cpus


def test_import_parafeed_does_not_import_ray():
    code = "import sys, parafeed; assert 'ray' not in sys.modules, 'ray imported'; print('ok')"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=host.seconds(60)
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_a_clear_error_without_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(pf.errors.InvalidArgumentError, match=r"pip install parafeed\[ray\]"):
        next(iter(pf.Dataset.range(3).map(lambda x: x, num_parallel_calls=2, executor="ray")))


def test_a_frozen_actor_its_chunks_run_again_exactly_once(monkeypatch):
    """An actor that neither answers nor dies (stopped with SIGSTOP) is killed once a call takes far longer than any
    before it (here twice and at least 6 s instead of 10 times and 60), and its chunks run on the others."""
    import os
    import signal

    import ray
    from parafeed.parallel import ray_cluster

    ds = pf.Dataset.range(600).map(lambda x: (time.sleep(0.01), x * x)[1], num_parallel_calls=3, executor="ray")
    it = iter(ds)
    got = [int(next(it)) for _ in range(30)]
    # (after the actors' start, slow on a loaded machine; a call's time counts from its send, queueing included, so
    # on a loaded machine the longest so far is long: 2 times it here, not 10)
    monkeypatch.setattr(ray_cluster, "HUNG_SECONDS", 6.0)
    monkeypatch.setattr(ray_cluster, "HUNG_FACTOR", 2.0)
    executor = it._executor
    answered = [a for a in executor._pool.actors if id(a) in executor._answered]  # (one not started gets 120 s more)
    pid = ray.get(answered[-1].pid.remote())
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.warns(RuntimeWarning, match="gave no result in"):
            got += [int(x) for x in it]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    assert got == [x * x for x in range(600)]

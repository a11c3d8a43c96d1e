"""offload() under PyTorch DDP: two rank processes (gloo, 127.0.0.1) join the test's Ray cluster and each offloads
its own uneven share to a Ray input worker; with equal_steps() both run the same steps and every sample comes once
per epoch, computed in Ray actors, not in the ranks."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time

import pytest

from tests import host
from tests.helpers import free_ports

from .conftest import wait_for_free_cpus

pytestmark = pytest.mark.timeout(240)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB_SECONDS = 150  # both ranks, start to finish, on 2 idle cores (about 20 s); stretched for this host (tests/host.py)


def start_rank(rank, world, port, address, out, log):
    # the fixture's RAY_TMPDIR, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER ... are in os.environ: the ranks inherit them
    env = {**os.environ, "PYTHONPATH": ROOT, "CUDA_VISIBLE_DEVICES": ""}
    args = [sys.executable, "-m", "tests.ray.jobs.ddp_offload", str(rank), str(world), str(port), address, str(out)]
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def test_ddp_ranks_offloading_their_shares_get_every_sample_once_in_equal_steps(ray_cluster, tmp_path):
    gc.collect()  # (idle input workers of earlier tests' pipelines in this process give their CPUs back)
    wait_for_free_cpus(2)  # one input worker per rank
    port, world = free_ports(1)[0], 2
    outs = [tmp_path / f"rank{r}.json" for r in range(world)]
    logs = [open(tmp_path / f"rank{r}.log", "w") for r in range(world)]  # (files: a full pipe would stall a rank)
    jobs = []
    try:
        for r in range(world):
            jobs.append(start_rank(r, world, port, ray_cluster.address, outs[r], logs[r]))
        limit = host.seconds(JOB_SECONDS)
        deadline = time.monotonic() + limit
        for job in jobs:
            try:
                job.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pytest.fail(f"the DDP job hung (over {limit:.0f} s):\n{output(tmp_path, world)}")
        codes = [job.returncode for job in jobs]
        assert codes == [0] * world, f"return codes {codes}:\n{output(tmp_path, world)}"
    finally:
        for job in jobs:  # (a failed or hung rank leaves the other waiting in an all-reduce: stop both)
            if job.poll() is None:
                job.kill()
                job.wait()
        for log in logs:
            log.close()
    ranks = [json.loads(o.read_text()) for o in outs]
    n, batch = ranks[0]["n"], ranks[0]["batch"]  # (the job's sizes: range(n) in batches of batch)

    # the shares: DATA, from torch.distributed's rank and world size, 161 and 160 ids (21 and 20 batches of 8)
    assert [r["plan"][:3] for r in ranks] == [["DATA", world, r] for r in range(world)]
    assert [r["world"] for r in ranks] == [world] * world
    assert [r["cluster"] for r in ranks] == [ray_cluster.address] * world  # the test's cluster, not one of their own
    counts = [len(range(r, n, world)) for r in range(world)]
    assert -(-counts[0] // batch) != -(-counts[1] // batch)  # (the shares really differ in batches)
    steps = max(-(-c // batch) for c in counts)
    assert [r["len"] for r in ranks] == [steps] * world
    assert [len(r["epochs"]) for r in ranks] == [2] * world
    for epoch in range(2):
        got = [r["epochs"][epoch] for r in ranks]
        # equal steps: the short rank ran a padded step rather than leaving the other in its last all-reduce
        assert [g["steps"] for g in got] == [steps] * world
        # every id exactly once across the ranks, each rank its own share
        assert sorted(got[0]["ids"] + got[1]["ids"]) == list(range(n))
        assert [sorted(g["ids"]) for g in got] == [list(range(r, n, world)) for r in range(world)]
        # computed by Ray input workers: actor processes, not the ranks (nor this test's process)
        assert all(g["in_actor"] for g in got)
        ranks_pids = {r["pid"] for r in ranks} | {job.pid for job in jobs} | {os.getpid()}
        workers = [set(g["pids"]) for g in got]
        assert all(workers) and not (workers[0] | workers[1]) & ranks_pids
        assert not workers[0] & workers[1]  # each rank its own input workers
    # a filter on the input workers: the ranks agreed on the steps (the longer share's batches), each kept id once
    kept = [list(range(0, n, world)), [i for i in range(1, n, world) if i % 3 == 0]]
    agreed = [r["agreed"] for r in ranks]
    assert [sorted(a["ids"]) for a in agreed] == kept
    assert [a["steps"] for a in agreed] == [-(-len(kept[0]) // batch)] * world
    assert all(a["in_actor"] for a in agreed)
    # DDP kept the replicas' parameters equal through every step
    assert ranks[0]["params"] == ranks[1]["params"]
    wait_for_free_cpus(4)  # the ranks' input workers went with their drivers: the cluster is whole for later tests


def output(tmp_path, world):
    return "\n".join(
        f"--- rank {r}:\n{(tmp_path / f'rank{r}.log').read_text(errors='replace')[-3000:]}" for r in range(world)
    )

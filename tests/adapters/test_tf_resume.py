"""A MultiWorkerMirroredStrategy job pre-empted mid-epoch and resumed on fewer workers with
``pf.adapters.tf.distribute(..., resume_from=state)``: every sample trained on exactly once per epoch, equal steps on
every worker. The workers are tests/adapters/jobs/multiworker_resume.py."""

import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from tests import host
from tests.adapters.data import write_files
from tests.adapters.jobs.multiworker_resume import GLOBAL_BATCH
from tests.helpers import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = [50, 7, 23, 2, 31]  # uneven files, 113 records
STOP_AT = 4  # job 1 checkpoints after this step of epoch 0, trains one step more and is killed


def start(workers, workdir, stop_at, files):
    """The processes of one job of ``workers`` workers on free ports; each one's output goes to a log file."""
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    ports = ",".join(map(str, free_ports(workers)))
    processes = []
    for i in range(workers):
        out = open(workdir / f"output-{workers}-{i}.txt", "w")
        args = ["tests.adapters.jobs.multiworker_resume", str(i), ports, str(workdir), str(stop_at), *files]
        processes.append(subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, env=env, stdout=out, stderr=out))
        out.close()
    return processes


def outputs(workdir, workers):
    return "\n".join((workdir / f"output-{workers}-{i}.txt").read_text()[-2000:] for i in range(workers))


def wait(processes, workdir, done, timeout, exits=(0,)):
    """Waits until ``done()``; fails with the workers' output if one exits other than with ``exits`` first, or time
    runs out."""
    deadline = time.monotonic() + host.seconds(timeout)
    while not done():
        failed = [p.returncode for p in processes if p.poll() is not None and p.returncode not in exits]
        if failed or time.monotonic() > deadline:
            pytest.fail(f"the job failed ({failed or 'timed out'}):\n{outputs(workdir, len(processes))}")
        time.sleep(0.2)


def trained(workdir, workers):
    """Every step each worker of a job trained: {worker: [log lines]}."""
    logs = [(workdir / f"trained-{workers}-{i}.jsonl").read_text().splitlines() for i in range(workers)]
    return {i: [json.loads(line) for line in lines] for i, lines in enumerate(logs)}


def real_ids(lines):
    return [i for line in lines for i, w in zip(line["ids"], line["weights"]) if w > 0]


@pytest.mark.timeout(300)
def test_multi_worker_job_resumed_on_fewer_workers_trains_every_sample_once(tmp_path):
    files = write_files(tmp_path, SIZES)
    records = sum(SIZES)
    processes = []
    try:
        # job 1: 3 workers, pre-empted (SIGKILL) after the step after its checkpoint
        processes = start(3, tmp_path, STOP_AT, files)
        stopped = [tmp_path / f"stopped-{i}" for i in range(3)]
        wait(processes, tmp_path, lambda: all(s.exists() for s in stopped), 140, exits=())
        for p in processes:
            p.kill()
            p.wait()
        os.replace(tmp_path / "checkpoint.json", tmp_path / "restart-from.json")
        # job 2: 2 workers from job 1's checkpoint, to the end of epoch 1
        processes = start(2, tmp_path, 0, files)
        wait(processes, tmp_path, lambda: all(p.poll() == 0 for p in processes), 140)
    finally:
        for p in processes:
            p.kill()
            p.wait()

    checkpoint = json.loads((tmp_path / "restart-from.json").read_text())
    assert checkpoint["epoch"] == 0 and checkpoint["state"]["steps"] == STOP_AT
    assert checkpoint["state"]["samples"] == STOP_AT * GLOBAL_BATCH and checkpoint["state"]["num_replicas"] == 3
    first, second = trained(tmp_path, 3), trained(tmp_path, 2)
    for lines in [*first.values(), *second.values()]:
        for line in lines:  # the replica trained on its own pipeline's batch, in order: the position beside is right
            assert line["ids"] == line["pipeline_ids"], line
    assert all(len(lines) == STOP_AT + 1 for lines in first.values())  # the step after the checkpoint was lost

    # epoch 0: job 1 up to its checkpoint, then job 2: every record exactly once
    before = [i for lines in first.values() for i in real_ids(lines[:STOP_AT])]
    after = [i for lines in second.values() for i in real_ids([x for x in lines if x["epoch"] == 0])]
    assert len(before) == STOP_AT * GLOBAL_BATCH
    assert sorted(before + after) == list(range(records))
    # epoch 1, job 2 alone: whole again
    assert sorted(i for lines in second.values() for i in real_ids([x for x in lines if x["epoch"] == 1])) == list(
        range(records)
    )

    results = [json.loads((tmp_path / f"result-{i}.json").read_text()) for i in range(2)]
    rest = records - STOP_AT * GLOBAL_BATCH  # 65 over 2 replicas of 6: 33 -> 6 steps; 113 -> 57 -> 10 steps
    steps = [math.ceil(math.ceil(n / 2) / (GLOBAL_BATCH // 2)) for n in (rest, records)]
    for r in results:  # every worker of job 2: the same steps, and its pipeline ended with the strategy's epoch
        assert r["epochs"] == [
            {"epoch": 0, "steps": steps[0], "pipeline_ended": True},
            {"epoch": 1, "steps": steps[1], "pipeline_ended": True},
        ]
    assert results[0]["weights"] == results[1]["weights"]  # one model, kept in sync
    losses = [line["loss"] for lines in [*first.values(), *second.values()] for line in lines]
    assert np.all(np.isfinite(losses))

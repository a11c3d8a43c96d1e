"""MultiWorkerMirroredStrategy fed by parafeed: one two-worker job (tests/adapters/jobs/multiworker.py; one replica
each, CPU) runs every check under one strategy, as starting TensorFlow and its cluster costs more than the checks:
- uneven files, made equal by ``equal_steps()`` with known counts, under Keras fit;
- replicas that agree on their steps at run time: a filter after ``distribute()`` keeps very different amounts on the
  two workers and ``equal_steps()`` has no ``steps=``, so the workers vote every step through TensorFlow's collective
  ops (``pf.adapters.tf.worker_votes``) while the strategy all-reduces the training step's gradients;
- a worker that dies mid-epoch."""

import json
import os
import subprocess
import sys
import time

import pytest

from tests import host
from tests.adapters.data import write_files
from tests.adapters.jobs.multiworker import UNEVEN_POLICIES
from tests.adapters.jobs.multiworker_agreed import DIE_EXIT, GLOBAL_BATCH, POLICIES, keeps
from tests.helpers import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = [50, 7, 23, 2, 31]  # uneven files, 113 records


def start_job(tmp_path, files):
    """The two workers of the job on free ports; returns (processes, their result files, output files)."""
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    ports = ",".join(map(str, free_ports(2)))
    processes, results, outputs = [], [], []
    for i in range(2):
        results.append(tmp_path / f"worker-{i}.json")
        outputs.append(tmp_path / f"worker-{i}.txt")
        args = ["tests.adapters.jobs.multiworker", str(i), ports, str(results[i]), *files]
        with open(outputs[i], "w") as out:
            processes.append(subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, env=env, stdout=out, stderr=out))
    return processes, results, outputs


def wait_for(processes, outputs, timeout):
    """The workers' exit codes; fails with their output if they have not all exited within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while any(p.poll() is None for p in processes) and time.monotonic() < deadline:
        time.sleep(0.2)
    hung = [i for i, p in enumerate(processes) if p.poll() is None]
    for p in processes:
        if p.poll() is None:
            p.kill()
            p.wait()
    if hung:
        pytest.fail(f"worker(s) {hung} hung:\n{tail(outputs)}")
    return [p.returncode for p in processes]


def tail(outputs):
    return "\n".join(f"--- worker {i}:\n{path.read_text()[-3000:]}" for i, path in enumerate(outputs))


def kept_ids(policy):
    """Every replica's ids after its filter, in its share's order: FILE deals whole files, RECORD every other id."""
    ids = list(range(sum(SIZES)))
    if policy == "FILE":
        starts = [sum(SIZES[:f]) for f in range(len(SIZES))]
        files = [ids[a : a + n] for a, n in zip(starts, SIZES)]
        shares = [[i for f in files[r::2] for i in f] for r in range(2)]
    else:
        shares = [ids[r::2] for r in range(2)]
    return [[i for i in share if keeps(r, i)] for r, share in enumerate(shares)]


@pytest.fixture(scope="module")
def job_results(tmp_path_factory):
    """The job's results: ``{part: {policy: [worker 0's result, worker 1's]}}`` for the parts "uneven" and "agreed",
    and worker 0's ``"die"``."""
    tmp_path = tmp_path_factory.mktemp("multiworker")
    processes, results, outputs = start_job(tmp_path, write_files(tmp_path, SIZES))
    assert wait_for(processes, outputs, host.seconds(360)) == [0, DIE_EXIT], tail(outputs)
    by_worker = [json.loads(path.read_text()) for path in results]
    parts = {part: {p: [w[part][p] for w in by_worker] for p in by_worker[0][part]} for part in ("uneven", "agreed")}
    return {**parts, "die": by_worker[0]["die"]}


@pytest.mark.timeout(480)
@pytest.mark.parametrize("policy", UNEVEN_POLICIES)
def test_keras_fit_on_uneven_files(job_results, policy):
    results = job_results["uneven"][policy]
    assert [r["replicas"] for r in results] == [2, 2]
    # a finite dataset: TensorFlow's multi-worker partial-batch handling shows an unknown batch dimension; repeated
    # (infinite), it has none, and the fixed size of equal_steps' batches shows
    assert results[0]["batch_dims"] == {"finite": None, "repeat": 8}  # 16 over 2 replicas
    assert sorted(results[0]["ids"] + results[1]["ids"]) == list(range(sum(SIZES)))  # every sample once
    assert results[0]["steps"] == results[1]["steps"]  # equal steps: nobody waits at the end of an epoch
    if policy == "FILE":  # whole files: 104 records against 9, so one worker pads most of its batches
        assert results[0]["padded"] + results[1]["padded"] > 60
    for r in results:
        assert r["finite"] and r["loss"][-1] < 0.6 * r["loss"][0]
    assert results[0]["loss"] == results[1]["loss"] and results[0]["weights"] == results[1]["weights"]


@pytest.mark.timeout(480)
@pytest.mark.parametrize("policy", POLICIES)
def test_workers_agree_on_the_steps_after_a_filter(job_results, policy):
    results = job_results["agreed"][policy]
    kept = kept_ids(policy)
    assert min(map(len, kept)) * 4 < max(map(len, kept))  # very different shares (FILE: 93 ids against 1)
    per_replica = GLOBAL_BATCH // 2
    steps = -(-max(map(len, kept)) // per_replica)  # the longer share's batches: the other pads with weight 0
    assert [r["replicas"] for r in results] == [2, 2]
    for r, result in enumerate(results):  # worker r holds replica r
        for epoch in result["epochs"]:  # two passes over one distributed dataset: every kept id once in each
            assert sorted(epoch["ids"]) == kept[r]
            assert epoch["steps"] == steps
            # (the weights tell parafeed's padding from TensorFlow's own: a worker whose iterator ends first gets
            # empty batches from the strategy's iterator until the others end, so the steps alone prove nothing)
            assert epoch["padded"] == steps * per_replica - len(kept[r])
        # Keras fit (tf_keras needs steps_per_epoch, so a repeated feed: each repetition votes anew) ran its steps
        # with the votes beside its own collectives; the count itself is the steps_per_epoch it was given
        assert result["fit_steps"] == [steps, steps]
        assert result["finite"]
    assert results[0]["fit_loss"] == results[1]["fit_loss"]  # one model, trained in step on both workers


@pytest.mark.timeout(480)
def test_a_worker_that_dies_fails_the_other_instead_of_hanging(job_results):
    """Worker 1 exits after the first step of the second epoch: worker 0, then waiting for its vote and for the
    training step's all-reduce, fails at once with TensorFlow's collective error (or parafeed's, for the vote)."""
    result = job_results["die"]
    assert result["error"] is not None, result
    assert "UnavailableError" in result["error"] or "equal_steps()" in result["error"], result["error"]
    assert result["seconds"] < 60  # after worker 0's last step (TensorFlow's health checks: every 30 s)
    first_epoch = -(-len(kept_ids("RECORD")[0]) // (GLOBAL_BATCH // 2))
    assert first_epoch <= result["steps"] <= first_epoch + 1

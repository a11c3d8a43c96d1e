"""MultiWorkerMirroredStrategy with replicas that agree on their steps at run time: a filter after ``distribute()``
keeps very different amounts on the two workers and ``equal_steps()`` has no ``steps=``, so the workers vote every
step through TensorFlow's collective ops (``pf.adapters.tf.worker_votes``) while the strategy all-reduces the
training step's gradients. The workers are tests/adapters/jobs/multiworker_agreed.py (one replica each, CPU)."""

import json
import os
import subprocess
import sys
import time

import pytest

from tests.adapters.data import write_files
from tests.adapters.jobs.multiworker_agreed import DIE_EXIT, GLOBAL_BATCH, POLICIES, keeps
from tests.helpers import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = [50, 7, 23, 2, 31]  # uneven files, 113 records


def start_job(mode, tmp_path, files):
    """The two workers of a job in ``mode`` on free ports; returns (processes, their result files, output files)."""
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    ports = ",".join(map(str, free_ports(2)))
    processes, results, outputs = [], [], []
    for i in range(2):
        results.append(tmp_path / f"{mode}-{i}.json")
        outputs.append(tmp_path / f"{mode}-{i}.txt")
        args = ["tests.adapters.jobs.multiworker_agreed", str(i), ports, mode, str(results[i]), *files]
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
def agreed_results(tmp_path_factory):
    """One two-worker job that runs every policy in turn (one TensorFlow start and cluster for all):
    ``{policy: [worker 0's result, worker 1's]}``."""
    tmp_path = tmp_path_factory.mktemp("agreed")
    processes, results, outputs = start_job("train", tmp_path, write_files(tmp_path, SIZES))
    assert wait_for(processes, outputs, 200) == [0, 0], tail(outputs)
    by_worker = [json.loads(path.read_text()) for path in results]
    return {policy: [worker[policy] for worker in by_worker] for policy in POLICIES}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("policy", POLICIES)
def test_workers_agree_on_the_steps_after_a_filter(agreed_results, policy):
    results = agreed_results[policy]
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


@pytest.mark.timeout(300)
def test_a_worker_that_dies_fails_the_other_instead_of_hanging(tmp_path):
    """Worker 1 exits after the first step of the second epoch: worker 0, then waiting for its vote and for the
    training step's all-reduce, fails at once with TensorFlow's collective error (or parafeed's, for the vote)."""
    processes, results, outputs = start_job("die", tmp_path, write_files(tmp_path, SIZES))
    assert wait_for(processes, outputs, 150) == [0, DIE_EXIT], tail(outputs)
    result = json.loads(results[0].read_text())
    assert result["error"] is not None, tail(outputs)
    assert "UnavailableError" in result["error"] or "equal_steps()" in result["error"], result["error"]
    assert result["seconds"] < 60  # after worker 0's last step (TensorFlow's health checks: every 30 s)
    first_epoch = -(-len(kept_ids("RECORD")[0]) // (GLOBAL_BATCH // 2))
    assert first_epoch <= result["steps"] <= first_epoch + 1

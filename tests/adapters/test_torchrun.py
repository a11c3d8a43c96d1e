"""A real elastic ``torchrun`` job (gloo, CPU, two agents on 127.0.0.1) loses a node mid-epoch; the surviving node's
agent restarts its workers in place, in a smaller world, and they go on from rank 0's last checkpoint: every sample is
trained on exactly once per epoch, and every worker of a world takes the same steps. The workers are
tests/adapters/jobs/torchrun_resume.py.

Two agents because torchrun's elasticity is in nodes: one agent always restarts ``--nproc-per-node`` workers, so a
world shrinks in place only when a node leaves. The survivor runs 3 workers and the lost node 1: a world of 4, then of
3, under the survivor's agent (``--nnodes=1:2``, ``--max-restarts=1``)."""

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from tests import host
from tests.adapters.data import write_files
from tests.adapters.jobs.torchrun_resume import BATCH, CHECKPOINT_EVERY, EPOCHS, FIRST_WORLD, STOP_AT
from tests.helpers import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = [70, 13, 57, 40, 70]  # uneven files, 250 records
WORLD = FIRST_WORLD  # the survivor's workers and the lost node's


def start_agent(workdir, name, workers, port, *, host):
    """One node of the job: a torchrun agent with ``workers`` workers. The rendezvous store lives in the ``host``
    node's agent (the survivor); the other node's workers are the doomed ones. Output goes to ``{name}.txt``."""
    # a round completes 1 s after its first node joins (not 30: the survivor's round after the loss); a node without a
    # heartbeat for 5 s is dropped (heartbeats go out about every 2 s with an interval of 1)
    conf = f"is_host={int(host)},last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=5,join_timeout=60"
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--nnodes=1:2", f"--nproc-per-node={workers}"),
        *("--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=resume", f"--rdzv-conf={conf}"),
        *(f"--max-restarts={int(host)}", "--monitor-interval=0.2"),
        *("-m", "tests.adapters.jobs.torchrun_resume", str(workdir)),
    ]
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    # torch 2.13 hands the restarted workers the first round's TCPStore (the agent's, shared) with its keys: their gloo
    # group then reads the dead group's addresses and fails to connect (pytorch/pytorch#135712). Without the sharing,
    # rank 0 of every round hosts a new store on a free port.
    env["TORCH_DISABLE_SHARE_RDZV_TCP_STORE"] = "1"
    env.pop("PARAFEED_TEST_DOOMED", None)
    if not host:
        env["PARAFEED_TEST_DOOMED"] = "1"
    with open(workdir / f"{name}.txt", "w") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True)


def output(workdir):
    return "\n".join(f"--- {n}:\n" + (workdir / f"{n}.txt").read_text()[-4000:] for n in ("survivor", "lost"))


def wait_for(workdir, agents, done, timeout):
    deadline = time.monotonic() + host.seconds(timeout)
    while not done():
        if time.monotonic() > deadline or any(a.poll() not in (None, 0) for a in agents):
            pytest.fail(f"the job failed or hung:\n{output(workdir)}")
        time.sleep(0.1)


def kill_node(agent, workdir):
    """SIGKILL for an agent and for its stopped workers (in sessions of their own), as for a machine that is lost."""
    if agent.poll() is None:
        os.killpg(agent.pid, signal.SIGKILL)
    agent.wait()
    time.sleep(0.2)  # (a worker writes its pid, then stops itself)
    for path in workdir.glob("stopped-*"):
        pid = path.read_text()
        with contextlib.suppress(OSError, ValueError):  # (gone already; a reused pid is not one of ours)
            if b"torchrun_resume" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(int(pid), signal.SIGKILL)


def stop(agent):
    """Ends an agent (and so its workers) if it is still running: SIGTERM first, which it passes on to its workers
    (they run in their own sessions), then SIGKILL."""
    if agent.poll() is None:
        os.killpg(agent.pid, signal.SIGTERM)
        try:
            agent.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(agent.pid, signal.SIGKILL)
            agent.wait()


def logs(workdir, restart):
    """Every line each worker of an attempt logged: {rank: [entries]}."""
    out = {}
    for path in workdir.glob(f"log-{restart}-*.jsonl"):
        out[int(path.stem.split("-")[2])] = [json.loads(line) for line in path.read_text().splitlines()]
    return dict(sorted(out.items()))


def steps(entries, epoch):
    return [e for e in entries if e.get("epoch") == epoch]


def trained(workers, epoch, until=None, after=0):
    """The ids the workers of an attempt trained on in ``epoch``, in the steps ``after`` < step <= ``until``."""
    taken = [e for entries in workers.values() for e in steps(entries, epoch)]
    return [i for e in taken if after < e["step"] <= (until or e["step"]) for i in e["ids"]]


def ceil_div(a, b):
    return -(-a // b)


@pytest.mark.timeout(240)
def test_elastic_restart_on_fewer_workers_trains_every_sample_once_per_epoch(tmp_path):
    # a world of 4, then of 3: the shares of the resumed epoch and of every later one are uneven (the resharding
    # itself is checked for every pair of counts in tests/distribute/test_elastic.py; this is torchrun's restart)
    survivors = 3
    write_files(tmp_path, SIZES)
    records = sum(SIZES)
    port = free_ports(1)[0]
    survivor = lost = None
    try:
        survivor = start_agent(tmp_path, "survivor", survivors, port, host=True)
        lost = start_agent(tmp_path, "lost", WORLD - survivors, port, host=False)
        # the lost node's workers stop after step STOP_AT of epoch 0; then the node goes, agent and workers at once
        stopped = [tmp_path / f"stopped-{r}" for r in range(WORLD)]
        wait_for(tmp_path, [survivor, lost], lambda: sum(p.exists() for p in stopped) == WORLD - survivors, 120)
        kill_node(lost, tmp_path)
        # the survivor's workers fail in their next all-reduce; its agent restarts them without the lost node
        try:
            survivor.wait(150)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the restarted job hung:\n{output(tmp_path)}")
        assert survivor.returncode == 0, output(tmp_path)
    finally:
        if lost is not None:
            kill_node(lost, tmp_path)
        if survivor is not None:
            stop(survivor)

    first, second = logs(tmp_path, 0), logs(tmp_path, 1)
    starts = [[e["start"] for e in entries if "start" in e] for entries in (*first.values(), *second.values())]
    assert sorted(first) == list(range(WORLD)) and sorted(second) == list(range(survivors))
    # job 1: one world of 4 (a worker started in an incomplete world waits for the restart and logs nothing)
    assert all(s["world"] == WORLD and s["resumed"] is None for s, *_ in starts[:WORLD])
    # the restart: in place (the survivor's agent is the new workers' parent), the restart count 1, a world of m
    restarted = [s for s, *_ in starts[WORLD:]]
    assert {s["agent"] for s in restarted} == {survivor.pid}
    assert all(s["restart"] == 1 and s["world"] == survivors for s in restarted)

    # job 1's last checkpoint: what the restarted workers went on from; the steps after it are lost (redone)
    checkpoints = [e["checkpoint"] for e in first[0] if "checkpoint" in e]
    last = checkpoints[-1]
    assert last == {"epoch": 0, "steps": STOP_AT // CHECKPOINT_EVERY * CHECKPOINT_EVERY}
    assert all(s["resumed"] == last for s in restarted)
    assert all([e["step"] for e in steps(entries, 0)] == list(range(1, STOP_AT + 1)) for entries in first.values())
    kept = trained(first, 0, until=last["steps"])
    lost_ids = trained(first, 0, after=last["steps"])
    assert len(kept) == last["steps"] * BATCH * WORLD and lost_ids  # (steps after the checkpoint were trained)

    # the resumed epoch: job 1 up to its checkpoint, then job 2: every sample exactly once
    redone = trained(second, 0)
    assert sorted(kept + redone) == list(range(records))
    # every later epoch whole again, reshuffled
    later = [trained(second, epoch) for epoch in range(1, EPOCHS)]
    for ids in later:
        assert sorted(ids) == list(range(records))
    assert later[0] != later[1]

    # equal steps: every worker of the restarted world took the same steps in every epoch, numbered from the epoch's
    # start (the resumed one from the checkpoint's step)
    rest = records - len(kept)
    expected = {0: ceil_div(ceil_div(rest, survivors), BATCH)}
    expected.update((epoch, ceil_div(ceil_div(records, survivors), BATCH)) for epoch in range(1, EPOCHS))
    for entries in second.values():
        for epoch, count in expected.items():
            numbers = [e["step"] for e in steps(entries, epoch)]
            first_step = last["steps"] + 1 if epoch == 0 else 1
            assert numbers == list(range(first_step, first_step + count)), (epoch, numbers)
            assert {"epoch_end": epoch, "steps": count} in entries

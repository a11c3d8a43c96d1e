"""Resume and elastic resume: a data-parallel job on 4 replicas is killed mid-epoch and finished on 2.

Each replica is a process reading its share of TFRecord files (``distribute(policy="RECORD")``), shuffled in one
global order, batched, with equal steps. Every few steps the replicas save ``pf.distribute.save_state`` next to
what a model checkpoint would hold. The job is then killed (SIGKILL) and a new one, with half the replicas, builds the
same pipeline with ``distribute(..., start=state["samples"])`` and ``pf.distribute.resume``: it finishes the epoch
and the script checks that every record was trained on exactly once.

    python examples/resume_elastic.py [--quick] [--workdir DIR]
"""

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import parafeed as pf

BATCH = 8  # per replica


def pipeline(files: list[str], replicas: int, replica: int, start: int = 0) -> pf.Dataset:
    ds = pf.TFRecordDataset(files).shuffle(64, seed=42)  # the global order: the same on every replica
    ds = ds.distribute(replicas, replica, policy="DATA", start=start)
    records = _records(files)
    longest = math.ceil((records - start) / replicas)  # the shuffle hides counts from equal_steps: give its steps
    steps = math.ceil(longest / BATCH)
    return ds.map(lambda r: int.from_bytes(r, "little")).batch(BATCH).prefetch(2).equal_steps(steps=steps)


def _records(files: list[str]) -> int:
    from parafeed.io.index import record_offsets

    return sum(len(record_offsets(f)) for f in files)


def replica(workdir: str, replicas: int, rank: int, stop_at: int | None) -> None:
    """One replica process: trains (records what it trained on) and checkpoints every 3 steps."""
    files = sorted(os.path.join(workdir, f) for f in os.listdir(workdir) if f.endswith(".tfrecord"))
    checkpoint = os.path.join(workdir, "checkpoint.json")
    if os.path.exists(checkpoint):  # a restart: resume after the samples the last checkpoint covers
        with open(checkpoint) as f:
            state = json.load(f)
        it = pf.distribute.resume(pipeline(files, replicas, rank, start=state["samples"]), state)
    else:
        it = iter(pipeline(files, replicas, rank))
    log = open(os.path.join(workdir, f"trained-{replicas}-{rank}.txt"), "a")  # noqa: SIM115
    for step, (ids, weights) in enumerate(it, start=1):
        log.write(" ".join(str(i) for i, w in zip(ids, weights) if w > 0) + "\n")  # the "training step"
        log.flush()
        if step % 3 == 0 and rank == 0:  # a checkpoint: the model's weights would be saved here too
            tmp = checkpoint + ".tmp"
            with open(tmp, "w") as f:
                json.dump(pf.distribute.save_state(it, step), f)
            os.replace(tmp, checkpoint)
        if stop_at is not None and step == stop_at:
            os.kill(os.getpid(), signal.SIGSTOP)  # wait here to be killed, as a pre-empted worker would be


def run_job(workdir: str, replicas: int, stop_at: int | None) -> None:
    procs = [
        subprocess.Popen([sys.executable, __file__, "--worker", str(replicas), str(r), str(stop_at or 0), workdir])
        for r in range(replicas)
    ]
    if stop_at is None:
        for p in procs:
            if p.wait() != 0:
                raise SystemExit(f"a replica failed with status {p.returncode}")
        return
    for p in procs:  # every replica reaches the stop step (after the checkpoint there), then the job is killed
        while not _stopped(p.pid):
            if p.poll() is not None:
                raise SystemExit(f"a replica exited with status {p.returncode} before the stop step")
            time.sleep(0.05)
    for p in procs:
        p.kill()
        p.wait()


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "T"
    except FileNotFoundError:
        return True


def trained_ids(workdir: str, replicas: int, steps: int | None) -> list[int]:
    """The ids every replica of a job trained on, up to ``steps`` steps each (the checkpointed ones)."""
    ids = []
    for r in range(replicas):
        path = os.path.join(workdir, f"trained-{replicas}-{r}.txt")
        with open(path) as f:
            lines = f.read().splitlines()
        for line in lines[:steps]:
            ids += [int(i) for i in line.split()]
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer records")
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="parafeed-resume-")
    records = 300 if args.quick else 3000
    for k in range(5):  # files of uneven sizes
        with pf.io.TFRecordWriter(os.path.join(workdir, f"part-{k}.tfrecord")) as w:
            for i in range(k, records, 5):
                w.write(int(i).to_bytes(4, "little"))
    stop_at = 6
    run_job(workdir, replicas=4, stop_at=stop_at)
    with open(os.path.join(workdir, "checkpoint.json")) as f:
        state = json.load(f)
    print(f"job 1: 4 replicas killed after step {stop_at}; last checkpoint: step {state['steps']}, "
          f"{state['samples']} samples of the global order")  # fmt: skip
    run_job(workdir, replicas=2, stop_at=None)
    before = trained_ids(workdir, 4, state["steps"])  # steps after the checkpoint are lost with the model's state
    after = trained_ids(workdir, 2, None)
    ids = np.array(before + after)
    print(f"job 2: 2 replicas resumed and trained on {len(after)} records")
    print(f"records {records}, trained {len(ids)}, distinct {len(np.unique(ids))}")
    if len(ids) != records or len(np.unique(ids)) != records:
        raise SystemExit("FAILED: a record was repeated or skipped")
    print("every record trained on exactly once")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        replicas_, rank_, stop_, dir_ = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        replica(dir_, replicas_, rank_, stop_ or None)
    else:
        main()

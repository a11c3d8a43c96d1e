"""Resume and elastic resume: a data-parallel job on 4 replicas is killed mid-epoch and finished on 2.

Each replica is a process reading only its own records of TFRecord files in one global shuffled order (a seeded
shuffle before ``distribute(policy="RECORD")``: every replica computes the order from the record count), batched,
with equal steps. Every few steps rank 0 saves ``pf.distribute.save_state`` next to what a model checkpoint would
hold. The job is then killed (SIGKILL) and a new one, with half the replicas, builds the same pipeline and goes on
with ``pf.checkpoint.Epochs(ds, state)``: it finishes the epoch, then trains the next one whole. The script checks
that every record was trained on exactly once in each epoch.

    python examples/resume_elastic.py [--quick] [--workdir DIR]
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import parafeed as pf

BATCH = 8  # per replica
EPOCHS = 2


def pipeline(files: list[str], replicas: int, replica: int) -> pf.Dataset:
    ds = pf.TFRecordDataset(files).shuffle(64, seed=42)  # the global order: the same on every replica
    ds = ds.distribute(replicas, replica, policy="RECORD")  # each replica reads only its records of that order
    return ds.map(lambda r: int.from_bytes(r, "little")).batch(BATCH).prefetch(2).equal_steps()


def replica(workdir: str, replicas: int, rank: int, stop_at: int | None, restart: bool) -> None:
    """One replica process: trains (records what it trained on) and checkpoints every 3 steps."""
    files = sorted(os.path.join(workdir, f) for f in os.listdir(workdir) if f.endswith(".tfrecord"))
    checkpoint = os.path.join(workdir, "checkpoint.json")
    first_epoch, state = 0, None
    if restart:  # go on after the samples the last checkpoint of the killed job covers
        with open(os.path.join(workdir, "restart-from.json")) as f:  # (not this job's own, written as it runs)
            saved = json.load(f)
        first_epoch, state = saved["epoch"], saved["state"]
    epochs = pf.checkpoint.Epochs(pipeline(files, replicas, rank), state)
    for epoch in range(first_epoch, EPOCHS):
        it = epochs.next()
        log = open(os.path.join(workdir, f"trained-{replicas}-{rank}-{epoch}.txt"), "a")  # noqa: SIM115
        for step, (ids, weights) in enumerate(it, start=1):
            trained = [i for i, w in zip(ids.numpy(), weights.numpy()) if w > 0]
            log.write(" ".join(map(str, trained)) + "\n")  # the "training step"
            log.flush()
            if step % 3 == 0 and rank == 0:  # a checkpoint: the model's weights would be saved here too
                tmp = checkpoint + ".tmp"
                with open(tmp, "w") as f:
                    json.dump({"epoch": epoch, "state": pf.distribute.save_state(it, step)}, f)
                os.replace(tmp, checkpoint)
            if stop_at is not None and step == stop_at:
                os.kill(os.getpid(), signal.SIGSTOP)  # wait here to be killed, as a pre-empted worker would be


def run_job(workdir: str, replicas: int, stop_at: int | None, restart: bool) -> None:
    args = [str(replicas), str(stop_at or 0), str(int(restart)), workdir]
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(r), *args]) for r in range(replicas)]
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


def trained_ids(workdir: str, replicas: int, epoch: int, steps: int | None = None) -> list[int]:
    """The ids every replica of a job trained on in ``epoch``, up to ``steps`` steps each (the checkpointed ones)."""
    ids = []
    for r in range(replicas):
        path = os.path.join(workdir, f"trained-{replicas}-{r}-{epoch}.txt")
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
    run_job(workdir, replicas=4, stop_at=stop_at, restart=False)
    os.replace(os.path.join(workdir, "checkpoint.json"), os.path.join(workdir, "restart-from.json"))
    with open(os.path.join(workdir, "restart-from.json")) as f:  # what the new job starts from
        state = json.load(f)["state"]
    print(f"job 1: 4 replicas killed after step {stop_at}; last checkpoint: step {state['steps']}, "
          f"{state['samples']} samples of the global order")  # fmt: skip
    run_job(workdir, replicas=2, stop_at=None, restart=True)
    before = trained_ids(workdir, 4, 0, state["steps"])  # steps after the checkpoint are lost with the model's state
    after = trained_ids(workdir, 2, 0)
    print(f"job 2: 2 replicas finished epoch 0 on {len(after)} records, then trained epoch 1")
    failed = False
    for epoch, ids in ((0, np.array(before + after)), (1, np.array(trained_ids(workdir, 2, 1)))):
        print(f"epoch {epoch}: records {records}, trained {len(ids)}, distinct {len(np.unique(ids))}")
        failed |= len(ids) != records or len(np.unique(ids)) != records
    if failed:
        raise SystemExit("FAILED: a record was repeated or skipped")
    print("every record trained on exactly once in every epoch")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        rank_, replicas_, stop_, restart_ = (int(a) for a in sys.argv[2:6])
        dir_ = sys.argv[6]
        replica(dir_, replicas_, rank_, stop_ or None, bool(restart_))
    else:
        main()

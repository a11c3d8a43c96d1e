"""One worker of an elastic ``torchrun`` job (gloo, CPU) that loses a node mid-epoch and goes on, restarted in place
by the surviving node's agent on fewer workers (run by tests/adapters/test_torchrun.py).

Usage: torchrun ... -m tests.adapters.jobs.torchrun_resume WORKDIR

Every worker reads the TFRecord files of WORKDIR in one global shuffled order (a seeded shuffle before
``distribute(policy="RECORD")``, rank and world size from ``torch.distributed``), batched with equal steps, and trains
a DDP ``Linear`` (one gradient all-reduce per step: the workers step together). After each step it appends the ids it
trained on to ``WORKDIR/log-{restart}-{rank}.jsonl``, flushed (a kill keeps what was done). Every CHECKPOINT_EVERY
steps, after the step, rank 0 replaces ``WORKDIR/checkpoint.json`` (model weights, epoch and
``pf.distribute.save_state``) and logs the checkpoint; at the end of an epoch it checkpoints the next epoch's start
(``Epochs.upcoming()``). A (re)started worker goes on from the checkpoint when there is one, with
``pf.checkpoint.Epochs``, and logs where from: what the killed workers trained after it is lost with their model.

The workers started with ``PARAFEED_TEST_DOOMED=1`` in their environment (the node the test kills) stop themselves
after step STOP_AT of epoch 0 of the first attempt (they write ``WORKDIR/stopped-{rank}`` with their pid and wait for
SIGKILL, as pre-empted machines); the other node's workers then fail in their next all-reduce, and its agent restarts
them (``TORCHELASTIC_RESTART_COUNT`` 1) in a new rendezvous round without the lost node. A worker of the first attempt
in a world smaller than FIRST_WORLD (a round completed before the second node joined) waits, untouched, for its
agent's restart into the whole world.
"""

import datetime
import json
import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import parafeed as pf
from tests.adapters.data import CLASSES, SPEC

BATCH = 4  # per worker, the same on any number of workers
EPOCHS = 3
CHECKPOINT_EVERY = 3
STOP_AT = 5  # the doomed workers stop after this step of epoch 0: steps 4 and 5 are after the last checkpoint
SHUFFLE_SEED = 7
FIRST_WORLD = 4  # the workers of both nodes


def parse(record):
    e = pf.io.parse_single_example(record, SPEC)
    return e["id"], e["x"], e["label"]


def pipeline(files: list[str]) -> pf.Dataset:
    """This worker's batches of (ids, x, labels, weights) of one global order, whatever the number of workers."""
    ds = pf.TFRecordDataset(files).shuffle(64, seed=SHUFFLE_SEED)  # before the split, seeded: one global order
    return ds.distribute(policy="RECORD").map(parse).batch(BATCH).equal_steps()  # replicas from torch.distributed


def write_json(path: str, data: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def exit_when_orphaned() -> None:
    """Ends this worker if its agent goes away without stopping it (workers run in their own sessions)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(2)

    threading.Thread(target=watch, daemon=True).start()


def main(workdir: str) -> None:
    exit_when_orphaned()
    restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    doomed = os.environ.get("PARAFEED_TEST_DOOMED") == "1" and restart == 0
    if restart == 0 and int(os.environ["WORLD_SIZE"]) != FIRST_WORLD:
        # a round completed before the other node joined: its agent restarts this worker in the whole world
        time.sleep(120)
        os._exit(3)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    files = sorted(os.path.join(workdir, f) for f in os.listdir(workdir) if f.endswith(".tfrecord"))
    checkpoint = os.path.join(workdir, "checkpoint.json")
    saved = None
    if os.path.exists(checkpoint):
        with open(checkpoint) as f:
            saved = json.load(f)

    torch.manual_seed(0)
    model = torch.nn.Linear(4, CLASSES).double()
    if saved:
        model.load_state_dict({k: torch.tensor(v, dtype=torch.float64) for k, v in saved["model"].items()})
    model = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    log = open(os.path.join(workdir, f"log-{restart}-{rank}.jsonl"), "a")

    def record(entry: dict) -> None:
        log.write(json.dumps(entry) + "\n")
        log.flush()

    def save(data: dict) -> None:
        model_state = {k: v.tolist() for k, v in model.module.state_dict().items()}
        write_json(checkpoint, {**data, "model": model_state})
        record({"checkpoint": {"epoch": data["epoch"], "steps": data["state"]["steps"] if data["state"] else 0}})

    first_epoch = saved["epoch"] if saved else 0
    state = saved["state"] if saved else None
    resumed = {"epoch": first_epoch, "steps": state["steps"] if state else 0} if saved else None
    record({"start": {"restart": restart, "rank": rank, "world": world, "agent": os.getppid(), "resumed": resumed}})
    epochs = pf.checkpoint.Epochs(pipeline(files), state, saved.get("run") if saved else None)
    for epoch in range(first_epoch, EPOCHS):
        it = epochs.next()
        before = state["steps"] if state and epoch == first_epoch else 0  # this epoch's steps done before the resume
        steps = 0
        for steps, (ids, x, labels, weights) in enumerate(it, start=1):
            w = torch.from_numpy(weights).double()
            losses = F.cross_entropy(model(torch.from_numpy(x).double()), torch.from_numpy(labels), reduction="none")
            loss = (w * losses).mean()
            optimizer.zero_grad()
            loss.backward()  # the gradient all-reduce: every worker takes this step together
            optimizer.step()
            record({"epoch": epoch, "step": before + steps, "ids": ids[weights > 0].tolist()})
            if rank == 0 and steps % CHECKPOINT_EVERY == 0:
                save({"epoch": epoch, "state": pf.distribute.save_state(it, steps)})
            if doomed and epoch == 0 and before + steps == STOP_AT:
                with open(os.path.join(workdir, f"stopped-{rank}"), "w") as f:
                    f.write(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGSTOP)  # pre-empted: wait here for the test's SIGKILL
        record({"epoch_end": epoch, "steps": steps})
        if rank == 0:  # the next epoch's start, as the uninterrupted run would begin it
            save({"epoch": epoch + 1, "state": None, "run": epochs.upcoming()})
    log.close()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])

"""One rank of D3 (benchmarks/distribution.py): what ``equal_steps()``'s run-time agreement costs a DDP step.

Every rank trains a small CNN (32x32x3 images, 32 per replica per step) under DistributedDataParallel (gloo, CPU, one
torch thread per rank) on a parafeed pipeline with a filter after ``distribute()``, so the replicas' batch counts are
not known before the epoch. Two ways, the same data and the same steps; in every run, one epoch of each, the two
taking turns every BLOCK steps (A B B A ...), so that a change of the machine's load hits both alike:

* ``steps=K``: ``equal_steps(steps=K)`` with K counted beforehand (``pf.distribute.count_batches``): no agreement;
* ``agreement``: ``equal_steps()``: the replicas vote every step through one gloo all-reduce.

Then the same two pipelines iterated without a model (no training step to overlap the vote with): the raw cost of the
vote and its count per step; and bare gloo all-reduces of one int64 (the transport alone). Rank 0 writes every run's
times (seconds) to OUT.json.

Usage: python benchmarks/jobs/ddp_agree.py RANK WORLD PORT OUT.json RUNS STEPS
(STEPS: about how many steps an epoch has on each replica; RUNS timed runs after one warm-up run.)
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import parafeed as pf

BATCH = 32  # images per replica per step
DROP = 0  # the class the filter drops (about 10 % of the images): each replica's count is known only by a pass
PIPELINE_EPOCHS = 3  # passes per run of the pipeline alone (its steps are short)
BLOCK = 5  # steps of one way before the other way's turn
ROUND_TRIPS = 100  # bare gloo all-reduces per run


def images(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8), rng.integers(0, 10, n)


def make_pipeline(data: tuple[np.ndarray, np.ndarray], num_replicas: int | None, replica: int | None) -> pf.Dataset:
    """Images and labels, this replica's share, the dropped class filtered out, batched and normalised (CHW)."""

    def normalise(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ascontiguousarray((x.astype(np.float32) / 127.5 - 1.0).transpose(0, 3, 1, 2)), y

    ds = pf.Dataset.from_tensor_slices(data).distribute(num_replicas, replica)
    return ds.filter(lambda x, y: y != DROP).batch(BATCH).map(normalise)


def cnn() -> torch.nn.Module:
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 64), nn.ReLU(), nn.Linear(64, 10),
    )  # fmt: skip


def interleaved(epochs: dict[str, Iterator[Any]], step: Callable[[Any], float]) -> dict[str, tuple[list[float], float]]:
    """One epoch of every way, the ways taking turns BLOCK steps at a time (A B B A A B ...): for each way, the seconds
    of each step but a block's first, and the sum of ``step(batch)``. A step's time runs from taking its batch to the
    end of ``step``. A block's first step is left out: the vote on it may have come in during the other way's block."""
    times: dict[str, list[float]] = {way: [] for way in epochs}
    rows = dict.fromkeys(epochs, 0.0)
    live, turn = list(epochs), 0
    while live:
        for way in list(live) if turn % 2 == 0 else live[::-1]:
            for i in range(BLOCK):
                began = time.perf_counter()
                batch = next(epochs[way], None)
                if batch is None:
                    live.remove(way)
                    break
                rows[way] += step(batch)
                if i:
                    times[way].append(time.perf_counter() - began)
        turn += 1
    return {way: (times[way], rows[way]) for way in epochs}


def round_trips(n: int) -> list[float]:
    """Seconds of each of ``n`` gloo all-reduces of one int64 by themselves (made, cast, waited for): the transport's
    part of a vote, without parafeed."""
    times = []
    for _ in range(n):
        began = time.perf_counter()
        ballot = torch.tensor([1], dtype=torch.int64)
        dist.all_reduce(ballot, async_op=True).wait()
        int(ballot.item())
        times.append(time.perf_counter() - began)
    return times


def main(rank: int, world: int, port: int, out: str, runs: int, steps: int) -> None:
    torch.set_num_threads(1)  # one core per rank (the machine has as many cores as ranks)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    data = images(steps * BATCH * world * 10 // 9)
    counts = pf.distribute.count_batches(lambda n, r: make_pipeline(data, n, r), world)
    ways = {
        "steps=K": make_pipeline(data, None, None).equal_steps(steps=max(counts)),
        "agreement": make_pipeline(data, None, None).equal_steps(),
    }
    torch.manual_seed(0)
    model = DistributedDataParallel(cnn())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def train(batch: Any) -> float:
        """One DDP step (forward, backward with the gradient all-reduce, update); the rows of weight 1."""
        x, y, w = batch
        loss = (w * torch.nn.functional.cross_entropy(model(x), y, reduction="none")).sum() / BATCH
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(w.sum())

    result: dict = {"counts": counts, "pipeline_epochs": PIPELINE_EPOCHS, "block": BLOCK, "rows": {}}
    result.update(train={way: [] for way in ways}, pipeline={way: [] for way in ways}, all_reduce=[])
    for run in range(runs + 1):  # the first run warms up
        dist.barrier()
        for way, (times, rows) in interleaved({w: iter(ds.to_torch()) for w, ds in ways.items()}, train).items():
            result["rows"].setdefault(way, set()).add(rows)
            if run:
                result["train"][way].append(times)
        alone: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(PIPELINE_EPOCHS):
            for way, (times, _) in interleaved({w: iter(ds) for w, ds in ways.items()}, lambda b: 0.0).items():
                alone[way] += times
        dist.barrier()
        trips = round_trips(ROUND_TRIPS)
        if run:
            for way, times in alone.items():
                result["pipeline"][way].append(times)
            result["all_reduce"].append(trips)
    result["rows"] = {way: sorted(rows) for way, rows in result["rows"].items()}  # (one value each: the same rows)
    dist.barrier()
    if rank == 0:
        with open(out, "w") as f:
            json.dump(result, f)
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    rank_, world_, port_, out_, runs_, steps_ = sys.argv[1:7]
    main(int(rank_), int(world_), int(port_), out_, int(runs_), int(steps_))

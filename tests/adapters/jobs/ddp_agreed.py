"""One rank of a PyTorch job (gloo) whose replicas' batch counts are not known before the epoch: a filter after
``distribute()``, ``equal_steps()`` without ``steps=`` (run once per rank by tests/distribute/test_agreed_steps.py).

Usage: python -m tests.adapters.jobs.ddp_agreed MODE RANK WORLD PORT OUT.json

MODE ``all``: with 3 ranks of ``range(120)`` split by DATA, the filter keeps 32, 8 and 32 ids (4, 1 and 4 batches
of 8):
1. ``pad`` under DDP (real gradient all-reduces every step), 2 epochs;
2. ``drop`` and ``repeat``;
3. ``pad`` where one rank's share is empty (it pads with zeros of the element spec).
MODE ``die``: rank 1 exits after its first step; the others must fail with UnavailableError, not hang.
"""

import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import parafeed as pf

N, BATCH = 120, 8


def uneven(x):
    return x % 5 != 0 and (x % 3 != 1 or x < 30)


def rank_2_empty(x):
    return x % 3 != 2 and x % 5 != 0


def pipeline(keep, policy="pad"):
    return pf.Dataset.range(N).distribute(policy="DATA").filter(keep).batch(BATCH).equal_steps(policy)


def epoch(ds, model=None, optimizer=None):
    """(ids of the rows of weight 1 (all rows without weights), steps) of one epoch."""
    ids, steps = [], 0
    for batch in torch.utils.data.DataLoader(ds.to_torch(), batch_size=None):
        x, w = batch if isinstance(batch, (tuple, list)) else (batch, torch.ones(len(batch)))
        if model is not None:
            loss = (w.double() * (model(x.double().unsqueeze(1) / N) ** 2).squeeze(1)).mean()
            optimizer.zero_grad()
            loss.backward()  # (a gradient all-reduce: a rank with fewer steps would leave the others waiting here)
            optimizer.step()
        ids += x[w == 1].tolist()
        steps += 1
    return ids, steps


def run_all(rank):
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(1, 1).double())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = pipeline(uneven)
    out = {"len": int(ds.cardinality()), "pad": [epoch(ds, model, optimizer) for _ in range(2)]}
    out["params"] = [p.detach().flatten().tolist() for p in model.module.parameters()]
    out["drop"] = epoch(pipeline(uneven, "drop"))
    out["repeat"] = epoch(pipeline(uneven, "repeat"))
    out["empty"] = epoch(pipeline(rank_2_empty))
    return out


def run_die(rank):
    it = iter(pipeline(uneven))
    next(it)
    if rank == 1:
        os._exit(3)  # (no clean shutdown: as a crashed process)
    began = time.monotonic()
    try:
        list(it)
    except pf.errors.UnavailableError as err:
        return {"error": str(err), "seconds": time.monotonic() - began}
    return {"error": None}


def main(mode, rank, world, port, out):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    result = run_all(rank) if mode == "all" else run_die(rank)
    if mode == "all":
        dist.barrier()
        dist.destroy_process_group()
    with open(out, "w") as f:
        json.dump(result, f)
    sys.stdout.flush()
    os._exit(0)  # (after a peer died, the process group's teardown may wait on it)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])

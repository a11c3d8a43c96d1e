"""One rank of a PyTorch DDP job (gloo) fed by parafeed (run once per rank by tests/adapters/test_torch.py).

Usage: python -m tests.adapters.jobs.ddp RANK WORLD PORT OUT.json FILE...

1. Uneven files split by whole files, ``equal_steps()``: every rank runs the same steps and sees its samples once.
2. Speed-weighted batches with a :class:`SpeedBalancer` fed all-gathered step times (rank 1 made slower): the
   trained parameters equal, to float64 precision, plain SGD on the global batches' mean loss in one process.
"""

import json
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import parafeed as pf
from tests.adapters.data import CLASSES, SPEC

GLOBAL_BATCH = 12


def parse(record):
    e = pf.io.parse_single_example(record, SPEC)
    return e["id"], e["x"], e["label"]


def model_and_optimizer(seed):
    torch.manual_seed(seed)
    model = torch.nn.Linear(4, CLASSES).double()
    return model, torch.optim.SGD(model.parameters(), lr=0.5)


def equal_steps_epoch(files, rank):
    sharded = pf.TFRecordDataset(files).distribute(policy="FILE")  # rank and world size from torch.distributed
    ds = sharded.map(parse).batch(8).equal_steps().prefetch(2)
    model, optimizer = model_and_optimizer(0)
    model = DistributedDataParallel(model)
    ids, steps = [], 0
    for epoch in range(2):
        for i, x, y, w in torch.utils.data.DataLoader(ds.to_torch(), batch_size=None):
            loss = (w.double() * F.cross_entropy(model(x.double()), y, reduction="none")).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if epoch == 0:
                ids += i[w == 1].tolist()
                steps += 1
    return {"ids": ids, "steps": steps, "len": len(ds), "plan": sharded.plan.policy}


def weighted_epochs(files, rank, world, epochs):
    balancer = pf.distribute.SpeedBalancer(GLOBAL_BATCH, world, every=2)
    ds = pf.distribute.weighted_batch(pf.TFRecordDataset(files).map(parse), balancer, rank).prefetch(2)
    model, optimizer = model_and_optimizer(1)
    model = DistributedDataParallel(model)
    step, sizes = 0, []
    for _ in range(epochs):
        for _, x, y, w in ds.to_torch():
            losses = F.cross_entropy(model(x.double()), y, reduction="none")
            loss = (w.double() * losses).sum() / max(len(losses), 1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            # the step's compute time, modelled rather than measured so that the split does not depend on the load of
            # the machine: 2 ms a step, and rank 1 is the slow replica (4 ms per row against 1 ms)
            pf.adapters.torch.record_step(balancer, step, 0.002 + (0.004 if rank == 1 else 0.001) * len(x))
            sizes.append(len(x))
            step += 1
    return model.module, sizes


def reference(files, epochs):
    """Plain SGD on the mean loss of each global batch, in one process."""
    rows = [parse(r) for r in pf.TFRecordDataset(files)]
    x = torch.from_numpy(np.stack([r[1] for r in rows])).double()
    y = torch.from_numpy(np.array([r[2] for r in rows]))
    model, optimizer = model_and_optimizer(1)
    for _ in range(epochs):
        for start in range(0, len(rows), GLOBAL_BATCH):
            loss = F.cross_entropy(model(x[start : start + GLOBAL_BATCH]), y[start : start + GLOBAL_BATCH])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def main(rank, world, port, out, files):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    result = equal_steps_epoch(files, rank)
    trained, sizes = weighted_epochs(files, rank, world, epochs=3)
    result["sizes"] = sizes
    if rank == 0:
        expected = reference(files, epochs=3)
        result["max_param_difference"] = max(
            float((a - b).abs().max()) for a, b in zip(trained.parameters(), expected.parameters())
        )
        result["param_change"] = max(
            float((a - b).abs().max()) for a, b in zip(expected.parameters(), model_and_optimizer(1)[0].parameters())
        )
    dist.barrier()
    dist.destroy_process_group()
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:])

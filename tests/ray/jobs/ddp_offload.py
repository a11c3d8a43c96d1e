"""One rank of a PyTorch DDP job (gloo) whose input is offloaded to Ray input workers (run once per rank by
tests/ray/test_offload_ddp.py, on the test's Ray cluster).

Usage: python -m tests.ray.jobs.ddp_offload RANK WORLD PORT RAY_ADDRESS OUT.json

Each rank takes its DATA share of ``range(N)`` (rank and world size from ``torch.distributed``), maps and batches it on
one Ray input worker (``offload``), and evens out the step count with ``equal_steps()``: N is odd, so rank 0 has one
batch more than rank 1, and rank 1 must run a step of padding rows (weight 0) to stay in step with rank 0's
all-reduces. Two epochs of real DDP optimizer steps; per epoch it records the ids of the real rows, the step count,
and which processes computed the rows. Then one epoch with a filter on the input workers (rank 1 keeps a third of
its ids): the counts are unknown and the ranks agree each step on the trainer side.
"""

import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import parafeed as pf
import ray

N = 321  # rank 0: 161 ids (21 batches of 8), rank 1: 160 (20 batches): equal_steps pads rank 1 with a 21st
BATCH = 8
EPOCHS = 2


def compute(x):
    """The offloaded work: the id, the process that computed it, and whether that process is a Ray actor."""
    in_actor = ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None
    return x, os.getpid(), int(in_actor)


def pipeline():
    sharded = pf.Dataset.range(N).distribute(policy="DATA")  # rank and world size from torch.distributed
    return sharded, sharded.map(compute).batch(BATCH).offload(workers=1).equal_steps()


def filtered():
    """A filter on the input workers makes the counts unknown: the ranks agree each step on the trainer side."""
    keep = (lambda x: x % 3 == 0) if dist.get_rank() else (lambda x: True)
    ds = pf.Dataset.range(N).distribute(policy="DATA").filter(keep).map(compute).batch(BATCH)
    return ds.offload(workers=1).equal_steps()


def train(model, optimizer, ds):
    """One epoch of DDP steps on ``ds``: the real rows' ids, the steps, the processes that computed them."""
    ids, pids, in_actor, steps = [], set(), True, 0
    for i, pid, actor, w in torch.utils.data.DataLoader(ds.to_torch(), batch_size=None):
        x = (i.double() / N).unsqueeze(1)
        losses = ((model(x) - (2 * x + 1)) ** 2).squeeze(1)
        loss = (w.double() * losses).sum() / len(losses)
        optimizer.zero_grad()
        loss.backward()  # (an all-reduce: a rank with fewer steps would leave the other waiting here)
        optimizer.step()
        real = w == 1
        ids += i[real].tolist()
        pids.update(pid[real].tolist())
        in_actor = in_actor and bool(actor[real].all())
        steps += 1
    return {"ids": ids, "steps": steps, "pids": sorted(pids), "in_actor": in_actor}


def main(rank, world, port, address, out):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    ray.init(address=address, log_to_driver=False, configure_logging=False)  # the test's cluster, not a new one
    sharded, ds = pipeline()
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(1, 1).double())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    epochs = [train(model, optimizer, ds) for _ in range(EPOCHS)]
    agreed = train(model, optimizer, filtered())
    params = [p.detach().flatten().tolist() for p in model.module.parameters()]
    result = {
        "rank": rank,
        "world": dist.get_world_size(),
        "pid": os.getpid(),
        "cluster": ray.get_runtime_context().gcs_address,
        "n": N,
        "batch": BATCH,
        "plan": [sharded.plan.policy, sharded.plan.num_replicas, sharded.plan.replica_id, sharded.plan.counts],
        "len": len(ds),
        "epochs": epochs,
        "agreed": agreed,
        "params": params,
    }
    dist.barrier()
    dist.destroy_process_group()
    ray.shutdown()
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5])

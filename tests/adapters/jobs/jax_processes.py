"""One process of a JAX job of 2 processes with 2 CPU devices each (gloo collectives), fed by ``to_jax(distribute=True)``
(run once per process by tests/adapters/test_jax.py).

Usage: python -m tests.adapters.jobs.jax_processes PROCESS PORT OUT.json

Each global batch (8 rows: 4 from each process's share) goes through a ``jit`` step over all 4 devices that gathers
it on every device, so both processes record the same ids and weights:
- ``split``: ``range(40)`` split by ``to_jax(distribute=True, policy="DATA")`` (5 steps);
- ``known``: ``range(44)`` split by DATA, ``equal_steps()`` from the known counts (22 ids each: 6 steps);
- ``agreed``: a filter after the split keeps 16 of process 0's ids and 4 of process 1's, so the counts are not known
  before the epoch and the processes agree on 4 steps through jax.distributed's coordination service.
"""

import json
import sys

import jax
import numpy as np

jax.config.update("jax_num_cpu_devices", 2)
jax.config.update("jax_cpu_collectives_implementation", "gloo")

import parafeed as pf  # noqa: E402


def keep(i):
    return i % 2 == 0 or i < 8


def epoch(feed):
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("batch",))
    gather = jax.jit(
        lambda *leaves: leaves, out_shardings=jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    )
    batches = []
    for batch in feed:
        ids, weights = batch if isinstance(batch, tuple) else (batch, jax.numpy.ones(batch.shape, np.float32))
        assert ids.shape == (8,) and len(ids.sharding.device_set) == 4
        ids, weights = gather(ids, weights)  # (an all-gather over both processes' devices)
        batches.append([np.asarray(ids).tolist(), np.asarray(weights).tolist()])
    return {"ids": batches, "steps": len(batches)}


def main(process, port, out):
    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process)
    assert jax.process_count() == 2 and jax.device_count() == 4
    split = pf.Dataset.range(40).batch(4).to_jax(distribute=True, policy="DATA")
    known = pf.Dataset.range(44).distribute(policy="DATA").batch(4).equal_steps().to_jax()
    agreed = pf.Dataset.range(32).distribute(policy="DATA").filter(keep).batch(4).equal_steps().to_jax()
    result = {
        "split": {**epoch(split), "expected": list(range(40))},
        "known": {**epoch(known), "expected": list(range(44))},
        "agreed": {**epoch(agreed), "expected": [i for i in range(32) if keep(i)]},
    }
    with open(out, "w") as f:
        json.dump(result, f)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])

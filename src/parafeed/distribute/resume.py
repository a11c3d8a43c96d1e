"""Checkpointing a data-parallel run's input, and resuming it on the same or on another number of replicas.

The global sample order is the input before ``distribute``'s split: with the RECORD and DATA splits, replica ``r``
of ``n`` takes samples ``r, r + n, r + 2n ...`` of it, so after ``steps`` steps of per-replica batches of ``b`` the
replicas together have consumed exactly its first ``steps * b * n`` samples, whatever ``n`` is. A resume on the same
replicas restores every step's exact state; an elastic resume on ``m`` replicas starts the new split at that
global position (``distribute(..., start=samples)``), so no sample is repeated or skipped.

Example:
    >>> state = pf.distribute.save_state(it, steps=120)  # with the model checkpoint, as JSON
    >>> ds = make_pipeline(num_replicas=m, replica_id=r, start=state["samples"])  # on m replicas
    >>> it = pf.distribute.resume(ds, state)
"""

from __future__ import annotations

from typing import Any

from parafeed.dataset import Dataset
from parafeed.errors import StateError
from parafeed.iterator import DatasetIterator


def _plan(dataset: Dataset) -> Any:
    from parafeed.distribute.sharding import DistributedDataset

    todo = [dataset]
    while todo:
        node = todo.pop()
        if isinstance(node, DistributedDataset):
            return node.plan
        todo.extend(node._parents)
    return None


def samples_per_step(dataset: Dataset) -> int:
    """Samples of the global order one training step consumes: the per-replica batch times the replicas."""
    from parafeed.ops.batch import BatchDataset
    from parafeed.ops.padded_batch import PaddedBatchDataset

    plan = _plan(dataset)
    node, batch = dataset, 1
    while len(node._parents) == 1:  # the last batch step of the chain
        if isinstance(node, (BatchDataset, PaddedBatchDataset)):
            batch = node._batch_size
            break
        node = node._parents[0]
    return batch * (plan.num_replicas if plan is not None else 1)


def save_state(iterator: DatasetIterator, steps: int) -> dict:
    """What to save with a model checkpoint after ``steps`` steps (elements taken from ``iterator``): its exact
    state, and the global position for an elastic resume. JSON-serialisable."""
    pipeline = getattr(iterator, "_pipeline", None)
    if pipeline is None or pipeline.dataset is None:
        raise StateError("save_state(): pass the iterator returned by iter(dataset)")
    plan = _plan(pipeline.dataset)
    steps = getattr(iterator, "_steps_before", 0) + int(steps)  # counted from the epoch's start
    return {
        "loader": iterator.get_state(), "steps": steps,
        "samples": (plan.start if plan is not None else 0) + steps * samples_per_step(pipeline.dataset),
        "num_replicas": plan.num_replicas if plan is not None else 1,
    }  # fmt: skip


def resume(dataset: Dataset, state: dict) -> DatasetIterator:
    """An iterator of ``dataset`` that goes on from ``state`` (from :func:`save_state`).

    On the same replicas it restores the exact state. Built with ``distribute(..., start=state["samples"])`` (on
    any number of replicas) it starts after the samples consumed before, with the saved shuffle seeds.
    """
    plan = _plan(dataset)
    it = iter(dataset)
    if plan is None or plan.start == 0:
        if plan is not None and plan.num_replicas != state["num_replicas"]:
            it.close()
            raise StateError(
                f"resume(): the state was saved on {state['num_replicas']} replicas and this pipeline has "
                f"{plan.num_replicas}; build it with distribute(..., start={state['samples']}) for an elastic resume"
            )
        it.set_state(state["loader"])
        it._steps_before = state["steps"]
        return it
    if plan.start != state["samples"]:
        it.close()
        raise StateError(
            f"resume(): the pipeline starts at sample {plan.start} but the state was saved after {state['samples']}; "
            f"build it with distribute(..., start={state['samples']})"
        )
    _check_elastic(dataset)
    from parafeed.checkpoint import restore_seeds

    restore_seeds(it._pipeline, state["loader"])
    return it


def _check_elastic(dataset: Dataset) -> None:
    """Steps after the split must hold no element from one step to the next, or the position depends on n."""
    from parafeed.distribute.balance import EqualStepsDataset
    from parafeed.distribute.sharding import DistributedDataset, ReplicaShardDataset
    from parafeed.ops.batch import BatchDataset
    from parafeed.ops.map import MapDataset
    from parafeed.ops.padded_batch import PaddedBatchDataset
    from parafeed.ops.prefetch import PrefetchDataset

    allowed = (BatchDataset, PaddedBatchDataset, MapDataset, PrefetchDataset, EqualStepsDataset, DistributedDataset)
    node = dataset
    while not isinstance(node, ReplicaShardDataset):
        if (not isinstance(node, allowed) and type(node).__name__ != "PassThroughDataset") or len(node._parents) != 1:
            raise StateError(
                f"resume(): an elastic resume needs the steps after distribute() to be map, batch and prefetch, but "
                f"there is a {type(node).__name__}; move it before distribute() so that the global order does not "
                "depend on the number of replicas"
            )
        node = node._parents[0]

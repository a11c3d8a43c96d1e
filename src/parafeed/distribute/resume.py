"""Checkpointing a training run's input, and resuming it on the same or on another number of replicas.

The global sample order is the input before ``distribute``'s split: with the RECORD and DATA splits, replica ``r``
of ``n`` takes samples ``r, r + n, r + 2n ...`` of it (a seeded shuffle before the split included), so after
``steps`` steps of per-replica batches of ``b`` the replicas together have consumed exactly its first
``steps * b * n`` samples, whatever ``n`` is. A resume on the same replica restores its exact state; a resume on
another replica count (or another replica's state) starts the new split at that global position, for that pass
only, so no sample is repeated or skipped and later epochs are whole again.

Example:
    >>> state = pf.distribute.save_state(it, steps=120)  # with the model checkpoint, as JSON
    >>> ds = make_pipeline(num_replicas=m, replica_id=r)  # on any number of replicas
    >>> it = pf.distribute.resume(ds, state)              # this epoch's rest; iter(ds) for the next ones
"""

from __future__ import annotations

from typing import Any

from parafeed.core import graph
from parafeed.core.dataset import Dataset, iterate
from parafeed.core.iterator import DatasetIterator, ElementView, ResumePoint, eager
from parafeed.errors import StateError


def _plan(dataset: Dataset) -> Any:
    from parafeed.distribute.replica_split import DistributedDataset

    found = graph.find(dataset, DistributedDataset, into_sources=False)
    return found[0].plan if found else None


def samples_per_step(dataset: Dataset) -> int:
    """Samples of the global order one training step consumes: the per-replica batch times the replicas."""
    plan = _plan(dataset)
    batching = graph.batching_step(dataset)
    batch = batching.batch_size if batching is not None and batching.batch_size else 1
    return batch * (plan.num_replicas if plan is not None else 1)


def save_state(iterator: DatasetIterator, steps: int) -> dict:
    """What to save with a model checkpoint after ``steps`` steps (elements taken from ``iterator`` in this pass):
    its exact state, and the global position for a resume on other replicas. JSON-serialisable."""
    from parafeed.distribute.elastic import encode

    run = iterator.run
    if run is None:
        raise StateError("save_state(): pass the iterator returned by iter(dataset) (or resume())")
    plan = _plan(run.dataset)
    resumed = run.resumed
    return {
        "loader": iterator.get_state(),
        "steps": resumed.steps + int(steps),  # counted from the epoch's start
        "samples": resumed.samples + int(steps) * samples_per_step(run.dataset),
        "num_replicas": plan.num_replicas if plan is not None else 1,
        "replica_id": plan.replica_id if plan is not None else 0,
        # how this pass's split was dealt (a resume on other replicas of an earlier one)
        "pass": {"start": resumed.start, "begun": resumed.begun,
                 "rest": None if resumed.rest is None else encode(resumed.rest)},
    }  # fmt: skip


def resume(dataset: Dataset, state: dict | list[dict], numpy: bool = False) -> DatasetIterator:
    """An iterator of ``dataset`` that goes on from ``state`` (from :func:`save_state`) to the end of its epoch,
    handing out what ``iter(dataset)`` does (Tensors), or with ``numpy`` the plain NumPy values (what the adapters
    take).

    On the replica that saved it, the exact state is restored. On another replica count (or from another replica's
    state), the split begins at the saved global position for this pass, with the saved shuffle seeds and
    iteration; iterate ``dataset`` again for the following epochs (or start them with :func:`next_run`).

    ``state`` may also be the list of every replica's state saved at the same step: then any split (FILE,
    ``balance="labels"``) and a filter or shuffle after it resume on any number of replicas, the rest of the epoch
    dealt again (:mod:`parafeed.distribute.elastic`).
    """
    it = _resumed(dataset, state)
    return it if numpy else ElementView(it, eager)


def _resumed(dataset: Dataset, state: dict | list[dict]) -> DatasetIterator:
    from parafeed.distribute.elastic import check_states, pass_point, rest_of_epoch

    plan = _plan(dataset)
    states = check_states(state) if not isinstance(state, dict) else [state]
    n, r = (plan.num_replicas, plan.replica_id) if plan is not None else (1, 0)
    own = [s for s in states if (s["num_replicas"], s.get("replica_id", r)) == (n, r)]
    if plan is None or own:  # this replica's own state: restore it exactly
        mine = own[0] if own else states[0]
        it = iterate(dataset, resumed=pass_point(mine))
        try:
            it.set_state(mine["loader"])
        except BaseException:
            it.close()
            raise
        return it
    first = states[0]
    samples, steps = int(first["samples"]), int(first["steps"])
    if len(states) > 1 or int(first["num_replicas"]) == 1:
        rest = rest_of_epoch(dataset, states)
        return iterate(dataset, run=first["loader"].get("run"), resumed=ResumePoint(samples, steps, rest=rest,
                                                                                     begun=steps))  # fmt: skip
    if pass_point(first).rest is not None:
        raise StateError(
            "resume(): this state was saved in an epoch already resumed on another number of replicas; resume it on "
            "yet another number from every replica's state (a list of the states saved at the same step)"
        )
    _check_elastic(dataset, plan)
    return iterate(dataset, run=first["loader"].get("run"), resumed=ResumePoint(samples, steps, start=samples,
                                                                                 begun=steps))  # fmt: skip


class Epochs:
    """The iterators of a dataset's successive epochs: the first goes on from a saved state (when given), the next
    ones start as the uninterrupted run's would have (its next iteration and seeds: the same shuffle orders).

    Example:
        >>> epochs = pf.checkpoint.Epochs(ds, state)  # state from save_state, or None on a fresh start
        >>> for epoch in range(first_epoch, 10):
        ...     for step, batch in enumerate(epochs.next(), 1):
        ...         train(batch)
    """

    def __init__(
        self, dataset: Dataset, state: dict | list[dict] | None = None, run: dict | None = None, numpy: bool = False
    ):
        self._dataset, self._state, self._run, self._numpy = dataset, state or None, run, numpy
        self._last: DatasetIterator | None = None

    def upcoming(self) -> dict | None:
        """The run state the next epoch starts with, for a checkpoint taken between epochs (None: the dataset's
        next iteration)."""
        return next_run(self._last) if self._last is not None else self._run

    def next(self) -> DatasetIterator:
        """The next epoch's iterator: its elements as ``iter(dataset)`` gives them, or with ``numpy`` plain NumPy."""
        state, self._state = self._state, None
        it = _resumed(self._dataset, state) if state else iterate(self._dataset, run=self.upcoming())
        self._last = it if self._numpy else ElementView(it, eager)
        return self._last


def next_run(iterator: DatasetIterator) -> dict:
    """The run state that starts the epoch after ``iterator``'s as the uninterrupted run would have (its next
    iteration, with its seeds): pass it to :func:`parafeed.core.dataset.iterate` (adapters do, after a resume)."""
    run = iterator.run
    if run is None:
        raise StateError("next_run(): pass the iterator returned by iter(dataset) (or resume())")
    return {**run.state(), "iteration": run.iteration + 1}


def _check_elastic(dataset: Dataset, plan: Any) -> None:
    """A resume at a global position needs one global order, dealt round-robin, and steps after the split that hold
    no element from one training step to the next (else the position depends on the number of replicas)."""
    from parafeed.distribute.replica_split import ReplicaShardDataset

    if not plan.global_order:
        raise StateError(
            f"resume(): the state was saved on {plan.num_replicas} replicas with a {plan.policy} split that has no "
            "global order to resume in from one replica's state on another number of replicas: resume from every "
            "replica's state (a list of the states each saved at the same step), or use policy RECORD or DATA with "
            "any shuffle before distribute() seeded"
        )
    split = graph.down(
        dataset, lambda n: not isinstance(n, ReplicaShardDataset) and n.kind in (graph.ONE_TO_ONE, graph.BATCHING)
    )
    if not isinstance(split, ReplicaShardDataset):
        raise StateError(
            f"resume(): a resume on another number of replicas from one replica's state needs the steps after "
            f"distribute() to be map, batch, prefetch and equal_steps, but there is a {type(split).__name__}: "
            "resume from every replica's state (a list of the states each saved at the same step), or move it "
            "before distribute()"
        )

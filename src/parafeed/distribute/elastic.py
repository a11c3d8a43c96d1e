"""The rest of an epoch, resumed on another number of replicas, for every split and for steps that drop or hold
elements after it (``filter``, ``shuffle``).

**What the rest is.** The elements the split dealt that no replica has trained on: for each replica of the saved
run, the elements of its share it had not yet pulled past the steps after the split, plus those a ``shuffle`` after
the split still held. Elements a ``filter`` dropped count either way (dropped again). The rest's elements are named
by ids: indices of the input before the split (DATA), of the reader's records in file order (RECORD, FILE,
``balance="labels"``) or of the arrays' rows (labels on ``from_tensor_slices``).

**How it is found.** Every replica's saved state is restored into that replica's pipeline (rebuilt from the same
``distribute`` arguments) while the filters record the input index of what they pass and the shuffle says what it
holds (:class:`parafeed.core.positions.Consumption`); from the batches trained, ``steps * batch_size`` elements at the
batch's input, the count is mapped down to the split. Restoring reads the buffered elements again, as any restore
does; the rest is never iterated.

**How it is dealt.** The rest keeps the global order (DATA, RECORD: the order of the run's split, seeded shuffles
before it included; FILE and labels: file order) and is dealt round-robin to the new replicas, or by label with
``balance="labels"`` (every class within one sample per replica). The steps after the split then run on each new
share (a shuffle after it shuffles the new share with the saved seeds). The next epochs are whole again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core import graph
from parafeed.core.dataset import Dataset, iterate
from parafeed.core.graph import BATCHING, ONE_TO_ONE
from parafeed.core.iterator import ResumePoint
from parafeed.core.positions import Consumption
from parafeed.errors import InvalidArgumentError, StateError
from parafeed.ops.filter import FilterDataset
from parafeed.ops.shuffle import ShuffleDataset


def rest_of_epoch(dataset: Dataset, states: list[dict]) -> np.ndarray:
    """The ids of the epoch's rest (in the global order) from every replica's state saved at the same step."""
    from parafeed.distribute.replica_split import DistributedDataset

    found = graph.find(dataset, DistributedDataset, into_sources=False)
    if not found or found[0].rebuild is None or found[0].plan.read is None:
        raise StateError(
            "resume(): an elastic resume deals the rest of the epoch by distribute(); this pipeline has no "
            "distribute() step with a split (policy OFF does not split)"
        )
    split, rebuild = found[0], found[0].rebuild
    n = int(states[0]["num_replicas"])
    replicas = sorted(int(s["replica_id"]) for s in states)
    if replicas != list(range(n)) or any(int(s["num_replicas"]) != n for s in states):
        raise StateError(
            f"resume(): give the states of all {n} replicas of the saved run (from pf.distribute.save_state on each), "
            f"got replicas {replicas}"
        )
    if len({int(s["steps"]) for s in states}) > 1:
        raise StateError(
            f"resume(): the replicas' states were saved at different steps ({sorted({s['steps'] for s in states})}); "
            "save them at the same training step"
        )
    pending: list[tuple[np.ndarray, np.ndarray]] = []
    for state in sorted(states, key=lambda s: int(s["replica_id"])):
        old = graph.replace(dataset, split, rebuild(n, int(state["replica_id"])))
        pending.append(_pending(old, state))
    ranks = np.concatenate([r for r, _ in pending])
    ids = np.concatenate([i for _, i in pending])
    return ids[np.argsort(ranks, kind="stable")]


def pass_point(state: dict) -> ResumePoint:
    """The :class:`ResumePoint` of the pass a state was saved in (how its split was dealt)."""
    run_pass = state.get("pass") or {}
    rest = run_pass.get("rest")
    return ResumePoint(
        int(state["samples"]), int(state["steps"]), int(run_pass.get("start", 0)),
        None if rest is None else decode(rest), int(run_pass.get("begun", 0)),
    )  # fmt: skip


def _pending(old: Dataset, state: dict) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, ids) of the elements of one saved replica's share it had not consumed."""
    from parafeed.distribute.replica_split import ReplicaShardDataset

    shard = graph.find(old, ReplicaShardDataset, into_sources=False)[0]
    chain = graph.chain(old, shard)
    if chain is None:
        raise StateError("resume(): the steps after distribute() must form a single chain for an elastic resume")
    batches = [k for k, node in enumerate(chain) if node.kind == BATCHING]
    if not batches:
        raise StateError("resume(): an elastic resume counts batches: the pipeline needs a batch() after distribute()")
    for node in chain[batches[-1] + 1 :] + chain[: batches[-1]]:
        if node.kind != ONE_TO_ONE and node.kind != BATCHING and not isinstance(node, (FilterDataset, ShuffleDataset)):
            raise StateError(
                f"resume(): on another number of replicas the rest of the epoch can be found after map, filter, "
                f"shuffle, batch, prefetch and equal_steps, but not after a {type(node).__name__} between "
                "distribute() and the end of the pipeline; move it before distribute()"
            )
    point = pass_point(state)
    consumption = Consumption()
    it = iterate(old, run=state["loader"].get("run"), resumed=point, tracking=consumption)
    try:
        it.set_state(state["loader"])
        ids, ranks = consumption.share
        batch = getattr(chain[batches[-1]], "batch_size", None) or 1
        first, held = _consumed(chain[batches[-1] + 1 :], consumption, (point.steps - point.begun) * batch)
    finally:
        it.close()
    keep = np.zeros(len(ids), bool)
    keep[min(first, len(ids)) if first is not None else len(ids) :] = True
    keep[np.asarray(held, dtype=np.int64)] = True
    return ranks[keep], ids[keep]


def _consumed(below: list[Dataset], consumption: Consumption, taken: int) -> tuple[int | None, list[int]]:
    """Where the split's share stands (elements before it consumed; None: all) and the indices of those still held,
    from ``taken`` elements at the batch's input, mapped down through the steps ``below`` it."""
    first: int | None = taken
    held: list[int] = []
    for node in below:
        if isinstance(node, FilterDataset):
            step = consumption[node]
            first = None if first is None else step.input_end(first)
            held = [step.input_index(h) for h in held]
        elif isinstance(node, ShuffleDataset):
            if held:
                raise StateError("resume(): an elastic resume supports one shuffle after distribute(), not two")
            first, held = consumption[node].held()
    return first, held


def encode(ids: np.ndarray) -> list[list[int]]:
    """``ids`` as runs ``[first, length]`` of consecutive increasing ids (JSON, small for a mostly whole rest)."""
    ids = np.asarray(ids, dtype=np.int64)
    if not len(ids):
        return []
    breaks = np.flatnonzero(np.diff(ids) != 1) + 1
    starts = np.concatenate([[0], breaks])
    lengths = np.diff(np.concatenate([starts, [len(ids)]]))
    return [[int(ids[s]), int(k)] for s, k in zip(starts, lengths)]


def decode(runs: list[list[int]]) -> np.ndarray:
    """The ids :func:`encode` wrote."""
    if not runs:
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(a, a + k, dtype=np.int64) for a, k in runs])


def check_states(states: Any) -> list[dict]:
    """``states`` as a non-empty list of :func:`save_state` dicts."""
    if not isinstance(states, (list, tuple)) or not states or not all(isinstance(s, dict) for s in states):
        raise InvalidArgumentError(
            f"resume(): give one state (a dict from pf.distribute.save_state) or every replica's, got {type(states)}"
        )
    return list(states)

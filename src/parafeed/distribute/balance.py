"""Balance between replicas: equal steps, class-stratified shares, and batch sizes weighted by replica speed.

* :class:`EqualStepsDataset` (``ds.equal_steps(policy)``): every replica yields exactly the same number of batches
  per epoch, so a synchronous strategy never waits at the end of an epoch for a replica that has run out (the
  MultiWorkerMirroredStrategy hang of tensorflow#33531, #36153). ``pad`` (the default) keeps every sample once and
  fills short replicas with repeated rows of weight 0; ``drop`` stops every replica at the shortest one's count;
  ``repeat`` lets short replicas start their share again.
* :func:`deal`: the records of every class dealt round-robin between parts: each part's count of every class is
  within 1 of the ideal share, and part totals are within 1 (used by ``distribute(balance="labels")`` and by
  ``parafeed convert``).
* :func:`count_batches`: every replica's batch count by one pass, for ``equal_steps(steps=...)`` after steps whose
  counts cannot be known in advance (``filter``, ``group_by_window``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from parafeed.core import graph
from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset
from parafeed.core.graph import BATCHING
from parafeed.core.iterator import DatasetIterator, build_in, current_scope
from parafeed.core.positions import element_at, position, snapshot
from parafeed.distribute.weights import weighted, with_weights
from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import TensorSpec, map_structure

EQUAL_STEPS_POLICIES = ("pad", "drop", "repeat")


def deal(labels: Sequence[int] | np.ndarray | None, parts: int, seed: int, n: int | None = None) -> list[np.ndarray]:
    """Indices per part: every class dealt round-robin (the deal going on across classes), shuffled by ``seed``.

    Each part's count of each class is within 1 of ``count / parts``, and part sizes are within 1.
    """
    rng = np.random.default_rng(seed)
    if labels is None:
        order = rng.permutation(cast(int, n))  # (given without labels)
    else:
        values = np.asarray(labels)
        groups = [rng.permutation(np.flatnonzero(values == c)) for c in np.unique(values)]
        order = np.concatenate(groups) if groups else np.zeros(0, np.int64)
    return [order[p::parts] for p in range(parts)]


# ---------------------------------------------------------------------------------------------- equal steps


class EqualStepsDataset(Dataset):
    """Exactly ``steps`` batches per epoch on every replica (see the module docs for the policies).

    A pass resumed on another number of replicas (``pf.distribute.resume``) runs the steps left in its epoch: counted
    from the replicas' shares of the rest of the global order, or ``steps`` minus the steps taken before.
    """

    kind = BATCHING

    def __init__(self, parent: Dataset, policy: str = "pad", steps: int | None = None, name: str | None = None):
        super().__init__((parent,), name=name)
        if policy not in EQUAL_STEPS_POLICIES:
            raise InvalidArgumentError(f"equal_steps(): `policy` must be one of {EQUAL_STEPS_POLICIES}, got {policy!r}")
        self._policy = policy
        counts = parent._replica_counts()
        # counts not known before the epoch: the replicas agree step by step (distribute/agreed_steps.py)
        self._replica: tuple[int, int] | None = None
        if steps is None and counts is None:
            plans = [node.plan for node in graph.find(parent, lambda n: hasattr(getattr(n, "plan", None), "policy"))]
            if not plans:
                raise InvalidArgumentError(
                    "equal_steps(): the number of batches is not known here (a step such as filter, interleave or "
                    "group_by_window changes counts in ways only a full pass reveals) and the pipeline has no "
                    "distribute() step to say which replica it is. Split it with distribute(), or pass `steps=` "
                    "(the same on every replica), e.g. max(pf.distribute.count_batches(make_pipeline, "
                    "num_replicas)) for policy 'pad' or 'repeat', min(...) for 'drop'."
                )
            self._replica = (plans[0].replica_id, plans[0].num_replicas)
        if steps is not None and (not isinstance(steps, int) or steps < 0):
            raise InvalidArgumentError(f"equal_steps(): `steps` must be an int >= 0, got {steps!r}")
        self._given_steps = steps
        self._steps = UNKNOWN if self._replica is not None else self._steps_from(counts, 0)
        self._num_replicas = len(counts) if counts is not None else None
        batching = graph.batching_step(parent)
        self.batch_size = batching.batch_size if batching is not None else None

    @property
    def agrees(self) -> bool:
        """Whether the replicas agree at run time how many steps the epoch has (counts not known before it)."""
        return self._replica is not None

    def _steps_from(self, counts: list[int] | None, steps_taken: int) -> int:
        if self._given_steps is not None:
            return max(0, self._given_steps - steps_taken)
        known = cast("list[int]", counts)  # (known without `steps`: __init__ checks)
        return min(known) if self._policy == "drop" else max(known)

    def _make_iterator(self) -> DatasetIterator:
        if self._replica is not None:
            from parafeed.distribute.agreed_steps import AgreedStepsIterator, zeros_of
            from parafeed.distribute.agreement import agreement_for

            agreement = agreement_for(*self._replica)
            zeros = zeros_of(self._parents[0].element_spec, "equal_steps(policy='pad')")
            return AgreedStepsIterator(self._parents[0], self._policy, self.batch_size or 0, agreement, zeros)
        steps, run = self._steps, current_scope().run
        if run is not None and run.resumed.elastic and current_scope().top_level:  # an epoch's rest, other replicas
            start = run.resumed if run.resumed.rest is not None else run.start
            steps = self._steps_from(self._parents[0]._replica_counts(start), run.resumed.begun)
        return _EqualStepsIterator(self._parents[0], steps, self._policy, self.batch_size or 0)

    def _element_spec(self) -> Any:
        spec = self._parents[0].element_spec
        if self._policy != "pad":
            return spec
        rows = self.batch_size  # padding makes every batch full when the batch size is known
        spec = map_structure(lambda s: TensorSpec((rows, *s.shape[1:]), s.dtype) if s.shape else s, spec)
        return with_weights(spec, TensorSpec((rows,), np.float32))

    def _cardinality(self) -> int:
        return self._steps

    def _replica_counts(self, start: int = 0) -> list[int] | None:
        if self._num_replicas is None:
            return None
        steps = self._steps if not start else self._steps_from(self._parents[0]._replica_counts(start), 0)
        return [steps] * self._num_replicas


def count_batches(make_pipeline: Callable[[int, int], Dataset], num_replicas: int) -> list[int]:
    """Every replica's number of elements (batches), counted by iterating ``make_pipeline(num_replicas, r)`` once
    for each replica ``r``; the same on every worker, so each can compute ``equal_steps``' ``steps`` from it."""
    counts = []
    for r in range(num_replicas):
        ds = make_pipeline(num_replicas, r)
        if not isinstance(ds, Dataset):
            raise InvalidArgumentError(
                f"count_batches(): make_pipeline must return a pf.Dataset, got {type(ds).__name__}"
            )
        known = int(ds.cardinality())
        if known == INFINITE:
            raise InvalidArgumentError(f"count_batches(): replica {r}'s pipeline is infinite (a repeat())")
        counts.append(known if known >= 0 else sum(1 for _ in ds.as_numpy_iterator()))
    return counts


class _EqualStepsIterator(DatasetIterator):
    def __init__(self, dataset: Dataset, steps: int, policy: str, batch_size: int):
        super().__init__()
        self._dataset = dataset
        self._scope = current_scope()
        self._it: DatasetIterator | None = dataset._iter()
        self._left = steps
        self._policy = policy
        self._batch_size = batch_size  # short batches are filled up to it (0: to the largest seen)
        self._last: Any = None
        self._passes = 0  # new passes of the input begun by policy="repeat"
        self._at: tuple = (None, None)  # the input's state before the last batch (to pad with it after a restore)

    def __next__(self) -> Any:
        if self._left <= 0:
            self.close()
            raise StopIteration
        self._left -= 1
        x = self._pull()
        if self._policy != "pad":
            return x
        if x is None:  # this replica has run out: a batch of its last rows, all of weight 0
            return with_weights(self._last[0], np.zeros(self._batch_size, np.float32))
        out, self._batch_size, filled = weighted(x, self._batch_size)
        self._last = (filled,)
        return out

    def _pull(self) -> Any:
        """The next input batch; for ``repeat`` a new pass when the input ends; None when ``pad`` runs out."""
        if self._it is not None:
            try:
                before = snapshot(self._it) if self._policy == "pad" else self._at
                x = next(self._it)
                self._at = before
                return x
            except StopIteration:
                self._it.close()
                self._it = None
        if self._policy == "repeat":
            self._passes += 1
            self._it = build_in(self._scope, self._dataset, self._passes)
            try:
                return next(self._it)
            except StopIteration:
                raise InvalidArgumentError("equal_steps(policy='repeat'): this replica has no data at all") from None
        if self._policy == "drop":
            raise InvalidArgumentError(
                "equal_steps(policy='drop'): this replica ran out before `steps` batches; `steps` must not exceed the "
                "shortest replica's count"
            )
        if self._last is None:
            raise InvalidArgumentError(
                "equal_steps(policy='pad'): this replica has no data at all, so there is nothing to pad with; use "
                "fewer replicas than records"
            )
        return None

    def _get_state(self) -> dict:
        last = None
        if self._policy == "pad" and self._last is not None:
            at, error = self._at
            last = position(at, 0, error)["at"]
        current = None if self._it is None else self._it.get_state()
        return {"left": self._left, "batch_size": self._batch_size, "passes": self._passes, "current": current,
                "last": last}  # fmt: skip

    def _set_state(self, state: dict) -> None:
        self.close()
        self._left, self._batch_size = int(state["left"]), int(state["batch_size"])
        self._passes = int(state["passes"])
        if state["last"] is not None:  # read the last batch again: a replica that ran out pads with its rows
            last = element_at(self._scope, self._dataset, state["last"], self._passes or None)
            self._last, self._at = (weighted(last, self._batch_size)[2],), (state["last"], None)
        if state["current"] is not None:
            self._it = build_in(self._scope, self._dataset, self._passes or None)
            self._it.set_state(state["current"])

    def close(self) -> None:
        if self._it is not None:
            self._it.close()
            self._it = None

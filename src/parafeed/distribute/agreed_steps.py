"""``equal_steps()`` when the replicas' batch counts are not known: the replicas agree step by step
(:mod:`parafeed.distribute.agreement`) whether any of them (``pad``, ``repeat``) or all of them (``drop``) still
have a batch of the epoch.

* ``pad``: the epoch goes on while any replica has a batch; a replica that has run out gives a batch of weight 0 (its
  last batch's rows, or zeros of the element spec when its share was empty). Every sample once.
* ``drop``: the epoch ends for all at the first step a replica has no batch for.
* ``repeat``: the epoch goes on while any replica is in its first pass; a replica past it starts its share again.

Each replica looks one batch ahead: it votes on the next step before it hands out the current batch, so the vote
overlaps the training step. A saved state is the position of the batch looked ahead (and the last real batch, to pad
with): restored on every replica at the same step, the votes start again from there.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from parafeed.core.iterator import DatasetIterator, build_in, current_scope
from parafeed.core.positions import element_at, position, snapshot
from parafeed.distribute.agreement import Agreement
from parafeed.distribute.weights import weighted, with_weights
from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import TensorSpec, map_structure


class AgreedStepsIterator(DatasetIterator):
    def __init__(self, dataset: Any, policy: str, batch_size: int, agreement: Agreement, zeros: Any):
        super().__init__()
        self._dataset = dataset
        self._scope = current_scope()
        self._policy = policy
        self._agreement = agreement
        self._zeros = zeros  # rows -> a batch of zeros of the element spec (what an empty share pads with)
        self._batch_size = batch_size  # short batches are filled up to it (0: to the largest seen)
        self._it: DatasetIterator | None = dataset._iter()
        self._passes = 0  # new passes of the input begun by policy="repeat"
        self._last: Any = None  # the last real batch, filled up: what this replica pads with once it has run out
        self._last_at: tuple = (None, None)  # the input's state before it
        self._next: tuple[tuple, Any, bool] | None = None  # (the input's state before it, the next batch, in pass 1)
        self._ballot: Any = None  # the vote on the next step, in flight
        self._ended = False

    def __next__(self) -> Any:
        if self._ended:
            raise StopIteration
        if self._ballot is None:
            self._look_ahead()
        have = self._agreement.count(self._ballot)
        self._ballot = None
        if have == 0 or (self._policy == "drop" and have < self._agreement.replicas):
            self._ended = True
            self.close()
            raise StopIteration
        assert self._next is not None
        at, x, _ = self._next
        self._look_ahead()  # the next step's vote travels while the caller trains on this batch
        if self._policy != "pad":
            return x
        if x is None:  # this replica has run out: a batch of weight 0
            if self._last is None:
                self._last = self._zeros(self._batch_size)
            return with_weights(self._last, np.zeros(self._batch_size, np.float32))
        out, self._batch_size, self._last = weighted(x, self._batch_size)
        self._last_at = at
        return out

    def _look_ahead(self) -> None:
        """Take the next batch (None when this replica has run out) and vote on whether it has one for the step."""
        self._next = self._pull()
        _, x, first = self._next
        self._ballot = self._agreement.vote(x is not None and first)

    def _pull(self) -> tuple[tuple, Any, bool]:
        """(the input's state before it, the next batch of this replica's share, whether it is from the first
        pass); for ``repeat`` past the first pass, from a new pass; no batch (None) when the share has run out."""
        if self._it is not None:
            at = snapshot(self._it)
            try:
                return at, next(self._it), self._passes == 0
            except StopIteration:
                self._it.close()
                self._it = None
        if self._policy != "repeat":
            return (None, None), None, False
        self._passes += 1
        self._it = build_in(self._scope, self._dataset, self._passes)
        at = snapshot(self._it)
        try:
            return at, next(self._it), False
        except StopIteration:  # an empty share: nothing to repeat (it votes no; the others go on)
            self._it.close()
            self._it = None
            return (None, None), None, False

    def _get_state(self) -> dict:
        if self._next is None:  # (no batch looked ahead yet)
            at = None if self._it is None else self._it.get_state()
        else:
            (state, error), x, _ = self._next
            at = None if x is None else position(state, 0, error)["at"]
        last = None
        if self._last_at[0] is not None or self._last_at[1] is not None:
            last = position(self._last_at[0], 0, self._last_at[1])["at"]
        return {"at": at, "ended": self._ended, "passes": self._passes, "batch_size": self._batch_size,
                "last": last}  # fmt: skip

    def _set_state(self, state: dict) -> None:
        if self._it is not None:
            self._it.close()
            self._it = None
        self._ended = bool(state["ended"])
        self._passes, self._batch_size = int(state["passes"]), int(state["batch_size"])
        self._ballot = self._next = None
        if state["last"] is not None:  # the last real batch, read again: a replica that runs out pads with it
            last = element_at(self._scope, self._dataset, state["last"])
            _, self._batch_size, self._last = weighted(last, self._batch_size)
            self._last_at = (state["last"], None)
        if state["at"] is not None:
            self._it = build_in(self._scope, self._dataset, self._passes or None)
            self._it.set_state(state["at"])

    def close(self) -> None:
        if not self._ended:  # closed before the epoch's end: the others' votes cannot complete
            self._ended = True
            self._agreement.leave()
        if self._it is not None:
            self._it.close()
            self._it = None


def zeros_of(spec: Any, step: str) -> Any:
    """``rows`` -> a batch of zeros of the batched element ``spec`` (every dimension but the first known)."""

    def make(rows: int) -> Any:
        def leaf(s: TensorSpec) -> np.ndarray:
            if s.shape is None or any(d is None for d in s.shape[1:]) or not rows:
                raise InvalidArgumentError(
                    f"{step}: this replica's share is empty and its batches' shape {s.shape} is not fully known, so "
                    "there is nothing to pad with; give the batch a fixed shape (batch(..., drop_remainder=True), "
                    "padded_batch with padded_shapes) or use fewer replicas"
                )
            return np.zeros((rows, *cast("tuple[int, ...]", s.shape[1:])), s.dtype)

        return map_structure(leaf, spec)

    return make

"""Replicas agreeing at run time how many of them still have a batch: ``equal_steps()`` when counts are not known.

Before every step each replica votes whether it has a batch for it; the vote is one small all-reduce (a sum) through
the training framework's own collectives, so every replica learns how many have one and all of them take the same
decision (go on, pad, or stop) at the same step. The vote for step ``t + 1`` is cast when step ``t``'s batch is
handed out, so it travels while the model trains on that batch.

* :class:`SoloAgreement`: one replica (nothing to agree on).
* :class:`TorchAgreement`: ``torch.distributed``'s process group (over gloo: the default group when it is gloo, else a
  gloo group made once, since the vote is a CPU tensor).

A replica that dies or hangs makes the others fail within ``AGREE_SECONDS`` with
:class:`~parafeed.errors.UnavailableError` (gloo reports a closed connection at once; a hung replica takes the whole
timeout), never a hang.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from parafeed.errors import InvalidArgumentError, UnavailableError

AGREE_SECONDS = 300.0  # how long a replica waits for the others' votes before it gives up


class Agreement(Protocol):
    replicas: int

    def vote(self, has_batch: bool) -> Any:
        """Cast this replica's vote for the next step; returns a handle for :meth:`count`."""

    def count(self, ballot: Any) -> int:
        """How many replicas voted that they have a batch (waits for every replica's vote)."""


class SoloAgreement:
    replicas = 1

    def vote(self, has_batch: bool) -> Any:
        return int(has_batch)

    def count(self, ballot: Any) -> int:
        return int(ballot)


_gloo_groups: dict[int, Any] = {}  # id(default group) -> the gloo group the votes go through


class TorchAgreement:
    """Votes through ``torch.distributed`` (see the module docs)."""

    def __init__(self, replica: int, replicas: int):
        import torch.distributed as dist

        self._dist = dist
        self.replicas = replicas
        self._replica = replica
        default = dist.group.WORLD
        if dist.get_backend() == "gloo":
            self._group = None
        else:  # (NCCL reduces GPU tensors only: the votes take a gloo group of the same ranks, made once)
            if id(default) not in _gloo_groups:
                _gloo_groups[id(default)] = dist.new_group(backend="gloo")
            self._group = _gloo_groups[id(default)]

    def vote(self, has_batch: bool) -> Any:
        import torch

        ballot = torch.tensor([int(has_batch)], dtype=torch.int64)
        return ballot, self._dist.all_reduce(ballot, group=self._group, async_op=True)

    def count(self, ballot: Any) -> int:
        import datetime

        tensor, work = ballot
        try:
            work.wait(timeout=datetime.timedelta(seconds=AGREE_SECONDS))
        except RuntimeError as err:
            raise UnavailableError(
                f"equal_steps(): replica {self._replica} of {self.replicas} got no vote from the other replicas on "
                f"whether they have a batch for the next step within {AGREE_SECONDS:.0f} s or the connection "
                f"broke ({type(err).__name__}: {str(err)[:300]}): a replica died, hung, or left the epoch early; "
                "every replica must iterate its equal_steps() pipeline to the end"
            ) from err
        return int(tensor.item())


def agreement_for(replica: int, replicas: int) -> Agreement:
    """How replica ``replica`` of ``replicas`` agrees with the others in this process."""
    if replicas == 1:
        return SoloAgreement()
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        if (dist.get_world_size(), dist.get_rank()) != (replicas, replica):
            raise InvalidArgumentError(
                f"equal_steps(): this pipeline is replica {replica} of {replicas}, but torch.distributed is rank "
                f"{dist.get_rank()} of {dist.get_world_size()}; distribute() by the process group (no arguments) or "
                "pass `steps=`"
            )
        return TorchAgreement(replica, replicas)
    raise InvalidArgumentError(
        f"equal_steps(): the batch counts of the {replicas} replicas are not known before the epoch (a filter, "
        "group_by_window or interleave of computed datasets comes after distribute()), so the replicas agree at run "
        "time whether each still has a batch, through torch.distributed: initialize its process group before "
        "iterating. Without one, pass `steps=` (the same on every replica), e.g. "
        "max(pf.distribute.count_batches(make_pipeline, num_replicas)) for 'pad' or 'repeat', min(...) for 'drop'"
    )

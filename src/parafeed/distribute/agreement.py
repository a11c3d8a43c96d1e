"""Replicas agreeing at run time how many of them still have a batch: ``equal_steps()`` when counts are not known.

Before every step each replica votes whether it has a batch for it; the vote is one small all-reduce (a sum) through
the training framework's own collectives, so every replica learns how many have one and all of them take the same
decision (go on, pad, or stop) at the same step. The vote for step ``t + 1`` is cast when step ``t``'s batch is
handed out, so it travels while the model trains on that batch.

* :class:`SoloAgreement`: one replica (nothing to agree on).
* :class:`LocalAgreement`: replicas in one process (MirroredStrategy's, through ``pf.adapters.tf``), in a group made
  by :func:`replicas_in_process`; each replica must be iterated on its own thread (the adapter does).
* :class:`TorchAgreement`: ``torch.distributed``'s process group (over gloo: the default group when it is gloo, else a
  gloo group made once, since the vote is a CPU tensor).

A replica that dies or hangs makes the others fail within ``AGREE_SECONDS`` with
:class:`~parafeed.errors.UnavailableError` (gloo reports a closed connection at once; a hung replica takes the whole
timeout), never a hang.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol, cast

from parafeed.errors import InvalidArgumentError, UnavailableError

AGREE_SECONDS = 300.0  # how long a replica waits for the others' votes before it gives up
POLL_SECONDS = 0.05  # how often a wait for votes checks whether its consumer closed


class Agreement(Protocol):
    replicas: int

    def vote(self, has_batch: bool) -> Any:
        """Cast this replica's vote for the next step; returns a handle for :meth:`count`."""

    def count(self, ballot: Any) -> int:
        """How many replicas voted that they have a batch (waits for every replica's vote)."""

    def leave(self) -> None:
        """This replica stops before the epoch's end (its iterator was closed): the others learn it when they can."""


class SoloAgreement:
    replicas = 1

    def vote(self, has_batch: bool) -> Any:
        return int(has_batch)

    def count(self, ballot: Any) -> int:
        return int(ballot)

    def leave(self) -> None:
        pass


class RestoredAgreement:
    """While a saved state is restored to find what it consumed (an elastic resume): the steps taken were taken, so
    every replica had a batch for each of them; no vote travels."""

    def __init__(self, replicas: int):
        self.replicas = replicas

    def vote(self, has_batch: bool) -> Any:
        return None

    def count(self, ballot: Any) -> int:
        return self.replicas

    def leave(self) -> None:
        pass


class LocalGroup:
    """The votes of replicas in one process: round ``k`` is complete when every replica has cast its ``k``-th."""

    def __init__(self, replicas: int):
        self.replicas = replicas
        self._changed = threading.Condition()
        self._rounds: dict[int, list[int]] = {}  # round -> [votes cast, votes that have a batch, counts read]
        self._left: set[int] = set()

    def cast(self, round_: int, has_batch: bool) -> None:
        with self._changed:
            votes = self._rounds.setdefault(round_, [0, 0, 0])
            votes[0] += 1
            votes[1] += int(has_batch)
            self._changed.notify_all()

    def count(self, round_: int, replica: int) -> int:
        deadline = time.monotonic() + AGREE_SECONDS
        with self._changed:
            votes = self._rounds.setdefault(round_, [0, 0, 0])
            while votes[0] < self.replicas:
                if self._left or time.monotonic() > deadline:
                    why = (
                        f"replica(s) {sorted(self._left)} closed their iterators before the epoch's end"
                        if self._left
                        else f"none for {AGREE_SECONDS:.0f} s: a replica's iterator stopped being read, or the "
                        "replicas are read one after the other on one thread; each needs its own"
                    )
                    raise UnavailableError(
                        f"equal_steps(): replica {replica} of {self.replicas} in this process got {votes[0]} of the "
                        f"{self.replicas} votes on whether each has a batch for the next step ({why}); every replica "
                        "must iterate its equal_steps() pipeline to the end"
                    )
                if stopped():  # this replica's own consumer closed (a prefetch thread waiting here)
                    raise UnavailableError("equal_steps(): the iterator was closed while waiting for the votes")
                self._changed.wait(POLL_SECONDS)
            votes[2] += 1
            if votes[2] == self.replicas:
                del self._rounds[round_]
            return votes[1]

    def leave(self, replica: int) -> None:
        """Replica ``replica`` closed its iterator before the epoch's end: the others' votes cannot complete."""
        with self._changed:
            self._left.add(replica)
            self._changed.notify_all()


class LocalAgreement:
    """Votes of replicas in one process (see :func:`replicas_in_process`)."""

    def __init__(self, group: LocalGroup, replica: int):
        self.replicas = group.replicas
        self._group, self._replica = group, replica
        self._round = 0

    def vote(self, has_batch: bool) -> Any:
        round_, self._round = self._round, self._round + 1
        self._group.cast(round_, has_batch)
        return round_

    def count(self, ballot: Any) -> int:
        return self._group.count(ballot, self._replica)

    def leave(self) -> None:
        self._group.leave(self._replica)


_local: contextvars.ContextVar[LocalGroup | None] = contextvars.ContextVar("parafeed_local_replicas", default=None)


@contextlib.contextmanager
def replicas_in_process(replicas: int) -> Iterator[LocalGroup]:
    """Iterators of ``equal_steps()`` pipelines made in this block agree through one group of ``replicas``
    in-process replicas (each read on its own thread). One block per epoch: its iterators form the group.

    Example:
        >>> with pf.distribute.replicas_in_process(2):
        ...     iterators = [iter(make_pipeline(2, r)) for r in range(2)]
    """
    token = _local.set(LocalGroup(replicas))
    try:
        yield cast(LocalGroup, _local.get())
    finally:
        _local.reset(token)


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
        tensor, work = ballot
        deadline = time.monotonic() + AGREE_SECONDS
        try:
            while not work.is_completed():  # (polled: a wait cannot be interrupted when the consumer closes)
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no answer in {AGREE_SECONDS:.0f} s")
                if stopped():
                    raise UnavailableError("equal_steps(): the iterator was closed while waiting for the votes")
                time.sleep(POLL_SECONDS / 50)
            work.wait()
        except RuntimeError as err:
            raise UnavailableError(
                f"equal_steps(): replica {self._replica} of {self.replicas} got no vote from the other replicas on "
                f"whether they have a batch for the next step within {AGREE_SECONDS:.0f} s or the connection "
                f"broke ({type(err).__name__}: {str(err)[:300]}): a replica died, hung, or left the epoch early; "
                "every replica must iterate its equal_steps() pipeline to the end"
            ) from err
        return int(tensor.item())

    def leave(self) -> None:
        pass  # (the others' all-reduce fails when this process exits, or after AGREE_SECONDS)


def stopped() -> bool:
    """Whether this thread produces for a consumer that has closed (see ``parallel.threads.stop_requested``)."""
    from parafeed.parallel.threads import stop_requested

    return stop_requested()


def agreement_for(replica: int, replicas: int) -> Agreement:
    """How replica ``replica`` of ``replicas`` agrees with the others in this process."""
    from parafeed.core.positions import tracking

    if replicas == 1:
        return SoloAgreement()
    if tracking() is not None:
        return RestoredAgreement(replicas)
    group = _local.get()
    if group is not None:
        if group.replicas != replicas:
            raise InvalidArgumentError(
                f"equal_steps(): this pipeline is replica {replica} of {replicas}, but it was made in a group of "
                f"{group.replicas} in-process replicas"
            )
        return LocalAgreement(group, replica)
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

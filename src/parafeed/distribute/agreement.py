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
* :class:`JaxAgreement`: ``jax.distributed``'s processes, through the job's coordination service.

A replica that dies or hangs makes the others fail within ``AGREE_SECONDS`` with
:class:`~parafeed.errors.UnavailableError` (gloo reports a closed connection at once; a hung replica takes the whole
timeout), never a hang.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
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
    """The votes of replicas in one process: round ``k`` is complete when every replica has cast its ``k``-th.

    ``combine`` (the replicas of other processes: MultiWorkerMirroredStrategy's workers) turns the sum of this
    process's votes of a round into the sum over all ``replicas``; it runs on a thread of its own, so the vote travels
    while the model trains.
    """

    def __init__(self, replicas: int, local: int | None = None, combine: Callable[[int, int], int] | None = None):
        self.replicas = replicas
        self.local = replicas if local is None else local
        self._combine = combine
        self._changed = threading.Condition()
        # round -> [votes cast, votes that have a batch, counts read, the sum over all replicas or -1]
        self._rounds: dict[int, list[int]] = {}
        self._left: set[int] = set()
        self._failure: BaseException | None = None

    def add_vote(self, round_: int, has_batch: bool) -> None:
        with self._changed:
            votes = self._rounds.setdefault(round_, [0, 0, 0, -1])
            votes[0] += 1
            votes[1] += int(has_batch)
            if votes[0] == self.local:
                if self._combine is None:
                    votes[3] = votes[1]
                else:
                    threading.Thread(target=self._combined, args=(round_, votes[1]), daemon=True).start()
            self._changed.notify_all()

    def _combined(self, round_: int, mine: int) -> None:
        try:
            total = cast("Callable[[int, int], int]", self._combine)(round_, mine)
        except BaseException as err:
            with self._changed:
                self._failure = err
                self._changed.notify_all()
            return
        with self._changed:
            self._rounds[round_][3] = total
            self._changed.notify_all()

    def count(self, round_: int, replica: int) -> int:
        deadline = time.monotonic() + AGREE_SECONDS
        with self._changed:
            votes = self._rounds.setdefault(round_, [0, 0, 0, -1])
            while votes[3] < 0:
                if self._failure is not None:
                    raise UnavailableError(
                        f"equal_steps(): replica {replica} of {self.replicas} could not learn the other workers' votes "
                        f"on whether each has a batch for the next step ({type(self._failure).__name__}: "
                        f"{str(self._failure)[:300]}): a worker died, hung, or left the epoch early"
                    ) from self._failure
                if self._left or time.monotonic() > deadline:
                    why = (
                        f"replica(s) {sorted(self._left)} closed their iterators before the epoch's end"
                        if self._left
                        else f"none for {AGREE_SECONDS:.0f} s: a replica's iterator stopped being read, or the "
                        "replicas are read one after the other on one thread; each needs its own"
                    )
                    raise UnavailableError(
                        f"equal_steps(): replica {replica} of {self.replicas} in this process got {votes[0]} of the "
                        f"{self.local} votes on whether each has a batch for the next step ({why}); every replica "
                        "must iterate its equal_steps() pipeline to the end"
                    )
                if stopped():  # this replica's own consumer closed (a prefetch thread waiting here)
                    raise UnavailableError("equal_steps(): the iterator was closed while waiting for the votes")
                self._changed.wait(POLL_SECONDS)
            votes[2] += 1
            if votes[2] == self.local:
                del self._rounds[round_]
            return votes[3]

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
        self._group.add_vote(round_, has_batch)
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
    with agreeing_in(LocalGroup(replicas)) as group:
        yield group


@contextlib.contextmanager
def agreeing_in(group: LocalGroup) -> Iterator[LocalGroup]:
    """Iterators made in this block (in this thread, or in a copy of its context) agree through ``group``."""
    token = _local.set(group)
    try:
        yield group
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
        pause = 20e-6  # (polled, a wait cannot be interrupted when the consumer closes; the pause grows to 1 ms)
        try:
            while not work.is_completed():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no answer in {AGREE_SECONDS:.0f} s")
                if stopped():
                    raise UnavailableError("equal_steps(): the iterator was closed while waiting for the votes")
                time.sleep(pause)
                pause = min(2 * pause, 1e-3)
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


_jax_passes = itertools.count()  # agreements made in this process: every process makes its passes in the same order


class JaxAgreement:
    """Votes through ``jax.distributed``'s coordination service (its key-value store): the vote of each process for
    each round is a key, read by every process with a blocking get. No device collective runs, so the vote is safe on
    any thread, beside the model's own collectives."""

    def __init__(self, replica: int, replicas: int):
        from jax._src import distributed  # (the client of the job's coordination service: no public name holds it)

        self.replicas = replicas
        self._replica = replica
        self._client = distributed.global_state.client
        self._prefix = f"parafeed/agree/{next(_jax_passes)}"
        self._round = 0

    def vote(self, has_batch: bool) -> Any:
        round_, self._round = self._round, self._round + 1
        self._client.key_value_set(f"{self._prefix}/{round_}/{self._replica}", str(int(has_batch)))
        return round_

    def count(self, ballot: Any) -> int:
        deadline = time.monotonic() + AGREE_SECONDS
        total = 0
        for replica in range(self.replicas):
            key = f"{self._prefix}/{ballot}/{replica}"
            while True:
                try:
                    total += int(self._client.blocking_key_value_get(key, 200))
                    break
                except RuntimeError as err:  # (a timeout: DEADLINE_EXCEEDED)
                    if "DEADLINE_EXCEEDED" not in str(err) or time.monotonic() > deadline:
                        raise UnavailableError(
                            f"equal_steps(): process {self._replica} of {self.replicas} got no vote from process "
                            f"{replica} on whether it has a batch for the next step within {AGREE_SECONDS:.0f} s or "
                            f"the coordination service failed ({type(err).__name__}: {str(err)[:300]}): a process "
                            "died, hung, or left the epoch early; every process must iterate its equal_steps() "
                            "pipeline to the end"
                        ) from err
                    if stopped():
                        raise UnavailableError(
                            "equal_steps(): the iterator was closed while waiting for the votes"
                        ) from None
        if ballot > 0:  # every process has voted this round, so all have read the one before: it can go
            self._client.key_value_delete(f"{self._prefix}/{ballot - 1}/{self._replica}")
        return total

    def leave(self) -> None:
        pass  # (the others' gets fail when this process exits, or after AGREE_SECONDS)


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
    jax = sys.modules.get("jax")
    if jax is not None and jax.distributed.is_initialized():
        if (jax.process_count(), jax.process_index()) != (replicas, replica):
            raise InvalidArgumentError(
                f"equal_steps(): this pipeline is replica {replica} of {replicas}, but this JAX process is "
                f"{jax.process_index()} of {jax.process_count()}; distribute() by process (no arguments, or "
                "to_jax(distribute=True)) or pass `steps=`"
            )
        return JaxAgreement(replica, replicas)
    raise InvalidArgumentError(
        f"equal_steps(): the batch counts of the {replicas} replicas are not known before the epoch (a filter, "
        "group_by_window or interleave of computed datasets comes after distribute()), so the replicas agree at run "
        "time whether each still has a batch, through torch.distributed or jax.distributed: initialize it before "
        "iterating (replicas in one process: make their iterators in pf.distribute.replicas_in_process(n), or use "
        "pf.adapters.tf.distribute). Without one, pass `steps=` (the same on every replica), e.g. "
        "max(pf.distribute.count_batches(make_pipeline, num_replicas)) for 'pad' or 'repeat', min(...) for 'drop'"
    )

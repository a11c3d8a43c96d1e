"""Batch sizes weighted by replica speed, with the global batch fixed and the averaged gradient exact.

When replicas differ in speed (mixed GPU generations, a busy host), a synchronous step waits for the slowest one.
Giving each replica a share of the global batch in proportion to its speed evens out their step times:

* :func:`weighted_sizes`: per-replica batch sizes in proportion to speeds, summing to the global batch.
* :class:`SpeedBalancer`: sizes re-allocated from measured step times every ``every`` steps, identically on every
  replica (each feeds it every replica's step times, e.g. all-gathered).
* :func:`weighted_batch`: one replica's rows of every global batch of a pipeline that every replica iterates in the
  same order (others' rows are skipped: a TFRecord reader seeks past them, ``map`` does not run on them), with a
  weight per row: ``n * b_r / G``. A weighted mean loss (Keras ``sample_weight``, ``(w * loss).mean()`` in PyTorch)
  averaged over replicas, as MirroredStrategy and DDP average gradients, is then exactly the plain mean over the
  global batch: ``1/n * sum_r n * b_r / G * mean_r = sum(loss) / G``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from parafeed.core.dataset import Dataset
from parafeed.core.graph import BATCHING
from parafeed.core.iterator import DatasetIterator
from parafeed.distribute.balance import with_weights
from parafeed.errors import CancelledError, InvalidArgumentError
from parafeed.values.structure import TensorSpec, batch_spec, map_structure


def weighted_sizes(global_batch: int, speeds: Sequence[float], minimum: int = 1) -> list[int]:
    """Per-replica batch sizes in proportion to ``speeds``, summing to ``global_batch``, each at least ``minimum``.

    Rows left over after rounding down go to the replicas furthest below their exact share (ties: lowest replica id),
    so every replica computes the same sizes from the same speeds.

    Example:
        >>> pf.distribute.weighted_sizes(64, [1.0, 3.0])
        [16, 48]
    """
    speeds = [float(s) for s in speeds]
    if not speeds or any(not math.isfinite(s) or s <= 0 for s in speeds):
        raise InvalidArgumentError(f"weighted_sizes(): speeds must be finite and > 0, got {speeds}")
    n = len(speeds)
    if not isinstance(global_batch, int) or global_batch < minimum * n:
        raise InvalidArgumentError(
            f"weighted_sizes(): the global batch ({global_batch!r}) must be an int of at least {minimum} row(s) per "
            f"replica for {n} replicas"
        )
    ideal = [global_batch * s / sum(speeds) for s in speeds]
    sizes = [max(minimum, math.floor(x)) for x in ideal]
    while sum(sizes) < global_batch:
        sizes[max(range(n), key=lambda k: ideal[k] - sizes[k])] += 1
    while sum(sizes) > global_batch:
        sizes[max((k for k in range(n) if sizes[k] > minimum), key=lambda k: sizes[k] - ideal[k])] -= 1
    return sizes


def loss_scale(sizes: Sequence[int], replica_id: int) -> float:
    """The factor on replica ``replica_id``'s mean loss that makes the replicas' averaged gradient the global-batch
    mean: ``n * b_r / G`` (the weight :func:`weighted_batch` gives each row)."""
    return len(sizes) * sizes[replica_id] / sum(sizes)


class SpeedBalancer:
    """Per-replica batch sizes re-allocated from measured step times every ``every`` steps; the global batch is fixed.

    Steps are grouped in windows of ``every``. Windows 0 and 1 use the sizes from ``speeds`` (equal by default);
    window ``w`` uses sizes computed from the step times of window ``w - 2``: the pipeline can then prepare up to
    ``every`` batches ahead of training without waiting for a decision. A replica's speed is the rows it processed
    per second of its own compute time, smoothed across windows.

    Every replica process keeps its own balancer and feeds it the same numbers: after each step, every replica's
    compute time for that step (in PyTorch, all-gather them: :func:`parafeed.adapters.torch.record_step`), so all
    replicas agree on every step's split.

    Example:
        >>> balancer = pf.distribute.SpeedBalancer(global_batch=256, num_replicas=world, every=50)
        >>> ds = pf.distribute.weighted_batch(records.map(parse), balancer, rank)
        >>> ... after each step: balancer.record(step, seconds_of_every_replica)
    """

    def __init__(
        self, global_batch: int, num_replicas: int, every: int = 50, speeds: Sequence[float] | None = None,
        smoothing: float = 0.5, timeout: float = 600.0,
    ):  # fmt: skip
        if not isinstance(num_replicas, int) or num_replicas <= 0:
            raise InvalidArgumentError(f"SpeedBalancer: `num_replicas` must be an int > 0, got {num_replicas!r}")
        if not isinstance(every, int) or every <= 0:
            raise InvalidArgumentError(f"SpeedBalancer: `every` must be an int > 0 (steps), got {every!r}")
        if not 0.0 <= smoothing < 1.0:
            raise InvalidArgumentError(f"SpeedBalancer: `smoothing` must be in [0, 1), got {smoothing!r}")
        if speeds is not None and len(speeds) != num_replicas:
            raise InvalidArgumentError(f"SpeedBalancer: {len(speeds)} speeds for {num_replicas} replicas")
        self.global_batch = global_batch
        self.num_replicas = num_replicas
        self.every = every
        self._smoothing = smoothing
        self._timeout = timeout
        initial = weighted_sizes(global_batch, speeds or [1.0] * num_replicas)
        self._sizes: dict[int, list[int]] = {0: initial, 1: initial}  # window -> sizes
        self._seconds: dict[int, list[float]] = {}  # window -> every replica's summed step seconds
        self._steps: dict[int, set[int]] = {}  # window -> steps recorded
        self._speeds: list[float] | None = None
        self._finished = -1  # the last window whose step times are all in
        self.next_step = 0  # the first step a new epoch's batches are split for (steps count across epochs)
        self._cond = threading.Condition()

    @property
    def sizes(self) -> list[int]:
        """The most recently decided sizes."""
        with self._cond:
            return self._sizes[max(self._sizes)]

    def sizes_at(self, step: int) -> list[int]:
        """The sizes of ``step``; waits while the step times they depend on are still being recorded."""
        from parafeed.parallel.threads import stop_requested

        window = step // self.every
        deadline = time.monotonic() + self._timeout
        with self._cond:
            while window not in self._sizes:
                if stop_requested():
                    raise CancelledError("SpeedBalancer: the pipeline was closed while waiting for step times")
                if time.monotonic() > deadline:
                    first = (window - 2) * self.every
                    raise InvalidArgumentError(
                        f"SpeedBalancer: the sizes of step {step} depend on the step times of steps {first} to "
                        f"{first + self.every - 1}, which were not all recorded within {self._timeout:.0f} s: call "
                        "record(step, seconds) after every training step"
                    )
                self._cond.wait(0.05)
            return self._sizes[window]

    def record(self, step: int, seconds: Sequence[float]) -> None:
        """Every replica's compute time (seconds) for ``step`` (the global step: epochs go on counting where the
        previous one stopped); the same on every replica process."""
        seconds = [float(s) for s in seconds]
        if len(seconds) != self.num_replicas or any(not math.isfinite(s) or s <= 0 for s in seconds):
            raise InvalidArgumentError(
                f"SpeedBalancer.record(): give {self.num_replicas} step times > 0 (one per replica), got {seconds}"
            )
        window = step // self.every
        with self._cond:
            if window <= self._finished:  # recorded already
                return
            if window not in self._sizes:
                raise InvalidArgumentError(
                    f"SpeedBalancer.record(): step {step} was never split; record steps in order"
                )
            done = self._steps.setdefault(window, set())
            if step in done:
                return
            done.add(step)
            totals = self._seconds.setdefault(window, [0.0] * self.num_replicas)
            for r, s in enumerate(seconds):
                totals[r] += s
            if len(done) < self.every:
                return
            sizes = self._sizes[window]
            speeds = [sizes[r] * self.every / totals[r] for r in range(self.num_replicas)]
            if self._speeds is not None:
                speeds = [self._smoothing * old + (1 - self._smoothing) * new for old, new in zip(self._speeds, speeds)]
            self._speeds = speeds
            self._sizes[window + 2] = weighted_sizes(self.global_batch, speeds)
            del self._seconds[window], self._steps[window]
            self._finished = window
            self._cond.notify_all()


# ---------------------------------------------------------------------------------------------- the batch step


def weighted_batch(ds: Dataset, sizes: Sequence[int] | SpeedBalancer, replica_id: int, weights: bool = True) -> Dataset:
    """Replica ``replica_id``'s rows of each global batch of ``ds``'s elements, as one batch per step.

    Every replica must iterate ``ds`` in the same order (do not ``distribute`` it; shuffle with a seed). Step ``k``
    covers elements ``[k * G, (k + 1) * G)``; replica ``r`` takes rows ``[sum(sizes[:r]), sum(sizes[:r + 1]))`` of
    them. A last, shorter global batch is split in proportion to the same sizes (a replica may then get an empty
    batch). Every replica yields the same number of batches. With ``weights`` each batch carries a weight per row,
    ``n * b_r / G`` (last in a tuple, ``"sample_weight"`` in a dict), which makes the replicas' averaged weighted mean
    loss exactly the global-batch mean. In PyTorch use ``(w * loss).sum() / max(len(loss), 1)``, which is 0 for an
    empty batch.

    Example:
        >>> ds = pf.distribute.weighted_batch(pf.TFRecordDataset(files).map(parse), [24, 40], replica_id=rank)
    """
    return WeightedBatchDataset(ds, sizes, replica_id, weights)


class WeightedBatchDataset(Dataset):
    """See :func:`weighted_batch`. A batching step whose batch sizes vary (``batch_size`` is None)."""

    kind = BATCHING

    def __init__(self, parent: Dataset, sizes: Sequence[int] | SpeedBalancer, replica_id: int, weights: bool = True):
        super().__init__((parent,))
        if isinstance(sizes, SpeedBalancer):
            self._balancer: SpeedBalancer | None = sizes
            num_replicas, self._global_batch = sizes.num_replicas, sizes.global_batch
        else:
            self._balancer = None
            self._sizes = [int(s) for s in sizes]
            if not self._sizes or any(s < 0 for s in self._sizes) or sum(self._sizes) == 0:
                raise InvalidArgumentError(f"weighted_batch(): `sizes` must be batch sizes >= 0, got {list(sizes)}")
            num_replicas, self._global_batch = len(self._sizes), sum(self._sizes)
        if not isinstance(replica_id, int) or not 0 <= replica_id < num_replicas:
            raise InvalidArgumentError(
                f"weighted_batch(): `replica_id` must be in [0, {num_replicas - 1}], got {replica_id!r}"
            )
        self._num_replicas = num_replicas
        self._replica_id = replica_id
        self._weights = weights

    def sizes_at(self, step: int) -> list[int]:
        return self._balancer.sizes_at(step) if self._balancer is not None else self._sizes

    def _make_iterator(self) -> DatasetIterator:
        return _WeightedBatchIterator(self, self._parents[0]._iter())

    def _element_spec(self) -> Any:
        spec = batch_spec(self._parents[0].element_spec, None)
        if not self._weights:
            return spec
        return with_weights(spec, TensorSpec((None,), np.float32))

    def _cardinality(self) -> int:
        n = self._parents[0]._cardinality()
        return n if n < 0 else -(-n // self._global_batch)

    def _replica_counts(self, start: Any = 0) -> list[int] | None:
        n = self._cardinality()
        return None if n < 0 else [n] * self._num_replicas


class _WeightedBatchIterator(DatasetIterator):
    def __init__(self, dataset: WeightedBatchDataset, parent: DatasetIterator):
        super().__init__(parent)
        self._dataset = dataset
        self._parent = parent
        self._total = dataset.parents[0]._cardinality()  # elements, when known: to split a short last batch fairly
        self._epoch_start = self._training_step = dataset._balancer.next_step if dataset._balancer is not None else 0

    def __next__(self) -> Any:
        from parafeed.values.stacking import stack_elements

        d = self._dataset
        done = (self._training_step - self._epoch_start) * d._global_batch
        if 0 <= self._total <= done:
            raise StopIteration
        sizes = d.sizes_at(self._training_step)
        left = self._total - done
        if 0 < left < d._global_batch:
            sizes = weighted_sizes(left, [max(s, 1e-9) for s in sizes], minimum=1 if left >= len(sizes) else 0)
        start, mine = sum(sizes[: d._replica_id]), sizes[d._replica_id]
        consumed = self._parent.skip(start)
        rows: list = []
        if consumed == start:
            for _ in range(mine):
                try:
                    rows.append(next(self._parent))
                except StopIteration:
                    break
            if len(rows) == mine:
                consumed += self._parent.skip(sum(sizes) - start - mine)
        consumed += len(rows)
        if consumed == 0:
            raise StopIteration
        self._training_step += 1
        if d._balancer is not None:
            d._balancer.next_step = max(d._balancer.next_step, self._training_step)
        batch = stack_elements(rows, "weighted_batch()") if rows else _empty_batch(d.parents[0].element_spec)
        if not d._weights:
            return batch
        scale = d._num_replicas * len(rows) / consumed if rows else 0.0
        return with_weights(batch, np.full(len(rows), scale, np.float32))

    def _get_state(self) -> dict:
        """Every step ends on a global-batch boundary of the shared input, so the state is the same on every
        replica; the sizes after a restore are decided anew from the speeds."""
        return {
            "parent": self._parent.get_state(),
            "training_step": self._training_step,
            "epoch_start": self._epoch_start,
        }

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._training_step, self._epoch_start = int(state["training_step"]), int(state["epoch_start"])
        balancer = self._dataset._balancer
        if balancer is not None:
            balancer.next_step = max(balancer.next_step, self._training_step)


def _empty_batch(spec: Any) -> Any:
    return map_structure(lambda s: np.zeros((0, *(d or 0 for d in s.shape or ())), s.dtype), spec)

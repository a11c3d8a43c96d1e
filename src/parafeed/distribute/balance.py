"""Balance between replicas: equal steps, class-stratified shares, and batch sizes weighted by replica speed.

* :class:`EqualStepsDataset` (``ds.equal_steps(policy)``): every replica yields exactly the same number of batches
  per epoch, so a synchronous strategy never waits at the end of an epoch for a replica that has run out (the
  MultiWorkerMirroredStrategy hang of tensorflow#33531, #36153). ``pad`` (the default) keeps every sample once and
  fills short replicas with repeated rows of weight 0; ``drop`` stops every replica at the shortest one's count;
  ``repeat`` lets short replicas start their share again.
* :func:`deal`: the records of every class dealt round-robin between parts: each part's count of every class is
  within 1 of the ideal share, and part totals are within 1 (used by ``distribute(balance="labels")`` and by
  ``parafeed convert``).
* :func:`weighted_sizes`, :func:`loss_scale`, :class:`SpeedBalancer`, :func:`split_batches`: per-replica batch sizes
  in proportion to replica speed with the global batch fixed, and the loss factor that keeps the averaged gradient
  exactly the global-batch mean.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from parafeed.dataset import Dataset, DatasetIterator, iterate_in
from parafeed.errors import InvalidArgumentError
from parafeed.stats import current_pipeline
from parafeed.structure import TensorSpec, flatten, is_nested, map_structure, pack_as

EQUAL_STEPS_POLICIES = ("pad", "drop", "repeat")


def deal(labels: Sequence[int] | None, parts: int, seed: int, n: int | None = None) -> list[np.ndarray]:
    """Indices per part: every class dealt round-robin (the deal going on across classes), shuffled by ``seed``.

    Each part's count of each class is within 1 of ``count / parts``, and part sizes are within 1.
    """
    rng = np.random.default_rng(seed)
    if labels is None:
        order = rng.permutation(n)
    else:
        values = np.asarray(labels)
        order = np.concatenate([rng.permutation(np.flatnonzero(values == c)) for c in np.unique(values)])
    return [order[p::parts] for p in range(parts)]


# ---------------------------------------------------------------------------------------------- equal steps


class EqualStepsDataset(Dataset):
    """Exactly ``steps`` batches per epoch on every replica (see the module docs for the policies)."""

    def __init__(self, parent: Dataset, policy: str = "pad", steps: int | None = None, name: str | None = None):
        super().__init__((parent,), name=name)
        if policy not in EQUAL_STEPS_POLICIES:
            raise InvalidArgumentError(f"equal_steps(): `policy` must be one of {EQUAL_STEPS_POLICIES}, got {policy!r}")
        self._policy = policy
        counts = parent._replica_counts()
        if steps is None:
            if counts is None:
                raise InvalidArgumentError(
                    "equal_steps(): the number of batches of every replica is not known here (a step such as "
                    "filter, interleave or group_by_window changes counts in ways only a full pass reveals). Pass "
                    "`steps=` (the same on every replica), e.g. from pf.distribute.count_batches(...)."
                )
            steps = min(counts) if policy == "drop" else max(counts)
        if not isinstance(steps, int) or steps < 0:
            raise InvalidArgumentError(f"equal_steps(): `steps` must be an int >= 0, got {steps!r}")
        self._steps = steps
        self._num_replicas = len(counts) if counts is not None else None

    def _make_iterator(self) -> DatasetIterator:
        return _EqualStepsIterator(self._parents[0], self._steps, self._policy, _batch_size(self._parents[0]))

    def _element_spec(self) -> Any:
        spec = self._parents[0].element_spec
        return spec if self._policy != "pad" else _with_weights(spec, TensorSpec((None,), np.float32))

    def _cardinality(self) -> int:
        return self._steps

    def _replica_counts(self) -> list[int] | None:
        return None if self._num_replicas is None else [self._steps] * self._num_replicas


def _batch_size(ds: Dataset) -> int:
    """The batch size of the ``batch`` step under ``ds`` (through count-preserving steps), or 0 if none."""
    from parafeed.ops.batch import BatchDataset
    from parafeed.ops.padded_batch import PaddedBatchDataset

    node = ds
    while True:
        if isinstance(node, (BatchDataset, PaddedBatchDataset)):
            return node._batch_size
        if not (node._count_preserving and len(node._parents) == 1):
            return 0
        node = node._parents[0]


def _with_weights(element: Any, weights: Any) -> Any:
    """The element with its sample weights added: last in a tuple, ``"sample_weight"`` in a dict."""
    if type(element) is tuple:
        return (*element, weights)
    if isinstance(element, dict):
        return {**element, "sample_weight": weights}
    return (element, weights)


def _rows(element: Any) -> int:
    leaves = flatten(element)
    if not leaves or not all(isinstance(x, np.ndarray) and x.ndim for x in leaves):
        raise InvalidArgumentError(
            "equal_steps(policy='pad'): elements must be batches (arrays with a batch dimension)"
        )
    return leaves[0].shape[0]


def _take_rows(element: Any, index: np.ndarray) -> Any:
    return map_structure(lambda leaf: leaf[index], element) if is_nested(element) else element[index]


class _EqualStepsIterator(DatasetIterator):
    def __init__(self, dataset: Dataset, steps: int, policy: str, batch_size: int):
        super().__init__()
        self._dataset = dataset
        self._context = current_pipeline()
        self._it: DatasetIterator | None = dataset._iter()
        self._left = steps
        self._policy = policy
        self._batch_size = batch_size  # short batches are filled up to it (0: to the largest seen)
        self._last: Any = None

    def __next__(self) -> Any:
        if self._left <= 0:
            self.close()
            raise StopIteration
        self._left -= 1
        x = self._pull()
        if self._policy != "pad":
            return x
        if x is None:  # this replica has run out: a batch of its last rows, all of weight 0
            return _with_weights(self._last[0], np.zeros(self._batch_size, np.float32))
        rows = _rows(x)
        self._batch_size = max(self._batch_size, rows)
        weights = np.ones(self._batch_size, np.float32)
        if rows < self._batch_size:  # a short last batch: filled up with its own rows, of weight 0
            x = _take_rows(x, np.arange(self._batch_size) % rows)
            weights[rows:] = 0.0
        self._last = (x,)
        return _with_weights(x, weights)

    def _pull(self) -> Any:
        """The next input batch; for ``repeat`` a new pass when the input ends; None when ``pad`` runs out."""
        if self._it is not None:
            try:
                return next(self._it)
            except StopIteration:
                self._it.close()
                self._it = None
        if self._policy == "repeat":
            self._it = iterate_in(self._context, self._dataset)
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

    def close(self) -> None:
        if self._it is not None:
            self._it.close()
            self._it = None


# ---------------------------------------------------------------------------------------------- speed


def weighted_sizes(global_batch: int, speeds: Sequence[float]) -> list[int]:
    """Per-replica batch sizes proportional to ``speeds``, summing to ``global_batch`` (largest remainders), each at
    least 1 when the global batch allows."""
    speeds = [float(s) for s in speeds]
    if not speeds or any(not math.isfinite(s) or s <= 0 for s in speeds):
        raise InvalidArgumentError(f"weighted_sizes(): speeds must be finite and > 0, got {speeds}")
    if global_batch < len(speeds):
        raise InvalidArgumentError(
            f"weighted_sizes(): global batch {global_batch} is smaller than {len(speeds)} replicas"
        )
    ideal = [global_batch * s / sum(speeds) for s in speeds]
    sizes = [max(1, math.floor(x)) for x in ideal]
    by_remainder = sorted(range(len(ideal)), key=lambda i: ideal[i] - math.floor(ideal[i]), reverse=True)
    i = 0
    while sum(sizes) < global_batch:
        sizes[by_remainder[i % len(sizes)]] += 1
        i += 1
    while sum(sizes) > global_batch:
        j = max(range(len(sizes)), key=lambda k: sizes[k] - ideal[k])
        sizes[j] -= 1
    return sizes


def loss_scale(sizes: Sequence[int], replica_id: int) -> float:
    """The factor for replica ``replica_id``'s mean loss so that averaging the replicas' gradients (what
    MirroredStrategy and DDP do) gives exactly the mean gradient over the global batch: ``n * b_r / G``."""
    return len(sizes) * sizes[replica_id] / sum(sizes)


class SpeedBalancer:
    """Per-replica batch sizes re-allocated from measured step times every ``every`` steps; the global batch is fixed.

    Each replica reports its step time with :meth:`record`; the speed of a replica is the samples it processed per
    second (its batch size over its mean step time), smoothed over windows.
    """

    def __init__(self, global_batch: int, num_replicas: int, every: int = 50, speeds: Sequence[float] | None = None):
        self.global_batch = global_batch
        self.every = every
        self.sizes = weighted_sizes(global_batch, speeds or [1.0] * num_replicas)
        self._lock = threading.Lock()
        self._times: list[list[float]] = [[] for _ in range(num_replicas)]
        self._speeds: list[float] | None = None

    def record(self, replica_id: int, step_seconds: float) -> None:
        with self._lock:
            self._times[replica_id].append(step_seconds)
            if all(len(t) >= self.every for t in self._times):
                measured = [self.sizes[r] / (sum(t) / len(t)) for r, t in enumerate(self._times)]
                if self._speeds is not None:
                    measured = [0.5 * m + 0.5 * s for m, s in zip(measured, self._speeds)]
                self._speeds = measured
                self.sizes = weighted_sizes(self.global_batch, measured)
                self._times = [[] for _ in self._times]


def split_batches(ds: Dataset, sizes: Sequence[int] | SpeedBalancer, replica_id: int) -> Dataset:
    """Replica ``replica_id``'s rows of each global batch: rows ``[sum(sizes[:r]), sum(sizes[:r+1]))`` of batches of
    ``sum(sizes)`` rows (a :class:`SpeedBalancer` supplies its current sizes at each batch)."""

    def take(batch: Any) -> Any:
        current = sizes.sizes if isinstance(sizes, SpeedBalancer) else sizes
        start = sum(current[:replica_id])
        rows = slice(start, start + current[replica_id])
        return pack_as(batch, [leaf[rows] for leaf in flatten(batch)])

    return ds.map(take)

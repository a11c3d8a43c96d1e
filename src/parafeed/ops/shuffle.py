"""``shuffle``: a uniformly random pick from a buffer of upcoming elements."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import numpy as np

from parafeed.core.arguments import as_int, positive_int
from parafeed.core.dataset import UNKNOWN, Dataset, PassThroughDataset, iterate
from parafeed.core.graph import REORDERING
from parafeed.core.iterator import DatasetIterator, Scope, current_scope
from parafeed.core.positions import Snapshots, tracking
from parafeed.sources.draws import draw_seed

_DRAWS = 1024  # random numbers drawn per call to the generator


class ShuffleDataset(PassThroughDataset):
    """Elements in random order, drawn from a buffer of ``buffer_size`` upcoming elements.

    The order is fixed by ``seed``, the iteration of the run (with ``reshuffle_each_iteration`` the k-th ``iter()``
    of a dataset uses the k-th order, as in tf.data) and the epochs of the ``repeat`` steps above it (a new order
    each pass); without ``reshuffle_each_iteration`` every iteration repeats the first order. Without a seed, one is
    drawn when the step is built: the order differs from one dataset object to the next (a checkpoint keeps it).
    ``buffer_size=UNKNOWN`` (-2, ``tf.data.UNKNOWN_CARDINALITY``) buffers the whole input: a full shuffle.
    """

    kind = REORDERING

    def __init__(
        self,
        parent: Dataset,
        buffer_size: int,
        seed: int | None = None,
        reshuffle_each_iteration: bool = True,
        name: str | None = None,
    ):
        super().__init__(parent, name=name)
        n = as_int("shuffle()", "buffer_size", buffer_size)
        if n == UNKNOWN:  # tf.data's UNKNOWN_CARDINALITY: a buffer that holds the whole input
            n = sys.maxsize
        self._buffer_size = positive_int("shuffle()", "buffer_size", n)
        self._seeded = seed is not None
        self.seed: int = draw_seed("shuffle()", None)[0] if seed is None else as_int("shuffle()", "seed", seed)
        self._reshuffle = bool(reshuffle_each_iteration)

    @property
    def buffer_size(self) -> int:
        return self._buffer_size

    @property
    def seeded(self) -> bool:
        """Whether the seed was given (the same order in every process) rather than drawn."""
        return self._seeded

    def order_seed(self, scope: Scope) -> list[int]:
        """The seed of this step's random draws in ``scope``: its seed (as the run knows it), the iteration and the
        ``repeat`` epochs, or just the seed without reshuffling."""
        seed = (scope.run.seed_for(self) if scope.run is not None else self.seed) & (2**63 - 1)
        return [seed, scope.iteration, *scope.epochs] if self._reshuffle else [seed, 0]

    def input_indices(self, n: int, scope: Scope) -> np.ndarray:
        """The order in which this step yields ``n`` input elements in ``scope``, as their input indices (what
        replicas reading a global order by position compute: :mod:`parafeed.sources.records`)."""
        return shuffled_indices(n, self._buffer_size, self.order_seed(scope))

    def _make_iterator(self) -> DatasetIterator:
        order = self.order_seed(current_scope())
        it = _ShuffleIterator(self._parent._iter(), self._buffer_size, np.random.default_rng(order))
        consumption = tracking()
        if consumption is not None:
            consumption.iterators[id(self)] = it
        return it


def shuffled_indices(n: int, buffer_size: int, order_seed: list[int]) -> np.ndarray:
    """The order in which a shuffle with ``buffer_size`` and ``order_seed`` (see ``ShuffleDataset.order_seed``)
    yields ``n`` input elements, as their input indices: it depends on nothing else."""
    indices = iterate(Dataset.range(n))
    return np.fromiter(_ShuffleIterator(indices, buffer_size, np.random.default_rng(order_seed)), np.int64, n)


class _ShuffleIterator(DatasetIterator):
    """Draws uniformly from a buffer; for checkpoints it numbers the input elements it pulls and keeps which of
    them each slot holds, so a state stores indices and the input's state, not elements."""

    def __init__(self, parent: DatasetIterator, buffer_size: int, rng: np.random.Generator):
        super().__init__(parent)
        self._parent = parent
        self._buffer_size = buffer_size
        self._rng = rng
        self._rng_state: Any = rng.bit_generator.state  # before the current batch of draws
        self._used = 0  # draws used from the current batch
        self._buffer: list | None = None
        self._slots: list[int] = []  # the input index of each buffered element
        self._pulled = 0
        self._parent_done = False
        self._draws: Any = iter(())
        self._snapshots = Snapshots(parent, self._buffer_size)

    def __next__(self) -> Any:
        buf = self._buffer
        if buf is None:
            buf = self._buffer = list(itertools.islice(self._parent, self._buffer_size))
            self._parent_done = len(buf) < self._buffer_size
            self._slots = list(range(len(buf)))
            self._pulled = len(buf)
            self._snapshots.note(self._pulled, self._oldest)
        if not buf:
            raise StopIteration
        u = next(self._draws, None)
        if u is None:
            self._rng_state = self._rng.bit_generator.state
            self._draws = iter(self._rng.random(_DRAWS).tolist())
            self._used = 0
            u = next(self._draws)
        self._used += 1
        i = int(u * len(buf))
        out = buf[i]
        if not self._parent_done:
            try:
                buf[i] = next(self._parent)
                self._slots[i] = self._pulled
                self._pulled += 1
                if not self._pulled % self._buffer_size:
                    self._snapshots.note(self._pulled, self._oldest)
                return out
            except StopIteration:
                self._parent_done = True
        buf[i] = buf[-1]
        buf.pop()
        self._slots[i] = self._slots[-1]
        self._slots.pop()
        return out

    def _oldest(self) -> int:
        return min(self._slots, default=self._pulled)

    def held(self) -> tuple[int, list[int]]:
        """(input elements pulled, the input indices of those still buffered)."""
        return self._pulled, list(self._slots)

    def _get_state(self) -> dict:
        """Size: the buffer's input indices, ``buffer_size`` integers, plus the input's state and the RNG's."""
        return {
            "rng": self._rng_state, "used": self._used,
            "started": self._buffer is not None, "parent_done": self._parent_done, "slots": list(self._slots),
            "input": self._snapshots.state(self._slots, self._pulled),
        }  # fmt: skip

    def _set_state(self, state: dict) -> None:
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = state["rng"]
        self._rng_state = state["rng"]
        self._used = int(state["used"])
        self._draws = iter(())
        if self._used:
            self._draws = iter(self._rng.random(_DRAWS).tolist()[self._used :])
        self._slots = [int(i) for i in state["slots"]]
        found = self._snapshots.restore(state["input"], self._slots)
        self._buffer = [found[i] for i in self._slots] if state["started"] else None
        self._pulled = int(state["input"]["pulled"])
        self._parent_done = bool(state["parent_done"])

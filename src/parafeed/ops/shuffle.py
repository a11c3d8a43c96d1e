"""``shuffle``: a uniformly random pick from a buffer of upcoming elements."""

from __future__ import annotations

import itertools
import secrets
from typing import Any

import numpy as np

from parafeed.arguments import as_int, positive_int
from parafeed.dataset import Dataset, DatasetIterator, PassThroughDataset

_DRAWS = 1024  # random numbers drawn per call to the generator


class ShuffleDataset(PassThroughDataset):
    """Elements in random order, drawn from a buffer of ``buffer_size`` upcoming elements.

    The order is fixed by ``seed`` and the epoch: with ``reshuffle_each_iteration`` every new iterator of this
    dataset (every epoch of a ``repeat``) uses a new order; without it every iterator repeats the first order.
    Without a seed, the order differs from one dataset object to the next.
    """

    _count_preserving = True

    def __init__(
        self,
        parent: Dataset,
        buffer_size: int,
        seed: int | None = None,
        reshuffle_each_iteration: bool = True,
        name: str | None = None,
    ):
        super().__init__(parent, name=name)
        self._buffer_size = positive_int("shuffle()", "buffer_size", buffer_size)
        self._seeded = seed is not None
        self._seed = secrets.randbits(63) if seed is None else as_int("shuffle()", "seed", seed)
        self._reshuffle = bool(reshuffle_each_iteration)
        self._epochs = itertools.count()

    def _make_iterator(self) -> DatasetIterator:
        epoch = next(self._epochs) if self._reshuffle else 0
        rng = np.random.default_rng([self._seed & (2**63 - 1), epoch])
        return _ShuffleIterator(self._parent._iter(), self._buffer_size, rng)


class _ShuffleIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, buffer_size: int, rng: np.random.Generator):
        super().__init__(parent)
        self._parent = parent
        self._buffer_size = buffer_size
        self._rng = rng
        self._buffer: list | None = None
        self._parent_done = False
        self._draws: Any = iter(())

    def __next__(self) -> Any:
        buf = self._buffer
        if buf is None:
            buf = self._buffer = list(itertools.islice(self._parent, self._buffer_size))
            self._parent_done = len(buf) < self._buffer_size
        if not buf:
            raise StopIteration
        u = next(self._draws, None)
        if u is None:
            self._draws = iter(self._rng.random(_DRAWS).tolist())
            u = next(self._draws)
        i = int(u * len(buf))
        out = buf[i]
        if not self._parent_done:
            try:
                buf[i] = next(self._parent)
                return out
            except StopIteration:
                self._parent_done = True
        buf[i] = buf[-1]
        buf.pop()
        return out

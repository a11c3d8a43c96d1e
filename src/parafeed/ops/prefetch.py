"""``prefetch``: produce elements ahead on a background thread."""

from __future__ import annotations

from typing import Any

from parafeed.core.arguments import as_int
from parafeed.core.dataset import AUTOTUNE, Dataset, PassThroughDataset
from parafeed.core.graph import ONE_TO_ONE
from parafeed.core.iterator import DatasetIterator, current_scope
from parafeed.core.positions import order_fixed, position, seek
from parafeed.core.stats import element_bytes
from parafeed.errors import InvalidArgumentError, StateError
from parafeed.parallel.threads import BackgroundIterator

AUTOTUNE_MAX = 64  # elements: the most prefetch(AUTOTUNE) buffers


class PrefetchDataset(PassThroughDataset):
    """The input's elements, produced up to ``buffer_size`` ahead by a background thread (0: no prefetching).

    ``AUTOTUNE`` starts with one element and doubles the buffer when the consumer finds it empty after it had been
    full (the producer is faster at times, slower at others: a bigger buffer smooths that; a producer that is just
    slower gains nothing from one), up to ``AUTOTUNE_MAX`` elements and within the pipeline's RAM budget.
    """

    kind = ONE_TO_ONE

    def __init__(self, parent: Dataset, buffer_size: int, name: str | None = None):
        super().__init__(parent, name=name)
        n = as_int("prefetch()", "buffer_size", buffer_size)
        if n < 0 and n != AUTOTUNE:
            raise InvalidArgumentError(f"prefetch(): `buffer_size` must be >= 0 or AUTOTUNE (-1), got {n}")
        self._buffer_size = n

    def _make_iterator(self) -> DatasetIterator:
        parent = self._parent._iter()
        if self._buffer_size == 0:
            return parent
        return _PrefetchIterator(parent, self._buffer_size, order_fixed(self._parent))


class _PrefetchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, buffer_size: int, fixed: bool):
        super().__init__()
        self._parent = parent
        self._fixed = fixed
        self._autotune = buffer_size == AUTOTUNE
        self._size = 1 if self._autotune else buffer_size
        run = current_scope().run
        self._ram = run.ram if run is not None else None  # the run's RAM budget, for buffer growth
        self._element_bytes = 0  # size of the first element, to charge buffer growth to the RAM budget
        self._was_full = False
        self._background: BackgroundIterator | None = None
        self._reserved = 0  # bytes taken from the RAM budget for buffer growth

    def __next__(self) -> Any:
        background = self._background
        if background is None:  # started on first use, so an unused iterator costs no thread
            background = self._background = BackgroundIterator(
                self._parent, self._size, "parafeed-prefetch", order_fixed=self._fixed
            )
            if self.stage is not None:
                self.stage.threaded, self.stage.buffer_size = True, self._size
        if self._autotune:
            buffered = background.buffered
            if buffered >= background.size:
                self._was_full = True  # the producer has been held back by the buffer's size
            elif buffered == 0 and self._was_full:
                self._was_full = False
                self._grow(background)  # it ran dry after being full: a bigger buffer absorbs the bursts
        x = background.get()
        if self._autotune and not self._element_bytes:
            self._element_bytes = element_bytes(x)
        if self.stage is not None:
            self.stage.buffered = background.buffered
        return x

    def _grow(self, background: BackgroundIterator) -> None:
        if background.size >= AUTOTUNE_MAX:
            return
        size = min(AUTOTUNE_MAX, background.size * 2)
        if self._ram is not None:
            extra = (size - background.size) * self._element_bytes
            if not self._ram.reserve(extra):
                return
            self._reserved += extra
        background.resize(size)
        if self.stage is not None:
            self.stage.buffer_size = size

    def _get_state(self) -> dict:
        if self._background is None:
            return position(self._parent.get_state(), 0)
        return self._background.get_state()

    def _set_state(self, state: dict) -> None:
        if self._background is not None:
            raise StateError(
                "set_state(): prefetch() has started reading ahead; restore a state into a new iterator (iter(ds)) "
                "before taking elements from it"
            )
        seek(self._parent, state)

    def close(self) -> None:
        if self._background is None:
            self._parent.close()
        else:
            self._background.close()
        if self._reserved and self._ram is not None:
            self._ram.release(self._reserved)
            self._reserved = 0

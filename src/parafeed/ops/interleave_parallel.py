"""The parallel ``interleave``: the serial interleave's order, with every open input read ahead on its own thread."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from parafeed.core.iterator import DatasetIterator
from parafeed.ops.interleave_cycle import Failed, InterleaveIterator
from parafeed.parallel.threads import BackgroundIterator

if TYPE_CHECKING:
    from parafeed.ops.interleave import InterleaveDataset

INPUT_CHUNK = 16  # elements an input's thread hands over at a time (sooner if they come slowly)


class ParallelInterleaveIterator(InterleaveIterator):
    """The serial interleave's order (when deterministic), with every open input read ahead on a thread of its own.

    When a slot is opened, the empty slots ahead of it in the cycle are opened at once with the following inputs:
    the serial order would put those inputs there anyway, since the cursor only fills the slot it stands on and
    slots ahead of it cannot be refilled before it reaches them. ``num_parallel_calls`` bounds how many inputs
    produce at the same time; ``deterministic=False`` takes from any input that is ready when the current one is not.
    """

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset, parallelism: int, deterministic: bool):
        super().__init__(parent, ds)
        self._limit = threading.Semaphore(parallelism)
        self._deterministic = deterministic
        self._chunk = max(ds.block_length, INPUT_CHUNK)

    def _open_input(self, it: DatasetIterator) -> Any:
        return BackgroundIterator(it, 2, "parafeed-interleave", self._limit, self._chunk)

    def _input_state(self, it: Any) -> dict:
        return it.get_state()

    def _fill(self, slot: int, defer: bool = False) -> bool:
        if not super()._fill(slot, defer):
            return False
        size = len(self._cycle)
        for offset in range(1, size):
            ahead = (slot + offset) % size
            if self._cycle[ahead] is None and not super()._fill(ahead, defer=True):
                break  # the end of the input, or an input that failed: the cursor reaches it before reading on
        return True

    def __next__(self) -> Any:
        if not self._deterministic:
            current = self._cycle[self._slot]
            if current is not None and type(current) is not Failed and not current.ready():
                for it in self._cycle:
                    if it is not None and it is not current and it.ready():
                        try:
                            return it.get()
                        except StopIteration:
                            break  # the serial path closes it when the cursor gets there
        return super().__next__()

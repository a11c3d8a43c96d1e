"""The parallel ``interleave``: the serial interleave's order, with every open input read ahead on its own thread, and
the inputs after them opened (and read) ahead of their turn."""

from __future__ import annotations

import collections
import threading
from typing import TYPE_CHECKING, Any, cast

from parafeed.core.iterator import DatasetIterator, build_in
from parafeed.core.positions import snapshot
from parafeed.ops.interleave_cycle import Failed, InterleaveIterator
from parafeed.parallel.threads import BackgroundIterator

if TYPE_CHECKING:
    from parafeed.ops.interleave import InterleaveDataset

INPUT_CHUNK = 16  # elements an input's thread hands over at a time (sooner if they come slowly)


class ParallelInterleaveIterator(InterleaveIterator):
    """The serial interleave's order (when deterministic), with every open input read ahead on a thread of its own.

    When a slot is opened, the empty slots ahead of it in the cycle are opened at once with the following inputs:
    the serial order would put those inputs there anyway, since the cursor only fills the slot it stands on and
    slots ahead of it cannot be refilled before it reaches them. The inputs after those (one per slot at most) are
    opened ahead too, their first elements read while the open ones are read (a remote file's first requests in
    flight), so that a slot whose input ends goes on without waiting for the next file to open: which input comes
    next does not depend on which slot empties first. ``num_parallel_calls`` bounds how many inputs produce at the
    same time; ``deterministic=False`` takes from any input that is ready when the current one is not.
    """

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset, parallelism: int, deterministic: bool):
        super().__init__(parent, ds)
        self._limit = threading.Semaphore(parallelism)
        self._deterministic = deterministic
        self._chunk = max(ds.block_length, INPUT_CHUNK)
        self._spares: collections.deque[tuple[int, tuple, Any]] = collections.deque()  # (number, before, input)

    skip = DatasetIterator.skip  # (its inputs are read ahead on their threads: skipped element by element)

    def _open_input(self, it: DatasetIterator) -> Any:
        return BackgroundIterator(it, 2, "parafeed-interleave", self._limit, self._chunk)

    def _input_state(self, it: Any) -> dict:
        return it.get_state()

    def _fill(self, slot: int, defer: bool = False) -> bool:
        if not self._take(slot, defer):
            return False
        size = len(self._cycle)
        for offset in range(1, size):
            ahead = (slot + offset) % size
            if self._cycle[ahead] is None and not self._take(ahead, defer=True):
                return True  # the end of the input, or an input that failed: the cursor reaches it before reading on
        self._open_spares()
        return True

    def _take(self, slot: int, defer: bool) -> bool:
        """Put the next input in ``slot``: the first one opened ahead, else a new one (``_fill``'s rules)."""
        if not self._spares:
            return super()._fill(slot, defer)
        number, before, it = self._spares.popleft()
        if type(it) is Failed and not defer:
            raise cast(Exception, it.error)  # (counted as taken, as InterleaveIterator._fill counts it)
        self._cycle[slot], self._opened[slot] = it, (number, before)
        self._open += 1
        return type(it) is not Failed

    def _open_spares(self) -> None:
        """Open the inputs after the slots' (up to one per slot), stopping at the end of the input or a failure."""
        while len(self._spares) < len(self._cycle) and not self._input_done:
            if self._spares and type(self._spares[-1][2]) is Failed:
                return
            before, number = snapshot(self._parent), self._inputs
            try:
                element = next(self._parent)
                self._inputs += 1
                it: Any = self._open_input(build_in(self._scope, self._ds.open_input(element, number)))
            except StopIteration:
                self._input_done = True
                return
            except Exception as err:
                self._inputs = number + 1
                it = Failed(err)
            self._spares.append((number, before, it))

    def _more_inputs(self) -> bool:
        return not self._input_done or bool(self._spares)

    def _ahead(self) -> list[tuple[int, tuple]]:
        return [(number, before) for number, before, _ in self._spares]

    def _close_inputs(self) -> None:
        spares, self._spares = self._spares, collections.deque()
        for _, _, it in spares:
            it.close()
        super()._close_inputs()

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

"""The interleave iterator: tf.data's cycle of open inputs, ``block_length`` elements from each in turn (the
serial ``interleave``; :mod:`parafeed.ops.interleave_parallel` runs the same cycle with inputs read ahead)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from parafeed.core.iterator import DatasetIterator, build_in, current_scope
from parafeed.core.positions import position, seek, snapshot
from parafeed.errors import StateError

if TYPE_CHECKING:
    from parafeed.ops.interleave import InterleaveDataset


class InterleaveIterator(DatasetIterator):
    """tf.data's interleave order: a cycle of open iterators, ``block_length`` elements from each in turn.

    An exhausted iterator's slot is refilled from the next input element before the cycle moves on.
    """

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._scope = current_scope()
        self._cycle: list[Any] = [None] * ds.cycle_length  # per slot: None, an input (read ahead if parallel), a Failed
        self._opened: list[tuple] = [(0, (None, None))] * ds.cycle_length  # per slot: input number, state before
        self._open = 0
        self._slot = 0
        self._block = 0
        self._input_done = False
        self._inputs = 0

    def __next__(self) -> Any:
        cycle = self._cycle
        while self._more_inputs() or self._open:
            it = cycle[self._slot]
            if it is not None:
                if type(it) is Failed:  # an input that failed while read ahead: its turn has come
                    cycle[self._slot] = None
                    self._open -= 1
                    raise cast(Exception, it.error)  # (None only once closed)
                try:
                    x = next(it)
                except StopIteration:
                    it.close()
                    cycle[self._slot] = None
                    self._open -= 1
                    self._advance()
                    continue
                self._block += 1
                if self._block == self._ds.block_length:
                    self._advance()
                return x
            if self._more_inputs():
                self._fill(self._slot)
            else:
                self._advance()
        raise StopIteration

    def skip(self, n: int) -> int:
        """Skip ``n`` elements in the cycle's order, by whole rounds where every slot has an open input or none is left
        to open (each input skips with its own ``skip``: a TFRecord reader seeks), element by element elsewhere."""
        done = 0
        while done < n:
            open_slots = sum(1 for it in self._cycle if it is not None)
            rounds = (n - done) // (max(1, open_slots) * self._ds.block_length)
            if (
                rounds
                and open_slots
                and self._block == 0
                and not any(type(it) is Failed for it in self._cycle)
                and (open_slots == len(self._cycle) or not self._more_inputs())  # (an empty slot stays empty)
            ):
                done += self._skip_rounds(rounds)
            elif DatasetIterator.skip(self, 1):
                done += 1
            else:
                break
        return done

    def _skip_rounds(self, rounds: int) -> int:
        """Skip ``rounds`` whole rounds of the cycle from slot ``self._slot`` (at a block's start; every slot open, or
        empty for good); returns the elements skipped.

        As ``__next__`` does: an input found ended at its turn gives nothing that turn (the cursor moves on) and its
        slot is refilled with the next input at the slot's next turn. So each slot first skips its share; a slot
        whose input ended in round ``q`` is refilled at round ``q + 1``, in the order those turns come (round, then
        place in the cycle from the cursor), since each refill takes the next input."""
        import heapq

        size, block, start = len(self._cycle), self._ds.block_length, self._slot
        skipped = 0
        turns: list[tuple[int, int]] = []  # (round, place from the cursor) of the refills due
        for place in range(size):
            slot = (start + place) % size
            if self._cycle[slot] is None:  # (no input left to put there: the turn passes)
                continue
            got = self._cycle[slot].skip(rounds * block)
            skipped += got
            if got < rounds * block:
                self._end_input(slot)
                heapq.heappush(turns, (got // block + 1, place))
        while turns:
            turn, place = heapq.heappop(turns)
            if turn >= rounds or not self._more_inputs():
                continue
            slot = (start + place) % size
            if not self._fill(slot):  # (the end of the input; an error raises as __next__ raises it)
                continue
            want = (rounds - turn) * block
            got = self._cycle[slot].skip(want)
            skipped += got
            if got < want:
                self._end_input(slot)
                heapq.heappush(turns, (turn + got // block + 1, place))
        return skipped

    def _end_input(self, slot: int) -> None:
        self._cycle[slot].close()
        self._cycle[slot] = None
        self._open -= 1

    def _more_inputs(self) -> bool:
        """Whether inputs remain to open in a slot."""
        return not self._input_done

    def _ahead(self) -> list[tuple[int, tuple]]:
        """(input number, the input's state before it) of the inputs taken from the input but in no slot yet (the
        parallel interleave opens the next ones ahead); after a restore they are taken again."""
        return []

    def _fill(self, slot: int, defer: bool = False) -> bool:
        """Open the next input in ``slot``; False at the end of the input.

        An input element that fails (or whose ``map_func`` fails) counts as taken. With ``defer`` (an input read
        ahead of the cursor) the error is kept in the slot, to be raised when the cursor reaches it, as tf.data raises
        it; then this returns False too.
        """
        before, number = snapshot(self._parent), self._inputs
        try:
            element = next(self._parent)
        except StopIteration:
            self._input_done = True
            return False
        except Exception as err:
            self._inputs += 1
            return self._failed(slot, number, before, err, defer)
        self._inputs += 1
        try:
            it = build_in(self._scope, self._ds.open_input(element, number))
        except Exception as err:
            return self._failed(slot, number, before, err, defer)
        self._cycle[slot] = self._open_input(it)
        self._opened[slot] = (number, before)
        self._open += 1
        return True

    def _failed(self, slot: int, number: int, before: tuple, error: Exception, defer: bool) -> bool:
        if not defer:
            raise error
        self._cycle[slot] = Failed(error)
        self._opened[slot] = (number, before)
        self._open += 1
        return False

    def _open_input(self, it: DatasetIterator) -> Any:
        return it

    def _input_state(self, it: Any) -> dict:
        return position(it.get_state(), 0)

    def _get_state(self) -> dict:
        """Size: the input's state and one state per open input (``cycle_length`` at most)."""
        slots: list = [None] * len(self._cycle)
        earliest = None
        for i, it in enumerate(self._cycle):
            if it is not None:
                number, (before, error) = self._opened[i]
                slots[i] = [number, None if type(it) is Failed else self._input_state(it)]
                if earliest is None or number < earliest[0]:
                    earliest = (number, position(before, 0, error)["at"])
        ahead = self._ahead()
        if ahead and (earliest is None or ahead[0][0] < earliest[0]):
            number, (before, error) = ahead[0]
            earliest = (number, position(before, 0, error)["at"])
        if earliest is None:
            earliest = (self._inputs, self._parent.get_state())
        return {
            "from": earliest[0], "at": earliest[1], "inputs": ahead[0][0] if ahead else self._inputs, "slots": slots,
            "slot": self._slot, "block": self._block, "input_done": self._input_done and not ahead,
        }  # fmt: skip

    def _set_state(self, state: dict) -> None:
        if len(state["slots"]) != len(self._cycle):
            raise StateError(
                f"set_state(): {self._ds.step} was saved with cycle_length={len(state['slots'])}, this pipeline has "
                f"{len(self._cycle)} (AUTOTUNE picks the number of cores); give cycle_length explicitly to resume "
                "on other machines"
            )
        self._close_inputs()
        self._parent.set_state(state["at"])
        here = int(state["from"])
        opened = sorted((s[0], i, s[1]) for i, s in enumerate(state["slots"]) if s is not None)
        self._inputs = here
        for number, slot, pos in opened:
            if number < here or self._parent.skip(number - here) != number - here:
                raise StateError(f"set_state(): {self._ds.step}: the input ended before input {number}")
            self._inputs = number
            if pos is None:  # an input that had failed when read ahead: read it again (failing again, as a rule)
                InterleaveIterator._fill(self, slot, defer=True)  # this slot alone, not those ahead
            else:
                before = snapshot(self._parent)
                it = build_in(self._scope, self._ds.open_input(next(self._parent), number))
                seek(it, pos)
                self._cycle[slot], self._opened[slot] = self._open_input(it), (number, before)
                self._open += 1
            here = number + 1
        self._inputs = int(state["inputs"])
        if self._inputs > here and self._parent.skip(self._inputs - here) != self._inputs - here:
            raise StateError(f"set_state(): {self._ds.step}: the input ended before the saved position")
        self._slot, self._block, self._input_done = int(state["slot"]), int(state["block"]), bool(state["input_done"])

    def _advance(self) -> None:
        self._block = 0
        self._slot = (self._slot + 1) % len(self._cycle)

    def _close_inputs(self) -> None:
        for i, it in enumerate(self._cycle):
            if it is not None:
                it.close()
                self._cycle[i] = None
        self._open = 0

    def close(self) -> None:
        self._close_inputs()
        super().close()


class Failed:
    """A cycle slot whose input element (or ``map_func``) failed while read ahead of the cursor."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error: Exception | None = error

    def ready(self) -> bool:
        return False  # never taken out of turn: the error surfaces where the serial order has it

    def close(self) -> None:
        self.error = None


class InWorkerInterleaveIterator(InterleaveIterator):
    """A deterministic parallel interleave read in the cycle's order by an input worker (``offload``, a process
    map's input in its workers); its states are the parallel interleave's, which has the same fields, so they
    restore into the pipeline run on one host, and the other way round."""

    def _step_name(self) -> str:
        return "ParallelInterleave"

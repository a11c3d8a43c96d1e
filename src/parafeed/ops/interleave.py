"""``interleave`` and ``flat_map``: map elements to datasets and mix or chain their elements."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from parafeed.arguments import callable_arg, deterministic_arg, parallelism_arg, positive_int
from parafeed.checkpoint.positions import position, seek, snapshot
from parafeed.dataset import AUTOTUNE, INFINITE, UNKNOWN, Dataset
from parafeed.errors import ElementTypeError, InvalidArgumentError, StateError
from parafeed.functions import call, fn_name, user_error
from parafeed.iterator import DatasetIterator, build_in, current_scope, resolve_deterministic
from parafeed.ops.flat_map import _FlatMapIterator


def schedulable_cpus() -> int:
    """The cores this process may run on (what TensorFlow's ``port::MaxParallelism()`` counts), not all cores."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


CYCLE_PREFETCH_FACTOR = 2  # tf.data's parallel interleave opens this many future inputs per cycle slot


def default_cycle_length(num_parallel_calls: int | None, cpus: int | None = None) -> int:
    """tf.data's ``cycle_length`` when it is None or AUTOTUNE, on ``cpus`` schedulable cores.

    The serial interleave takes every core; a parallel one takes ``num_parallel_calls`` (at most every core), or with
    AUTOTUNE parallelism one slot per three cores (rounded up), since each slot has a thread for its current input and
    two for future ones.
    """
    cpus = schedulable_cpus() if cpus is None else cpus
    if num_parallel_calls is None:
        return cpus
    if num_parallel_calls == AUTOTUNE:
        return -(-cpus // (CYCLE_PREFETCH_FACTOR + 1))
    return min(num_parallel_calls, cpus)


class InterleaveDataset(Dataset):
    """Elements of the datasets ``map_func(element)``, ``block_length`` at a time from ``cycle_length`` of them.

    With ``cycle_length=1`` this is ``flat_map``: the datasets one after another.
    """

    order_fixed = False  # the datasets come from map_func

    def __init__(
        self,
        parent: Dataset,
        map_func: Callable[..., Dataset],
        cycle_length: int | None,
        block_length: int | None,
        num_parallel_calls: int | None,
        deterministic: bool | None,
        name: str | None = None,
        what: str = "interleave",
    ):
        super().__init__((parent,), name=name)
        self._step = f"{what}()"
        self._fn = callable_arg(self._step, "map_func", map_func)
        self._block_length = 1 if block_length is None else positive_int(self._step, "block_length", block_length)
        self._num_parallel_calls = parallelism_arg(self._step, num_parallel_calls)
        self._deterministic = deterministic_arg(self._step, deterministic)
        if cycle_length is None or cycle_length == AUTOTUNE:
            self._cycle_length = default_cycle_length(self._num_parallel_calls)
        else:
            self._cycle_length = positive_int(self._step, "cycle_length", cycle_length)
            calls = self._num_parallel_calls
            if calls is not None and calls != AUTOTUNE and calls > self._cycle_length:
                raise InvalidArgumentError(
                    f"{self._step}: with a fixed `cycle_length` ({self._cycle_length}), `num_parallel_calls` must be "
                    f"AUTOTUNE or at most `cycle_length`, got {calls}"
                )

    def _make_iterator(self) -> DatasetIterator:
        calls = self._num_parallel_calls
        if calls is not None and calls != AUTOTUNE and calls > self._cycle_length:  # as tf.data, when iterating
            raise InvalidArgumentError(
                f"{self._step}: `num_parallel_calls` ({calls}) is more than the cycle_length of {self._cycle_length} "
                "taken from the schedulable cores when `cycle_length` is not given; give `cycle_length`, or "
                "num_parallel_calls=AUTOTUNE"
            )
        parent = self._parents[0]._iter()
        if self._cycle_length == 1:
            return _FlatMapIterator(parent, self)
        if self._num_parallel_calls is None:
            return _InterleaveIterator(parent, self)
        from parafeed.ops.interleave_parallel import _ParallelInterleaveIterator  # it subclasses _InterleaveIterator

        parallelism = self._cycle_length if self._num_parallel_calls == AUTOTUNE else self._num_parallel_calls
        return _ParallelInterleaveIterator(parent, self, parallelism, resolve_deterministic(self._deterministic))

    def _element_spec(self) -> Any:
        return self._open(self._parents[0]._sample_element(), None).element_spec

    def _cardinality(self) -> int:
        # tf.data: a parallel interleave of an endless input never ends (but for the legacy
        # experimental.parallel_interleave's step); otherwise the count is not known
        legacy = self._step == "parallel_interleave()"
        if self._num_parallel_calls is not None and not legacy and self._parents[0]._cardinality() == INFINITE:
            return INFINITE
        return UNKNOWN

    def _static_shapes(self) -> bool:
        return False

    def _open(self, element: Any, index: int | None) -> Dataset:
        try:
            ds = call(self._fn, element)
        except Exception as err:
            raise user_error(err, self._step, self._fn, index)
        if not isinstance(ds, Dataset):
            raise ElementTypeError(
                f"{self._step}: `map_func` {fn_name(self._fn)} must return a Dataset, got {type(ds).__name__}; "
                "wrap tensors with Dataset.from_tensors() or from_tensor_slices()"
            )
        return ds


class _InterleaveIterator(DatasetIterator):
    """tf.data's interleave order: a cycle of open iterators, ``block_length`` elements from each in turn.

    An exhausted iterator's slot is refilled from the next input element before the cycle moves on.
    """

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._scope = current_scope()
        self._cycle: list[DatasetIterator | None] = [None] * ds._cycle_length
        self._opened: list[tuple] = [(0, (None, None))] * ds._cycle_length  # per slot: input number, state before
        self._open = 0
        self._slot = 0
        self._block = 0
        self._input_done = False
        self._inputs = 0

    def __next__(self) -> Any:
        cycle = self._cycle
        while not self._input_done or self._open:
            it = cycle[self._slot]
            if it is not None:
                if type(it) is _Failed:  # an input that failed while read ahead: its turn has come
                    cycle[self._slot] = None
                    self._open -= 1
                    raise it.error
                try:
                    x = next(it)
                except StopIteration:
                    it.close()
                    cycle[self._slot] = None
                    self._open -= 1
                    self._advance()
                    continue
                self._block += 1
                if self._block == self._ds._block_length:
                    self._advance()
                return x
            if not self._input_done:
                self._fill(self._slot)
            else:
                self._advance()
        raise StopIteration

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
            it = build_in(self._scope, self._ds._open(element, number))
        except Exception as err:
            return self._failed(slot, number, before, err, defer)
        self._cycle[slot] = self._open_input(it)
        self._opened[slot] = (number, before)
        self._open += 1
        return True

    def _failed(self, slot: int, number: int, before: tuple, error: Exception, defer: bool) -> bool:
        if not defer:
            raise error
        self._cycle[slot] = _Failed(error)
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
                slots[i] = [number, None if type(it) is _Failed else self._input_state(it)]
                if earliest is None or number < earliest[0]:
                    earliest = (number, position(before, 0, error)["at"])
        if earliest is None:
            earliest = (self._inputs, self._parent.get_state())
        return {
            "from": earliest[0], "at": earliest[1], "inputs": self._inputs, "slots": slots, "slot": self._slot,
            "block": self._block, "input_done": self._input_done,
        }  # fmt: skip

    def _set_state(self, state: dict) -> None:
        if len(state["slots"]) != len(self._cycle):
            raise StateError(
                f"set_state(): {self._ds._step} was saved with cycle_length={len(state['slots'])}, this pipeline has "
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
                raise StateError(f"set_state(): {self._ds._step}: the input ended before input {number}")
            self._inputs = number
            if pos is None:  # an input that had failed when read ahead: read it again (failing again, as a rule)
                _InterleaveIterator._fill(self, slot, defer=True)  # this slot alone, not those ahead
            else:
                before = snapshot(self._parent)
                it = build_in(self._scope, self._ds._open(next(self._parent), number))
                seek(it, pos)
                self._cycle[slot], self._opened[slot] = self._open_input(it), (number, before)
                self._open += 1
            here = number + 1
        self._inputs = int(state["inputs"])
        if self._inputs > here and self._parent.skip(self._inputs - here) != self._inputs - here:
            raise StateError(f"set_state(): {self._ds._step}: the input ended before the saved position")
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


class _Failed:
    """A cycle slot whose input element (or ``map_func``) failed while read ahead of the cursor."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error

    def ready(self) -> bool:
        return False  # never taken out of turn: the error surfaces where the serial order has it

    def close(self) -> None:
        self.error = None

"""``interleave`` and ``flat_map``: map elements to datasets and mix or chain their elements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parafeed.core.arguments import callable_arg, deterministic_arg, parallelism_arg, positive_int
from parafeed.core.dataset import AUTOTUNE, INFINITE, UNKNOWN, Dataset
from parafeed.core.functions import call, fn_name, user_error
from parafeed.core.iterator import DatasetIterator, current_scope, resolve_deterministic
from parafeed.core.options import schedulable_cpus
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.ops.flat_map import FlatMapIterator
from parafeed.ops.interleave_cycle import InterleaveIterator, InWorkerInterleaveIterator
from parafeed.ops.interleave_parallel import ParallelInterleaveIterator

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
        self.step = f"{what}()"
        self._fn = callable_arg(self.step, "map_func", map_func)
        self.block_length = 1 if block_length is None else positive_int(self.step, "block_length", block_length)
        self._num_parallel_calls = parallelism_arg(self.step, num_parallel_calls)
        self._deterministic = deterministic_arg(self.step, deterministic)
        if cycle_length is None or cycle_length == AUTOTUNE:
            self.cycle_length = default_cycle_length(self._num_parallel_calls)
        else:
            self.cycle_length = positive_int(self.step, "cycle_length", cycle_length)
            calls = self._num_parallel_calls
            if calls is not None and calls != AUTOTUNE and calls > self.cycle_length:
                raise InvalidArgumentError(
                    f"{self.step}: with a fixed `cycle_length` ({self.cycle_length}), `num_parallel_calls` must be "
                    f"AUTOTUNE or at most `cycle_length`, got {calls}"
                )

    def _make_iterator(self) -> DatasetIterator:
        calls = self._num_parallel_calls
        if calls is not None and calls != AUTOTUNE and calls > self.cycle_length:  # as tf.data, when iterating
            raise InvalidArgumentError(
                f"{self.step}: `num_parallel_calls` ({calls}) is more than the cycle_length of {self.cycle_length} "
                "taken from the schedulable cores when `cycle_length` is not given; give `cycle_length`, or "
                "num_parallel_calls=AUTOTUNE"
            )
        parent = self._parents[0]._iter()
        if self.cycle_length == 1:
            return FlatMapIterator(parent, self)
        deterministic = resolve_deterministic(self._deterministic)
        run = current_scope().run
        if self._num_parallel_calls is None:
            return InterleaveIterator(parent, self)
        if deterministic and run is not None and run.input_worker:  # (an input worker reads in the cycle's order
            return InWorkerInterleaveIterator(parent, self)  # itself: its skips over the others' blocks seek)
        parallelism = self.cycle_length if self._num_parallel_calls == AUTOTUNE else self._num_parallel_calls
        return ParallelInterleaveIterator(parent, self, parallelism, deterministic)

    def _element_spec(self) -> Any:
        return self.open_input(self._parents[0]._sample_element(), None).element_spec

    def _cardinality(self) -> int:
        # tf.data: a parallel interleave of an endless input never ends (but for the legacy
        # experimental.parallel_interleave's step); otherwise the count is not known
        legacy = self.step == "parallel_interleave()"
        if self._num_parallel_calls is not None and not legacy and self._parents[0]._cardinality() == INFINITE:
            return INFINITE
        return UNKNOWN

    def _static_shapes(self) -> bool:
        return False

    def open_input(self, element: Any, index: int | None) -> Dataset:
        """The dataset ``map_func`` makes of input element ``index``, checked (what the iterators open)."""
        try:
            ds = call(self._fn, element)
        except Exception as err:
            raise user_error(err, self.step, self._fn, index)
        if not isinstance(ds, Dataset):
            raise ElementTypeError(
                f"{self.step}: `map_func` {fn_name(self._fn)} must return a Dataset, got {type(ds).__name__}; "
                "wrap tensors with Dataset.from_tensors() or from_tensor_slices()"
            )
        return ds

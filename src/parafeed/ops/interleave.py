"""``interleave`` and ``flat_map``: map elements to datasets and mix or chain their elements."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from parafeed.arguments import callable_arg, deterministic_arg, parallelism_arg, positive_int
from parafeed.dataset import AUTOTUNE, Dataset, DatasetIterator, iterate_in
from parafeed.errors import ElementTypeError
from parafeed.functions import call, fn_name, user_error
from parafeed.parallel.threads import BackgroundIterator
from parafeed.stats import current_pipeline, resolve_deterministic


class InterleaveDataset(Dataset):
    """Elements of the datasets ``map_func(element)``, ``block_length`` at a time from ``cycle_length`` of them.

    With ``cycle_length=1`` this is ``flat_map``: the datasets one after another.
    """

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
        if cycle_length is None or cycle_length == AUTOTUNE:
            self._cycle_length = os.cpu_count() or 1
        else:
            self._cycle_length = positive_int(self._step, "cycle_length", cycle_length)
        self._block_length = 1 if block_length is None else positive_int(self._step, "block_length", block_length)
        self._num_parallel_calls = parallelism_arg(self._step, num_parallel_calls)
        self._deterministic = deterministic_arg(self._step, deterministic)

    def _make_iterator(self) -> DatasetIterator:
        parent = self._parents[0]._iter()
        if self._cycle_length == 1:
            return _FlatMapIterator(parent, self)
        if self._num_parallel_calls is None:
            return _InterleaveIterator(parent, self)
        parallelism = self._cycle_length if self._num_parallel_calls == AUTOTUNE else self._num_parallel_calls
        return _ParallelInterleaveIterator(parent, self, parallelism, resolve_deterministic(self._deterministic))

    def _element_spec(self) -> Any:
        return self._open(self._parents[0]._sample_element(), None).element_spec

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


class _FlatMapIterator(DatasetIterator):
    """One dataset after another (``cycle_length=1``, where block_length does not matter)."""

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._context = current_pipeline()
        self._current: DatasetIterator | None = None
        self._inputs = 0

    def __next__(self) -> Any:
        while True:
            it = self._current
            if it is not None:
                try:
                    return next(it)
                except StopIteration:
                    it.close()
                    self._current = None
            element = next(self._parent)
            self._current = iterate_in(self._context, self._ds._open(element, self._inputs))
            self._inputs += 1

    def skip(self, n: int) -> int:
        done = 0
        while done < n:
            if self._current is None:
                try:
                    element = next(self._parent)
                except StopIteration:
                    break
                self._current = iterate_in(self._context, self._ds._open(element, self._inputs))
                self._inputs += 1
            got = self._current.skip(n - done)
            done += got
            if done < n:
                self._current.close()
                self._current = None
        return done

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        super().close()


class _InterleaveIterator(DatasetIterator):
    """tf.data's interleave order: a cycle of open iterators, ``block_length`` elements from each in turn.

    An exhausted iterator's slot is refilled from the next input element before the cycle moves on.
    """

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._context = current_pipeline()
        self._cycle: list[DatasetIterator | None] = [None] * ds._cycle_length
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

    def _fill(self, slot: int) -> bool:
        """Open the next input in ``slot``; False at the end of the input."""
        try:
            element = next(self._parent)
        except StopIteration:
            self._input_done = True
            return False
        self._cycle[slot] = self._open_input(iterate_in(self._context, self._ds._open(element, self._inputs)))
        self._inputs += 1
        self._open += 1
        return True

    def _open_input(self, it: DatasetIterator) -> Any:
        return it

    def _advance(self) -> None:
        self._block = 0
        self._slot = (self._slot + 1) % len(self._cycle)

    def close(self) -> None:
        for i, it in enumerate(self._cycle):
            if it is not None:
                it.close()
                self._cycle[i] = None
        self._open = 0
        super().close()


INPUT_CHUNK = 16  # elements an input's thread hands over at a time (sooner if they come slowly)


class _ParallelInterleaveIterator(_InterleaveIterator):
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
        self._chunk = max(ds._block_length, INPUT_CHUNK)

    def _open_input(self, it: DatasetIterator) -> Any:
        return BackgroundIterator(it, 2, "parafeed-interleave", self._limit, self._chunk)

    def _fill(self, slot: int) -> bool:
        if not super()._fill(slot):
            return False
        size = len(self._cycle)
        for offset in range(1, size):
            ahead = (slot + offset) % size
            if self._cycle[ahead] is None and not super()._fill(ahead):
                break
        return True

    def __next__(self) -> Any:
        if not self._deterministic:
            current = self._cycle[self._slot]
            if current is not None and not current.ready():
                for it in self._cycle:
                    if it is not None and it is not current and it.ready():
                        try:
                            return it.get()
                        except StopIteration:
                            break  # the serial path closes it when the cursor gets there
        return super().__next__()

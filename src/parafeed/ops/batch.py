"""``batch``, ``unbatch`` and ``rebatch``: stacking elements along a new first dimension and splitting them again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.arguments import as_int, positive_int
from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset
from parafeed.core.graph import BATCHING, batched_cardinality, batched_counts
from parafeed.core.iterator import DatasetIterator, building, current_options, current_scope, take
from parafeed.core.positions import position, snapshot
from parafeed.errors import InvalidArgumentError
from parafeed.ops.map import MapDataset
from parafeed.values.ragged_spec import RaggedTensorSpec
from parafeed.values.stacking import concat_rows, row_count, slice_rows, split_rows, stack_elements
from parafeed.values.structure import TensorSpec, batch_spec, flatten, unbatch_spec


class BatchDataset(Dataset):
    """Batches of ``batch_size`` consecutive elements."""

    kind = BATCHING
    whole_batches = True

    def __init__(self, parent: Dataset, batch_size: int, drop_remainder: bool = False, name: str | None = None):
        super().__init__((parent,), name=name)
        self.batch_size: int = positive_int("batch()", "batch_size", batch_size)
        self.drop_remainder = bool(drop_remainder)

    def _make_iterator(self) -> DatasetIterator:
        if self._parents[0]._static_shapes():  # components tf.data types as ragged batch into RaggedTensors
            from parafeed.ops.ragged_batch import ragged_batch_iterator

            ragged = ragged_batch_iterator(self._parents[0], self.batch_size, self.drop_remainder)
            if ragged is not None:
                return ragged
        parent = self._parents[0]
        if isinstance(parent, MapDataset) and current_options().experimental_optimization.fuses_map_and_batch():
            from parafeed.ops.map_and_batch import MapAndBatchIterator
            from parafeed.ops.offload import workers_read_the_input
            from parafeed.parallel.batch_rows import BatchRows

            offloaded = workers_read_the_input(self, parent)  # (a map on processes: its workers read its input)
            if offloaded is not None:
                return offloaded
            rows = BatchRows(self.batch_size)
            fused = MapAndBatchIterator(parent._iter(rows=rows), rows, self.drop_remainder)
            if parent.may_move_to_processes():
                return _MovingBatchIterator(fused, lambda: workers_read_the_input(self, parent), parent.learned)
            return fused
        return _BatchIterator(parent._iter(), self.batch_size, self.drop_remainder)

    def _element_spec(self) -> Any:
        return batch_spec(self._parents[0].element_spec, self.batch_size if self.drop_remainder else None)

    def _sample_element(self) -> Any:
        return stack_elements([self._parents[0]._sample_element()] * self.batch_size, "batch()")

    def _cardinality(self) -> int:
        return batched_cardinality(self._parents[0]._cardinality(), self.batch_size, self.drop_remainder)

    def _replica_counts(self, start: Any = 0) -> list[int] | None:
        return batched_counts(self._parents[0]._replica_counts(start), self.batch_size, self.drop_remainder)


class _MovingBatchIterator(DatasetIterator):
    """A fused map and batch whose map may move to worker processes (AUTOTUNE, no executor chosen): once it has moved,
    at the next batch the pipeline up to the batch goes on from its state with its input read in those workers too
    (:func:`parafeed.ops.offload.workers_read_the_input`), as the step's next passes start. Its states are the fused
    batch's either way."""

    def __init__(self, fused: DatasetIterator, moved: Callable[[], DatasetIterator | None], learned: Any):
        super().__init__(fused)
        self._it = fused
        self._moved: Callable[[], DatasetIterator | None] | None = moved
        self._learned = learned
        self._scope = current_scope()

    def __next__(self) -> Any:
        if self._moved is not None and self._learned.executor == "process":
            self._move(self._moved)
        return next(self._it)

    def _move(self, moved: Callable[[], DatasetIterator | None]) -> None:
        self._moved = None
        state, _ = snapshot(self._it)  # (between two batches)
        if state is None:
            return
        with building(self._scope):
            it = moved()
        if it is None:
            return
        it.set_state(state)
        self._it.close()
        self._parents, self._it = (it,), it

    def skip(self, n: int) -> int:
        return self._it.skip(n)

    def _step_name(self) -> str:
        return "Batch"

    def _get_state(self) -> dict:
        return self._it._get_state()

    def _set_state(self, state: dict) -> None:
        self._it._set_state(state)


class _BatchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, batch_size: int, drop_remainder: bool):
        super().__init__(parent)
        self._parent = parent
        self._batch_size = batch_size
        self._drop_remainder = drop_remainder

    def __next__(self) -> Any:
        buf = take(self._parent, self._batch_size)
        if not buf or (self._drop_remainder and len(buf) < self._batch_size):
            raise StopIteration
        return stack_elements(buf, "batch()")

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state()}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])


class UnbatchDataset(Dataset):
    """The rows of each element's components, as separate elements."""

    def __init__(self, parent: Dataset, name: str | None = None):
        super().__init__((parent,), name=name)
        if parent._static_shapes():  # tf.data refuses scalars and unequal batch dimensions when it is built
            _check_batch_dims(parent.element_spec)
            self.element_spec  # noqa: B018 - raises for scalar components

    def _make_iterator(self) -> DatasetIterator:
        return _UnbatchIterator(self._parents[0]._iter())

    def _element_spec(self) -> Any:
        return unbatch_spec(self._parents[0].element_spec)

    def _sample_element(self) -> Any:
        rows = split_rows(self._parents[0]._sample_element(), "unbatch()")  # (no iteration: an input may be empty)
        return rows[0] if rows else super()._sample_element()

    def _cardinality(self) -> int:
        parent = self._parents[0]
        n = parent._cardinality()
        if n in (INFINITE, UNKNOWN):
            return n
        dim = _static_batch_dim(parent)  # tf.data multiplies by it: unknown where it is not known or 0, even for n = 0
        return n * dim if dim else UNKNOWN


def _static_batch_dim(ds: Dataset) -> int | None:
    """The first dimension of every component of ``ds``'s elements where tf.data knows it when the step is built: the
    batch size of a batching step that drops its remainder (whatever its input), or from shapes derived statically."""
    if getattr(ds, "drop_remainder", False):
        return ds.batch_size  # (batch, padded_batch, ragged_batch)
    if not ds._static_shapes():
        return None
    leaves = [s for s in flatten(ds.element_spec) if isinstance(s, (TensorSpec, RaggedTensorSpec))]
    dims = {s.shape[0] if s.shape else None for s in leaves}
    return dims.pop() if len(dims) == 1 else None


def _check_batch_dims(spec: Any) -> None:
    known = {s.shape[0] for s in flatten(spec) if isinstance(s, TensorSpec) and s.shape and s.shape[0] is not None}
    if len(known) > 1:
        raise InvalidArgumentError(
            f"unbatch(): the components of the input elements must have the same first (batch) dimension, got "
            f"{sorted(known)} in element spec {spec!r}"
        )


class _UnbatchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator):
        super().__init__(parent)
        self._parent = parent
        self._rows: list = []
        self._row = 0  # rows of the current input batch already returned
        self._at: Any = None  # the input's state before the current batch
        self._error: Any = None

    def __next__(self) -> Any:
        while self._row >= len(self._rows):
            self._at, self._error = snapshot(self._parent)
            self._rows, self._row = split_rows(next(self._parent), "unbatch()"), 0
        self._row += 1
        return self._rows[self._row - 1]

    def _get_state(self) -> dict:
        if self._row >= len(self._rows):  # between input batches
            return {"at": self._parent.get_state(), "row": 0}
        return {"at": position(self._at, 0, self._error)["at"], "row": self._row}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["at"])
        self._at, self._rows, self._row = state["at"], [], 0
        if state["row"]:
            self._rows, self._row = split_rows(next(self._parent), "unbatch()"), int(state["row"])


class RebatchDataset(Dataset):
    """Batched elements re-cut into batches of ``batch_size`` rows (sizes cycled when a list is given)."""

    def __init__(
        self, parent: Dataset, batch_size: int | list[int], drop_remainder: bool = False, name: str | None = None
    ):
        super().__init__((parent,), name=name)
        sizes = [batch_size] if np.ndim(batch_size) == 0 else list(np.asarray(batch_size).reshape(-1))
        if np.ndim(batch_size) > 1 or not sizes:
            raise InvalidArgumentError(
                f"rebatch(): `batch_size` must be a scalar or a non-empty list, got {batch_size!r}"
            )
        self._sizes = [as_int("rebatch()", "batch_size", s) for s in sizes]
        if any(s < 0 for s in self._sizes) or not any(self._sizes):
            raise InvalidArgumentError(f"rebatch(): batch sizes must be >= 0 and not all 0, got {self._sizes}")
        self._drop_remainder = bool(drop_remainder)

    def _make_iterator(self) -> DatasetIterator:
        return _RebatchIterator(self._parents[0]._iter(), self._sizes, self._drop_remainder)

    def _element_spec(self) -> Any:
        fixed = len(set(self._sizes)) == 1 and self._drop_remainder
        return batch_spec(unbatch_spec(self._parents[0].element_spec), self._sizes[0] if fixed else None)

    def _cardinality(self) -> int:
        return UNKNOWN  # as tf.data's, for every input (even an empty or an infinite one)


class _RebatchIterator(DatasetIterator):
    """Slices rows out of the input batches without unbatching them one by one."""

    def __init__(self, parent: DatasetIterator, sizes: list[int], drop_remainder: bool):
        super().__init__(parent)
        self._parent = parent
        self._sizes = sizes
        self._turn = 0
        self._drop_remainder = drop_remainder
        self._current: Any = None  # the input batch being cut, its row count and the next row to use
        self._last: Any = None  # the last input batch read (the template of an empty batch after the input ends)
        self._last_at: Any = None  # the input's state before it
        self._rows = 0
        self._offset = 0
        self._done = False
        self._at: Any = None  # the input's state before the current batch
        self._error: Any = None

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        want = self._sizes[self._turn % len(self._sizes)]
        self._turn += 1
        if want == 0:  # tf.data gives an empty batch, input or not
            return self._empty()
        pieces, have = [], 0
        while True:
            if self._current is None:
                self._at, self._error = snapshot(self._parent)
                try:
                    self._current = next(self._parent)
                except StopIteration:
                    break
                self._rows, self._offset = row_count(self._current), 0
                self._last, self._last_at = self._current, self._at
            take = min(want - have, self._rows - self._offset)
            pieces.append(slice_rows(self._current, self._offset, self._offset + take))
            have += take
            self._offset += take
            if self._offset >= self._rows:
                self._current = None
            if have == want:
                break
        if not pieces or (have < want and (self._drop_remainder or have == 0)):
            self._done = True
            raise StopIteration
        return pieces[0] if len(pieces) == 1 else concat_rows(pieces)

    def _empty(self) -> Any:
        """A batch of 0 rows, cut from the input batch being cut, the next one, or the last one."""
        if self._current is None:
            self._at, self._error = snapshot(self._parent)
            try:
                self._current = next(self._parent)
                self._rows, self._offset = row_count(self._current), 0
                self._last, self._last_at = self._current, self._at
            except StopIteration:
                pass
        template = self._current if self._current is not None else self._last
        if template is None:
            self._done = True
            raise StopIteration
        return slice_rows(template, 0, 0)

    def _get_state(self) -> dict:
        state = {"turn": self._turn, "done": self._done, "offset": 0}
        if self._current is None:
            if self._last is not None and 0 in self._sizes:  # re-read the last batch: empty batches are cut from it
                return {**state, "at": position(self._last_at, 0, self._error)["at"], "last": True}
            return {**state, "at": self._parent.get_state()}
        return {**state, "at": position(self._at, 0, self._error)["at"], "offset": self._offset}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["at"])
        self._at, self._current, self._offset = state["at"], None, int(state["offset"])
        self._turn, self._done = int(state["turn"]), bool(state["done"])
        if self._offset:
            self._current = self._last = next(self._parent)
            self._rows, self._last_at = row_count(self._current), self._at
        elif state.get("last"):
            self._last, self._last_at = next(self._parent), self._at

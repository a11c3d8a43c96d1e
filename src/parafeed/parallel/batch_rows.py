"""Batches filled in place, row by row, by the threads or worker processes that compute a fused map's results.

A result is copied into its row of the batch by the thread that computed it, while it is still in that core's
cache; stacking afterwards would read every row again from main memory. Results whose leaves are numeric NumPy arrays
(or scalars) of one shape and dtype, in batches of at least :data:`parafeed.values.buffers.MIN_BYTES`, are written in
place; anything else is stacked exactly as ``batch()`` stacks it. Used by ``map`` + ``batch`` fusion
(:mod:`parafeed.ops.map_and_batch`) and, through shared memory, by the process executor
(:mod:`parafeed.parallel.shared_batches`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from parafeed.values import buffers
from parafeed.values.stacking import stack_elements
from parafeed.values.structure import flatten, pack_as, same_structure

if TYPE_CHECKING:
    from parafeed.parallel.shared_batches import SharedBatches


Layout = tuple[list[tuple[int, int, tuple[int, ...], str]], int]
"""Where a batch's leaves lie in its segment: ``([(offset, row bytes, row shape, dtype str), ...], total bytes)``."""

LeafSpec = tuple[tuple[int, ...], np.dtype[Any]]
"""A leaf's row shape and dtype."""


def layout_of(specs: list[LeafSpec], size: int) -> Layout:
    """Leaves of ``specs`` (row shape, dtype), ``size`` rows each, one after the other, each on a 64-byte boundary."""
    parts, offset = [], 0
    for shape, dtype in specs:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        parts.append((offset, nbytes, tuple(shape), dtype.str))
        offset += -(-nbytes * size // 64) * 64
    return parts, offset


class Placed:
    """What a result written into its row is replaced by: its size (for the pipeline's statistics) and, when a worker
    process wrote it (``remote``), its structure with ``None`` leaves (the consumer checks it against the batch)."""

    __slots__ = ("nbytes", "remote", "skeleton")

    def __init__(self, nbytes: int, remote: bool = False, skeleton: Any = None):
        self.nbytes = nbytes
        self.remote = remote
        self.skeleton = skeleton


_NUMERIC = frozenset("biufc")


def array_leaves(value: Any) -> list[Any] | None:
    """``value``'s leaves when every one is a numeric NumPy array or scalar (what can be written into a row), else
    None."""
    leaves = [value] if type(value) is np.ndarray else flatten(value) if isinstance(value, (tuple, dict)) else None
    if not leaves or not all(
        (type(x) is np.ndarray or isinstance(x, np.generic)) and x.dtype.kind in _NUMERIC for x in leaves
    ):
        return None
    return leaves


def skeleton_of(value: Any, count: int) -> Any:
    """``value``'s structure with ``None`` leaves (None for a single leaf)."""
    return pack_as(value, [None] * count) if isinstance(value, (tuple, dict)) else None


def _row(structure: Any, bufs: list[np.ndarray], j: int) -> Any:
    leaves = [b[j] for b in bufs]
    return leaves[0] if structure is None else pack_as(structure, leaves)


_OpenBatch = tuple[Any, list[np.ndarray], None, None] | tuple[Any, list[np.ndarray], str | None, Layout]
"""An open batch: ``(skeleton, leaf buffers, segment name, segment layout)``; no segment without ``shared``."""


class BatchRows:
    """Batches filled in place: result ``i`` (counted from the start of the run, or from a restored position) goes
    to row ``i % size`` of batch ``i // size``, written by whichever thread made it, or by a worker process into a
    batch in shared memory (``shared``, set by the process executor; :mod:`parafeed.parallel.shared_batches`)."""

    def __init__(self, size: int):
        self.size = size
        self.enabled = True  # off for the run once a result is too small for in-place writing to pay
        self.shared: SharedBatches | None = None
        self._lock = threading.Lock()
        self._open: dict[int, _OpenBatch] = {}  # batch number -> (skeleton, leaf buffers, segment name, segment layout)
        self._first: tuple[Any, list[LeafSpec]] | None = None  # (skeleton, [(shape, dtype)]) of the first result
        # written in place in the run

    def place(self, i: int, result: Any) -> Any:
        """Write ``result`` into its row and return a :class:`Placed`, or return ``result`` where it cannot be."""
        if not self.enabled:
            return result
        number, row = divmod(i, self.size)
        leaves = array_leaves(result)
        if leaves is None:
            if self._first is None:  # the first results are not arrays: nothing to write in place in this run
                self.enabled = False
            return result
        with self._lock:
            batch = self._open.get(number)
            if batch is None:
                if self._first is None and sum(x.nbytes for x in leaves) * self.size < buffers.MIN_BYTES:
                    self.enabled = False
                    return result
                specs = [(x.shape, x.dtype) for x in leaves]
                batch = self._new(number, skeleton_of(result, len(leaves)), specs)
                self._first = self._first or (batch[0], specs)
        skeleton, bufs = batch[0], batch[1]
        if not same_structure(skeleton, result):
            return result
        for buf, x in zip(bufs, leaves):
            if x.shape != buf.shape[1:] or x.dtype != buf.dtype:
                return result  # batch() decides (it may promote dtypes, or name the mismatch)
        for buf, x in zip(bufs, leaves):
            buf[row] = x
        return Placed(sum(x.nbytes for x in leaves))

    def _new(self, number: int, skeleton: Any, specs: list[LeafSpec]) -> _OpenBatch:
        """A new open batch, its leaves of ``specs`` (shape, dtype); the caller holds the lock."""
        batch: _OpenBatch
        if self.shared is None:
            batch = (skeleton, [buffers.empty((self.size, *shape), dtype) for shape, dtype in specs], None, None)
        else:
            layout = layout_of(specs, self.size)
            memory, name = self.shared.empty(layout[1])
            bufs = [
                memory[at : at + self.size * nbytes].view(dtype).reshape((self.size, *shape))
                for at, nbytes, shape, dtype in layout[0]
            ]  # fmt: skip
            batch = (skeleton, bufs, name, layout)
        self._open[number] = batch
        return batch

    def targets(self, numbers: list[int]) -> list[tuple[Layout, str, int] | None] | None:
        """Where a worker process writes each of the results ``numbers``: ``(layout, segment name, row)``, or None
        for a result it returns instead (all None until the first result has set the batches' layout)."""
        if not self.enabled or self._first is None or self.shared is None:
            return None
        skeleton, specs = self._first
        places: list[tuple[Layout, str, int] | None] = []
        with self._lock:
            for i in numbers:
                number, row = divmod(i, self.size)
                batch = self._open.get(number) or self._new(number, skeleton, specs)
                places.append((batch[3], batch[2], row) if batch[2] is not None else None)
        return places

    def take(self, number: int, rows: list[Any], step: str) -> Any:
        """Batch ``number`` from its rows (:class:`Placed`, or results to stack), and forget it."""
        with self._lock:
            batch = self._open.pop(number, None)
        if batch is None:
            return stack_elements(rows, step)
        skeleton, bufs = batch[0], batch[1]
        n = len(rows)
        if all(type(r) is Placed and (not r.remote or same_structure(skeleton, r.skeleton)) for r in rows):
            leaves = [b if n == self.size else b[:n] for b in bufs]
            return leaves[0] if skeleton is None else pack_as(skeleton, leaves)
        elements = [
            _row(r.skeleton if r.remote else skeleton, bufs, j) if type(r) is Placed else r for j, r in enumerate(rows)
        ]  # fmt: skip
        return stack_elements(elements, step)

    def drop(self, number: int) -> None:
        with self._lock:
            self._open.pop(number, None)

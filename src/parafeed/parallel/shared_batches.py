"""Batches in shared memory that worker processes write their results into, row by row.

When ``batch`` follows a ``map`` on the process executor (fused, :mod:`parafeed.ops.map_and_batch`), each batch
lives in one shared-memory segment: a worker copies its result straight into the result's row and sends back only a
small :class:`~parafeed.parallel.batch_rows.Placed`, so the consumer process copies nothing (before, each result went
through a ring, was copied out, then copied again into its batch). Each process pool keeps its own segments
(:class:`SharedBatches`), recycled like :func:`parafeed.values.buffers.empty`: a batch's segment returns to the pool
when the last array using it is garbage-collected, so its pages stay mapped in both processes. A segment removed for
good is named to the workers with their next task (:class:`Attachments` then drops its mapping).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.parallel.batch_rows import Layout, Placed, array_leaves, skeleton_of
from parafeed.parallel.shm import map_segment, own_segment, recycled_segment, remove_segment
from parafeed.values import buffers

KEEP_PER_SIZE = 8  # free segments kept per size: the batches a prefetch buffer and the open batches hold


class SharedBatches:
    """Shared-memory segments for batches, recycled; one per process pool (its workers map them by name)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: dict[int, list[np.ndarray]] = {}  # size -> free segments' memory
        self._names: dict[int, str] = {}  # address of a segment's memory -> its name
        self._retired: list[str] = []  # segments removed since the workers last heard
        self._closed = False

    def empty(self, nbytes: int) -> tuple[np.ndarray, str | None]:
        """A segment of ``nbytes`` (uint8) and its name (None once closed); it returns to the pool when no array
        uses it any more."""
        with self._lock:
            if self._closed:  # (a thread of a run that is ending): memory of this process's only
                return buffers.empty((nbytes,), np.uint8), None
            free = self._free.get(nbytes)
            raw = free.pop() if free else None
            if raw is None:
                name = "psm_" + secrets.token_hex(8)  # the prefix SharedMemory uses (leak checks look for it)
                raw = recycled_segment(np.frombuffer(map_segment(name, create=nbytes), np.uint8))
                own_segment(name)  # removed even if this process is killed
                self._names[raw.ctypes.data] = name
            name = self._names[raw.ctypes.data]
        return buffers.recycled(raw, (nbytes,), np.uint8, self._give_back), name

    def _give_back(self, raw: np.ndarray) -> None:
        with self._lock:
            if self._closed:  # removed already
                return
            free = self._free.setdefault(raw.nbytes, [])
            if len(free) < KEEP_PER_SIZE:
                free.append(raw)
                return
            name = self._names.pop(raw.ctypes.data)
            self._retired.append(name)
        remove_segment(name)

    def retired(self) -> list[str]:
        """Names of segments removed since the last call (for the workers to unmap)."""
        with self._lock:
            names, self._retired = self._retired, []
        return names

    def close(self) -> None:
        """Remove every segment's name (arrays still using one keep its memory until they go)."""
        with self._lock:
            self._closed = True
            self._free, names, self._names = {}, list(self._names.values()), {}
        for name in names:
            remove_segment(name)


class Attachments:
    """A worker's mappings of its pool's segments, by name, and its writes of results into their rows."""

    def __init__(self) -> None:
        self._memory: dict[str, np.ndarray] = {}

    def forget(self, names: list[str]) -> None:
        for name in names:
            self._memory.pop(name, None)

    def placing(self, fn: Callable[[Any], Any]) -> Callable[[tuple[Any, Any]], Any]:
        """``fn`` over ``(element, place)`` pairs: its result written where ``place`` says (when not None)."""

        def apply(pair: tuple[Any, Any]) -> Any:
            result = fn(pair[0])
            return result if pair[1] is None else self.place(result, pair[1])

        return apply

    def place(self, result: Any, target: tuple[Layout, str, int]) -> Any:
        """Write ``result`` into ``row`` of segment ``name`` and return a :class:`Placed`; or return ``result`` when
        its leaves do not fit the layout (the consumer then stacks it as ``batch()`` would, or names the mismatch)."""
        (parts, _), name, row = target
        leaves = array_leaves(result)
        if (
            leaves is None
            or len(leaves) != len(parts)
            or not all(x.shape == shape and x.dtype.str == dtype for x, (_, _, shape, dtype) in zip(leaves, parts))
        ):
            return result
        memory = self._memory.get(name)
        if memory is None:
            memory = self._memory[name] = np.frombuffer(map_segment(name), np.uint8)
        for x, (offset, nbytes, shape, dtype) in zip(leaves, parts):
            at = offset + row * nbytes
            memory[at : at + nbytes].view(dtype).reshape(shape)[...] = x
        return Placed(sum(x.nbytes for x in leaves), True, skeleton_of(result, len(leaves)))

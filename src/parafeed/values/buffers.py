"""Recycled memory for large arrays that parafeed allocates again and again (batches).

A fresh multi-megabyte array costs the kernel a page fault and a zeroed page for every 4 KiB of it, time that
showed up as ~6 % of an image pipeline's CPU. :func:`empty` hands out arrays whose memory returns to a small pool
when the last array or view using it is garbage-collected (the array's base is a :class:`_Block` whose ``__del__``
gives the memory back), and takes memory from that pool when it can. Only the exact same memory is reused, and only
once nothing refers to it: an array handed to ``torch.from_numpy`` or kept in a list keeps its block alive.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

MIN_BYTES = 1 << 20  # smaller arrays come from malloc, which recycles them well already
KEEP_PER_SIZE = 4  # blocks kept per size
KEEP_BYTES = 512 << 20  # blocks kept in all

_lock = threading.Lock()
_free: dict[int, collections.deque[np.ndarray]] = {}
_kept = 0


class _Block:
    """Owner of a recycled buffer, exposed to NumPy through ``__array_interface__``; ``home(raw)`` takes the memory
    back once no array uses it."""

    __slots__ = ("__array_interface__", "_home", "_raw")

    def __init__(self, raw: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, home: Callable[[np.ndarray], None]):
        self._raw = raw
        self._home = home
        self.__array_interface__ = {
            "shape": shape, "typestr": dtype.str, "descr": dtype.descr, "data": (raw.ctypes.data, False), "version": 3,
        }  # fmt: skip

    def __del__(self) -> None:
        self._home(self._raw)


def recycled(raw: np.ndarray, shape: tuple[int, ...], dtype: Any, home: Callable[[np.ndarray], None]) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` over ``raw`` (bytes, C-contiguous); ``home(raw)`` is called when the
    last array or view using it is garbage-collected."""
    return np.asarray(_Block(raw, tuple(shape), np.dtype(dtype), home))


def _give_back(raw: np.ndarray) -> None:
    global _kept
    with _lock:
        pool = _free.setdefault(raw.nbytes, collections.deque())
        if len(pool) < KEEP_PER_SIZE and _kept + raw.nbytes <= KEEP_BYTES:
            pool.append(raw)
            _kept += raw.nbytes


def empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised array like ``np.empty``, its memory recycled when big enough."""
    global _kept
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_BYTES or dtype.hasobject:
        return np.empty(shape, dtype)
    with _lock:
        pool = _free.get(nbytes)
        raw = pool.pop() if pool else None
        if raw is not None:
            _kept -= nbytes
    if raw is None:
        raw = np.empty(nbytes, np.uint8)
    return recycled(raw, shape, dtype, _give_back)

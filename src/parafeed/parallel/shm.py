"""Moving elements between processes through shared memory instead of a pickled copy.

Each direction of each worker has a :class:`ShmRing`: a single-producer, single-consumer byte ring in a
``multiprocessing.shared_memory`` segment. An element is pickled with protocol 5 and its large buffers (NumPy array
data) are taken out of band and written into the ring; only the small pickle and the buffers' place in the ring go
through the pipe. A large pickle (``bytes`` and ``str`` are pickled in band: a chunk of TFRecord records) goes into
the ring as well: in the pipe it would block the sender until the worker, still busy with its last task, read it.
The reader copies the buffers out once, into memory the arrays then own, and frees the ring space.

Every segment a process creates is its own until it removes it (:func:`own_segment`, :func:`remove_segment`): the
resource tracker removes it if the process is killed, and SIGTERM removes it at once, silently
(:mod:`parafeed.parallel.shutdown`). The segments that pools reuse batch after batch are noted
(:func:`recycled_segment`), so that a device feed can find the one a batch lies in (:func:`recycled_segment_of`) and
page-lock it once (:mod:`parafeed.feed.pinned_segments`).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import struct
import threading
import time
import weakref
from collections.abc import Callable
from multiprocessing import resource_tracker, shared_memory
from typing import Any, cast

import numpy as np

from parafeed.parallel import shutdown
from parafeed.values import buffers

OUT_OF_BAND_MIN = 4096  # buffers smaller than this stay inside the pickle
_HEADER = 64  # two u64 counters (bytes written, bytes consumed), padded to a cache line
_COUNTERS = struct.Struct("<QQ")

Encoded = tuple[bytes | None, int | None, list[int] | None]
"""An object's message (:func:`encode`): ``(pickle, None, None)``, or its buffers' ``(position, sizes)`` in the ring
with the pickle (None when it went into the ring first)."""


class RingClosed(Exception):
    """The other side of a ring went away while waiting for space."""


class ShmRing:
    """A byte ring in shared memory with one writer process and one reader process."""

    def __init__(self, capacity: int | None = None, name: str | None = None):
        if name is None:
            assert capacity is not None
            self._shm = shared_memory.SharedMemory(create=True, size=_HEADER + capacity)  # (registered by Python)
            self._owner = True
            _owned[self._shm.name.lstrip("/")] = True
            shutdown.watch_sigterm()
            if shutdown.terminating():
                self.unlink()
        else:
            self._shm = _attach(name)
            self._owner = False
        self.name = self._shm.name
        self.capacity = self._shm.size - _HEADER
        self._unlinked = False
        if self._owner:
            _COUNTERS.pack_into(self._buf, 0, 0, 0)

    @property
    def _buf(self) -> memoryview:
        """The segment's memory (a SharedMemory's ``buf`` is None only once it is closed)."""
        return cast(memoryview, self._shm.buf)

    def _written(self) -> int:
        written: int = _COUNTERS.unpack_from(self._buf, 0)[0]
        return written

    def _consumed(self) -> int:
        consumed: int = _COUNTERS.unpack_from(self._buf, 0)[1]
        return consumed

    def write(self, buffers: list[memoryview], should_stop: Callable[[], bool]) -> tuple[int, list[int]]:
        """Copy ``buffers`` contiguously into the ring, waiting for space; returns (position, sizes)."""
        sizes = [b.nbytes for b in buffers]
        total = sum(sizes)
        written = self._written()
        at = written % self.capacity
        if at + total > self.capacity:  # no wrapping inside a blob: skip the tail
            written += self.capacity - at
            at = 0
        delay = 20e-6
        while written + total - self._consumed() > self.capacity:
            if should_stop():
                raise RingClosed
            time.sleep(delay)
            delay = min(delay * 2, 1e-3)
        buf = self._buf
        at += _HEADER
        for b in buffers:
            n = b.nbytes
            buf[at : at + n] = b.cast("B")
            at += n
        struct.pack_into("<Q", buf, 0, written + total)
        return written, sizes

    def read(self, position: int, sizes: list[int]) -> list[memoryview]:
        """The buffers written at ``position``, copied out of the ring (which then frees the space)."""
        total = sum(sizes)
        at = _HEADER + position % self.capacity
        out = buffers.empty((total,), np.uint8)  # recycled memory for large results: no fresh pages to fault in
        out[:] = np.frombuffer(self._buf, np.uint8, total, at)
        struct.pack_into("<Q", self._buf, 8, position + total)
        view, offset = out.data, 0
        parts: list[memoryview] = []
        for n in sizes:
            parts.append(view[offset : offset + n])
            offset += n
        return parts

    def unlink(self) -> None:
        """Remove the segment's name (the creator only; idempotent): no new process can attach, and the memory is
        freed once every mapping is closed."""
        if self._owner and not self._unlinked:
            self._unlinked = True
            if self.name.lstrip("/") in _owned:  # (else removed on SIGTERM already)
                del _owned[self.name.lstrip("/")]
                with contextlib.suppress(FileNotFoundError):
                    self._shm.unlink()

    def close(self) -> None:
        self._shm.close()
        self.unlink()


class _Attached:
    """A shared memory segment opened by name without registering it with the resource tracker (the creating
    process owns and unlinks it; Python < 3.13 has no ``track=False``)."""

    def __init__(self, name: str):
        self._mmap = map_segment(name)
        self.size = len(self._mmap)
        self.name = name
        self.buf = memoryview(self._mmap)

    def close(self) -> None:
        self.buf.release()
        self._mmap.close()


def map_segment(name: str, create: int = 0) -> mmap.mmap:
    """A mapping of the shared memory segment ``name``; with ``create``, a new segment of that many bytes (the caller
    removes it with :func:`unlink_segment`). The mapping lasts until the ``mmap`` and every array on it are gone."""
    import _posixshmem

    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = _posixshmem.shm_open("/" + name.lstrip("/"), flags, mode=0o600)
    try:
        if create:
            os.ftruncate(fd, create)
        return mmap.mmap(fd, create or os.fstat(fd).st_size)
    finally:
        os.close(fd)


def unlink_segment(name: str) -> None:
    import _posixshmem

    with contextlib.suppress(FileNotFoundError):
        _posixshmem.shm_unlink("/" + name.lstrip("/"))


_owned: dict[str, bool] = {}  # segments of this process's that it has not removed yet -> registered with the tracker


def own_segment(name: str, made: bool = True) -> None:
    """Segment ``name``, made by this process or for it, is this process's to remove (:func:`remove_segment`): the
    resource tracker removes it should the process be killed, and SIGTERM at once. ``made=False``: a name another
    process may use for a segment it makes for this one (removed on SIGTERM, not told to the tracker until
    ``own_segment(name)`` says it was made, or given up with :func:`forget_segment`)."""
    if made:
        resource_tracker.register("/" + name, "shared_memory")
    _owned[name] = made
    shutdown.watch_sigterm()
    if shutdown.terminating():  # (made while SIGTERM removes the others)
        remove_segment(name)


def forget_segment(name: str) -> None:
    """Give up a name of :func:`own_segment`'s (``made=False``) that no segment was made for."""
    _owned.pop(name, None)


def remove_segment(name: str) -> None:
    """Remove segment ``name`` (one of :func:`own_segment`'s; once: a second call does nothing)."""
    if name in _owned:
        registered = _owned.pop(name)
        unlink_segment(name)
        if registered:
            resource_tracker.unregister("/" + name, "shared_memory")


def _remove_owned() -> None:
    """Remove every segment this process still owns (on SIGTERM: the process ends right after)."""
    for name in list(_owned):
        remove_segment(name)


shutdown.on_terminate(_remove_owned)


_recycled: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()  # address -> whole mapping
_recycled_lock = threading.Lock()


def recycled_segment(memory: np.ndarray) -> np.ndarray:
    """Note ``memory`` (a segment's whole mapping, as uint8) as one that a pool of this process reuses for batch after
    batch (until its memory is garbage-collected); returns it."""
    with _recycled_lock:
        _recycled[memory.__array_interface__["data"][0]] = memory
    return memory


def recycled_segment_of(array: np.ndarray) -> np.ndarray | None:
    """The whole mapping of the recycled segment that holds all of ``array``'s data, or None."""
    start = array.__array_interface__["data"][0]
    end = start + array.nbytes
    with _recycled_lock:
        for address, memory in _recycled.items():
            if address <= start and end <= address + memory.nbytes:
                return memory
    return None


def _attach(name: str) -> Any:
    try:
        return shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg]  # Python >= 3.13's argument
    except TypeError:
        return _Attached(name)


def encode(obj: Any, ring: ShmRing, should_stop: Callable[[], bool]) -> Encoded:
    """A small message for ``obj``: its pickle, with large buffers placed in ``ring``; a large pickle (``bytes``
    and ``str`` are pickled in band) goes into the ring too, so the message never fills the pipe and blocks."""
    buffers: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        raw = buffer.raw()
        if raw.nbytes < OUT_OF_BAND_MIN:
            return True  # in band
        buffers.append(raw)
        return False

    payload = dumps(obj, out_of_band, buffers.clear)
    if len(payload) < OUT_OF_BAND_MIN and not buffers:
        return (payload, None, None)
    if len(payload) + sum(b.nbytes for b in buffers) > ring.capacity // 2:  # too big: one pickled copy instead
        return (dumps(obj), None, None)
    if len(payload) >= OUT_OF_BAND_MIN:
        position, sizes = ring.write([memoryview(payload), *buffers], should_stop)
        return (None, position, sizes)
    position, sizes = ring.write(buffers, should_stop)
    return (payload, position, sizes)


def dumps(obj: Any, buffer_callback: Any = None, retrying: Callable[[], None] = lambda: None) -> bytes:
    """``obj`` pickled; by cloudpickle when pickle cannot (a class defined in a function goes by value)."""
    try:
        return pickle.dumps(obj, protocol=5, buffer_callback=buffer_callback)
    except (pickle.PicklingError, AttributeError, TypeError):
        import cloudpickle

        retrying()
        pickled: bytes = cloudpickle.dumps(obj, protocol=5, buffer_callback=buffer_callback)
        return pickled


def decode(message: tuple[Any, ...], ring: ShmRing) -> Any:
    """The object :func:`encode` described, its buffers copied out of ``ring``."""
    payload, position, sizes = message
    if position is None:
        return pickle.loads(payload)
    parts = ring.read(position, sizes)
    if payload is None:
        payload, parts = parts[0], parts[1:]
    return pickle.loads(payload, buffers=parts)

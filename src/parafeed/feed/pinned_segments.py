"""Batches copied to the device straight from the shared memory worker processes wrote them into.

With ``map(executor="process")`` before ``batch``, the workers write each batch into a segment of shared memory
(:mod:`parafeed.parallel.shared_batches`), and ``offload(executor="process")`` hands its blocks over in segments too
(:mod:`parafeed.parallel.local_input_workers`); both pools reuse their segments batch after batch
(:func:`parafeed.parallel.shm.recycled_segment`). Copying such a batch into a page-locked buffer of the ring
(:class:`~parafeed.feed.slots.Slots`) costs the training process a pass over its bytes (154 MB for 256 float images
of 224x224x3). Instead :class:`PinnedSegments` page-locks each segment the first time a batch arrives in it (CUDA's
``cudaHostRegister``: once per segment, as a buffer of the ring is pinned once), and the device copies the batch from
where the workers wrote it. Two rules keep that safe:

* a batch's arrays are held until its copy to the device is done (:class:`HeldCopies`, its CUDA event): until then
  its segment does not go back to its pool, where a worker would write the next batch into it;
* a segment is unregistered when its memory goes (a finalizer of its mapping, which lives while its pool, any array
  on it or a held copy uses it): no page is unlocked under a copy, and none stays locked after.

A segment that cannot be page-locked (the call fails) is copied through the ring as before, and no other segment is
tried. The framework's calls come in as functions, so the logic runs, and is tested, without a GPU.
"""

from __future__ import annotations

import collections
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.parallel.shm import recycled_segment_of


class PinnedSegments:
    """Recycled shared-memory segments of this process, page-locked on first use (see the module docs).

    Args:
        pin: (address, bytes) -> whether that memory is page-locked now.
        unpin: address -> unlocks memory ``pin`` locked.
    """

    def __init__(self, pin: Callable[[int, int], bool], unpin: Callable[[int], None]):
        self._pin, self._unpin = pin, unpin
        self._lock = threading.RLock()  # (a segment's finalizer may run on this thread while it holds the lock)
        self._pinned: dict[int, int] = {}  # address -> bytes, of the segments page-locked now
        self.failed = False  # a pin failed: nothing more is tried

    @property
    def pinned(self) -> int:
        """Segments page-locked now."""
        return len(self._pinned)

    def holds(self, array: np.ndarray) -> bool:
        """Whether ``array``'s data lies in a recycled segment that is page-locked (locked now if it was not yet);
        False for any other array, one that is not C-contiguous, and once a pin failed."""
        if self.failed or not array.flags.c_contiguous or not array.nbytes:
            return False
        memory = recycled_segment_of(array)
        if memory is None:
            return False
        address = memory.__array_interface__["data"][0]
        with self._lock:
            if address in self._pinned:
                return True
            if self.failed or not self._pin(address, memory.nbytes):
                self.failed = True
                return False
            self._pinned[address] = memory.nbytes
        weakref.finalize(memory, self._release, address).atexit = False  # (at exit the process unlocks it all)
        return True

    def _release(self, address: int) -> None:
        """The segment at ``address`` is being unmapped: unlock it first."""
        with self._lock:
            self._pinned.pop(address, None)
        self._unpin(address)


class HeldCopies:
    """Objects held until the copies out of them are done: ``done(token)`` says so without waiting, ``wait(token)``
    waits."""

    def __init__(self, done: Callable[[Any], bool], wait: Callable[[Any], None]):
        self._done, self._wait = done, wait
        self._held: collections.deque[tuple[Any, Any]] = collections.deque()  # (objects, token), oldest first

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, objects: Any, token: Any) -> None:
        """Keep ``objects`` until ``token`` is done."""
        self._held.append((objects, token))

    def release(self) -> None:
        """Let go of the objects whose copies are done (the oldest first: copies finish in order)."""
        while self._held and self._done(self._held[0][1]):
            self._held.popleft()

    def release_all(self) -> None:
        """Wait for every copy, then let go of everything."""
        while self._held:
            self._wait(self._held[0][1])
            self._held.popleft()

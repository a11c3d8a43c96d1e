"""``Slots``: host buffers for batches on their way to a device, allocated once and reused only once the device is
done with them.

A batch is copied into page-locked (pinned) host memory before its host-to-device copy: from pageable memory the copy
is synchronous and goes through the driver's own staging buffer. Page-locking memory is slow (a system call that
pins every page), so the buffers are made once, per batch layout, and kept in a ring of ``count`` slots (FFCV: the
batches ahead of use plus two). A slot is given back with the token of the copy out of it (a CUDA event), and taken
again only after that copy is done: ``done(token)`` says so without waiting, ``wait(token)`` waits. The framework's
calls come in as functions, so the ring's logic runs, and is tested, without a GPU.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Hashable
from typing import Any


class Slots:
    """A ring of ``count`` reusable host buffers per layout (see the module docs).

    Args:
        count: slots per layout (the batches in flight at most, plus two).
        allocate: layout -> a new host buffer for it (page-locked where there is a device).
        done: token -> whether the copy out of the slot has finished (without waiting).
        wait: token -> waits until it has.
    """

    def __init__(self, count: int, allocate: Callable[[Hashable], Any], done: Callable[[Any], bool],
                 wait: Callable[[Any], None], layouts: int = 4):  # fmt: skip
        self.count = count
        self.layouts = layouts  # layouts kept at most: batches of ever new shapes do not pin ever more memory
        self._allocate, self._done, self._wait = allocate, done, wait
        self._free: dict[Hashable, list[Any]] = {}  # layout -> slots no copy uses
        self._busy: collections.deque[tuple[Hashable, Any, Any]] = collections.deque()  # (layout, slot, token)
        self._made: dict[Hashable, int] = {}  # layout -> slots allocated
        self.allocated = 0  # slots allocated in all (each once)

    def take(self, layout: Hashable) -> Any:
        """A slot for ``layout`` that no copy uses: a free one, one whose copy has finished, a new one while the
        layout has fewer than ``count``, else the oldest busy one of the layout once its copy is done."""
        self._collect()
        free = self._free.get(layout)
        if free:
            return free.pop()
        if self._made.get(layout, 0) < self.count:
            if layout not in self._made:
                self._forget_a_layout()
            self._made[layout] = self._made.get(layout, 0) + 1
            self.allocated += 1
            return self._allocate(layout)
        for i, (busy_layout, slot, token) in enumerate(self._busy):
            if busy_layout == layout:
                del self._busy[i]
                self._wait(token)
                return slot
        raise RuntimeError(f"Slots: all {self.count} slots of layout {layout!r} are out and none is being copied")

    def _forget_a_layout(self) -> None:
        """Drop the free slots of the oldest layout no copy uses, while :attr:`layouts` are kept."""
        busy = {layout for layout, _, _ in self._busy}
        for old in list(self._made):
            if len(self._made) < self.layouts:
                return
            if old not in busy:
                del self._made[old]
                self._free.pop(old, None)

    def give(self, layout: Hashable, slot: Any, token: Any) -> None:
        """``slot`` is being copied out of until ``token`` is done."""
        self._busy.append((layout, slot, token))

    def _collect(self) -> None:
        """Free the busy slots whose copies have finished (the oldest first: copies finish in order)."""
        while self._busy and self._done(self._busy[0][2]):
            layout, slot, _ = self._busy.popleft()
            self._free.setdefault(layout, []).append(slot)

"""PyTorch's side of the device feed: batches of NumPy leaves become tensors on ``device``.

On a CUDA device, on the feed's thread (:class:`parafeed.feed.ahead.Ahead`), each batch is

1. where worker processes wrote its arrays into shared memory (``map(executor="process")`` + ``batch``,
   ``offload(executor="process")``), left there: the segment is page-locked once and the batch held until its copy
   is done (:mod:`parafeed.feed.pinned_segments`); any other array is copied into page-locked host buffers taken
   from a ring allocated once and reused (:class:`parafeed.feed.slots.Slots`: a slot is reused only after the GPU
   finished copying out of it, which its CUDA event says), by NumPy on one core with the GIL released
   (``Tensor.copy_`` spreads a large copy over every intra-op thread: a copy is bound by memory, so each thread adds
   CPU, not speed: twice the CPU for the same time on 2 cores; with it, the feed cost the training process 540 µs of
   CPU per 224x224x3 float image on a 16-core host);
2. copied to the device on a side CUDA stream (``non_blocking``: the copy runs while the model computes), and an
   event recorded after it;

and on the loop's thread, when the loop takes it, the loop's current stream waits for that event and every device
tensor is marked as used on that stream (``record_stream``), so the caching allocator does not hand its memory to the
side stream while the model still reads it.

On the CPU (``device="cpu"``, what runs without a GPU) the leaves become tensors that share their memory (no copy);
the same thread, ring logic and hand-over run. Strings stay ``bytes`` (lists of ``bytes`` for arrays of strings).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any

import numpy as np

from parafeed.feed.pinned_segments import HeldCopies, PinnedSegments
from parafeed.feed.slots import Slots
from parafeed.feed.stats import FeedStats
from parafeed.values.structure import STRING, flatten, map_structure, pack_as


def to_tensor(leaf: Any) -> Any:
    """One element leaf as a CPU tensor sharing its memory (strings stay ``bytes``; a read-only array is copied once,
    since a tensor is writable)."""
    import torch

    if isinstance(leaf, np.ndarray):
        if leaf.dtype == STRING:
            return leaf.tolist()
        return torch.from_numpy(leaf if leaf.flags.writeable else leaf.copy())
    if isinstance(leaf, np.generic):
        return torch.from_numpy(np.array(leaf))
    return leaf


class TorchTransfer:
    """``ready(batch)`` (the feed's thread) and ``hand_over(item)`` (the loop's thread) for tensors on ``device``;
    ``slots`` host buffers per batch layout on a CUDA device (the batches read ahead, plus two); ``stats`` counts the
    bytes copied on the host and those sent from where the workers wrote them."""

    def __init__(self, device: Any, slots: int, stats: FeedStats | None = None):
        import torch

        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self._stats = stats
        self._stream: Any = None
        self._slots: Slots | None = None
        self._held: HeldCopies | None = None
        if self.cuda:
            self._stream = torch.cuda.Stream(self.device)
            self._slots = Slots(slots, _pinned, lambda event: event.query(), lambda event: event.synchronize())
            self._held = HeldCopies(lambda event: event.query(), lambda event: event.synchronize())
            weakref.finalize(self, self._held.release_all).atexit = False  # (no segment reused under a copy)

    @property
    def allocated(self) -> int:
        """Page-locked buffers made so far (each once)."""
        return 0 if self._slots is None else self._slots.allocated

    def ready(self, batch: Any) -> Any:
        if not self.cuda:
            return map_structure(to_tensor, batch), None
        import torch

        assert self._slots is not None and self._held is not None
        self._held.release()
        arrays = flatten(batch)
        segments = _segments()
        direct = [  # (leaves left where the workers wrote them; a read-only array becomes a copy: to_tensor)
            i
            for i, x in enumerate(arrays)
            if isinstance(x, np.ndarray) and x.dtype.kind in "biufc" and x.flags.writeable and segments.holds(x)
        ]
        leaves = [to_tensor(x) for x in arrays]
        staged = [i for i, t in enumerate(leaves) if isinstance(t, torch.Tensor) and i not in direct]
        layout = tuple((tuple(leaves[i].shape), leaves[i].dtype) for i in staged)
        slot = self._slots.take(layout) if staged else None
        held = [leaves[i] for i in direct]
        with torch.cuda.stream(self._stream):
            for i, host in zip(staged, slot or ()):
                np.copyto(host.numpy(), leaves[i].numpy())  # into page-locked memory (module docs)
                leaves[i] = host.to(self.device, non_blocking=True)
            for i in direct:
                leaves[i] = leaves[i].to(self.device, non_blocking=True)  # (from the page-locked segment)
            event = torch.cuda.Event()
            event.record(self._stream)
        if slot is not None:
            self._slots.give(layout, slot, event)
        if held:
            self._held.hold(held, event)
        if self._stats is not None:
            self._stats.record_bytes(sum(leaves[i].nbytes for i in staged), sum(t.nbytes for t in held))
        return pack_as(batch, leaves), event

    def hand_over(self, item: Any) -> Any:
        tensors, event = item
        if event is None:
            return tensors
        import torch

        stream = torch.cuda.current_stream(self.device)
        stream.wait_event(event)
        for t in flatten(tensors):
            if isinstance(t, torch.Tensor):
                t.record_stream(stream)
        return tensors


def _pinned(layout: Any) -> list[Any]:
    import torch

    return [torch.empty(shape, dtype=dtype, pin_memory=True) for shape, dtype in layout]


_cuda_segments: PinnedSegments | None = None
_cuda_segments_lock = threading.Lock()


def _segments() -> PinnedSegments:
    """This process's segments page-locked for CUDA (one set for every feed: a segment is locked once)."""
    global _cuda_segments
    with _cuda_segments_lock:
        if _cuda_segments is None:
            _cuda_segments = PinnedSegments(_register, _unregister)
        return _cuda_segments


def _register(address: int, nbytes: int) -> bool:
    import torch

    # A failed call also leaves its error as the CUDA runtime's last error of this thread (the feed's), where a
    # kernel launch check would report it. The feed's thread launches no kernel (copies and events only), and the
    # first not-yet-done event query clears it.
    return int(torch.cuda.cudart().cudaHostRegister(address, nbytes, 1)) == 0  # (1: cudaHostRegisterPortable)


def _unregister(address: int) -> None:
    import torch

    with contextlib.suppress(Exception):  # (CUDA shutting down: the process unlocks it all as it ends)
        torch.cuda.cudart().cudaHostUnregister(address)

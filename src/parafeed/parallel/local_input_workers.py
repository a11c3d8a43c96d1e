"""Input workers as processes of this host (``offload(executor="process")``): the whole pipeline so far runs in
worker processes, and the trainer receives finished blocks (batches), so its cost is per batch, not per element.

The same design as the Ray input workers (:mod:`parafeed.parallel.ray_input_workers`), on the process executor's
worker processes (:mod:`parafeed.parallel.process_startup`: fresh interpreters, kept warm between pools): each process
runs the pipeline with the block shard as input worker ``k`` of ``K`` (:class:`InputWorker`, the Ray actor's class,
given to the process as its function), the trainer takes blocks round-robin in the one-host order, every block comes
back with the worker's state after it, and a worker whose process dies is replaced by a new one started from that
state.

A call's blocks come back in shared memory: the worker writes the arrays' data there once, and the trainer's arrays
are views of it (no copy, no pickle of the data), so the trainer's cost is per call. The segments are recycled (a new
one per call cost the trainer ~100 µs per image on P5, most of it unmapping 38 MB per batch, and the worker a page
fault per 4 KiB): each worker process has its own (:class:`_Segments`), which the trainer names, owns and removes,
and which last as long as the process, across pools and epochs (a spare's go when it stops: unused for a while,
:func:`~parafeed.parallel.process_startup.release_spares`, or at exit). With each call the trainer names a free segment
as big as the process's last answer, which the worker writes into when the blocks fit, else into a new segment whose
name the trainer gave too (so a process that dies leaves none behind); both sides keep their mappings. A segment is
free again only when the last array viewing it is garbage-collected (a user may keep every batch of an epoch); free
ones beyond :data:`KEEP_SEGMENTS` more than the calls in flight are removed, and named to the process with its next
call for it to unmap.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import pickle
import secrets
import threading
import time
import warnings
import weakref
from typing import Any

import numpy as np

from parafeed.core.dataset import AUTOTUNE
from parafeed.core.options import input_cores
from parafeed.errors import WorkerError
from parafeed.parallel import shutdown
from parafeed.parallel.executor import Outcome
from parafeed.parallel.process_startup import Worker, give_spares, stop_all, take_spares
from parafeed.parallel.remote_errors import unpack_error
from parafeed.parallel.shm import (
    OUT_OF_BAND_MIN,
    RingClosed,
    decode,
    dumps,
    encode,
    forget_segment,
    map_segment,
    own_segment,
    recycled_segment,
    remove_segment,
)
from parafeed.values import buffers

Block = tuple[list[Outcome], dict[str, Any], bool]
Packed = tuple[bytes, str | None, list[int]]  # an answer: (pickle, the segment of its buffers or None, their sizes)
BLOCKS_PER_CALL = 4  # blocks a call asks for at most (a call's round trip here is a fraction of a millisecond) ...
CALL_BYTES = 64 << 20  # ... and fewer where that many would be more bytes than this: 4 batches of 256 photos as float32
# are 616 MB, which every worker wrote and the trainer mapped per call (P5, batch 256, 2 cores: 25 % slower)
POLL_SECONDS = 0.5  # how often a wait for a worker's answer checks that its process lives
DRAIN_SECONDS = 30.0  # how long a new start or close waits for the calls in flight before stopping the processes
KEEP_SEGMENTS = 2  # segments a worker process keeps beyond one per call in flight, unless arrays use more

_calls = itertools.count(1)
_mapped: dict[str, np.ndarray] = {}  # (in a worker process) the segments it was given or made, mapped, by name


class _Commands:
    """The function a worker process runs (cloudpickled to it): ``("start", run, share, state)`` begins a run of the
    pipeline, ``("blocks", units, count, segment, fresh, forget)`` returns the next blocks and the seconds they
    took, packed by :func:`to_segment` (``forget``: segments removed since the last call, to unmap)."""

    def __init__(self, pipeline: Any):
        self.pipeline = pipeline
        self._worker: Any = None

    def __call__(self, command: tuple[Any, ...]) -> Any:
        from parafeed.parallel.ray_input_workers import InputWorker

        if self._worker is None:
            self._worker = InputWorker(self.pipeline)
        if command[0] == "start":
            self._worker.start(*command[1:], 0)
            return None
        _, units, count, segment, fresh, forget = command
        for name in forget:
            _mapped.pop(name, None)
        return to_segment(self._worker.blocks(units, count), segment, fresh)


def to_segment(value: Any, segment: tuple[str, int] | None, fresh: str) -> Packed:
    """``value`` pickled with its large buffers (array data) written into shared memory: into ``segment`` (name,
    size) when they fit, else into a new segment named ``fresh``. This process keeps the mapping for later calls."""
    buffers: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        raw = buffer.raw()
        if raw.nbytes < OUT_OF_BAND_MIN:
            return True
        buffers.append(raw)
        return False

    payload = dumps(value, out_of_band, buffers.clear)
    if not buffers:
        return payload, None, []
    sizes = [b.nbytes for b in buffers]
    name = segment[0] if segment is not None and segment[1] >= sum(sizes) else fresh
    memory = _mapped.get(name)
    if memory is None:
        memory = _mapped[name] = np.frombuffer(map_segment(name, create=sum(sizes) if name == fresh else 0), np.uint8)
    at = 0
    for b in buffers:
        memory[at : at + b.nbytes] = b
        at += b.nbytes
    return payload, name, sizes


class _Segments:
    """The shared-memory segments one worker process writes its answers into. The trainer's: mapped here, registered
    with the resource tracker (removed even if the trainer is killed), and removed with the process's
    :class:`Worker` (:func:`_segments`)."""

    def __init__(self) -> None:
        self.memory: dict[str, np.ndarray] = {}  # every segment, by name
        self.free: list[str] = []  # those that no call and no array uses
        self.returned: collections.deque[str] = collections.deque()  # the last array on them went (any thread)
        self.last = 0  # bytes of the process's last answer in shared memory
        self.closed = False  # (at exit, while the consumer's thread may still take an answer)
        self._closing = threading.Lock()

    def reserve(self, keep: int) -> tuple[tuple[str, int] | None, list[str]]:
        """The smallest free segment that holds the last answer (name, size; None if none does), and the names of
        the free segments removed, the smallest first, while there are more than ``keep`` (for the process to
        unmap)."""
        while self.returned:
            self.give(self.returned.popleft())
        self.free.sort(key=lambda name: self.memory[name].nbytes, reverse=True)
        fits = [name for name in self.free if self.memory[name].nbytes >= self.last]
        segment = None
        if fits:
            self.free.remove(fits[-1])
            segment = (fits[-1], self.memory[fits[-1]].nbytes)
        retired = []
        while len(self.memory) > keep and self.free:
            retired.append(self.free.pop())
            remove_segment(retired[-1])
            del self.memory[retired[-1]]
        return segment, retired

    def give(self, name: str | None) -> None:
        """Segment ``name`` is free again (no-op for None, or a segment removed already)."""
        if name in self.memory:
            self.free.append(name)

    def answered(self, reserved: str | None, fresh: str | None, used: str | None) -> None:
        """A call's answer wrote into ``used``: a new segment (``fresh``) joins these, an unused reservation is
        free again, an unused new name is given up."""
        if used is not None and used == fresh:
            with self._closing:
                adopted = not self.closed
                if adopted:
                    self.memory[used] = recycled_segment(np.frombuffer(map_segment(used), np.uint8))
                    own_segment(used)
            if not adopted:  # (closed at exit while this answer was on its way: nothing will read it)
                remove_segment(used)
        elif fresh is not None:
            forget_segment(fresh)  # (the worker wrote into the reserved one: nothing was made)
        if reserved != used:
            self.give(reserved)

    def lost(self, reserved: str | None, fresh: str | None) -> None:
        """A call got no answer, or an error (its process stopped, or failed): its reservation is free again, and a
        new segment it may have made before is removed."""
        if fresh is not None:
            remove_segment(fresh)
        self.give(reserved)

    def arrays(self, packed: Packed) -> Any:
        """The value an answer packed (:func:`to_segment`), its arrays views of the segment, which is free again
        when the last of them is garbage-collected."""
        payload, name, sizes = packed
        if name is None:
            return pickle.loads(payload)
        if self.closed:
            raise WorkerError("offload(): the input workers were stopped: the process is ending")
        self.last = sum(sizes)
        returned = self.returned
        whole = buffers.recycled(self.memory[name], (self.last,), np.uint8, lambda _: returned.append(name))
        parts, at = [], 0
        for size in sizes:
            parts.append(whole[at : at + size])
            at += size
        return pickle.loads(payload, buffers=parts)

    def close(self) -> None:
        """Remove every segment (arrays still on one keep its memory until they go), and any that an answer on its
        way brings later."""
        with self._closing:
            self.closed = True
            memory, self.memory, self.free = self.memory, {}, []
        for name in memory:
            remove_segment(name)


_by_process: weakref.WeakKeyDictionary[Worker, _Segments] = weakref.WeakKeyDictionary()
_open: set[_Segments] = set()  # every process's segments not closed yet (its Worker may be gone: see _close_segments)


def _segments(process: Worker) -> _Segments:
    """``process``'s segments (removed when its :class:`Worker` is garbage-collected: it stopped; at exit, after
    the feeds that use them: :func:`_close_segments`)."""
    segments = _by_process.get(process)
    if segments is None:
        segments = _by_process[process] = _Segments()
        _open.add(segments)
        weakref.finalize(process, _close, segments).atexit = False
    return segments


def _close(segments: _Segments) -> None:
    _open.discard(segments)
    segments.close()


def _close_segments() -> None:
    """At exit, once the feeds are closed (a finalizer would run earlier, while their threads still take answers).
    From the set, not by process: the spares stopped at exit before this are gone, and their finalizers with them
    (``weakref.finalize`` runs none once the interpreter exits)."""
    for segments in list(_open):
        _close(segments)


shutdown.at_exit(_close_segments)


class _Local:
    """The trainer's record of one worker process: its calls in flight (sequence number -> the segment reserved for
    it and the name of a new one), blocks received, last state."""

    def __init__(self, process: Worker, index: int, state: dict[str, Any] | None):
        self.process = process
        self.index = index
        self.state = state
        self.calls: dict[int, tuple[str | None, str | None]] = {}
        self.ready: collections.deque[Block] = collections.deque()


class LocalInputWorkers:
    """The input worker processes of one run of an ``offload(executor="process")`` step (see the module docs); the
    interface of :class:`parafeed.parallel.ray_input_workers.InputWorkers`."""

    def __init__(self, pipeline: Any, buffer: int, units: int, run: dict[str, Any]):
        import cloudpickle

        self._blob = cloudpickle.dumps(_Commands(pipeline))
        self._buffer = buffer
        self._units = units
        self._run = run
        self._per_call = 1  # blocks the next calls ask for: one until an answer says how large blocks are (a first
        # call of 4 batches of 256 photos kept the first batch 2 s longer on 2 cores), then from its bytes
        self._workers: list[_Local] = []
        self._first = 0
        self.replaced = 0
        self.tuner = None  # (AUTOTUNE here: input_cores())
        shutdown.close_at_exit(self)

    def __len__(self) -> int:
        return len(self._workers)

    @property
    def actors(self) -> list[Worker]:
        """The worker processes, in worker order (``.process`` is the ``subprocess.Popen``)."""
        return [w.process for w in self._workers]

    def start(self, count: int, first: int, state: dict[str, Any] | None) -> None:
        """Run on ``count`` worker processes (AUTOTUNE: :func:`~parafeed.core.options.input_cores`) from block
        ``first``, every one from the pipeline's ``state`` before it; processes already running are reused."""
        count = input_cores() if count == AUTOTUNE else count
        processes = self._drain()
        if len(processes) > count:
            stop_all(processes[count:])
            processes = processes[:count]
        if len(processes) < count:
            fresh = take_spares(count - len(processes))
            fresh += [Worker() for _ in range(count - len(processes) - len(fresh))]
            for k, process in enumerate(fresh, len(processes)):
                process.assign(k, self._blob)
            processes += fresh
        self._first = first
        self._workers = [_Local(p, k, state) for k, p in enumerate(processes)]
        for worker in self._workers:
            self._begin(worker)

    def _begin(self, worker: _Local) -> None:
        """Start ``worker``'s run from its state and request its first calls. Its AUTOTUNE steps start on its share
        of this host's cores: 15 workers on 16 cores each running a map on 15 threads ran 225 threads (a tenth
        slower on 2 cores, at that many threads a core)."""
        run = dict(self._run, cores=max(1, input_cores() // len(self._workers)))
        self._call(worker, ("start", run, (len(self._workers), worker.index, self._first), worker.state))
        self._answer(worker)
        self._request(worker)

    def take(self, block: int, before: dict[str, Any] | None) -> tuple[list[Outcome], dict[str, Any], bool]:
        """Block ``block``'s outcomes, the pipeline's state after it, and whether the pipeline ended."""
        worker = self._workers[(block - self._first) % len(self._workers)]
        while not worker.ready:
            blocks, _ = self._answer(worker)
            worker.state = blocks[-1][1]
            worker.ready.extend(blocks)
        return worker.ready.popleft()

    def _call(
        self, worker: _Local, command: tuple[Any, ...], reserved: str | None = None, fresh: str | None = None
    ) -> None:
        seq = next(_calls)
        process = worker.process
        with contextlib.suppress(OSError, RingClosed):  # (a dead process: found when its answer is awaited)
            process.conn.send((seq, encode([command], process.in_ring, lambda: not process.alive()), None, []))
        process.outstanding[seq] = 1
        worker.calls[seq] = (reserved, fresh)

    def _request(self, worker: _Local) -> None:
        """Calls of blocks until ``worker`` has ``buffer`` in flight (a start is answered before these are made),
        each with a free segment of its process and the name for a new one."""
        segments = _segments(worker.process)
        while len(worker.calls) < self._buffer:
            segment, forget = segments.reserve(self._buffer + KEEP_SEGMENTS)
            fresh = "psm_" + secrets.token_hex(8)  # the prefix SharedMemory uses (leak checks look for it)
            own_segment(fresh, made=False)  # the process may make it: this one removes it, and on SIGTERM
            command = ("blocks", self._units, self._per_call, segment, fresh, forget)
            self._call(worker, command, segment and segment[0], fresh)

    def _receive(self, worker: _Local, deadline: float = float("inf")) -> tuple[bool, Any]:
        """``worker``'s next answer, ``(ok, value)``, accounted for in its process's segments; EOFError when its
        process died (or did not answer by ``deadline``)."""
        process = worker.process
        while not process.conn.poll(POLL_SECONDS):
            if not process.alive() or time.monotonic() > deadline:
                raise EOFError
        seq, encoded, _ = process.conn.recv()
        ((ok, value),) = decode(encoded, process.out_ring)
        process.outstanding.pop(seq, None)
        reserved, fresh = worker.calls.pop(seq)
        if not ok:
            _segments(process).lost(reserved, fresh)
        elif value is not None:  # (blocks, not a start)
            _segments(process).answered(reserved, fresh, value[1])
        return ok, value

    def _answer(self, worker: _Local) -> Any:
        """The result of ``worker``'s oldest call (another is requested in its place when it asked for blocks); a
        worker whose process died is replaced from its last state and asked again."""
        while True:
            try:
                ok, value = self._receive(worker)
            except (EOFError, OSError, RingClosed):
                if shutdown.ending():  # (stopped at exit or by SIGTERM while another thread waited: no replacement)
                    raise WorkerError("offload(): the input workers were stopped: the process is ending") from None
                self._replace(worker)
                continue
            if not ok:
                raise WorkerError(f"offload(): input worker process {worker.index} failed") from unpack_error(value)
            if value is None:  # (a start)
                return None
            result = _segments(worker.process).arrays(value)
            if result[0]:
                per_block = sum(value[2]) // len(result[0])
                self._per_call = max(1, min(BLOCKS_PER_CALL, CALL_BYTES // max(1, per_block)))
            self._request(worker)  # (blocks: keep the worker busy)
            return result

    def _stop(self, worker: _Local) -> None:
        """Stop ``worker``'s process; its calls in flight are lost (their segments go with the process's)."""
        stop_all([worker.process], 1.0)
        self._lose_calls(worker)

    def _lose_calls(self, worker: _Local) -> None:
        segments = _segments(worker.process)
        for reserved, fresh in worker.calls.values():
            segments.lost(reserved, fresh)
        worker.calls = {}

    def _replace(self, worker: _Local) -> None:
        """A new process for ``worker`` (its own died), started from the last state received from it."""
        warnings.warn(
            f"offload(): {worker.process.describe()}; replacing it from its last state",
            RuntimeWarning,
            stacklevel=4,
        )
        self._stop(worker)
        self.replaced += 1
        worker.process, worker.ready = Worker(), collections.deque()
        worker.process.assign(worker.index, self._blob)
        self._begin(worker)

    def _drain(self) -> list[Worker]:
        """The processes of the current workers, their calls in flight answered and dropped (a dead process, or one
        that does not answer within ``DRAIN_SECONDS``, is stopped)."""
        alive = []
        deadline = time.monotonic() + DRAIN_SECONDS
        for worker in self._workers:
            try:
                while worker.calls:
                    ok, value = self._receive(worker, deadline)
                    if ok and value is not None:
                        _segments(worker.process).give(value[1])  # (its blocks are not wanted)
                alive.append(worker.process)
            except (EOFError, OSError, RingClosed):
                self._stop(worker)
        self._workers = []
        return alive

    def close(self) -> None:
        """Drop the calls in flight and keep the processes warm for the next pool (:func:`give_spares`); at exit,
        stop them at once."""
        if shutdown.exiting():
            workers, self._workers = self._workers, []
            stop_all([w.process for w in workers], 1.0)
            for w in workers:
                self._lose_calls(w)
                _segments(w.process).close()
            return
        give_spares(self._drain())

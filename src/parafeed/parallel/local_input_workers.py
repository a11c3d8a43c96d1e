"""Input workers as processes of this host (``offload(executor="process")``): the whole pipeline so far runs in
worker processes, and the trainer receives finished blocks (batches), so its cost is per batch, not per element.

The same design as the Ray input workers (:mod:`parafeed.parallel.ray_input_workers`), on the process executor's
worker processes (:mod:`parafeed.parallel.process_startup`: fresh interpreters, kept warm between pools): each process
runs the pipeline with the block shard as input worker ``k`` of ``K`` (:class:`InputWorker`, the Ray actor's class,
given to the process as its function), the trainer takes blocks round-robin in the one-host order, every block comes
back with the worker's state after it, and a worker whose process dies is replaced by a new one started from that
state. A call's blocks come back in a shared-memory segment of their own: the worker writes the arrays' data there
once, and the trainer's arrays are views of it (no copy, no pickle of the data): the trainer's cost is per call.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import pickle
import secrets
import time
import warnings
from typing import Any

import numpy as np

from parafeed.core.dataset import AUTOTUNE
from parafeed.core.options import schedulable_cpus
from parafeed.errors import WorkerError
from parafeed.parallel.executor import Outcome
from parafeed.parallel.process_startup import Worker, give_spares, stop_all, take_spares
from parafeed.parallel.remote_errors import unpack_error
from parafeed.parallel.shm import OUT_OF_BAND_MIN, RingClosed, decode, encode, map_segment, unlink_segment

Block = tuple[list[Outcome], dict[str, Any], bool]
BLOCKS_PER_CALL = 4  # blocks a call asks for (a call's round trip here is a fraction of a millisecond)
POLL_SECONDS = 0.5  # how often a wait for a worker's answer checks that its process lives
DRAIN_SECONDS = 30.0  # how long a new start or close waits for the calls in flight before stopping the processes

_calls = itertools.count(1)


class _Commands:
    """The function a worker process runs (cloudpickled to it): ``("start", run, share, state)`` begins a run of the
    pipeline, ``("blocks", units, count)`` returns the next blocks and the seconds they took."""

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
        return to_segment(self._worker.blocks(*command[1:]))


def to_segment(value: Any) -> tuple[bytes, str | None, list[int]]:
    """``value`` pickled with its large buffers (array data) in a new shared-memory segment: (pickle, the segment's
    name or None, the buffers' sizes). The receiver maps it with :func:`from_segment`, which removes its name."""
    buffers: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        raw = buffer.raw()
        if raw.nbytes < OUT_OF_BAND_MIN:
            return True
        buffers.append(raw)
        return False

    payload = pickle.dumps(value, protocol=5, buffer_callback=out_of_band)
    if not buffers:
        return payload, None, []
    sizes = [b.nbytes for b in buffers]
    name = "psm_" + secrets.token_hex(8)
    memory = map_segment(name, create=sum(sizes))
    at = 0
    for b in buffers:
        memory[at : at + b.nbytes] = b
        at += b.nbytes
    memory.close()
    return payload, name, sizes


def from_segment(packed: tuple[bytes, str | None, list[int]]) -> Any:
    """What :func:`to_segment` packed; the arrays are views of the segment (no copy), which is removed by name at
    once and freed when the last of them is gone."""
    payload, name, sizes = packed
    if name is None:
        return pickle.loads(payload)
    try:
        memory = map_segment(name)
    finally:
        unlink_segment(name)
    whole = np.frombuffer(memory, np.uint8)
    parts, at = [], 0
    for size in sizes:
        parts.append(whole[at : at + size])
        at += size
    return pickle.loads(payload, buffers=parts)


class _Local:
    """The trainer's record of one worker process: its calls in flight (sequence numbers), blocks received, last
    state."""

    def __init__(self, process: Worker, index: int, state: dict[str, Any] | None):
        self.process = process
        self.index = index
        self.state = state
        self.calls: collections.deque[int] = collections.deque()
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
        self._workers: list[_Local] = []
        self._first = 0
        self.replaced = 0
        self.tuner = None  # (AUTOTUNE here: the schedulable cores)

    def __len__(self) -> int:
        return len(self._workers)

    @property
    def actors(self) -> list[Worker]:
        """The worker processes, in worker order (``.process`` is the ``subprocess.Popen``)."""
        return [w.process for w in self._workers]

    def start(self, count: int, first: int, state: dict[str, Any] | None) -> None:
        """Run on ``count`` worker processes (AUTOTUNE: the schedulable cores) from block ``first``, every one from
        the pipeline's ``state`` before it; processes already running are reused."""
        count = schedulable_cpus() if count == AUTOTUNE else count
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
        """Start ``worker``'s run from its state and request its first calls."""
        self._call(worker, ("start", self._run, (len(self._workers), worker.index, self._first), worker.state))
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

    def _call(self, worker: _Local, command: tuple[Any, ...]) -> None:
        seq = next(_calls)
        process = worker.process
        with contextlib.suppress(OSError, RingClosed):  # (a dead process: found when its answer is awaited)
            process.conn.send((seq, encode([command], process.in_ring, lambda: not process.alive()), None, []))
        process.outstanding[seq] = 1
        worker.calls.append(seq)

    def _request(self, worker: _Local) -> None:
        while len(worker.calls) < self._buffer:  # (calls of blocks; a start is answered before these are made)
            self._call(worker, ("blocks", self._units, BLOCKS_PER_CALL))

    def _answer(self, worker: _Local) -> Any:
        """The result of ``worker``'s oldest call (another is requested in its place when it asked for blocks); a
        worker whose process died is replaced from its last state and asked again."""
        while True:
            process = worker.process
            try:
                while not process.conn.poll(POLL_SECONDS):
                    if not process.alive():
                        raise EOFError
                seq, encoded, _ = process.conn.recv()
                ((ok, value),) = decode(encoded, process.out_ring)
            except (EOFError, OSError, RingClosed):
                self._replace(worker)
                continue
            process.outstanding.pop(seq, None)
            worker.calls.remove(seq)
            if not ok:
                raise WorkerError(f"offload(): input worker process {worker.index} failed") from unpack_error(value)
            if value is None:  # (a start)
                return None
            self._request(worker)  # (blocks: keep the worker busy)
            return from_segment(value)

    def _replace(self, worker: _Local) -> None:
        """A new process for ``worker`` (its own died), started from the last state received from it."""
        warnings.warn(
            f"offload(): {worker.process.describe()}; replacing it from its last state",
            RuntimeWarning,
            stacklevel=4,
        )
        stop_all([worker.process], 1.0)
        self.replaced += 1
        worker.process, worker.calls, worker.ready = Worker(), collections.deque(), collections.deque()
        worker.process.assign(worker.index, self._blob)
        self._begin(worker)

    def _drain(self) -> list[Worker]:
        """The processes of the current workers, their calls in flight answered and dropped (a dead process, or one
        that does not answer within ``DRAIN_SECONDS``, is stopped)."""
        alive = []
        deadline = time.monotonic() + DRAIN_SECONDS
        for worker in self._workers:
            process = worker.process
            try:
                for _ in list(worker.calls):
                    while not process.conn.poll(POLL_SECONDS):
                        if not process.alive() or time.monotonic() > deadline:
                            raise EOFError
                    seq, encoded, _ = process.conn.recv()
                    ((ok, value),) = decode(encoded, process.out_ring)
                    if ok and value is not None:
                        unlink_segment(value[1] or "")  # (its blocks are not wanted)
                    process.outstanding.pop(seq, None)
                alive.append(process)
            except (EOFError, OSError, RingClosed):
                stop_all([process], 1.0)
        self._workers = []
        return alive

    def close(self) -> None:
        """Drop the calls in flight and keep the processes warm for the next pool (:func:`give_spares`)."""
        give_spares(self._drain())

"""The process executor: worker processes that run a step's function on tasks, for pure-Python functions.

Workers are fresh interpreters (``python -m parafeed.parallel.worker``: no fork of a process that may run threads,
no re-run of the user's script); they receive the step's function once (by cloudpickle, so lambdas and closures
work) and then serve tasks. A pool belongs to its ``map`` step and is kept
across epochs and iterators; it is shut down when the step is garbage-collected or at interpreter exit. Elements go
both ways through shared-memory rings (:mod:`parafeed.parallel.shm`); only small messages use the pipes.

Faults: an exception in the function reaches the consumer with the worker's traceback as its cause; a worker that
dies (killed by a signal, ``os._exit``) is noticed at once through its closed connection and raises
:class:`~parafeed.errors.WorkerError` naming the elements it held; the broken pool is discarded. Workers ignore
SIGINT (Ctrl-C reaches the consumer) and exit when the main process goes away.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import weakref
from multiprocessing.connection import Connection, wait
from typing import Any

from parafeed.errors import WorkerError
from parafeed.parallel.shm import RingClosed, ShmRing, decode, encode

IN_RING_BYTES = 8 << 20
OUT_RING_BYTES = 32 << 20
START_TIMEOUT = 60.0
_pools: weakref.WeakSet = weakref.WeakSet()


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (set as the exception's ``__cause__``)."""

    def __str__(self) -> str:
        return "\n\n" + self.args[0]


class _Worker:
    """One worker process, its connection and its two shared-memory rings."""

    def __init__(self, index: int, init_message: tuple):
        self.index = index
        self.outstanding: dict[int, int] = {}  # seq -> number of elements
        self.in_ring = ShmRing(IN_RING_BYTES)
        self.out_ring = ShmRing(OUT_RING_BYTES)
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "parafeed.parallel.worker", str(theirs.fileno()), self.in_ring.name,
                 self.out_ring.name],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, start_new_session=False,
            )  # fmt: skip
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.conn.send(init_message)

    def describe(self) -> str:
        code = self.process.poll()
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        return f"worker process {self.index} (pid {self.process.pid}) {how}"

    def close(self, timeout: float) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.conn.close()
        self.in_ring.close()
        self.out_ring.close()


class ProcessPool:
    """Worker processes running one function; used by one iterator at a time."""

    def __init__(self, fn_blob: bytes, workers: int):
        init = (list(sys.path), fn_blob)
        self.workers: list[_Worker] = []
        try:
            for i in range(workers):
                self.workers.append(_Worker(i, init))
        except BaseException:
            self.shutdown()
            raise
        self.in_use = False
        self.broken = False
        _pools.add(self)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the workers (politely, then by force) and free the shared memory."""
        deadline = time.monotonic() + timeout
        for w in self.workers:
            w.close(max(0.1, deadline - time.monotonic()))
        self.workers = []

    def drain(self, timeout: float) -> bool:
        """Receive and drop results still on their way (from an abandoned iterator); False if some never came."""
        deadline = time.monotonic() + timeout
        for w in self.workers:
            while w.outstanding:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not w.conn.poll(remaining):
                    return False
                try:
                    seq, message, _ = w.conn.recv()
                except (EOFError, OSError):
                    return False
                decode(message, w.out_ring)
                w.outstanding.pop(seq, None)
        return True


@atexit.register
def _shutdown_all() -> None:
    for pool in list(_pools):
        pool.shutdown(timeout=1.0)


class ProcessExecutor:
    """Runs chunks on a :class:`ProcessPool`; a receiver thread moves results to the runner's queue."""

    kind = "process"

    def __init__(self, pool: ProcessPool, results: queue.SimpleQueue, release: Any):
        self._pool = pool
        self._results = results
        self._release = release
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()  # a byte here ends the receiver's wait at once on close()
        self._receiver = threading.Thread(
            target=_receive,
            args=(pool, results, self._stop, self._lock, self._wake_r),
            name="parafeed-receiver",
            daemon=True,
        )
        self._receiver.start()

    def submit(self, seq: int, chunk: list) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            worker = min(self._pool.workers, key=lambda w: sum(w.outstanding.values()))
            worker.outstanding[seq] = len(chunk)
        try:
            worker.conn.send((seq, encode(chunk, worker.in_ring, self._stop.is_set)))
        except (RingClosed, OSError):  # stopping, or the worker died (its sentinel reports that)
            with self._lock:
                worker.outstanding.pop(seq, None)

    def close(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            self._stop.set()  # no task is sent after this
        os.write(self._wake_w, b"x")
        self._receiver.join(timeout=5)
        os.close(self._wake_w)
        os.close(self._wake_r)
        pool = self._pool
        if not pool.broken and not pool.drain(timeout=5.0):
            pool.broken = True  # a task that never finishes: this pool cannot be handed to another iterator
        self._release(pool)


def _receive(pool: ProcessPool, results: queue.SimpleQueue, stop: threading.Event, lock: threading.Lock,
             wake: int) -> None:  # fmt: skip
    by_conn = {w.conn: w for w in pool.workers}
    while not stop.is_set():
        for conn in wait([*by_conn, wake]):
            if conn == wake:
                return
            worker = by_conn[conn]
            try:
                seq, message, seconds = conn.recv()
                outcomes = decode(message, worker.out_ring)
            except (EOFError, OSError):  # the connection closed: the worker died
                if stop.is_set():
                    return
                with contextlib.suppress(subprocess.TimeoutExpired):
                    worker.process.wait(1.0)
                pool.broken = True
                lost = sum(worker.outstanding.values())
                results.put(("fatal", WorkerError(
                    f"map(): {worker.describe()} while computing {lost} element(s); the pool is discarded. If the "
                    "function can crash the interpreter (native code, os._exit, memory), guard it, or run it on "
                    "threads."), 0.0))  # fmt: skip
                return
            with lock:
                worker.outstanding.pop(seq, None)
            results.put((seq, [(ok, value if ok else _unpack_error(value)) for ok, value in outcomes], seconds))
            del outcomes, message  # keep no exception (and its traceback) alive in this thread


def _unpack_error(packed: tuple[BaseException, str]) -> BaseException:
    err, text = packed
    err.__cause__ = RemoteTraceback(text)
    return err


def process_executor_factory(step: Any, element_fn: Any) -> Any:
    """``make(workers, results)`` for the runner, borrowing the step's pool (or a fresh one while it is in use)."""
    import cloudpickle

    def make(workers: int, results: queue.SimpleQueue) -> ProcessExecutor:
        pool = step._process_pool
        if pool is None or pool.broken or pool.in_use or len(pool.workers) != workers:
            if pool is not None and not pool.in_use:
                pool.shutdown()
            pool = ProcessPool(cloudpickle.dumps(element_fn), workers)
            if step._process_pool is None or not step._process_pool.in_use:
                step._process_pool = pool
                weakref.finalize(step, pool.shutdown)
        pool.in_use = True

        def release(p: ProcessPool) -> None:
            p.in_use = False
            if p.broken or p is not step._process_pool:
                p.shutdown()

        return ProcessExecutor(pool, results, release)

    return make

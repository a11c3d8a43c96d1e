"""Worker processes of the process executor: starting them, and keeping warm ones for the next pool.

A worker is a fresh interpreter (``python -m parafeed.parallel.process_worker``) that takes a function by an ``init``
message at any time, so one process serves pool after pool. Starting one costs a few hundred milliseconds (the
interpreter, NumPy, parafeed), paid before its first result. So workers are started ahead when a ``map`` step asks
for the process executor (:func:`prestart`), and the workers of a pool whose step is gone wait as spares for the
next pool (a pipeline built anew each epoch starts on warm workers). Spares are few (at most the schedulable cores)
and leave after :data:`SPARE_SECONDS` unused, or at exit; :func:`release_spares` sends them away at once. SIGTERM
kills every worker at once (:mod:`parafeed.parallel.shutdown`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection

from parafeed.core.options import schedulable_cpus
from parafeed.parallel import shutdown
from parafeed.parallel.shm import ShmRing

IN_RING_BYTES = 8 << 20
OUT_RING_BYTES = 32 << 20
SPARE_SECONDS = 60.0  # an unused spare worker leaves after this long


def _worker_env() -> dict[str, str]:
    """The environment of a worker: this process's, with glibc told to keep freed memory (unless the user says
    otherwise). A worker allocates and frees the same large arrays for every element; by default glibc gives that
    memory back to the kernel each time, and faulting it in again was a third of the worker's time on P5."""
    env = dict(os.environ)
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(32 << 20))  # arrays up to 32 MiB come from the heap
    env.setdefault("MALLOC_TRIM_THRESHOLD_", str(256 << 20))  # which keeps up to 256 MiB free before trimming
    return env


class Worker:
    """One worker process, its connection and its two shared-memory rings."""

    def __init__(self) -> None:
        self.index = 0  # its place in the pool it serves (named in errors)
        self.outstanding: dict[int, int] = {}  # seq -> number of elements
        self.forget: list[str] = []  # shared batches removed since its last task (it unmaps them)
        self.idle_since = 0.0  # when it became a spare
        self.in_ring = ShmRing(IN_RING_BYTES)
        self.out_ring = ShmRing(OUT_RING_BYTES)
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "parafeed.parallel.process_worker", str(theirs.fileno()), self.in_ring.name,
                 self.out_ring.name],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, start_new_session=False, env=_worker_env(),
            )  # fmt: skip
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        _live.add(self)
        shutdown.watch_sigterm()

    def assign(self, index: int, fn_blob: bytes) -> None:
        """Give the worker a function (cloudpickled) to run from its next task on."""
        self.index = index
        self.forget = []
        self.conn.send(("init", list(sys.path), fn_blob))

    def alive(self) -> bool:
        return self.process.poll() is None

    def describe(self) -> str:
        """How the worker ended; called once its connection closed, which can come before its exit code (one core)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5.0)
        code = self.process.poll()
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        return f"worker process {self.index} (pid {self.process.pid}) {how}"

    def stop(self) -> None:
        """Ask the worker to exit, and remove the rings' names at once (its mappings stay valid until it exits)."""
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.in_ring.unlink()
        self.out_ring.unlink()

    def reap(self, timeout: float) -> None:
        """Wait for the stopped worker to exit (then kill it) and release the connection and the rings."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.conn.close()
        self.in_ring.close()
        self.out_ring.close()


_live: weakref.WeakSet[Worker] = weakref.WeakSet()  # every worker started and not yet collected


def _kill_all() -> None:
    """Kill every worker process at once (on SIGTERM: takes no lock)."""
    for w in list(_live):
        with contextlib.suppress(OSError):
            os.kill(w.process.pid, signal.SIGKILL)


shutdown.on_terminate(_kill_all)


def stop_all(workers: list[Worker], timeout: float = 5.0) -> None:
    """Stop ``workers`` (politely, all at once, then by force)."""
    for w in workers:
        w.stop()
    deadline = time.monotonic() + timeout
    for w in workers:
        w.reap(max(0.1, deadline - time.monotonic()))


class FinalizerSafeLock:
    """A lock a finalizer may run inside: the garbage collector runs finalizers at any allocation, also while the
    lock is held, and one that needs the lock (a collected step's pool given back) would deadlock on it. Such a call
    is instead deferred (:meth:`defer`, when :meth:`inside`) and made once the lock is left."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None  # the thread in the lock
        self.deferred: list[Callable[[], None]] = []

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            self._owner = threading.get_ident()
            try:
                yield
            finally:
                self._owner = None
        deferred, self.deferred = self.deferred, []
        for call in deferred:
            call()

    def inside(self) -> bool:
        """Whether this thread holds the lock (a finalizer run inside it)."""
        return self._owner == threading.get_ident()

    def defer(self, call: Callable[[], None]) -> None:
        self.deferred.append(call)


class _Spares:
    """Warm workers without a pool: started ahead, or left by a pool whose step is gone."""

    def __init__(self) -> None:
        self._lock = FinalizerSafeLock()
        self._idle: list[Worker] = []
        self._timer: threading.Timer | None = None

    def take(self, n: int) -> list[Worker]:
        """Up to ``n`` warm workers (fewer, or none, when there are not that many)."""
        with self._lock.held():
            dead = [w for w in self._idle if not w.alive()]
            live = [w for w in self._idle if w not in dead]
            taken, self._idle = live[:n], live[n:]
            self._arm()
        stop_all(dead, 1.0)
        return taken

    def give(self, workers: list[Worker]) -> None:
        """Keep healthy idle ``workers`` as spares (up to the schedulable cores); stop the rest (all of them once
        the interpreter exits)."""
        if shutdown.exiting():
            stop_all(workers, 1.0)
            return
        if self._lock.inside():  # (a finalizer: stopped once the lock is left)
            self._lock.defer(lambda: stop_all(workers))
            return
        now = time.monotonic()
        with self._lock.held():
            keep = [w for w in workers if w.alive() and not w.outstanding]
            room = max(0, schedulable_cpus() - len(self._idle))
            for w in keep[:room]:
                w.idle_since = now
            self._idle += keep[:room]
            extra = [w for w in workers if w not in keep[:room]]
            self._arm()
        stop_all(extra)

    def prestart(self, n: int) -> None:
        """Start workers until ``n`` spares are warm or warming (without waiting for them)."""
        with self._lock.held():
            missing = min(n, schedulable_cpus()) - len(self._idle)
            if missing <= 0:
                return
            started = [Worker() for _ in range(missing)]
            now = time.monotonic()
            for w in started:
                w.idle_since = now
            self._idle += started
            self._arm()

    def release(self, older_than: float = 0.0) -> None:
        """Stop the spares unused for ``older_than`` seconds or more (all of them by default)."""
        now = time.monotonic()
        with self._lock.held():
            leaving = [w for w in self._idle if now - w.idle_since >= older_than]
            self._idle = [w for w in self._idle if w not in leaving]
            self._arm()
        stop_all(leaving)

    def _arm(self) -> None:
        """(Re)start the timer that sends unused spares away; the caller holds the lock."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._idle and not shutdown.exiting():
            self._timer = threading.Timer(SPARE_SECONDS, self.release, kwargs={"older_than": SPARE_SECONDS})
            self._timer.daemon = True
            self._timer.start()


_spares = _Spares()
take_spares, give_spares, prestart = _spares.take, _spares.give, _spares.prestart


def release_spares() -> None:
    """Stop the warm worker processes kept for the next process-executor pool now (they also leave on their own
    after :data:`SPARE_SECONDS` unused, and at exit)."""
    _spares.release()


shutdown.at_exit(release_spares)

"""The process executor: worker processes that run a step's function on tasks, for pure-Python functions.

Workers are fresh interpreters (:mod:`parafeed.parallel.process_startup`: started ahead, reused from pool to pool); a
pool gives them the step's function (by cloudpickle, so lambdas and closures work) and then tasks. A run borrows a pool
while it runs; between runs the pool waits, warm, for the next run of the same ``map`` step (:class:`_IdlePools`);
when the step is garbage-collected its workers become spares for the next pool. Elements go both ways through
shared-memory rings (:mod:`parafeed.parallel.shm`), and a fused batch's rows are written straight into shared memory
(:mod:`parafeed.parallel.shared_batches`); only small messages use the pipes.

Faults: an exception in the function reaches the consumer with the worker's traceback as its cause; a worker that
dies (killed by a signal, ``os._exit``) is noticed at once through its closed connection and raises
:class:`~parafeed.errors.WorkerError` naming the elements it held; the broken pool is discarded. Workers ignore
SIGINT (Ctrl-C reaches the consumer) and exit when the main process goes away.
"""

from __future__ import annotations

import io
import os
import threading
import time
import weakref
from multiprocessing.connection import wait
from typing import Any

from parafeed.errors import WorkerError
from parafeed.parallel import shutdown
from parafeed.parallel.batch_rows import BatchRows, Placed
from parafeed.parallel.executor import FATAL, MakeExecutor, Outcome, ResultQueue
from parafeed.parallel.process_startup import FinalizerSafeLock, Worker, give_spares, stop_all, take_spares
from parafeed.parallel.remote_errors import unpack_error
from parafeed.parallel.shared_batches import SharedBatches
from parafeed.parallel.shm import RingClosed, decode, encode

_pools: weakref.WeakSet[ProcessPool] = weakref.WeakSet()


class ProcessPool:
    """Worker processes running one function; used by one run at a time."""

    def __init__(self, fn_blob: bytes, workers: int):
        self.fn_blob = fn_blob
        self.batches = SharedBatches()  # batches its workers write rows into (a fused batch)
        self.workers: list[Worker] = []
        self.broken = False
        self.owner = 0  # id() of the step it runs for
        try:
            self.grow(workers)
        except BaseException:
            self.shutdown()
            raise
        _pools.add(self)

    def grow(self, n: int) -> None:
        """Have ``n`` workers at least: warm spares first, then new ones."""
        missing = n - len(self.workers)
        if missing <= 0:
            return
        new = take_spares(missing)
        new += [Worker() for _ in range(missing - len(new))]
        for w in new:
            w.assign(len(self.workers), self.fn_blob)
            self.workers.append(w)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the workers and free the shared memory."""
        workers, self.workers = self.workers, []
        stop_all(workers, timeout)
        self.batches.close()

    def retire(self) -> None:
        """The pool's step is gone: its workers wait, warm, for the next pool (unless it broke)."""
        if self.broken:
            self.shutdown()
            return
        workers, self.workers = self.workers, []
        give_spares(workers)
        self.batches.close()

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


def _shutdown_all() -> None:
    for pool in list(_pools):
        pool.shutdown(timeout=1.0)


shutdown.at_exit(_shutdown_all)


class ProcessExecutor:
    """Runs chunks on a :class:`ProcessPool` (an :class:`~parafeed.parallel.executor.Executor`); a receiver thread
    moves results to the runner's queue. ``release(pool)`` takes the pool back when the executor closes. With
    ``rows`` (a fused batch), chunks hold numbered elements ``(i, x)`` and workers write results into their rows."""

    kind = "process"

    def __init__(self, pool: ProcessPool, results: ResultQueue, release: Any, rows: BatchRows | None = None):
        self._pool = pool
        self._rows = rows
        self._numbers: dict[int, list[int]] = {}  # seq -> its elements' numbers (with rows)
        if rows is not None:
            rows.shared = pool.batches
        self._results = results
        self._release = release
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()  # a byte here ends the receiver's wait at once on close()
        self._receiver = threading.Thread(
            target=_receive,
            args=(pool, results, self._stop, self._lock, self._wake_r, self._placed),
            name="parafeed-receiver",
            daemon=True,
        )
        self._receiver.start()

    def submit(self, seq: int, chunk: list[Any]) -> None:
        places = None
        if self._rows is not None:
            numbers = self._numbers[seq] = [i for i, _ in chunk]
            places = self._rows.targets(numbers)
            chunk = [x for _, x in chunk]
        pool = self._pool
        with self._lock:
            if self._stop.is_set():
                return
            worker = min(pool.workers, key=lambda w: sum(w.outstanding.values()))
            worker.outstanding[seq] = len(chunk)
            retired = pool.batches.retired()
            for w in pool.workers:
                w.forget += retired
            forget, worker.forget = worker.forget, []
        try:
            worker.conn.send((seq, encode(chunk, worker.in_ring, self._stop.is_set), places, forget))
        except (RingClosed, OSError):  # stopping, or the worker died (its sentinel reports that)
            with self._lock:
                worker.outstanding.pop(seq, None)

    def grow(self, workers: int) -> None:
        """Run on ``workers`` processes at least (AUTOTUNE asks for more as it finds they pay)."""
        with self._lock:
            if not self._stop.is_set():
                self._pool.grow(workers)

    def _placed(self, seq: int, outcomes: list[Outcome]) -> list[Outcome]:
        """With rows, results a worker did not write (the first ones, which set the batches' layout) written here,
        as soon as they arrive: chunks submitted from then on are written by the workers."""
        if self._rows is None:
            return outcomes
        place = self._rows.place
        return [
            (True, place(i, value)) if ok and type(value) is not Placed else (ok, value)
            for i, (ok, value) in zip(self._numbers.pop(seq), outcomes)
        ]  # fmt: skip

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
        if shutdown.exiting():
            pool.broken = True  # (stopped with the interpreter: no waiting for the tasks in flight)
        elif not pool.broken and not pool.drain(timeout=5.0):
            pool.broken = True  # a task that never finishes: this pool cannot be handed to another iterator
        self._release(pool)


def _receive(pool: ProcessPool, results: ResultQueue, stop: threading.Event, lock: threading.Lock,
             wake: int, placed: Any) -> None:  # fmt: skip
    by_conn: dict[Any, Worker] = {}  # its connection -> a worker
    while not stop.is_set():
        if len(by_conn) != len(pool.workers):  # the pool grew (it never shrinks while it runs)
            by_conn = {w.conn: w for w in pool.workers}
        for conn in wait([*by_conn, wake], timeout=0.05):
            if conn == wake:
                return
            worker = by_conn[conn]
            try:
                seq, message, seconds = worker.conn.recv()
                outcomes = decode(message, worker.out_ring)
            except (EOFError, OSError):  # the connection closed: the worker died
                if stop.is_set():
                    return
                pool.broken = True
                lost = sum(worker.outstanding.values())
                results.put((FATAL, WorkerError(
                    f"map(): {worker.describe()} while computing {lost} element(s); the pool is discarded. If the "
                    "function can crash the interpreter (native code, os._exit, memory), guard it, or run it on "
                    "threads."), 0.0))  # fmt: skip
                return
            with lock:
                worker.outstanding.pop(seq, None)
            outcomes = placed(seq, [(ok, value if ok else unpack_error(value)) for ok, value in outcomes])
            results.put((seq, outcomes, seconds))
            del outcomes, message  # keep no exception (and its traceback) alive in this thread


class _IdlePools:
    """Worker pools kept between runs, by the step they run the function of: the next run of a ``map`` step (the
    next epoch, a restored iterator) starts on warm workers. The step holds no pool: a run borrows one while it runs
    and gives it back here; a step's idle pools are shut down when the step is garbage-collected, or at exit."""

    def __init__(self) -> None:
        self._lock = FinalizerSafeLock()
        self._idle: dict[int, ProcessPool] = {}  # id(step) -> its idle pool (one at most)
        self._steps: set[int] = set()  # steps being watched for garbage collection

    def borrow(self, step: Any, fn: Any, workers: int, limit: int | None = None) -> ProcessPool:
        """The step's idle pool (grown to ``workers``), else a new one for ``fn``: :class:`DataTooLarge` where
        ``limit`` bytes do not hold it pickled."""
        import cloudpickle

        key = id(step)
        with self._lock.held():
            pool = self._idle.pop(key, None)
            if key not in self._steps:
                self._steps.add(key)
                weakref.finalize(step, self._forget, key)
        if pool is not None and pool.broken:
            pool.shutdown()
            pool = None
        if pool is None:
            pool = ProcessPool(cloudpickle.dumps(fn) if limit is None else pickled_within(fn, limit), workers)
        else:
            pool.grow(workers)
        pool.owner = key
        return pool

    def give_back(self, pool: ProcessPool) -> None:
        with self._lock.held():
            keep = not pool.broken and pool.owner in self._steps and pool.owner not in self._idle
            if keep:
                self._idle[pool.owner] = pool
        if not keep:
            pool.retire()

    def _forget(self, key: int) -> None:
        if self._lock.inside():  # (a step's finalizer: the step is forgotten once the lock is left)
            self._lock.defer(lambda: self._forget(key))
            return
        with self._lock.held():
            self._steps.discard(key)
            pool = self._idle.pop(key, None)
        if pool is not None:
            pool.retire()


_idle_pools = _IdlePools()


class DataTooLarge(ValueError):
    """A function holds more data than every worker process should get a copy of."""


def pickled_within(fn: Any, limit: int) -> bytes:
    """``fn`` cloudpickled, or :class:`DataTooLarge` as soon as the pickle passes ``limit`` bytes (an array counts
    before it is copied: a function that holds gigabytes fails at once, without a copy of them)."""
    import cloudpickle

    class Capped(io.BytesIO):
        def write(self, data: Any) -> int:
            grow(memoryview(data).nbytes)
            return super().write(data)

    out = Capped()

    def grow(nbytes: int) -> None:
        if out.tell() + nbytes > limit:
            raise DataTooLarge(f"{fn!r} takes more than {limit} bytes pickled (the data it holds included)")

    def in_band(buffer: Any) -> bool:  # (protocol 5 hands arrays' buffers here before it copies them)
        grow(buffer.raw().nbytes)
        return True

    cloudpickle.CloudPickler(out, protocol=5, buffer_callback=in_band).dump(fn)
    return out.getvalue()


def process_executor_factory(step: Any, fn: Any, rows: BatchRows | None = None,
                             limit: int | None = None) -> MakeExecutor:  # fmt: skip
    """``make(workers, results)`` for the runner: workers running ``fn`` (element -> result) for ``step``, on a pool
    borrowed for the run (a warm one when an earlier run of the step left one); with ``rows``, writing results into
    a fused batch's rows (the input then numbers its elements: :class:`~parafeed.ops.map_and_batch.Numbered`).
    ``limit``: the bytes ``fn`` may take pickled, data it holds included (every worker gets a copy), else ``make``
    raises :class:`DataTooLarge`."""

    def make(workers: int, results: ResultQueue) -> ProcessExecutor:
        return ProcessExecutor(_idle_pools.borrow(step, fn, workers, limit), results, _idle_pools.give_back, rows)

    return make

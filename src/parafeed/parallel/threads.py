"""The thread executor: worker threads that run a step's function on tasks (chunks of elements).

Right for functions that release the GIL: NumPy, image decoding and resizing, I/O. Workers put each finished task's
outcomes on the runner's result queue; exceptions keep their traceback since they never leave the process.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from parafeed.core.positions import Mark, PositionMarks, position
from parafeed.parallel.executor import MakeExecutor, Outcome, ResultQueue

_STOP = None
TaskQueue = queue.SimpleQueue[tuple[int, list[Any]] | None]  # (seq, chunk), or _STOP
_local = threading.local()


def stop_requested() -> bool:
    """Whether the thread this runs on produces for a consumer that has closed: a source that waits for something
    (rather than computing) checks this while waiting and gives up, so that closing a pipeline never hangs."""
    check = getattr(_local, "stop", None)
    return check is not None and check()


def watch_stop(check: Callable[[], bool]) -> None:
    """Make ``check`` tell :func:`stop_requested` on this (producer) thread whether its consumer has closed."""
    _local.stop = check


def run_chunk(fn: Callable[[Any], Any], chunk: list[Any]) -> tuple[list[Outcome], float]:
    """``[(True, fn(x)) or (False, exception)]`` for the chunk's elements, and the seconds it took."""
    start = time.perf_counter()
    outcomes: list[Outcome] = []
    for x in chunk:
        try:
            outcomes.append((True, fn(x)))
        except Exception as err:
            outcomes.append((False, err))
    return outcomes, time.perf_counter() - start


def _work(tasks: TaskQueue, results: ResultQueue, fn: Callable[[Any], Any]) -> None:
    # no local may outlive the hand-off: an exception kept here would keep its traceback, and through it the
    # consuming iterator, alive while this thread waits
    while (task := tasks.get()) is not _STOP:
        results.put((task[0], *run_chunk(fn, task[1])))
        task = None


def thread_executor_factory(fn: Callable[[Any], Any]) -> MakeExecutor:
    """``make(workers, results)`` for the runner: threads applying ``fn`` (element -> result)."""

    def make(workers: int, results: ResultQueue) -> ThreadExecutor:
        return ThreadExecutor(fn, workers, results)

    return make


class ThreadExecutor:
    """``workers`` threads applying ``fn`` (element -> result) to submitted chunks (an :class:`Executor`)."""

    kind = "thread"

    def __init__(self, fn: Callable[[Any], Any], workers: int, results: ResultQueue):
        self._tasks: TaskQueue = queue.SimpleQueue()
        self._fn = fn
        self._results = results
        self._threads: list[threading.Thread] = []
        self.grow(workers)

    def grow(self, workers: int) -> None:
        while len(self._threads) < workers:
            t = threading.Thread(target=_work, args=(self._tasks, self._results, self._fn), name="parafeed-map",
                                 daemon=True)  # fmt: skip
            t.start()
            self._threads.append(t)

    def submit(self, seq: int, chunk: list[Any]) -> None:
        self._tasks.put((seq, chunk))

    def close(self) -> None:
        for _ in self._threads:
            self._tasks.put(_STOP)
        for t in self._threads:
            t.join(timeout=5)


_END = object()


class _Failure:
    """An exception raised by the source, carried to the consumer with its traceback, and the source's position
    after it (a :class:`PositionMarks` mark; a failure ends its hand-over)."""

    __slots__ = ("error", "state")

    def __init__(self, error: BaseException, state: Mark):
        self.error = error
        self.state = state


CHUNK_SECONDS = 0.001  # a chunk of a BackgroundIterator is handed over at the latest this long after its first item


def _produce(source: Any, marks: PositionMarks, out: queue.Queue[list[Any]], stop: threading.Event,
             limit: threading.Semaphore | None, chunk: int) -> None:  # fmt: skip
    """Thread body: pull from ``source`` into ``out`` (lists of up to ``chunk`` items, each after the source's
    position before its first item, a :class:`PositionMarks` mark) until the end or ``stop``.

    It holds no reference to the consuming iterator, so an abandoned iterator can be garbage-collected (which sets
    ``stop``). After an error it goes on, as a serial iterator would.
    """
    watch_stop(stop.is_set)
    produced = 0  # elements in the last hand-over
    try:
        while not stop.is_set():
            items: list[Any] = [marks.mark(produced)]
            started = 0.0
            if limit is not None:  # (once per hand-over: a Semaphore is Python code)
                limit.acquire()
            try:
                while len(items) <= chunk:
                    try:
                        items.append(next(source))
                    except StopIteration:
                        items.append(_END)
                    except BaseException as err:
                        items.append(_Failure(err, marks.reset()))
                    if type(items[-1]) is _Failure or items[-1] is _END:
                        break
                    now = time.perf_counter()
                    if started == 0.0:
                        started = now
                    elif now - started >= CHUNK_SECONDS:
                        break
            finally:
                if limit is not None:
                    limit.release()
            # (a failure's mark is taken after it)
            produced = 0 if type(items[-1]) is _Failure else len(items) - 1 - (items[-1] is _END)
            while not stop.is_set():
                try:
                    out.put(items, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if items[-1] is _END:
                return
            items = []  # hold no element or exception while producing the next ones
    finally:
        source.close()


class BackgroundIterator:
    """Runs an iterator on a thread of its own, up to ``size`` hand-overs ahead of the consumer.

    Used by ``prefetch`` (one element per hand-over, the size AUTOTUNE'd) and by parallel ``interleave`` (one per open
    input, ``limit`` bounding how many produce at once, up to ``chunk`` elements per hand-over so that cheap inputs,
    such as TFRecord readers, do not pay a thread switch per record). ``order_fixed``: the source's order follows
    from its state, so positions may be marked cheaply (see :class:`PositionMarks`).
    """

    def __init__(self, source: Any, size: int, name: str, limit: threading.Semaphore | None = None, chunk: int = 1,
                 order_fixed: bool = False):  # fmt: skip
        self._queue: queue.Queue[list[Any]] = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        self._done = False
        self._items: collections.deque[Any] = collections.deque()
        marks = PositionMarks(source, throttled=order_fixed)
        self._at: Mark = (*marks.first, 0)  # the mark of the current hand-over (state, error, produced since) ...
        self._taken = 0  # ... and how many of its items were taken
        self._thread = threading.Thread(
            target=_produce, args=(source, marks, self._queue, self._stop, limit, chunk), name=name, daemon=True
        )
        self._thread.start()

    @property
    def size(self) -> int:
        return self._queue.maxsize

    @property
    def buffered(self) -> int:
        return self._queue.qsize()

    def resize(self, size: int) -> None:
        with self._queue.mutex:
            self._queue.maxsize = size
            self._queue.not_full.notify_all()

    def ready(self) -> bool:
        """Whether ``get`` would return without waiting."""
        return self._done or bool(self._items) or self._queue.qsize() > 0

    def __iter__(self) -> BackgroundIterator:
        return self

    def __next__(self) -> Any:
        return self.get()

    def get(self) -> Any:
        """The next element; raises the source's exceptions (with their tracebacks) and StopIteration at its end."""
        if not self._items:
            if self._done:
                raise StopIteration
            items = self._queue.get()
            self._at, self._taken = items[0], 0
            self._items.extend(items[1:])
        item = self._items.popleft()
        if item is _END:
            self._done = True
            self._items.clear()
            self._thread.join()
            raise StopIteration
        if type(item) is _Failure:
            self._at, self._taken = item.state, 0
            raise item.error
        self._taken += 1
        return item

    def get_state(self) -> dict[str, Any]:
        """The consumer's position: the source's state before the current hand-over and the items taken since
        (see :func:`parafeed.checkpoint.seek`)."""
        at, error, since = self._at
        return position(at, since + self._taken, error)

    def close(self) -> None:
        """Stop the thread (the source is closed by it) without waiting for a slow ``next`` to return."""
        self._done = True
        self._items.clear()
        self._stop.set()
        while self._thread.is_alive():
            try:
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=0.05)

    def __del__(self) -> None:
        self._stop.set()

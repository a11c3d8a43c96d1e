"""``Ahead``: batches made ready for the training loop on a thread of their own, a few batches before they are asked
for.

The thread takes the next batch from a parafeed iterator and runs ``ready`` on it (a framework's conversion, the
host-to-device copy issued on a side stream), so the training loop's Python only takes finished items (``hand_over``
runs on the loop's thread: making a device batch safe to use on the loop's stream). Because the thread reads ahead,
the pipeline's own position runs ahead of the loop's: the thread records ``position(k)`` right after batch ``k`` and
:meth:`Ahead.position` gives the one after the last batch the loop took (what a checkpoint needs).

Errors, from the pipeline or from ``ready``, reach the loop in their place with their traceback, and iteration may go
on after them, as with a serial iterator. ``close()`` (or the end of the pipeline, or the interpreter's exit:
:mod:`parafeed.parallel.shutdown`) stops the thread, which closes the pipeline's iterator. ``depth=0`` does it all
on the loop's thread, for pipelines whose replicas agree on their steps through the loop's own process group (their
collectives must not run on a second thread).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from parafeed.feed.stats import FeedStats
from parafeed.parallel import shutdown

CLOSE_SECONDS = 5.0  # how long close() waits for the thread to leave a slow ``next`` of the pipeline

_END = object()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


def _identity(item: Any) -> Any:
    return item


def _produce(source: Iterator[Any], ready: Callable[[Any], Any], size: Callable[[Any], int],
             position: Callable[[int], Any] | None, out: queue.Queue[Any], stop: threading.Event) -> None:  # fmt: skip
    """Thread body: the source's batches, readied, into ``out`` as ``(item, elements, position)``, until the end or
    ``stop``. It holds no reference to its :class:`Ahead`, which can then be garbage-collected (and stops it)."""
    taken = 0
    try:
        while not stop.is_set():
            entry: Any
            try:
                batch = next(source)
                taken += 1
                entry = (ready(batch), size(batch), position(taken) if position is not None else None)
            except StopIteration:
                entry = _END
            except BaseException as err:
                entry = _Failure(err)
            while not stop.is_set():
                try:
                    out.put(entry, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if entry is _END:
                return
            entry = batch = None  # hold no batch or exception while waiting for the next one
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


class Ahead:
    """The batches of ``source`` (a parafeed iterator), each readied by ``ready`` on a thread ``depth`` batches ahead
    of the loop and handed over through ``hand_over`` on the loop's thread (see the module docs).

    Args:
        source: the pipeline's iterator (it belongs to the thread from now on).
        ready: batch -> the item to hand over (runs on the thread).
        depth: batches readied ahead (0: everything on the loop's thread, when it asks).
        hand_over: item -> what the loop receives (runs on the loop's thread).
        size: batch -> the elements in it (for ``stats``).
        stats: a :class:`FeedStats` that records every hand-over.
        position: ``k`` -> the pipeline's position after ``k`` batches, taken right after batch ``k`` was taken.
    """

    def __init__(self, source: Iterator[Any], ready: Callable[[Any], Any], depth: int,
                 hand_over: Callable[[Any], Any] = _identity, size: Callable[[Any], int] = lambda batch: 1,
                 stats: FeedStats | None = None, position: Callable[[int], Any] | None = None):  # fmt: skip
        self._source, self._ready, self._size, self._hand_over = source, ready, size, hand_over
        self._stats = stats
        self._position_of = position
        self._position = position(0) if position is not None else None  # after the batches handed over so far
        self._taken = 0
        self._done = False
        self._queue: queue.Queue[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if depth > 0:
            self._queue = queue.Queue(maxsize=depth)
            self._thread = threading.Thread(
                target=_produce, args=(source, ready, size, position, self._queue, self._stop),
                name="parafeed-feed", daemon=True,
            )  # fmt: skip
            self._thread.start()
        shutdown.close_at_exit(self)

    def __iter__(self) -> Ahead:
        return self

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        clock = self._stats.clock if self._stats is not None else None
        start = clock() if clock is not None else 0.0
        entry = self._queue.get() if self._queue is not None else self._inline()
        if entry is _END:
            self.close()
            raise StopIteration
        if type(entry) is _Failure:
            raise entry.error
        item, elements, position = entry
        self._position = position
        if self._stats is not None and clock is not None:
            self._stats.record(1, clock() - start, elements)
        return self._hand_over(item)

    def _inline(self) -> Any:
        try:
            batch = next(self._source)
        except StopIteration:
            return _END
        self._taken += 1
        position = self._position_of(self._taken) if self._position_of is not None else None
        return self._ready(batch), self._size(batch), position

    def position(self) -> Any:
        """``position(k)`` for the ``k`` batches handed over so far."""
        return self._position

    def close(self) -> None:
        """Stop the thread (it closes the pipeline's iterator); waits at most :data:`CLOSE_SECONDS` for it."""
        if self._done:
            return
        self._done = True
        self._stop.set()
        if self._thread is None:
            close = getattr(self._source, "close", None)
            if close is not None:
                close()
            return
        waited = 0.0
        while self._thread.is_alive() and waited < CLOSE_SECONDS:
            with contextlib.suppress(queue.Empty):  # (a thread waiting for room sees the stop)
                while self._queue is not None:
                    self._queue.get_nowait()
            self._thread.join(timeout=0.05)
            waited += 0.05

    def __del__(self) -> None:
        self._stop.set()

"""``prefetch``: produce elements ahead on a background thread."""

from __future__ import annotations

import queue
import threading
from typing import Any

from parafeed.arguments import as_int
from parafeed.dataset import AUTOTUNE, Dataset, DatasetIterator, PassThroughDataset
from parafeed.errors import InvalidArgumentError

AUTOTUNE_BUFFER = 4  # elements buffered by prefetch(AUTOTUNE)
_END = object()


class PrefetchDataset(PassThroughDataset):
    """The input's elements, produced up to ``buffer_size`` ahead by a background thread (0: no prefetching)."""

    def __init__(self, parent: Dataset, buffer_size: int, name: str | None = None):
        super().__init__(parent, name=name)
        n = as_int("prefetch()", "buffer_size", buffer_size)
        if n < 0 and n != AUTOTUNE:
            raise InvalidArgumentError(f"prefetch(): `buffer_size` must be >= 0 or AUTOTUNE (-1), got {n}")
        self._buffer_size = AUTOTUNE_BUFFER if n == AUTOTUNE else n

    def _make_iterator(self) -> DatasetIterator:
        parent = self._parent._make_iterator()
        if self._buffer_size == 0:
            return parent
        return _PrefetchIterator(parent, self._buffer_size)


class _Failure:
    """An exception raised by the input, carried to the consumer with its traceback."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


def _produce(parent: DatasetIterator, out: queue.Queue, stop: threading.Event) -> None:
    """Thread body: pull from ``parent`` into ``out`` until the end, or until ``stop`` is set.

    It holds no reference to the consuming iterator, so an abandoned iterator can be garbage-collected, which
    sets ``stop``.
    """
    try:
        while not stop.is_set():
            try:
                item: Any = next(parent)
            except StopIteration:
                item = _END
            except BaseException as err:
                item = _Failure(err)
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if item is _END:
                return
    finally:
        parent.close()


class _PrefetchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, buffer_size: int):
        super().__init__()
        self._parent = parent
        self._queue: queue.Queue = queue.Queue(maxsize=buffer_size)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._done = False

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        if self._thread is None:
            self._thread = threading.Thread(
                target=_produce, args=(self._parent, self._queue, self._stop), name="parafeed-prefetch", daemon=True
            )
            self._thread.start()
        item = self._queue.get()
        if item is _END:
            self._done = True
            self._thread.join()
            raise StopIteration
        if type(item) is _Failure:
            raise item.error
        return item

    def close(self) -> None:
        self._done = True
        self._stop.set()
        if self._thread is None:
            self._parent.close()
            return
        while self._thread.is_alive():
            try:
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=0.05)

    def __del__(self) -> None:
        self._stop.set()

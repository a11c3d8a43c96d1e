"""Reading a file in object storage: ranged reads ahead of the reader, retried on transient faults.

A :class:`RemoteFile` splits its file into blocks (``options.remote.block_size``) and keeps the blocks after the
reader's position in flight on a shared pool of I/O threads, so request latency overlaps with reading. How many are
in flight is tuned while reading: it starts at two blocks and grows by one each time the reader has to wait for a
block, up to ``options.remote.read_ahead`` bytes, so a slow or distant endpoint gets the concurrency its latency
needs (bandwidth x latency) and a fast one no more than it uses. A new file of the same kind of store (``s3://``,
``gs://`` ...) starts at the read-ahead the last one grew to, so small files do not each learn it again.

Every request is retried on transient faults (5xx and throttling answers, timeouts, connections cut, responses
shorter than asked) with exponential back-off and jitter. What a response delivered is kept and the next request
starts at the exact byte after it, so nothing is read twice or skipped; TFRecord readers check each record's CRC on
top. Each retry is logged (logger ``parafeed.io.remote``, WARNING: URL, offset, attempt, cause, next wait). After
``options.remote.retries`` attempts, or ``options.remote.retry_seconds`` seconds, without progress, the read fails
with :class:`~parafeed.errors.UnavailableError` naming the URL, the byte offset, the retries, the time spent and the
last cause. These are the only retries: the filesystems parafeed builds try each request once (see
:func:`parafeed.io.storage.filesystem`), so the layers do not multiply.

With ``options.remote.cache_dir`` set, files are kept whole in a local cache as they are read and opened from it
afterwards (:mod:`parafeed.io.remote_cache`).
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import random
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parafeed.errors import CancelledError, InvalidArgumentError, NotFoundError, UnavailableError
from parafeed.io.remote_cache import CAPACITY, IDENTITY, CachedCopy, RemoteCache

if TYPE_CHECKING:
    from parafeed.io.remote_cache import Part

RECHECK = 60.0  # seconds a listing's or the cache's word on an object is trusted without asking the store again
IO_THREADS = 32  # threads for remote reads in a process (they wait on the network, not the CPU)
MAX_DELAY = 10.0  # seconds between retries at most

log = logging.getLogger(__name__)

_PERMANENT = (PermissionError, IsADirectoryError, NotADirectoryError, ValueError, TypeError, NotImplementedError)
_TRANSIENT_STATUS = frozenset({408, 429})


class ShortAnswer(ConnectionError):
    """A response that held fewer bytes than were asked for (transient: the rest is asked for again)."""


@dataclass(frozen=True)
class Settings:
    read_ahead: int = 64 << 20
    block_size: int = 4 << 20
    retries: int = 10
    retry_delay: float = 0.1
    retry_seconds: float = 60.0
    cache_dir: str | None = None
    cache_bytes: int = CAPACITY


def settings() -> Settings:
    """The running pipeline's ``options.remote``, defaults filled in."""
    from parafeed.core.iterator import current_options

    given = current_options().remote
    values = {k: getattr(given, k) for k in Settings.__dataclass_fields__ if getattr(given, k) is not None}
    if "cache_dir" in values:
        values["cache_dir"] = os.fspath(values["cache_dir"])
    out = Settings(**values)
    if min(out.block_size, out.read_ahead, out.cache_bytes) <= 0 or out.retry_delay < 0 or out.retry_seconds < 0:
        raise InvalidArgumentError(
            f"options.remote: block_size, read_ahead and cache_bytes must be > 0, retry_delay and retry_seconds "
            f">= 0, got {out}; "
            "set them in pf.Options().remote (None keeps a default)"
        )
    return out


_pool_lock = threading.Lock()
_pool: tuple[int, concurrent.futures.ThreadPoolExecutor] | None = None


def io_pool() -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool of I/O threads (a new one in a forked child, whose parent's threads do not exist)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), concurrent.futures.ThreadPoolExecutor(IO_THREADS, thread_name_prefix="parafeed-io"))
        return _pool[1]


def transient(err: BaseException) -> bool:
    """Whether a failed request may succeed if tried again."""
    status = getattr(err, "status", None)  # aiohttp's ClientResponseError (fsspec's HTTP filesystem)
    if isinstance(status, int):
        return status >= 500 or status in _TRANSIENT_STATUS
    if isinstance(err, FileNotFoundError):
        return False
    return not isinstance(err, _PERMANENT)


def backoff(attempt: int, first: float) -> float:
    """Seconds to wait before retry ``attempt`` (1, 2, ...): doubling from ``first``, capped, with full jitter."""
    return random.uniform(0.5, 1.0) * min(MAX_DELAY, first * 2 ** (attempt - 1))


class Retrier:
    """Runs requests for one file, retrying transient faults; counts the faults it retried (``faults``; all
    retriers of the process: ``Retrier.total_faults``)."""

    total_faults = 0

    def __init__(self, url: str, step: str, settings: Settings):
        self.url = url
        self.step = step
        self.settings = settings
        self.faults = 0
        self._lock = threading.Lock()

    def call(self, what: str, offset: int, request: Any) -> Any:
        """``request()``, tried again after transient faults; ``what`` and ``offset`` name it in the error."""
        attempt, since = 0, time.monotonic()
        while True:
            try:
                return request()
            except Exception as err:
                attempt = self.failed(what, offset, err, attempt, since)

    def failed(self, what: str, offset: int, err: BaseException, attempt: int, since: float) -> int:
        """After a failed attempt (``attempt`` retries so far, failing since ``since``): raise if it is permanent or
        the retry budget is spent, else log, wait and return the next attempt's number."""
        if isinstance(err, FileNotFoundError):
            raise NotFoundError(2, f"{self.step}: cannot open {self.url}: not found ({err})") from None
        elapsed = time.monotonic() - since
        budget = self.settings
        if not transient(err) or attempt >= budget.retries or elapsed >= budget.retry_seconds:
            tried = f" after {attempt} retries in {elapsed:.1f} s" if attempt else ""
            raise UnavailableError(
                f"{self.step}: {self.url}: {what} at byte offset {offset} failed{tried}: {type(err).__name__}: "
                f"{err}; check the endpoint and credentials (storage_options), or allow more retries "
                "(options.remote.retries, options.remote.retry_seconds)"
            ) from err
        with self._lock:
            self.faults += 1
            Retrier.total_faults += 1
        wait = min(backoff(attempt + 1, budget.retry_delay), max(0.0, budget.retry_seconds - elapsed))
        log.warning("%s: %s: %s at byte offset %d failed (%s: %s); retry %d of %d in %.1f s", self.step, self.url,
                    what, offset, type(err).__name__, str(err)[:200], attempt + 1, budget.retries, wait)  # fmt: skip
        time.sleep(wait)
        return attempt + 1

    def read_range(self, fs: Any, path: str, start: int, end: int) -> bytes:
        """Bytes ``start:end`` of the file, whole: a response cut short is continued at the byte after it."""
        parts, at, attempt, since = [], start, 0, time.monotonic()
        while at < end:
            try:
                data = fs.cat_file(path, start=at, end=end)
            except Exception as err:
                attempt = self.failed("reading", at, err, attempt, since)
                continue
            if data:
                parts.append(data)
                at += len(data)
                attempt, since = 0, time.monotonic()  # progress: the retry budget is per stall
            if at < end:  # a short response: the rest is asked for again
                short = ShortAnswer(f"the answer ended {end - at} bytes short")
                attempt = self.failed("reading", at, short, attempt, since)
        return parts[0] if len(parts) == 1 else b"".join(parts)


def describe(fs: Any, path: str, retrier: Retrier) -> dict:
    """fs.info() of a file, retried; an error unless it is a file of known size."""
    info = retrier.call("asking for the size", 0, lambda: fs.info(path))
    if info.get("type") == "directory":
        raise IsADirectoryError(21, f"{retrier.step}: {retrier.url} is a directory")
    if info.get("size") is None:
        raise UnavailableError(
            f"{retrier.step}: {retrier.url}: the server does not say how big the file is (no Content-Length); "
            "parafeed reads URLs with ranged requests and needs it"
        )
    return info


_learned: dict[str, int] = {}  # protocol -> the read-ahead (blocks) its files last grew to
_known: dict[str, tuple[float, dict]] = {}  # url -> (when, fs.info) from a listing, or of a copy found in the cache


def remember(url: str, info: dict) -> None:
    """Keep what a listing (or a cache hit) said of the object at ``url``, its size and identity, for ``RECHECK``
    seconds."""
    now = time.monotonic()
    if len(_known) >= 1 << 20:  # (a listing of millions of objects: forget the stale ones)
        for key in [k for k, (when, _) in _known.items() if now - when >= RECHECK]:
            del _known[key]
    _known[url] = (now, {k: info[k] for k in ("size", "type", *IDENTITY) if k in info})


def recall(url: str) -> dict | None:
    """What a listing or the remote cache said of ``url`` less than ``RECHECK`` seconds ago."""
    seen = _known.get(url)
    return seen[1] if seen is not None and time.monotonic() - seen[0] < RECHECK else None


def open_remote(url: str, fs: Any, path: str, step: str, current: Settings | None = None) -> Any:
    """The file at ``url``: its whole copy in the remote cache when there is one, else a :class:`RemoteFile` (also
    filling the cache when it is on); ``current``: the settings (the running pipeline's by default)."""
    current = current or settings()
    retrier = Retrier(url, step, current)
    info = recall(url) or describe(fs, path, retrier)
    sink = None
    if current.cache_dir is not None:
        cache = RemoteCache(current.cache_dir, current.cache_bytes)
        copy = cache.open(url, info)
        if copy is not None:
            remember(url, info)
            return copy
        sink = cache.reserve(url, info, current.block_size)
    return RemoteFile(url, fs, path, retrier, info, sink)


def local_copy(url: str, fs: Any, path: str, step: str, current: Settings) -> str | None:
    """The path of the remote cache's whole copy of the file, read into the cache first if need be; None when the
    cache is off or the file does not fit in it."""
    if current.cache_dir is None:
        return None
    with open_remote(url, fs, path, step, current) as f:
        if isinstance(f, CachedCopy):
            return f.name
        if f.sink is None:
            return None
        chunk = bytearray(current.block_size)
        while f.readinto(chunk):
            pass
        return f.sink.final if f.sink.done else None


class RemoteFile:
    """A read-only binary file at ``url`` (``path`` within the fsspec filesystem ``fs``): ``readinto``, ``read``,
    ``seek``, ``tell``, ``close``, with blocks read ahead (see the module's doc)."""

    def __init__(self, url: str, fs: Any, path: str, retrier: Retrier, info: dict, sink: Part | None = None):
        self.url = url
        self._fs = fs
        self._path = path
        self._settings = settings = retrier.settings
        self.retrier = retrier
        self.sink = sink  # the remote cache's copy, written block by block as they come
        self.size = int(info["size"])
        self._block = settings.block_size
        self._most = max(1, settings.read_ahead // self._block)  # blocks in flight at most
        self.window = min(max(2, _learned.get(url.split("://", 1)[0], 0)), self._most)  # blocks in flight now
        self._pos = 0
        self._blocks: dict[int, concurrent.futures.Future] = {}
        self._current: tuple[int, memoryview] | None = None  # (block index, its bytes)
        self.waited = 0.0  # seconds the reader waited on reads
        self._closed = False

    # reading -------------------------------------------------------------------------------------------------

    def readinto(self, view: memoryview | bytearray) -> int:
        if self._closed or self._pos >= self.size:
            return 0
        k, offset = divmod(self._pos, self._block)
        data = self._data(k)
        n = min(len(view), len(data) - offset)
        view[:n] = data[offset : offset + n]
        self._pos += n
        return n

    def read(self, n: int = -1) -> bytes:
        n = self.size - self._pos if n is None or n < 0 else min(n, self.size - self._pos)
        out = bytearray(max(0, n))
        view, got = memoryview(out), 0
        while got < n:
            step = self.readinto(view[got:])
            if not step:
                break
            got += step
        return bytes(out[:got])

    def prefetch(self) -> None:
        """Put the requests of the blocks at the reading position in flight now, before the first read: its window,
        at most half the read-ahead budget (``flat_map`` opens the two files after the one it reads this way)."""
        if not self._closed and self._pos < self.size:
            self._schedule(self._pos // self._block, min(self.window, max(1, self._most // 2)))

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        for future in self._blocks.values():
            future.cancel()
        self._blocks.clear()
        self._current = None
        if self.sink is not None:
            self.sink.abandon()  # (a no-op once every block is in)

    def __enter__(self) -> RemoteFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # blocks ----------------------------------------------------------------------------------------------------

    def _data(self, k: int) -> memoryview:
        if self._current is not None and self._current[0] == k:
            return self._current[1]
        ahead = k in self._blocks  # asked for before the reader got here
        self._schedule(k)
        future = self._blocks.pop(k)
        if not future.done():
            from parafeed.parallel.threads import stop_requested

            start = time.perf_counter()
            while True:
                try:
                    future.result(timeout=0.05)
                    break
                except concurrent.futures.TimeoutError:
                    if stop_requested():
                        self.close()
                        raise CancelledError(f"{self.retrier.step}: {self.url}: closed while reading") from None
            self.waited += time.perf_counter() - start
            if ahead:  # the read-ahead was not far enough ahead: read further
                self.window = min(self._most, self.window + 1)
                _learned[self.url.split("://", 1)[0]] = self.window  # the next file of this store starts there
        self._current = (k, memoryview(future.result()))
        self._schedule(k + 1)
        return self._current[1]

    def _schedule(self, k: int, window: int | None = None) -> None:
        """Blocks ``k`` to ``k + window - 1`` in flight (``self.window`` by default); blocks before ``k`` (a seek went
        past them) dropped."""
        for j in [j for j in self._blocks if j < k or j >= k + self._most]:
            self._blocks.pop(j).cancel()
        last = min(k + (window or self.window), -(-self.size // self._block))
        pool = io_pool()
        for j in range(k, last):
            if j not in self._blocks:
                start = j * self._block
                end = min(self.size, start + self._block)
                self._blocks[j] = pool.submit(self._fetch, j, start, end)

    def _fetch(self, k: int, start: int, end: int) -> bytes:
        data = self.retrier.read_range(self._fs, self._path, start, end)
        if self.sink is not None:
            self.sink.write(k, data)
        return data

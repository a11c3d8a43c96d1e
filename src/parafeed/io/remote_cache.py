"""A local cache of whole files read from URLs (``options.remote.cache_dir``, off unless set).

* **Named by what they hold.** An entry's name comes from its URL and the object's identity (size, and the ETag,
  generation or modification time its store reports), so a changed object is never served from an old copy and
  every process on the host agrees on which entry holds which bytes.
* **Filled while reading.** A file read through a :class:`~parafeed.io.remote.RemoteFile` is also written, block
  by block as the I/O threads fetch it, into ``<entry>.part-<pid>-<thread>``, reserved at its full size under the
  cache's lock. When every block is in, the part is flushed to disk, each block read back and checked against the
  CRC of the bytes that came from the network, and the part renamed to the entry's name: an entry exists whole and
  checked or not at all, whatever crashes. A reader that stops early or seeks past blocks removes its part, and
  parts left by processes that died are removed when room is made.
* **Bounded.** Room for a new entry is made by removing the least recently used entries (their modification time
  is touched on every use) until the cache holds at most ``options.remote.cache_bytes`` (16 GiB), parts in flight
  counted at their full size; a file bigger than that is read without the cache.
* **Checked on use.** Opening a file asks the store for its identity (one HEAD request), except within a minute of
  finding the same object in the cache or in a listing (``remote.RECHECK``), so an epoch of small files runs at
  local speed and a changed object is seen within a minute. An entry whose size is not its object's is removed and
  read again; TFRecord readers check each record's CRCs, from a cached copy as from the store.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import logging
import os
import re
import threading
import zlib
from typing import Any

from parafeed.errors import InvalidArgumentError

log = logging.getLogger("parafeed")

CAPACITY = 16 << 30  # bytes, unless options.remote.cache_bytes says otherwise
_PART = ".part-"
_LOCK = ".lock"
# the fs.info() fields that tell one version of an object from another (S3, GCS, HTTP, local)
IDENTITY = ("ETag", "etag", "generation", "LastModified", "last_modified", "updated", "mtime")


def entry_name(url: str, info: dict) -> str:
    """The cache's name for the object at ``url`` that fs.info() described as ``info``."""
    identity = [str(info.get("size"))] + [f"{k}={info[k]}" for k in IDENTITY if info.get(k) is not None]
    digest = hashlib.sha256("\0".join([url, *identity]).encode()).hexdigest()[:32]
    base = re.sub(r"[^A-Za-z0-9._-]", "_", url.rstrip("/").rsplit("/", 1)[-1])[-64:]
    return f"{digest}-{base}"


class RemoteCache:
    """The cache in ``directory`` (made if missing) holding at most ``capacity`` bytes."""

    def __init__(self, directory: str | os.PathLike, capacity: int = CAPACITY):
        if capacity <= 0:
            raise InvalidArgumentError(
                f"remote cache: options.remote.cache_bytes must be an int > 0, got {capacity!r}; set it in "
                "pf.Options().remote (None keeps the default of 16 GiB)"
            )
        self.directory = os.path.abspath(os.fspath(directory))
        self.capacity = int(capacity)
        os.makedirs(self.directory, exist_ok=True)

    def open(self, url: str, info: dict) -> CachedCopy | None:
        """The whole copy of the object, open for reading; None when there is none."""
        path = self.lookup(url, info)
        return None if path is None else CachedCopy(path)

    def lookup(self, url: str, info: dict) -> str | None:
        """The local path of a whole copy of the object, its use recorded; None when there is none."""
        path = os.path.join(self.directory, entry_name(url, info))
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            return None
        if size != int(info["size"]):
            log.warning(
                "remote cache: %s holds %d bytes, not the %s of %s; reading it again", path, size, info["size"], url
            )
            _remove(path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return path

    def reserve(self, url: str, info: dict, block_size: int) -> Part | None:
        """A part to fill with the object's blocks, room made for it; None when it cannot fit."""
        size = int(info["size"])
        if size > self.capacity:
            return None
        final = os.path.join(self.directory, entry_name(url, info))
        tmp = f"{final}{_PART}{os.getpid()}-{threading.get_ident()}"
        try:
            with self._locked():
                if not self._make_room(size):
                    return None
                return Part(final, tmp, size, block_size)
        except OSError as err:  # a full or read-only disk: read without the cache
            log.warning("remote cache: cannot reserve %d bytes in %s for %s: %s", size, self.directory, url, err)
            return None

    @contextlib.contextmanager
    def _locked(self) -> Any:
        fd = os.open(os.path.join(self.directory, _LOCK), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # between processes, and between threads (one open file each)
            yield
        finally:
            os.close(fd)

    def _make_room(self, need: int) -> bool:
        """Remove least recently used entries (and dead processes' parts) until ``need`` more bytes fit."""
        entries: dict[str, list] = {}  # entry name -> [mtime, bytes, paths]
        total = 0
        with os.scandir(self.directory) as listing:
            for item in listing:
                if item.name == _LOCK or not item.is_file(follow_symlinks=False):
                    continue
                try:
                    st = item.stat(follow_symlinks=False)
                except FileNotFoundError:  # (a part another thread finished since the listing)
                    continue
                if _PART in item.name:
                    if not _alive(int(item.name.rsplit(_PART, 1)[1].split("-")[0])):
                        _remove(item.path)
                        continue
                    total += st.st_size  # a part in flight keeps its room
                    continue
                total += st.st_size
                base = item.name.split(".pfindex")[0]
                entry = entries.setdefault(base, [0.0, 0, []])
                entry[0] = max(entry[0], st.st_mtime) if base == item.name else entry[0]
                entry[1] += st.st_size
                entry[2].append(item.path)
        for _, size, paths in sorted(entries.values(), key=lambda e: e[0]):
            if total + need <= self.capacity:
                break
            for path in paths:
                _remove(path)
            total -= size
        return total + need <= self.capacity


class CachedCopy(io.FileIO):
    """A cache entry open for reading; ``evict()`` removes the entry (a reader found it damaged)."""

    def __init__(self, path: str):
        super().__init__(path, "rb")

    def evict(self) -> None:
        log.warning("remote cache: %s is damaged; removed", self.name)
        _remove(self.name)


class Part:
    """An entry being written: ``write(k, data)`` for block ``k``; renamed into place once every block is in."""

    def __init__(self, final: str, tmp: str, size: int, block_size: int):
        self.final, self.tmp, self._block = final, tmp, block_size
        self._fd: int | None = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.ftruncate(self._fd, size)  # its room, counted by its size
        except OSError:
            self._close(remove=True)
            raise
        self._missing = set(range(-(-size // block_size)))
        self._crcs: dict[int, int] = {}
        self._lock = threading.Lock()
        self.done = not self._missing
        if self.done:
            self._publish()

    def write(self, k: int, data: bytes | memoryview) -> None:
        with self._lock:
            if self._fd is None or k not in self._missing:
                return
            try:
                os.pwrite(self._fd, data, k * self._block)
            except OSError as err:
                log.warning("remote cache: cannot write %s (%s); reading without the cache", self.tmp, err)
                self._close(remove=True)
                return
            self._crcs[k] = zlib.crc32(data)
            self._missing.discard(k)
            if not self._missing:
                self._publish()

    def abandon(self) -> None:
        """Give up the part (the reader stopped before every block was in)."""
        with self._lock:
            if not self.done:
                self._close(remove=True)

    def _publish(self) -> None:
        assert self._fd is not None
        try:
            os.fsync(self._fd)
            for k, crc in self._crcs.items():
                if zlib.crc32(os.pread(self._fd, self._block, k * self._block)) != crc:
                    raise OSError(errno.EIO, f"block {k} reads back other bytes than were written")
            os.rename(self.tmp, self.final)
        except OSError as err:
            log.warning("remote cache: %s failed its check (%s); not kept", self.tmp, err)
            self._close(remove=True)
            return
        self.done = True
        self._close(remove=False)

    def _close(self, remove: bool) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if remove:
            _remove(self.tmp)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)

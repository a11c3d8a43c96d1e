"""Record indexes of TFRecord files: the byte offset of every record, for random access and exact sharding.

An index is built once by walking the record headers (checking each length CRC) and cached in memory and, when the
directory is writable, beside the file as ``<file>.pfindex``; a cached index is used only while the file's size and
modification time are unchanged. Compressed files cannot be indexed (their records cannot be reached by seeking).

A file named by URL takes its index from, in turn: memory; the remote cache's copy of the file (indexed locally);
``<url>.pfindex`` beside it (``parafeed convert`` writes one beside every shard), used while its recorded size is
the object's; or else the file read through once, filling the remote cache on the way when it is on. Records are
then read by ranged requests of exactly their bytes, both CRCs checked.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import zlib
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from parafeed.errors import DataLossError, NotFoundError
from parafeed.io.storage import filesystem, is_url, local_path
from parafeed.io.tfrecord_framing import HEADER, U32, crc32c_function, mask

if TYPE_CHECKING:
    from parafeed.io.remote import Settings

STEP = "TFRecordIndex"
INDEX_SUFFIX = ".pfindex"
_MAGIC = b"PFINDEX1"
_META = struct.Struct("<QqQ")  # file size, mtime_ns, record count
_memory: dict[tuple[str, int, int | str], np.ndarray] = {}  # (path, size, mtime_ns) or (url, size, cache entry name)
_lock = threading.Lock()


class TFRecordIndex:
    """The offsets of the records of one uncompressed TFRecord file.

    Example:
        >>> index = pf.io.TFRecordIndex("train-0.tfrecord")
        >>> len(index), index.read(17)[:4]
    """

    def __init__(self, path: str | os.PathLike, storage_options: dict | None = None):
        self.path = os.fspath(path)
        self._storage_options = storage_options
        self.offsets = record_offsets(self.path, storage_options)

    def __len__(self) -> int:
        return len(self.offsets)

    def read(self, i: int) -> bytes:
        """Record ``i``, with both CRCs checked."""
        files = RecordFiles([self.path], [len(self.offsets)], self._storage_options)
        try:
            return files.read(i)
        finally:
            files.close()


def record_offsets(path: str, storage_options: dict | None = None) -> np.ndarray:
    """The start offset of every record in ``path`` (int64), from a cache when it is fresh."""
    if is_url(path):
        offsets = remote_offsets(path, storage_options, build=True)
        assert offsets is not None
        return offsets
    path = local_path(path)
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    with _lock:
        cached = _memory.get(key)
    if cached is not None:
        return cached
    try:
        with open(path + INDEX_SUFFIX, "rb") as f:
            offsets = parse_index(f.read(), st.st_size, st.st_mtime_ns)
    except OSError:
        offsets = None
    if offsets is None:
        with open(path, "rb") as f:
            offsets = _scan(f, path, st.st_size)
        _save(path + INDEX_SUFFIX, st.st_size, st.st_mtime_ns, offsets)
    return _remember(key, offsets)


def _remember(key: tuple, offsets: np.ndarray) -> np.ndarray:
    offsets.flags.writeable = False
    with _lock:
        _memory[key] = offsets
    return offsets


def remote_offsets(url: str, storage_options: dict | None, build: bool) -> np.ndarray | None:
    """The index of the file at ``url`` (see the module's doc); None when it would have to be built and ``build``
    is False."""
    from parafeed.io.remote import Retrier, describe, open_remote, settings
    from parafeed.io.remote_cache import RemoteCache, entry_name

    fs, inner = filesystem(url, storage_options, STEP)
    current = settings()
    retrier = Retrier(url, STEP, current)
    info = describe(fs, inner, retrier)
    size = int(info["size"])
    key = (url, size, entry_name(url, info))
    with _lock:
        cached = _memory.get(key)
    if cached is not None:
        return cached
    local = None if current.cache_dir is None else RemoteCache(current.cache_dir, current.cache_bytes).lookup(url, info)
    if local is not None:
        return record_offsets(local)
    try:
        data = retrier.call("reading its index", 0, lambda: fs.cat_file(inner + INDEX_SUFFIX))
        offsets = parse_index(data, size, None)
    except NotFoundError:
        offsets = None
    if offsets is None:
        if not build:
            return None
        with open_remote(url, fs, inner, STEP) as f:  # (filling the remote cache when it is on)
            offsets = _scan(f, url, size)
    return _remember(key, offsets)


def _scan(f: Any, path: str, size: int) -> np.ndarray:
    crc = crc32c_function()
    offsets = []
    pos = 0
    while pos < size:
        header = f.read(12)
        if len(header) < 12:
            raise DataLossError(f"{STEP}: {path}: truncated record header at byte offset {pos}")
        length, length_crc = HEADER.unpack(header)
        if mask(crc(header[:8])) != length_crc:
            raise DataLossError(f"{STEP}: {path}: corrupted record at byte offset {pos}: bad length CRC")
        if pos + 16 + length > size:
            raise DataLossError(f"{STEP}: {path}: truncated record at byte offset {pos}")
        offsets.append(pos)
        pos += 16 + length
        f.seek(pos)
    return np.array(offsets, dtype=np.int64)


def parse_index(data: bytes, size: int, mtime_ns: int | None) -> np.ndarray | None:
    """The offsets an index file holds, when it is whole and describes a file of ``size`` bytes modified at
    ``mtime_ns`` (None: any time, for a copy in object storage, whose time is its upload's)."""
    head = len(_MAGIC) + _META.size
    if len(data) < head + 4 or not data.startswith(_MAGIC) or zlib.crc32(data[:-4]) != U32.unpack(data[-4:])[0]:
        return None
    file_size, file_mtime, count = _META.unpack_from(data, len(_MAGIC))
    if file_size != size or mtime_ns not in (None, file_mtime) or len(data) != head + 8 * count + 4:
        return None
    return np.frombuffer(data, "<i8", count, head).astype(np.int64)


def index_bytes(size: int, mtime_ns: int, offsets: np.ndarray) -> bytes:
    """An index file's contents."""
    body = _MAGIC + _META.pack(size, mtime_ns, len(offsets)) + offsets.astype("<i8").tobytes()
    return body + U32.pack(zlib.crc32(body))


def _save(index_path: str, size: int, mtime_ns: int, offsets: np.ndarray) -> None:
    tmp = f"{index_path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(index_bytes(size, mtime_ns, offsets))
        os.replace(tmp, index_path)
    except OSError:  # a read-only directory: the in-memory cache still serves this process
        with contextlib.suppress(OSError):
            os.remove(tmp)


class RecordFiles:
    """Random access to the records of uncompressed TFRecord files by position in their concatenation, each record
    checked by both CRCs. Local files are read with ``pread`` (the most recently used kept open); a file named by URL
    from the remote cache's copy when the cache is on (read into it whole first), else by one ranged request of
    exactly the record's bytes. Safe to call from several threads (``remote`` says whether reading ahead on
    I/O threads pays)."""

    KEEP_OPEN = 16

    def __init__(self, paths: list[str], counts: list[int] | None = None, storage_options: dict | None = None):
        from parafeed.io.remote import settings

        self.paths = list(paths)
        self._storage_options = storage_options
        self._settings = settings() if any(is_url(p) for p in self.paths) else None  # (the building pipeline's)
        self.remote = self._settings is not None and self._settings.cache_dir is None
        self._offsets: dict[int, np.ndarray] = {}
        self._sources: dict[int, Any] = {}  # file number -> local path, or (fs, path, retrier, size)
        if counts is None:
            counts = [len(record_offsets(p, storage_options)) for p in self.paths]
        self.starts = np.cumsum([0, *counts])
        self._open: dict[int, int] = {}  # file number -> fd, least recently used first
        self._crc = crc32c_function()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return int(self.starts[-1])

    def read(self, position: int) -> bytes:
        """The record at ``position`` of the files' concatenation."""
        k = int(np.searchsorted(self.starts, position, side="right")) - 1
        i = position - int(self.starts[k])
        with self._lock:
            offsets = self._offsets.get(k)
            if offsets is None:
                offsets = self._offsets[k] = record_offsets(self.paths[k], self._storage_options)
            source = self._sources.get(k) or self._source(k)
            if isinstance(source, str):
                return self._check(k, i, int(offsets[i]), *self._pread(k, source, int(offsets[i])))
        fs, path, retrier, size = source
        start = int(offsets[i])
        end = int(offsets[i + 1]) if i + 1 < len(offsets) else size
        data = retrier.read_range(fs, path, start, end)
        return self._check(k, i, start, data[:12], data[12:])

    def _source(self, k: int) -> Any:
        url = self.paths[k]
        if not is_url(url):
            source: Any = local_path(url)
        else:
            from parafeed.io.remote import Retrier, describe, local_copy

            fs, inner = filesystem(url, self._storage_options, "TFRecordDataset")
            current = cast("Settings", self._settings)  # (taken when a path is a URL)
            source = local_copy(url, fs, inner, "TFRecordDataset", current)
            if source is None:
                retrier = Retrier(url, "TFRecordDataset", current)
                source = (fs, inner, retrier, int(describe(fs, inner, retrier)["size"]))
        self._sources[k] = source
        return source

    def _pread(self, k: int, path: str, offset: int) -> tuple[bytes, bytes]:
        """The header and the rest of the record at ``offset`` (its length from the header)."""
        fd = self._open.pop(k, None)
        if fd is None:
            if len(self._open) >= self.KEEP_OPEN:
                os.close(self._open.pop(next(iter(self._open))))
            fd = os.open(path, os.O_RDONLY)
        self._open[k] = fd
        header = os.pread(fd, 12, offset)
        if len(header) < 12:
            return header, b""
        return header, os.pread(fd, HEADER.unpack(header)[0] + 4, offset + 12)

    def _check(self, k: int, i: int, offset: int, header: bytes, data: bytes) -> bytes:
        """The record's data (``data`` holds it and its CRC), both CRCs checked."""
        path, crc = self.paths[k], self._crc
        if len(header) < 12:
            raise DataLossError(f"TFRecordDataset: {path}: truncated record {i} at byte offset {offset}")
        length, length_crc = HEADER.unpack(header)
        if mask(crc(header[:8])) != length_crc or len(data) < length + 4:
            raise DataLossError(f"TFRecordDataset: {path}: corrupted record {i} at byte offset {offset}")
        if mask(crc(data[:length])) != U32.unpack_from(data, length)[0]:
            raise DataLossError(f"TFRecordDataset: {path}: corrupted record {i} at byte offset {offset}: bad data CRC")
        return data[:length]

    def close(self) -> None:
        with self._lock:
            for fd in self._open.values():
                os.close(fd)
            self._open.clear()

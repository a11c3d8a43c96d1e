"""Record indexes of TFRecord files: the byte offset of every record, for random access and exact sharding.

An index is built once by walking the record headers (checking each length CRC) and cached in memory and, when the
directory is writable, beside the file as ``<file>.pfindex``; a cached index is used only while the file's size and
modification time are unchanged. Compressed files cannot be indexed (their records cannot be reached by seeking).
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import zlib

import numpy as np

from parafeed.errors import DataLossError
from parafeed.io.tfrecord import _HEADER, _U32, _crc32c, mask

INDEX_SUFFIX = ".pfindex"
_MAGIC = b"PFINDEX1"
_META = struct.Struct("<QqQ")  # file size, mtime_ns, record count
_memory: dict[tuple[str, int, int], np.ndarray] = {}
_lock = threading.Lock()


class TFRecordIndex:
    """The offsets of the records of one uncompressed TFRecord file.

    Example:
        >>> index = pf.io.TFRecordIndex("train-0.tfrecord")
        >>> len(index), index.read(17)[:4]
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.offsets = record_offsets(self.path)

    def __len__(self) -> int:
        return len(self.offsets)

    def read(self, i: int) -> bytes:
        """Record ``i``, with both CRCs checked."""
        files = RecordFiles([self.path], [len(self.offsets)])
        try:
            return files.read(i)
        finally:
            files.close()


def record_offsets(path: str) -> np.ndarray:
    """The start offset of every record in ``path`` (int64), from a cache when it is fresh."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    with _lock:
        cached = _memory.get(key)
    if cached is not None:
        return cached
    offsets = _load(path + INDEX_SUFFIX, st.st_size, st.st_mtime_ns)
    if offsets is None:
        offsets = _scan(path, st.st_size)
        _save(path + INDEX_SUFFIX, st.st_size, st.st_mtime_ns, offsets)
    offsets.flags.writeable = False
    with _lock:
        _memory[key] = offsets
    return offsets


def _scan(path: str, size: int) -> np.ndarray:
    crc = _crc32c()
    offsets = []
    with open(path, "rb") as f:
        pos = 0
        while pos < size:
            header = f.read(12)
            if len(header) < 12:
                raise DataLossError(f"TFRecordIndex: {path}: truncated record header at byte offset {pos}")
            length, length_crc = _HEADER.unpack(header)
            if mask(crc(header[:8])) != length_crc:
                raise DataLossError(f"TFRecordIndex: {path}: corrupted record at byte offset {pos}: bad length CRC")
            if pos + 16 + length > size:
                raise DataLossError(f"TFRecordIndex: {path}: truncated record at byte offset {pos}")
            offsets.append(pos)
            pos += 16 + length
            f.seek(pos)
    return np.array(offsets, dtype=np.int64)


def _load(index_path: str, size: int, mtime_ns: int) -> np.ndarray | None:
    try:
        with open(index_path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(_MAGIC) + _META.size
    if len(data) < head + 4 or not data.startswith(_MAGIC) or zlib.crc32(data[:-4]) != _U32.unpack(data[-4:])[0]:
        return None
    file_size, file_mtime, count = _META.unpack_from(data, len(_MAGIC))
    if (file_size, file_mtime) != (size, mtime_ns) or len(data) != head + 8 * count + 4:
        return None
    return np.frombuffer(data, "<i8", count, head).astype(np.int64)


def _save(index_path: str, size: int, mtime_ns: int, offsets: np.ndarray) -> None:
    body = _MAGIC + _META.pack(size, mtime_ns, len(offsets)) + offsets.astype("<i8").tobytes()
    tmp = f"{index_path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(body + _U32.pack(zlib.crc32(body)))
        os.replace(tmp, index_path)
    except OSError:  # a read-only directory: the in-memory cache still serves this process
        with contextlib.suppress(OSError):
            os.remove(tmp)


class RecordFiles:
    """Random access to the records of uncompressed TFRecord files by position in their concatenation, each record
    checked by both CRCs. Keeps the most recently used files open."""

    KEEP_OPEN = 16

    def __init__(self, paths: list[str], counts: list[int] | None = None):
        self.paths = list(paths)
        self._offsets: dict[int, np.ndarray] = {}
        if counts is None:
            counts = [len(record_offsets(p)) for p in self.paths]
        self.starts = np.cumsum([0, *counts])
        self._open: dict[int, int] = {}  # file number -> fd, least recently used first
        self._crc = _crc32c()

    def __len__(self) -> int:
        return int(self.starts[-1])

    def read(self, position: int) -> bytes:
        """The record at ``position`` of the files' concatenation."""
        k = int(np.searchsorted(self.starts, position, side="right")) - 1
        i = position - int(self.starts[k])
        offsets = self._offsets.get(k)
        if offsets is None:
            offsets = self._offsets[k] = record_offsets(self.paths[k])
        return self._read(k, i, int(offsets[i]))

    def _read(self, k: int, i: int, offset: int) -> bytes:
        fd = self._open.pop(k, None)
        if fd is None:
            if len(self._open) >= self.KEEP_OPEN:
                os.close(self._open.pop(next(iter(self._open))))
            fd = os.open(self.paths[k], os.O_RDONLY)
        self._open[k] = fd
        header = os.pread(fd, 12, offset)
        path, crc = self.paths[k], self._crc
        if len(header) < 12:
            raise DataLossError(f"TFRecordDataset: {path}: truncated record {i} at byte offset {offset}")
        length, length_crc = _HEADER.unpack(header)
        data = os.pread(fd, length + 4, offset + 12)
        if mask(crc(header[:8])) != length_crc or len(data) < length + 4:
            raise DataLossError(f"TFRecordDataset: {path}: corrupted record {i} at byte offset {offset}")
        if mask(crc(data[:length])) != _U32.unpack_from(data, length)[0]:
            raise DataLossError(f"TFRecordDataset: {path}: corrupted record {i} at byte offset {offset}: bad data CRC")
        return data[:length]

    def close(self) -> None:
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()

"""ArrayRecord files, on the ``array_record`` package: records (bytes) by index, read in order a chunk at a time or
one by one by position.

The package's reader takes local paths: a file named by URL is read through parafeed's storage layer (read ahead,
retried) into the remote cache when ``options.remote.cache_dir`` is set, else into a temporary local file removed
when the reader closes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from typing import Any

import numpy as np

from parafeed.core.iterator import ChunkIterator
from parafeed.errors import DataLossError
from parafeed.io.storage import filesystem, is_url, local_path, open_input, remote_settings

STEP = "ArrayRecordDataset"
CHUNK = 256  # records read at a time in order


def reader_class() -> Any:
    """``ArrayRecordReader``, or an ImportError that says how to install it."""
    try:
        from array_record.python.array_record_module import ArrayRecordReader
    except ImportError:
        raise ImportError(
            f"{STEP}: reading ArrayRecord files needs array_record: pip install 'parafeed[arrayrecord]'"
        ) from None
    return ArrayRecordReader


class ArrayRecordFile:
    """One ArrayRecord file open for reading (``random``: no read-ahead, for reads by position)."""

    def __init__(self, path: str, storage_options: dict | None = None, random: bool = False, current: Any = None):
        self.path = path
        self._temporary: str | None = None
        local = self._local(path, storage_options, current)
        options = "readahead_buffer_size:0" if random else ""
        try:
            self._reader = reader_class()(local, options)
            if not self._reader.ok():  # (a damaged footer: no records, and the reason only at close)
                self._reader.close()
                raise RuntimeError("the reader found it damaged")
        except (RuntimeError, ValueError, OSError) as err:
            self._drop_temporary()
            raise DataLossError(f"{STEP}: {path} is not a readable ArrayRecord file: {err}") from None
        self._lock = threading.Lock()
        self.count = int(self._reader.num_records())

    def _local(self, path: str, storage_options: dict | None, current: Any) -> str:
        """A local path to read ``path`` from; ``current``: the remote settings (the building pipeline's by
        default)."""
        if not is_url(path):
            found = local_path(path)
            if not os.path.exists(found):
                open_input(path, STEP).close()  # (raises NotFoundError naming the file)
            return found
        from parafeed.io.remote import local_copy, settings

        current = current or settings()
        fs, inner = filesystem(path, storage_options, STEP)
        copy = local_copy(path, fs, inner, STEP, current)
        if copy is not None:
            return copy
        fd, self._temporary = tempfile.mkstemp(prefix="parafeed-", suffix=".array_record")
        with os.fdopen(fd, "wb") as out, open_input(path, STEP, storage_options, current) as f:
            shutil.copyfileobj(f, out, current.block_size)
        return self._temporary

    def read(self, start: int, end: int) -> list[bytes]:
        """Records ``start`` to ``end`` (exclusive), in order."""
        return self._read((start, end), end - start, f"records {start} to {end - 1}")

    def read_at(self, indices: list[int]) -> list[bytes]:
        """The records at ``indices``, in their order (the package reads them in parallel)."""
        return self._read(([int(i) for i in indices],), len(indices), f"records {indices[:4]}...")

    def _read(self, args: tuple, count: int, what: str) -> list[bytes]:
        with self._lock:
            try:
                records = list(self._reader.read(*args))
                if len(records) != count or not self._reader.ok():
                    raise RuntimeError(f"{len(records)} of them read")
            except (RuntimeError, ValueError, OSError) as err:
                raise DataLossError(f"{STEP}: {self.path}: {what} cannot be read: {err}") from None
            return records

    def close(self) -> None:
        with self._lock, contextlib.suppress(RuntimeError):  # (the damage was reported when it was read)
            self._reader.close()
        self._drop_temporary()

    def _drop_temporary(self) -> None:
        if self._temporary is not None:
            os.unlink(self._temporary)
            self._temporary = None


class ArrayRecordFileReader(ChunkIterator):
    """The records of one ArrayRecord file in order. State: ``{"index"}``, the next record's (a restore reads from
    there, nothing before it)."""

    def __init__(self, path: str, storage_options: dict | None = None):
        self._file = ArrayRecordFile(path, storage_options)
        super().__init__(self._file.count, f"{self._file.path} has {self._file.count} records", CHUNK)

    def _read(self, start: int, end: int) -> list[Any]:
        return self._file.read(start, end)

    def close(self) -> None:
        self._chunk = []
        self._file.close()


class ArrayRecords:
    """Records of ArrayRecord files by position in their concatenation (files holding ``counts`` records). Safe to
    call from several threads."""

    def __init__(self, paths: list[str], counts: list[int], storage_options: dict | None = None):
        self.paths = list(paths)
        self.starts = np.cumsum([0, *counts])
        self.remote = False  # (a URL's file is read whole into a local copy first)
        self._storage_options = storage_options
        self._settings = remote_settings(self.paths)  # (files are opened later, as they are read)
        self._open: dict[int, ArrayRecordFile] = {}
        self._lock = threading.Lock()

    def read(self, position: int) -> bytes:
        return self.read_many([position])[0]

    def read_many(self, positions: list[int]) -> list[bytes]:
        """The records at ``positions``, in their order: each file's run of them read in one call."""
        files = np.searchsorted(self.starts, positions, side="right") - 1
        out: list[bytes] = []
        start = 0
        while start < len(positions):
            k = int(files[start])
            end = start + 1
            while end < len(positions) and files[end] == k:
                end += 1
            first = int(self.starts[k])
            out += self._file(k).read_at([p - first for p in positions[start:end]])
            start = end
        return out

    def _file(self, k: int) -> ArrayRecordFile:
        with self._lock:
            if k not in self._open:
                self._open[k] = ArrayRecordFile(self.paths[k], self._storage_options, True, self._settings)
            return self._open[k]

    def close(self) -> None:
        with self._lock:
            for f in self._open.values():
                f.close()
            self._open.clear()


def record_count(path: str, storage_options: dict | None = None) -> int:
    """Records in an ArrayRecord file (from its footer)."""
    f = ArrayRecordFile(path, storage_options, random=True)
    try:
        return f.count
    finally:
        f.close()

"""Reading the bytes of a file that may be GZIP- or ZLIB-compressed (one stream per file, as TensorFlow writes)."""

from __future__ import annotations

import os
import zlib
from typing import Any, Protocol

from parafeed.errors import DataLossError, InvalidArgumentError
from parafeed.io.storage import is_url, open_input

_COMPRESSIONS = {"": "", "NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def compression_type_of(value: Any) -> str:
    """The compression name ("", "GZIP" or "ZLIB") from a string, ``None`` or an options object."""
    if hasattr(value, "compression_type"):
        return value.compression_type
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str) or value.upper() not in _COMPRESSIONS:
        raise InvalidArgumentError(f"compression_type must be None, '', 'GZIP' or 'ZLIB', got {value!r}")
    return _COMPRESSIONS[value.upper()]


def wbits(compression: str) -> int:
    """zlib's window-bits argument for a GZIP or ZLIB stream."""
    return 16 + zlib.MAX_WBITS if compression == "GZIP" else zlib.MAX_WBITS


class RawFile(Protocol):
    """What a stream reads: a raw binary file (a local file opened unbuffered, or a RemoteFile for a URL)."""

    def read(self, n: int = -1, /) -> bytes: ...
    def readinto(self, view: memoryview, /) -> int | None: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def fileno(self) -> int: ...
    def close(self) -> None: ...


class ByteStream:
    """The uncompressed bytes of a file (a local path or a URL: :mod:`parafeed.io.storage`), optionally inside one
    GZIP or ZLIB stream; ``step`` names it in errors, ``storage_options`` go to the URL's filesystem."""

    def __init__(self, path: str, compression: str, step: str, storage_options: dict | None = None):
        self.path = path
        self._step = step
        # a URL is opened at the first read: its first requests then wait on the thread that reads (a parallel
        # interleave's input thread), not on the one that built the reader
        self._opening: tuple | None = None
        self._ahead: Any = None  # the open on the I/O threads that open_ahead started (a Future)
        self._file: RawFile | None = None
        if is_url(path):
            from parafeed.io.remote import settings

            self._opening = (path, step, storage_options, settings())  # (the building pipeline's options)
        else:
            self._file = open_input(path, step, storage_options)
        self._compression = compression
        self._inflate = zlib.decompressobj(wbits(compression)) if compression else None
        self._pending = b""  # compressed bytes read past the end of a GZIP member: the start of the next one
        self._compressed_read = 0

    def _opened(self) -> RawFile | None:
        """The file, opened now if it is a URL not opened yet; None once closed."""
        if self._opening is not None:
            opening, self._opening = self._opening, None
            self._file = open_input(*opening)
        elif self._ahead is not None:
            ahead, self._ahead = self._ahead, None
            self._file = ahead.result()  # (the open's errors are raised here, at the first read, as without it)
        return self._file

    def open_ahead(self) -> None:
        """Open a URL on the I/O threads and put its first requests in flight, so that the first read finds its data
        coming (``flat_map`` does this for the next file while it reads one); nothing for a local file."""
        if self._opening is not None:
            from parafeed.io.remote import io_pool

            opening, self._opening = self._opening, None
            self._ahead = io_pool().submit(_open_and_prefetch, opening)

    @property
    def size(self) -> int:
        """The file's size in bytes (compressed bytes for a compressed file)."""
        file = self._opened()
        assert file is not None
        size = getattr(file, "size", None)  # a RemoteFile knows it
        return os.fstat(file.fileno()).st_size if size is None else size

    @property
    def cached_copy(self) -> Any:
        """The remote cache's copy this stream reads (:class:`~parafeed.io.remote_cache.CachedCopy`), or None."""
        from parafeed.io.remote_cache import CachedCopy

        return self._file if isinstance(self._file, CachedCopy) else None

    @property
    def seekable(self) -> bool:
        return self._inflate is None

    def seek(self, offset: int) -> None:
        file = self._opened()
        assert file is not None and self._inflate is None
        file.seek(offset)

    def read(self, n: int) -> bytes:
        """Up to ``n`` more bytes (at least one unless the stream is over).

        A GZIP file may hold several members one after another (``cat a.gz b.gz``): they are read as one stream, as
        gzip and TensorFlow do, and bytes after a member that do not start another one are corrupt data. A ZLIB
        stream ends the file: what follows it is not read (as in TensorFlow).
        """
        file = self._opened()
        if file is None:
            return b""
        if self._inflate is None:
            return file.read(n)
        out = b""
        while not out:
            if self._inflate.eof:
                if self._compression != "GZIP":
                    break
                self._pending = self._inflate.unused_data or file.read(n)
                if not self._pending:
                    break
                self._inflate = zlib.decompressobj(wbits(self._compression))  # the next member
            raw = self._inflate.unconsumed_tail or self._pending or file.read(n)
            self._pending = b""
            if not raw:
                if not self._compressed_read:  # an empty file holds no records, as in TensorFlow
                    self.close()
                    break
                self.close()  # reported once: after it the stream is over (a reader skipping errors then ends)
                raise DataLossError(
                    f"{self._step}: {self.path}: the compressed stream ends early (after "
                    f"{self._compressed_read} compressed bytes); the file is truncated"
                )
            try:
                out = self._inflate.decompress(raw, n)
            except zlib.error as err:
                self.close()  # nothing after corrupt compressed data can be decoded
                raise DataLossError(
                    f"{self._step}: {self.path}: corrupt compressed data near compressed byte offset "
                    f"{self._compressed_read}: {err}"
                ) from None
            left = self._inflate.unused_data if self._inflate.eof else self._inflate.unconsumed_tail
            self._compressed_read += len(raw) - len(left)
        return out

    def readinto(self, view: memoryview) -> int:
        """Read up to ``len(view)`` more bytes into ``view``; the number read (0 once the stream is over)."""
        file = self._opened() if self._inflate is None else None
        if file is not None:
            return file.readinto(view) or 0
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._opening = None
        if self._ahead is not None:  # (opened ahead, never read: closed once open)
            ahead, self._ahead = self._ahead, None
            ahead.add_done_callback(lambda f: f.exception() is None and f.result().close())
        if self._file is not None:
            self._file.close()
            self._file = None


def _open_and_prefetch(opening: tuple) -> RawFile:
    file = open_input(*opening)
    prefetch = getattr(file, "prefetch", None)  # (a RemoteFile; the remote cache's copies are local files)
    if prefetch is not None:
        prefetch()
    return file

"""``pf.io.gfile.GFile``: a file at a local path or a URL, read and written as ``tf.io.gfile.GFile`` does; a URL is
read through parafeed's ranged reads (:class:`_RawRemote`) and written to a local temporary file uploaded at
``close``.
"""

from __future__ import annotations

import contextlib
import io
import os
import weakref
from typing import Any

from parafeed.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
)
from parafeed.io.gfile.paths import PathLike, Where, not_found, os_error
from parafeed.io.gfile.queries import exists_at, stat_at


class _RawRemote(io.RawIOBase):
    """A RemoteFile as a raw file, for ``io.BufferedReader``."""

    def __init__(self, remote: Any):
        super().__init__()
        self._remote = remote

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return int(self._remote.readinto(memoryview(buffer).cast("B")))

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self._remote.seek(offset, whence))

    def tell(self) -> int:
        return int(self._remote.tell())

    def close(self) -> None:
        if not self.closed:
            self._remote.close()
        super().close()


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


class GFile:
    """A file at a local path or a URL, read or written as TensorFlow's ``tf.io.gfile.GFile`` does.

    Modes ``r``, ``w``, ``a`` (text: ``str`` in and out, UTF-8 by default) and ``rb``, ``wb``, ``ab`` (``bytes``);
    ``write`` takes ``str`` or ``bytes`` in any mode. As in TensorFlow:

    * the file is opened at the first read, write, seek or tell, so a missing file raises NotFoundError there, and a
      file opened for writing that is never written to is not created;
    * ``read(n)`` reads ``n`` bytes (decoded in text mode), ``read()`` the rest;
    * ``readline`` (and iteration) keeps the ``\\n`` and drops every ``\\r``;
    * ``seek`` past the end raises OutOfRangeError (and leaves the position at the end);
    * reading a file open for writing, or the other way round, raises PermissionDeniedError;
    * after ``close``, a read starts again from the beginning.

    A URL is read with parafeed's ranged reads ahead (retried on transient faults); written to a local temporary
    file that is uploaded when the GFile is closed (``flush`` uploads nothing), and not at all when its ``with``
    block raises.

    Example:
        >>> with pf.io.gfile.GFile("s3://bucket/vocab.txt") as f:
        ...     vocab = [line.rstrip("\\n") for line in f]
    """

    def __init__(self, name: PathLike, mode: str = "r", encoding: str = "utf-8", *,
                 storage_options: dict | None = None) -> None:  # fmt: skip
        self._name = name
        self._mode = mode
        self._encoding = encoding
        if not isinstance(mode, str) or sorted(mode.replace("b", "", 1)) not in (["r"], ["w"], ["a"]):
            raise InvalidArgumentError(
                f"gfile.GFile: mode must be 'r', 'rb', 'w', 'wb', 'a' or 'ab', got {mode!r} (parafeed has no '+' modes)"
            )
        self._binary = "b" in mode
        self._reading = "r" in mode
        self._append = "a" in mode
        self._where = Where(name, "gfile.GFile", storage_options)
        self._reader: io.BufferedReader | None = None
        self._size: int | None = None
        self._writer: Any = None
        self._staging: str | None = None  # a URL's local temporary file
        self._discard: Any = None  # removes the temporary file if the GFile is dropped unclosed

    @property
    def name(self) -> PathLike:
        """The path as given."""
        return self._name

    @property
    def mode(self) -> str:
        return self._mode

    def seekable(self) -> bool:
        return True

    # reading ---------------------------------------------------------------------------------------------------

    def _read_file(self) -> io.BufferedReader:
        if self._reader is not None:
            return self._reader
        if not self._reading:
            raise PermissionDeniedError(13, f"gfile.GFile: {self._where.name}: File isn't open for reading")
        where = self._where
        if where.local is not None:
            try:
                raw: Any = open(where.local, "rb", buffering=0)  # noqa: SIM115 (closed in close)
                self._size = os.fstat(raw.fileno()).st_size
            except IsADirectoryError:
                raise FailedPreconditionError(f"{where.step}: {where.name}; Is a directory") from None
            except OSError as err:
                raise os_error(where.step, where.name, err) from None
        else:
            from parafeed.io.storage import open_input

            try:
                remote = open_input(where.name, where.step, where.options)
            except NotFoundError:
                raise not_found(where.step, where.name) from None
            except IsADirectoryError:
                raise FailedPreconditionError(f"{where.step}: {where.name}; Is a directory") from None
            if isinstance(remote, io.RawIOBase):  # (the remote cache's local copy)
                raw = remote
                self._size = os.fstat(remote.fileno()).st_size
            else:
                raw = _RawRemote(remote)
                self._size = int(remote.size)
        self._reader = io.BufferedReader(raw, 512 << 10)
        return self._reader

    def _value(self, data: bytes) -> str | bytes:
        return data if self._binary else data.decode(self._encoding)

    def read(self, n: int | None = -1) -> str | bytes:
        """``n`` bytes from the current position (fewer at the end), or the rest of the file when ``n`` is -1;
        ``str`` in text mode."""
        f = self._read_file()
        if n is None or n == -1:
            return self._value(f.read())
        n = int(n)
        if n < 0:
            raise InvalidArgumentError(f"gfile.GFile.read: Can't read a negative number of bytes: {n}")
        return self._value(f.read(n))

    def readline(self) -> str | bytes:
        """The next line with its ``\\n`` (``\\r`` dropped, as TensorFlow does); empty at the end of the file."""
        line = self._read_file().readline()
        if b"\r" in line:
            line = line.replace(b"\r", b"")
        return self._value(line)

    def readlines(self) -> list[str | bytes]:
        """The remaining lines."""
        return list(self)

    def __iter__(self) -> GFile:
        return self

    def __next__(self) -> str | bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def seek(self, offset: int | None = None, whence: int = 0, position: int | None = None) -> None:
        """Move to byte ``offset`` from the start (``whence`` 0), the current position (1) or the end (2);
        ``position`` is TensorFlow's old name for ``offset``."""
        f = self._read_file()
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        offset = int(offset if offset is not None else position)  # type: ignore[arg-type]
        if whence == 1:
            offset += f.tell()
        elif whence == 2:
            offset += self._size or 0
        elif whence != 0:
            raise InvalidArgumentError(f"gfile.GFile.seek: Invalid whence argument: {whence}; valid values are 0, 1, 2")
        if offset < 0:
            raise InvalidArgumentError(f"gfile.GFile.seek: Seeking to a negative position: {offset}")
        size = self._size or 0
        if offset > size:
            f.seek(size)
            raise OutOfRangeError(
                f"gfile.GFile.seek: {self._where.name}: reached end of file: offset {offset} is past its {size} bytes"
            )
        f.seek(offset)

    def tell(self) -> int:
        """The current position: in the file read, or the bytes in the file written (with what it held before, in
        append mode)."""
        if self._reading:
            return self._read_file().tell()
        return int(self._write_file().tell())

    def size(self) -> int:
        """The size of the file in bytes (``stat(name).length``)."""
        return stat_at(self._where).length

    # writing ---------------------------------------------------------------------------------------------------

    def _write_file(self) -> Any:
        if self._writer is not None:
            return self._writer
        if self._reading:
            raise PermissionDeniedError(13, f"gfile.GFile: {self._where.name}: File isn't open for writing")
        where = self._where
        mode = "ab" if self._append else "wb"
        if where.local is not None:
            try:
                self._writer = open(where.local, mode)  # noqa: SIM115 (closed in close)
            except IsADirectoryError:
                raise FailedPreconditionError(f"{where.step}: {where.name}; Is a directory") from None
            except FileNotFoundError:
                raise not_found(
                    where.step, where.name, fix="create its directory first (pf.io.gfile.makedirs)"
                ) from None
            except OSError as err:
                raise os_error(where.step, where.name, err) from None
            return self._writer
        from parafeed.io.storage import staging_name

        tmp = staging_name(where.name)
        self._discard = weakref.finalize(self, _remove_quietly, tmp)
        if self._append and exists_at(where):
            where.call("downloading it to append to it", lambda: where.fs.get_file(where.inner, tmp))
        self._staging = tmp
        self._writer = open(tmp, mode)  # noqa: SIM115 (closed in close)
        return self._writer

    def write(self, file_content: str | bytes) -> None:
        """Append ``file_content`` (``str``, encoded, or ``bytes``) to the file."""
        if isinstance(file_content, str):
            data = file_content.encode(self._encoding)
        elif isinstance(file_content, (bytes, bytearray, memoryview)):
            data = bytes(file_content)
        else:
            raise TypeError(f"gfile.GFile.write: expected binary or unicode string, got {file_content!r:.80}")
        self._write_file().write(data)

    def flush(self) -> None:
        """Push what was written to the operating system (a URL's file is uploaded at ``close``)."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Close the file; a file written to a URL is uploaded now (whole, retried on transient faults)."""
        if self._reader is not None:
            reader, self._reader = self._reader, None
            reader.close()
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()
            if self._staging is not None:
                from parafeed.io.storage import publish

                tmp, self._staging = self._staging, None
                publish(tmp, self._where.name, self._where.step, self._where.options)
                if self._discard is not None:
                    self._discard.detach()
                    self._discard = None

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is not None and self._staging is not None:  # a URL's file is published only whole
            writer, self._writer = self._writer, None
            if writer is not None:
                writer.close()
            tmp, self._staging = self._staging, None
            _remove_quietly(tmp)
        self.close()

    def __repr__(self) -> str:
        return f"<pf.io.gfile.GFile {self._where.name!r} mode={self._mode!r}>"

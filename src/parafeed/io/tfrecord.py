"""TFRecord files, byte-compatible with TensorFlow in both directions, without TensorFlow.

A TFRecord file is a sequence of records, each framed as::

    u64 length | u32 masked CRC-32C of the 8 length bytes | data | u32 masked CRC-32C of data

(little-endian), optionally inside one GZIP or ZLIB stream. CRC-32C comes from ``google-crc32c`` (hardware
accelerated C); the framing loop runs in the ``parafeed.io._native`` C extension when it is built, in Python otherwise.
Corruption raises :class:`~parafeed.errors.DataLossError` naming the file, the byte offset and what is wrong; the
reader then moves past the damage, so ``ignore_errors()`` can skip it.
"""

from __future__ import annotations

import itertools
import operator
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import BinaryIO

import numpy as np

from parafeed.core.iterator import DatasetIterator
from parafeed.errors import ArgumentTypeError, DataLossError, InvalidArgumentError, StateError
from parafeed.io.storage import is_url
from parafeed.io.streams import ByteStream, compression_type_of, wbits
from parafeed.io.tfrecord_framing import HEADER, U32, crc32c_function, mask

try:
    from parafeed.io import _native
except ImportError:  # built without a C compiler: the Python framing below gives the same results
    _native = None  # type: ignore[assignment]  # (an optional extension)

DEFAULT_BUFFER_SIZE = 1 << 20
_FRAME_BATCH = 64  # records framed per call: few enough that skip() rarely wastes CRC work
_RESYNC_WINDOW = 1 << 20  # bytes scanned for the next intact record header after a damaged one

FRAME_OK, FRAME_BAD_LENGTH_CRC, FRAME_BAD_DATA_CRC = 0, 1, 2


class TFRecordOptions:
    """Options of a TFRecord file: ``compression_type`` is ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``."""

    def __init__(self, compression_type: str | None = None, compression_level: int | None = None):
        self.compression_type = compression_type_of(compression_type)
        if compression_level is not None and not -1 <= compression_level <= 9:
            raise InvalidArgumentError(
                f"TFRecordOptions: compression_level must be in [-1, 9], got {compression_level}"
            )
        self.compression_level = -1 if compression_level is None else compression_level


class TFRecordWriter:
    """Writes records to a TFRecord file (like ``tf.io.TFRecordWriter``).

    Example:
        >>> with pf.io.TFRecordWriter("data.tfrecord", "GZIP") as w:
        ...     w.write(b"record")
    """

    def __init__(self, path: str | os.PathLike, options: TFRecordOptions | str | None = None):
        opts = options if isinstance(options, TFRecordOptions) else TFRecordOptions(options)
        self.path = os.fspath(path)
        self._file: BinaryIO | None = open(self.path, "wb")  # noqa: SIM115 (closed in close())
        self._compressor = None
        if opts.compression_type:
            self._compressor = zlib.compressobj(opts.compression_level, zlib.DEFLATED, wbits(opts.compression_type))
        self._crc = crc32c_function()

    def write(self, record: bytes) -> None:
        """Append one record."""
        if self._file is None:
            raise InvalidArgumentError(f"TFRecordWriter: {self.path} is closed")
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise ArgumentTypeError(f"TFRecordWriter.write: a record must be bytes, got {type(record).__name__}")
        length = struct.pack("<Q", len(record))
        frame = b"".join((length, U32.pack(mask(self._crc(length))), record, U32.pack(mask(self._crc(record)))))
        self._file.write(self._compressor.compress(frame) if self._compressor else frame)

    def flush(self) -> None:
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Finish the compressed stream (if any) and close the file."""
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush())
        self._file.close()
        self._file = None

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _frame_python(buf: bytes, pos: int, crc: Callable | None, max_records: int) -> tuple[list, int, int, int]:
    """Same contract as ``_native.frame_records``: complete records from ``buf[pos:]`` until one is incomplete,
    ``max_records`` are out, or one is corrupt (then status and the record's data length)."""
    records: list[bytes] = []
    size = len(buf)
    while len(records) < max_records and size - pos >= 12:
        length, length_crc = HEADER.unpack_from(buf, pos)
        if crc is not None and mask(crc(bytes(buf[pos : pos + 8]))) != length_crc:
            return records, pos, FRAME_BAD_LENGTH_CRC, 0
        end = pos + 16 + length
        if end > size:
            break
        record = bytes(buf[pos + 12 : end - 4])
        if crc is not None and mask(crc(record)) != U32.unpack_from(buf, end - 4)[0]:
            return records, pos, FRAME_BAD_DATA_CRC, length
        records.append(record)
        pos = end
    return records, pos, FRAME_OK, 0


def frame_records(buf: bytes, pos: int, crc: Callable | None, max_records: int = 1 << 62) -> tuple[list, int, int, int]:
    """Split complete records out of ``buf[pos:]``: ``(records, new_pos, status, bad_length)``."""
    if _native is not None:
        return _native.frame_records(buf, pos, crc, max_records)
    return _frame_python(buf, pos, crc, max_records)


class TFRecordFileReader(DatasetIterator):
    """Iterates the records of one TFRecord file.

    At damage it raises DataLossError once and moves past it: after a bad data CRC to the next record, after a bad
    length CRC (the framing is lost) to the next intact header within ``_RESYNC_WINDOW`` bytes, or else to the end.
    """

    reads_files = True

    def __init__(self, path: str, compression: str = "", buffer_size: int = DEFAULT_BUFFER_SIZE, verify: bool = True,
                 storage_options: dict | None = None):  # fmt: skip
        super().__init__()
        self.path = path
        self._storage_options = storage_options
        self._source = ByteStream(path, compression, "TFRecordDataset", storage_options)
        self._chunk = buffer_size
        self._crc = crc32c_function() if verify else None
        self._buf: bytes | np.ndarray = b""  # bytes read, not all framed yet (a view of _memory)
        self._memory = np.empty(0, np.uint8)
        self._pos = 0
        self._base = 0  # stream offset of self._buf[0]
        self._ready: Iterator[bytes] = iter(())
        self._framed: list[bytes] = []  # the records _ready hands out
        self._tails: list[int] | None = None  # bytes framed from each of them to _ready_end (made when a state asks)
        self._ready_end = 0  # stream offset where the framed records in _ready end
        self._error: DataLossError | None = None  # raised once the records framed before it are out
        self._eof = False

    def __next__(self) -> bytes:
        for record in self._ready:
            return record
        if self._error is not None:
            err, self._error = self._error, None
            raise err
        while True:
            # (the buffer may be an ndarray, which numpy's stubs make a Buffer only from Python 3.12)
            records, pos, status, bad_length = frame_records(self._buf, self._pos, self._crc, _FRAME_BATCH)  # type: ignore[arg-type]
            offset = self._ready_end = self._base + pos
            self._pos = pos
            if status == FRAME_BAD_DATA_CRC:
                self._pos = pos + 16 + bad_length
                self._error = self._lost(
                    f"TFRecordDataset: {self.path}: corrupted record at byte offset {offset}: the data CRC does not "
                    f"match ({bad_length} bytes of data); the record is skipped"
                )
            elif status == FRAME_BAD_LENGTH_CRC:
                self._error = self._resync(offset)
            if records or self._error is not None:
                self._framed, self._tails, self._ready = records, None, iter(records)
                return next(self)
            if not self._read_more():
                break
        left, offset = len(self._buf) - self._pos, self._base + self._pos
        self._base, self._buf, self._pos = self._base + len(self._buf), b"", 0
        self.close()
        if left:
            raise self._lost(
                f"TFRecordDataset: {self.path}: truncated record at byte offset {offset}: the file ends {left} bytes "
                "into a record"
            )
        raise StopIteration

    def skip(self, n: int) -> int:
        """Skip ``n`` records; in an uncompressed file, by seeking with the file's record index."""
        if n <= 0:
            return 0
        done = 0
        for _ in self._ready:
            done += 1
            if done == n:
                return done
        if self._error is not None or not self._source.seekable or (self._eof and not self._buf):
            return done + super().skip(n - done)
        from parafeed.io.index import record_offsets, remote_offsets

        try:  # a remote file's index only when it is at hand (building it reads the whole file)
            if is_url(self.path):
                offsets = remote_offsets(self.path, self._storage_options, build=False)
            else:
                offsets = record_offsets(self.path)
        except DataLossError:  # damage: read through it record by record, reporting it as usual
            return done + super().skip(n - done)
        if offsets is None:
            return done + super().skip(n - done)
        here = self._base + self._pos
        i = int(np.searchsorted(offsets, here))
        if i >= len(offsets) or offsets[i] != here:
            return done + super().skip(n - done)
        target = i + n - done
        if target >= len(offsets):
            self._base, self._buf, self._pos = self._base + len(self._buf), b"", 0
            self.close()
            return done + len(offsets) - i
        offset = int(offsets[target])
        if offset < self._base + len(self._buf):
            self._pos = offset - self._base
        else:
            self._source.seek(offset)
            self._base, self._buf, self._pos, self._eof = offset, b"", 0, False
        return n

    def _get_state(self) -> dict:
        """The stream offset of the next record to return (a corrupt record not yet reported is read again)."""
        left = operator.length_hint(self._ready)  # records framed, not yet returned (no copy of them)
        if left:
            if self._tails is None:
                self._tails = list(itertools.accumulate(16 + len(r) for r in reversed(self._framed)))[::-1]
            return {"offset": self._ready_end - self._tails[len(self._framed) - left]}
        if self._error is not None:
            return {"offset": self._ready_end}
        return {"offset": self._base + self._pos}

    def _set_state(self, state: dict) -> None:
        offset = int(state["offset"])
        here = self._base + len(self._buf)  # the stream's position
        self._ready, self._error, self._buf, self._pos, self._eof = iter(()), None, b"", 0, False
        if self._source.seekable:
            self._source.seek(offset)
        elif offset < here:
            raise StateError(f"set_state(): {self.path} is compressed and cannot go back; restore into a new iterator")
        else:  # decompress up to the offset
            left = offset - here
            while left > 0 and (data := self._source.read(min(left, 1 << 20))):
                left -= len(data)
        self._base = self._ready_end = offset

    def _read_more(self, keep: bool = False) -> bool:
        """Append more of the stream to the buffer (dropping consumed bytes unless ``keep``); False at its end.

        The buffer (``_buf``, a view of ``_memory``) is read into in place: the same memory serves every read, with
        the bytes not framed yet moved to its front, so reading costs no fresh pages and no concatenation."""
        if self._eof:
            return False
        start = 0 if keep else self._pos
        rest = len(self._buf) - start
        memory = self._memory
        want = self._chunk  # a record longer than the buffer comes in several reads, the buffer doubling
        if len(memory) < rest + want:
            memory = np.empty(max(rest + want, 2 * len(memory)), np.uint8)
            memory[:rest] = np.frombuffer(self._buf, np.uint8, rest, start)
        elif start and rest:
            memory[:rest] = memory[start : start + rest].copy()  # overlapping: through a copy
        self._memory = memory
        got = self._source.readinto(memory.data[rest : rest + want])
        if not keep:
            self._base, self._pos = self._base + start, 0
        self._buf = memory[: rest + got]
        if not got:
            self._eof = True
            return False
        return True

    def _resync(self, offset: int) -> DataLossError:
        crc = self._crc or crc32c_function()
        start = self._pos
        while len(self._buf) - start < _RESYNC_WINDOW and self._read_more(keep=True):
            pass
        buf = self._buf
        for p in range(start + 1, min(len(buf), start + _RESYNC_WINDOW) - 11):
            # (an ndarray: see __next__)
            if mask(crc(bytes(buf[p : p + 8]))) == U32.unpack_from(buf, p + 8)[0]:  # type: ignore[arg-type]
                self._pos = p
                return self._lost(
                    f"TFRecordDataset: {self.path}: corrupted record at byte offset {offset}: the length CRC does "
                    f"not match; skipped {p - start} bytes to the next intact record header"
                )
        self._pos = len(buf)
        self._eof = True
        return self._lost(
            f"TFRecordDataset: {self.path}: corrupted record at byte offset {offset}: the length CRC does not match "
            f"and no intact record header follows within {_RESYNC_WINDOW} bytes; the rest of the file is skipped"
        )

    def _lost(self, message: str) -> DataLossError:
        """The error for damage found in the file; damage in the remote cache's copy of a remote file removes it."""
        copy = self._source.cached_copy
        if copy is not None:
            copy.evict()
            message += f" (in the remote cache's copy {copy.name}, now removed: the next read fetches the file again)"
        return DataLossError(message)

    def open_ahead(self) -> None:
        self._source.open_ahead()

    def close(self) -> None:
        self._source.close()
        self._eof = True


def tf_record_iterator(path: str | os.PathLike, compression_type: str | None = None) -> Iterator[bytes]:
    """The records of one TFRecord file (like ``tf.compat.v1.io.tf_record_iterator``)."""
    return TFRecordFileReader(os.fspath(path), compression_type_of(compression_type))

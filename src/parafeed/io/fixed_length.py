"""Files of fixed-length records (``FixedLengthRecordDataset``): an optional header, records of ``record_bytes``
each, an optional footer, optionally inside one GZIP or ZLIB stream; errors as tf.data raises them."""

from __future__ import annotations

from parafeed.core.iterator import DatasetIterator
from parafeed.errors import DataLossError, InvalidArgumentError, NotFoundError
from parafeed.io.streams import ByteStream

DEFAULT_BUFFER_SIZE = 256 << 10
STEP = "FixedLengthRecordDataset"


class FixedLengthRecordReader(DatasetIterator):
    """The records of one file, as ``bytes``. An uncompressed file must hold a whole number of records between its
    header and footer (checked before the first record, as tf.data does); a compressed one is read as a stream, and
    a partial record at its end is a DataLossError."""

    def __init__(self, path: str, record: int, header: int, footer: int, compression: str, buffer_size: int,
                 storage_options: dict | None = None):  # fmt: skip
        super().__init__()
        if record <= 0:
            raise InvalidArgumentError(f"{STEP}: `record_bytes` must be > 0, got {record}")
        if header < 0 or footer < 0:
            raise InvalidArgumentError(f"{STEP}: `header_bytes` and `footer_bytes` must be >= 0")
        self._path, self._record, self._footer = path, record, footer
        self._compression = compression
        try:
            self._stream = ByteStream(path, compression, STEP, storage_options)
        except FileNotFoundError:
            raise NotFoundError(f"{STEP}: {path}; No such file or directory") from None
        if not compression:
            body = self._stream.size - header - footer
            if body < 0 or body % record:
                self._stream.close()
                raise InvalidArgumentError(
                    f"{STEP}: excluding the header ({header} bytes) and footer ({footer} bytes), input file "
                    f'"{path}" has body length {body} bytes, which is not an exact multiple of the record length '
                    f"({record} bytes)"
                )
            self._total = body // record
        self._chunk = max(buffer_size, record + footer)
        self._buf = b""
        self._pos = 0  # into _buf
        self._count = 0
        self._header_left = header
        self._eof = False

    def _fill(self, need: int) -> bool:
        """Have at least ``need`` bytes after the position, unless the stream ends first."""
        while len(self._buf) - self._pos < need and not self._eof:
            data = self._stream.read(self._chunk)
            if not data:
                self._eof = True
                break
            self._buf = self._buf[self._pos :] + data
            self._pos = 0
        return len(self._buf) - self._pos >= need

    def __next__(self) -> bytes:
        if self._header_left:
            self._fill(self._header_left)
            skipped = min(self._header_left, len(self._buf) - self._pos)
            self._pos += skipped
            self._header_left -= skipped
        if not self._compression and self._count >= self._total:
            self.close()
            raise StopIteration
        if not self._fill(self._record + self._footer):
            left = len(self._buf) - self._pos
            self.close()
            if self._compression and left != self._footer:
                raise DataLossError(
                    f'{STEP}: excluding the header and footer ({self._footer} bytes), input file "{self._path}" '
                    f"ends with {left - self._footer} bytes, not a multiple of the record length ({self._record} bytes)"
                )
            raise StopIteration
        record = self._buf[self._pos : self._pos + self._record]
        self._pos += self._record
        self._count += 1
        return record

    def _get_state(self) -> dict:
        return {"records": self._count}

    def _set_state(self, state: dict) -> None:
        """Reads up to the saved record again."""
        self.skip(self._steps_forward(int(state["records"]), self._count))

    def close(self) -> None:
        self._stream.close()

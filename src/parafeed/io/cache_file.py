"""The on-disk cache format of ``Dataset.cache(filename)``: safe to read (no pickle) and never used unfinished.

Layout (little-endian)::

    b"PFCACHE1" | u32 header length | header (JSON: the dtype of each leaf)
    records:      u32 payload length | u32 CRC-32 of payload | payload
                  payload, per leaf: u8 rank | rank x u64 dims | data
                  data: raw C-order values, or for strings u64 lengths then the concatenated bytes
    footer:       b"PFCEND01" | u64 record count

A writer writes ``<path>.tmp-<pid>-<random>`` and renames it to ``<path>`` only after the footer is on disk, so a
file at ``<path>`` is complete; the reader still checks the footer and every record's CRC.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct
import uuid
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from parafeed.errors import DataLossError, InvalidArgumentError
from parafeed.structure import STRING, dtype_name, flatten

MAGIC = b"PFCACHE1"
FOOTER = b"PFCEND01"
_U32 = struct.Struct("<I")
_RECORD = struct.Struct("<II")
_COUNT = struct.Struct("<Q")


def _leaf_dtype(leaf: Any) -> np.dtype:
    if type(leaf) is bytes:
        return STRING
    if isinstance(leaf, (np.ndarray, np.generic)):
        return leaf.dtype
    raise InvalidArgumentError(f"cache(): cannot store a {type(leaf).__name__} leaf in a cache file")


def _dtype_code(dtype: np.dtype) -> str:
    return "string" if dtype == STRING else dtype.newbyteorder("<").str


class CacheWriter:
    """Writes elements to a temporary file and publishes it at ``path`` on :meth:`finish`."""

    def __init__(self, path: str):
        self.path = path
        self._tmp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            self._file: BinaryIO | None = open(self._tmp, "wb")  # noqa: SIM115 (closed in finish/abort)
        except OSError as err:
            raise OSError(err.errno, f"cache(): cannot create the cache file {self._tmp}: {err.strerror}") from err
        self._dtypes: list[np.dtype] | None = None
        self._count = 0

    def write(self, element: Any) -> None:
        leaves = flatten(element)
        if self._dtypes is None:
            self._dtypes = [_leaf_dtype(leaf) for leaf in leaves]
            header = json.dumps({"format": "parafeed-cache", "version": 1,
                                 "dtypes": [_dtype_code(d) for d in self._dtypes]}).encode()  # fmt: skip
            self._put(MAGIC + _U32.pack(len(header)) + header)
        if len(leaves) != len(self._dtypes):
            raise InvalidArgumentError(
                f"cache(): element {self._count} has {len(leaves)} components, expected {len(self._dtypes)}"
            )
        parts: list[bytes] = []
        for j, (leaf, dtype) in enumerate(zip(leaves, self._dtypes)):
            if _leaf_dtype(leaf) != dtype:
                raise InvalidArgumentError(
                    f"cache(): component {j} of element {self._count} has dtype {dtype_name(_leaf_dtype(leaf))}, "
                    f"but earlier elements had {dtype_name(dtype)}"
                )
            parts.append(_encode_leaf(leaf, dtype))
        payload = b"".join(parts)
        self._put(_RECORD.pack(len(payload), zlib.crc32(payload)) + payload)
        self._count += 1

    def _put(self, data: bytes) -> None:
        try:
            self._file.write(data)  # type: ignore[union-attr]
        except OSError as err:
            self.abort()
            raise OSError(
                err.errno,
                f"cache(): writing the cache file {self.path} failed: {err.strerror}; the unfinished file "
                f"{self._tmp} is removed and the cache is not used",
            ) from err

    def finish(self) -> None:
        """Write the footer, sync, and atomically publish the file at ``path``."""
        if self._file is None:
            return
        if self._dtypes is None:  # an empty dataset: a header with no leaves
            header = json.dumps({"format": "parafeed-cache", "version": 1, "dtypes": None}).encode()
            self._put(MAGIC + _U32.pack(len(header)) + header)
        self._put(FOOTER + _COUNT.pack(self._count))
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            os.replace(self._tmp, self.path)
        except OSError as err:
            self.abort()
            raise OSError(err.errno, f"cache(): finishing the cache file {self.path} failed: {err.strerror}") from err

    def abort(self) -> None:
        """Drop the unfinished file (also after a failed write: closing then fails to flush, which is ignored)."""
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):  # e.g. ENOSPC again while flushing the buffer; the fd is closed anyway
                file.close()
        with contextlib.suppress(FileNotFoundError):
            os.remove(self._tmp)


def _encode_leaf(leaf: Any, dtype: np.dtype) -> bytes:
    if dtype == STRING:
        values = [leaf] if type(leaf) is bytes else leaf.reshape(-1).tolist()
        shape = () if type(leaf) is bytes else leaf.shape
        lengths = np.array([len(v) for v in values], dtype="<u8")
        return _shape_bytes(shape) + lengths.tobytes() + b"".join(values)
    arr = np.asarray(leaf)
    return _shape_bytes(arr.shape) + np.ascontiguousarray(arr, dtype=dtype.newbyteorder("<")).tobytes()


def _shape_bytes(shape: tuple) -> bytes:
    return bytes([len(shape)]) + np.array(shape, dtype="<u8").tobytes()


def read_cache(path: str, expected_dtypes: list[np.dtype]) -> Iterator[list]:
    """Yield the flat leaves of each element in the cache file at ``path``; checks dtypes, footer and CRCs."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        dtypes = _read_header(f, path, size)
        header_end = f.tell()
        if size - header_end < len(FOOTER) + _COUNT.size:
            raise DataLossError(
                f"cache(): the cache file {path} is truncated (no footer); delete it to rebuild the cache"
            )
        f.seek(size - len(FOOTER) - _COUNT.size)
        tail = f.read()
        if tail[: len(FOOTER)] != FOOTER:
            raise DataLossError(
                f"cache(): the cache file {path} is unfinished or truncated; delete it to rebuild the cache"
            )
        (count,) = _COUNT.unpack(tail[len(FOOTER) :])
        if count and dtypes != [_dtype_code(d) for d in expected_dtypes]:
            raise InvalidArgumentError(
                f"cache(): the cache file {path} holds elements with dtypes {dtypes}, but this pipeline produces "
                f"{[_dtype_code(d) for d in expected_dtypes]}; it was written by another pipeline. Delete it or use "
                "another filename."
            )
        f.seek(header_end)
        end = size - len(FOOTER) - _COUNT.size
        for i in range(count):
            yield _read_record(f, path, i, end, expected_dtypes)
        if f.tell() != end:
            raise DataLossError(
                f"cache(): the cache file {path} has {end - f.tell()} unexpected bytes after record {count}"
            )


def _read_header(f: BinaryIO, path: str, size: int) -> list[str] | None:
    head = f.read(len(MAGIC) + _U32.size)
    if len(head) < len(MAGIC) + _U32.size or head[: len(MAGIC)] != MAGIC:
        raise DataLossError(f"cache(): {path} is not a parafeed cache file (bad magic); delete it to rebuild the cache")
    (n,) = _U32.unpack(head[len(MAGIC) :])
    try:
        if n > size - len(head):  # a damaged length: read nothing (it could ask for gigabytes)
            raise ValueError(f"a header of {n} bytes in a {size}-byte file")
        header = json.loads(f.read(n))
        return header["dtypes"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise DataLossError(
            f"cache(): the header of the cache file {path} is corrupt; delete it to rebuild the cache"
        ) from None


def _read_record(f: BinaryIO, path: str, index: int, end: int, dtypes: list[np.dtype]) -> list:
    start = f.tell()
    head = f.read(_RECORD.size)
    if len(head) < _RECORD.size:
        raise DataLossError(f"cache(): the cache file {path} is truncated at record {index} (offset {start})")
    length, crc = _RECORD.unpack(head)
    if start + _RECORD.size + length > end:
        raise DataLossError(
            f"cache(): record {index} of the cache file {path} at offset {start} has a bad length {length}"
        )
    payload = f.read(length)
    if zlib.crc32(payload) != crc:
        raise DataLossError(f"cache(): record {index} of the cache file {path} at offset {start} fails its CRC check")
    try:
        return _decode_payload(payload, dtypes)
    except (ValueError, IndexError, OverflowError) as err:
        raise DataLossError(
            f"cache(): record {index} of the cache file {path} at offset {start} is corrupt: {err}"
        ) from None


def _decode_payload(payload: bytes, dtypes: list[np.dtype]) -> list:
    view = memoryview(payload)
    pos, leaves = 0, []
    for dtype in dtypes:
        rank = view[pos]
        shape = tuple(np.frombuffer(view, "<u8", rank, pos + 1).tolist())
        pos += 1 + 8 * rank
        n = math.prod(shape)  # exact: damaged dimensions can multiply past 64 bits
        width = 8 if dtype == STRING else dtype.itemsize  # bytes per value at least (a string's length)
        if n * width > len(payload) - pos:
            raise ValueError(f"shape {shape} needs more than the {len(payload) - pos} bytes left")
        if dtype == STRING:
            lengths = np.frombuffer(view, "<u8", n, pos).tolist()
            pos += 8 * n
            values = []
            for length in lengths:
                values.append(bytes(view[pos : pos + length]))
                pos += length
            if not shape:
                leaves.append(values[0])
            else:
                arr = np.empty(n, dtype=STRING)
                arr[:] = values
                leaves.append(arr.reshape(shape))
        else:
            le = dtype.newbyteorder("<")
            arr = np.frombuffer(view, le, n, pos).astype(dtype, copy=False).reshape(shape)
            pos += n * le.itemsize
            leaves.append(arr[()] if not shape else arr)
    if pos != len(payload):
        raise ValueError(f"{len(payload) - pos} bytes left over")
    return leaves

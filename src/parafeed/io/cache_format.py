"""The on-disk cache format of ``Dataset.cache(filename)``: safe to read (no pickle) and never used unfinished.

Layout (little-endian)::

    b"PFCACHE2" | u32 header length | u32 CRC-32 of header | header (JSON: the nesting and the dtype of each leaf)
    records:      u32 payload length | u32 CRC-32 of payload | payload
                  payload, per leaf: u8 rank | rank x u64 dims | data
                  data: raw C-order values, or for strings u64 lengths then the concatenated bytes
    footer:       b"PFCEND01" | u64 record count

The header describes the elements fully, so replaying a file runs nothing of the pipeline that wrote it. A writer
writes ``<path>.tmp-<pid>-<random>`` and renames it to ``<path>`` only after the footer is on disk, so a file at
``<path>`` is complete; the reader still checks the footer and every CRC.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct
import sys
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO, cast

import numpy as np

from parafeed.errors import DataLossError, InvalidArgumentError
from parafeed.io.storage import is_url, open_input, publish, staging_name
from parafeed.values.structure import STRING, dtype_name, flatten

MAGIC = b"PFCACHE2"
FOOTER = b"PFCEND01"
_U32 = struct.Struct("<I")
_HEADER = struct.Struct("<II")  # length, CRC-32
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
    """Writes elements to a temporary file and publishes it at ``path`` (a local path or a URL: then it is uploaded)
    on :meth:`finish`."""

    def __init__(self, path: str, storage_options: dict | None = None):
        self.path = path
        self._storage_options = storage_options
        self._tmp = staging_name(path)
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
            self._put_header([_dtype_code(d) for d in self._dtypes], encode_nesting(element))
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
            parts.append(encode_leaf(leaf, dtype))
        payload = b"".join(parts)
        self._put(_RECORD.pack(len(payload), zlib.crc32(payload)) + payload)
        self._count += 1

    def _put_header(self, dtypes: list[str] | None, nesting: Any) -> None:
        header = json.dumps({"format": "parafeed-cache", "version": 2, "dtypes": dtypes, "nesting": nesting}).encode()
        self._put(MAGIC + _HEADER.pack(len(header), zlib.crc32(header)) + header)

    def _put(self, data: bytes) -> None:
        try:
            self._file.write(data)  # type: ignore[union-attr]  # None once finished (no cast per element)
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
            self._put_header(None, None)
        self._put(FOOTER + _COUNT.pack(self._count))
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            publish(self._tmp, self.path, "cache()", self._storage_options)
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


def encode_leaf(leaf: Any, dtype: np.dtype) -> bytes:
    """One leaf's bytes in a record: its rank and shape, then its values (strings: their lengths, then their bytes)."""
    if dtype == STRING:
        values = [leaf] if type(leaf) is bytes else leaf.reshape(-1).tolist()
        shape = () if type(leaf) is bytes else leaf.shape
        lengths = np.array([len(v) for v in values], dtype="<u8")
        return _shape_bytes(shape) + lengths.tobytes() + b"".join(values)
    arr = np.asarray(leaf)
    return _shape_bytes(arr.shape) + np.ascontiguousarray(arr, dtype=dtype.newbyteorder("<")).tobytes()


def _shape_bytes(shape: tuple) -> bytes:
    return bytes([len(shape)]) + np.array(shape, dtype="<u8").tobytes()


# ---------------------------------------------------------------------------------------------- element nesting
# JSON for the nesting of an element: 0 for a leaf, {"tuple": [...]}, {"dict": [[key, ...], ...]} (str or int keys, in
# the element's key order) and {"namedtuple": "module:qualname", "fields": [...], "items": [...]}; None when it has
# something else (a dict subclass, a namedtuple class defined in a function). The reader then asks the pipeline.


class NoNesting(Exception):
    """A nesting that JSON cannot describe, or that names a class not loaded here."""


def encode_nesting(element: Any) -> Any:
    """JSON for the nesting of ``element`` (or of an element spec), or None when it has something JSON cannot name."""
    try:
        return _nesting_json(element)
    except NoNesting:
        return None


def _nesting_json(value: Any) -> Any:
    if type(value) is tuple:
        return {"tuple": [_nesting_json(v) for v in value]}
    if type(value) is dict:
        if not all(type(k) in (str, int) for k in value):
            raise NoNesting
        return {"dict": [[k, _nesting_json(v)] for k, v in value.items()]}
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        cls = type(value)
        if "<" in cls.__qualname__ or _find_class(cls.__module__, cls.__qualname__) is not cls:
            raise NoNesting
        return {"namedtuple": f"{cls.__module__}:{cls.__qualname__}", "fields": list(cls._fields),
                "items": [_nesting_json(v) for v in value]}  # fmt: skip
    if isinstance(value, (tuple, dict)):
        raise NoNesting
    return 0


def _find_class(module: str, qualname: str) -> Any:
    """The class named, from a module already imported (reading a file imports nothing), or None."""
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def decode_nesting(node: Any) -> Any:
    """A template for :func:`pack_as` (leaves are 0); raises NoNesting for a class that is not loaded."""
    if node == 0:
        return 0
    if "tuple" in node:
        return tuple(decode_nesting(v) for v in node["tuple"])
    if "dict" in node:
        return {k: decode_nesting(v) for k, v in node["dict"]}
    module, _, qualname = node["namedtuple"].partition(":")
    cls = _find_class(module, qualname)
    if not (isinstance(cls, type) and issubclass(cls, tuple) and list(getattr(cls, "_fields", ())) == node["fields"]):
        raise NoNesting
    return cls(*(decode_nesting(v) for v in node["items"]))


# ---------------------------------------------------------------------------------------------- reading


class CacheReader:
    """An open cache file, its header and footer checked.

    ``nesting`` (a :func:`pack_as` template) and ``dtypes`` describe the elements as the header gives them; either is
    None when the header cannot (an unknown namedtuple class, or a NumPy dtype with fields): then the caller passes
    the pipeline's dtypes and packs the leaves like its element spec.
    """

    def __init__(self, path: str, storage_options: dict | None = None):
        self.path = path
        if is_url(path):
            self._file: Any = open_input(path, "cache()", storage_options)
        else:
            self._file = open(path, "rb")  # noqa: SIM115 (closed in close)
        try:
            self._open()
        except BaseException:
            self._file.close()
            raise

    def _open(self) -> None:
        f, path = self._file, self.path
        size = f.size if is_url(path) else os.fstat(f.fileno()).st_size
        header = _read_header(f, path, size)
        self.header_end = f.tell()
        if size - self.header_end < len(FOOTER) + _COUNT.size:
            raise DataLossError(
                f"cache(): the cache file {path} is truncated (no footer); delete it to rebuild the cache"
            )
        f.seek(size - len(FOOTER) - _COUNT.size)
        tail = f.read()
        if tail[: len(FOOTER)] != FOOTER:
            raise DataLossError(
                f"cache(): the cache file {path} is unfinished or truncated; delete it to rebuild the cache"
            )
        (self.count,) = _COUNT.unpack(tail[len(FOOTER) :])
        self.end = size - len(FOOTER) - _COUNT.size
        self.dtype_codes: list[str] = header["dtypes"] or []
        dtypes = [_plain_dtype(code) for code in self.dtype_codes]
        self.dtypes: list[np.dtype] | None = (
            None if any(d is None for d in dtypes) else cast("list[np.dtype]", dtypes)
        )  # (not `None in`: dtype == None is float64)
        try:
            self.nesting = None if header["nesting"] is None else decode_nesting(header["nesting"])
        except NoNesting:
            self.nesting = None
        except (KeyError, TypeError, ValueError, AttributeError):
            raise _corrupt_header(path) from None
        leaves = None if self.nesting is None else len(flatten(self.nesting))
        if self.count and (not isinstance(header["dtypes"], list) or leaves not in (None, len(self.dtype_codes))):
            raise _corrupt_header(path)

    def check(self, expected_dtypes: list[np.dtype]) -> None:
        """Raise if the file holds other dtypes than the pipeline produces (another pipeline wrote it)."""
        expected = [_dtype_code(d) for d in expected_dtypes]
        if self.count and self.dtype_codes != expected:
            raise InvalidArgumentError(
                f"cache(): the cache file {self.path} holds elements with dtypes {self.dtype_codes}, but this "
                f"pipeline produces {expected}; it was written by another pipeline. Delete it or use another filename."
            )

    def records(self, dtypes: list[np.dtype] | None = None) -> Iterator[list]:
        """The flat leaves of each element (decoded as ``dtypes``, by default the header's); checks every CRC."""
        dtypes = self.dtypes if dtypes is None else dtypes
        if dtypes is None:
            raise InvalidArgumentError(
                f"cache(): the header of {self.path} names dtypes it cannot decode alone ({self.dtype_codes}); pass "
                "the pipeline's dtypes"
            )
        f = self._file
        f.seek(self.header_end)
        for i in range(self.count):
            yield _read_record(f, self.path, i, self.end, dtypes)
        if f.tell() != self.end:
            raise DataLossError(
                f"cache(): the cache file {self.path} has {self.end - f.tell()} unexpected bytes after record "
                f"{self.count}"
            )

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> CacheReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_cache(
    path: str, expected_dtypes: list[np.dtype] | None = None, storage_options: dict | None = None
) -> Iterator[list]:
    """Yield the flat leaves of each element in the cache file at ``path``; checks dtypes, footer and CRCs."""
    with CacheReader(path, storage_options) as reader:
        if expected_dtypes is not None:
            reader.check(expected_dtypes)
        yield from reader.records(expected_dtypes)


def _plain_dtype(code: Any) -> np.dtype | None:
    """The dtype a header code names; None for one that records cannot be decoded as alone (fields, objects)."""
    if code == "string":
        return STRING
    try:
        dtype = np.dtype(code)
    except (TypeError, ValueError):
        return None
    return dtype if dtype.kind not in "OV" and dtype.str == code else None


def _read_header(f: BinaryIO, path: str, size: int) -> dict:
    head = f.read(len(MAGIC) + _HEADER.size)
    if len(head) < len(MAGIC) + _HEADER.size or head[: len(MAGIC)] != MAGIC:
        older = head[:7] == MAGIC[:7]
        raise DataLossError(
            f"cache(): {path} is not a parafeed cache file "
            f"({'written by an older parafeed' if older else 'bad magic'}); delete it to rebuild the cache"
        )
    n, crc = _HEADER.unpack(head[len(MAGIC) :])
    try:
        if n > size - len(head):  # a damaged length: read nothing (it could ask for gigabytes)
            raise DataLossError(f"a header of {n} bytes in a {size}-byte file")
        data = f.read(n)
        if zlib.crc32(data) != crc:
            raise DataLossError("CRC mismatch")
        header = json.loads(data)
        if not isinstance(header, dict) or header.get("format") != "parafeed-cache" or header.keys() < {
                "dtypes", "nesting"}:  # fmt: skip
            raise DataLossError("not a cache header")
        return header
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise _corrupt_header(path) from None


def _corrupt_header(path: str) -> DataLossError:
    return DataLossError(f"cache(): the header of the cache file {path} is corrupt; delete it to rebuild the cache")


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
        return decode_payload(payload, dtypes)
    except (ValueError, IndexError, OverflowError) as err:
        raise DataLossError(
            f"cache(): record {index} of the cache file {path} at offset {start} is corrupt: {err}"
        ) from None


def decode_payload(payload: bytes, dtypes: list[np.dtype]) -> list:
    """The leaves of one record (``encode_leaf``'s bytes for each of ``dtypes``); DataLossError (or IndexError,
    OverflowError on damaged lengths) when they do not fit: callers name the file and the record."""
    view = memoryview(payload)
    pos = 0
    leaves: list[Any] = []
    for dtype in dtypes:
        rank = view[pos]
        shape = tuple(np.frombuffer(view, "<u8", rank, pos + 1).tolist())
        pos += 1 + 8 * rank
        n = math.prod(shape)  # exact: damaged dimensions can multiply past 64 bits
        width = 8 if dtype == STRING else dtype.itemsize  # bytes per value at least (a string's length)
        if n * width > len(payload) - pos:
            raise DataLossError(f"shape {shape} needs more than the {len(payload) - pos} bytes left")
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
        raise DataLossError(f"{len(payload) - pos} bytes left over")
    return leaves

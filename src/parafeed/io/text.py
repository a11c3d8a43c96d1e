"""Text files: lines (``TextLineDataset``) and CSV records (``CsvDataset``) with tf.data's semantics.

Lines are split on ``\\n`` with a trailing ``\\r`` removed, as tf.data does. CSV parsing uses Python's C ``csv``
module; fields are converted with the column types of ``record_defaults`` and errors name the file and line.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator
from typing import Any

import numpy as np

from parafeed.core.iterator import DatasetIterator
from parafeed.errors import InvalidArgumentError, ParseError
from parafeed.io.streams import ByteStream
from parafeed.values.byte_strings import is_scalar_string, scalar_bytes
from parafeed.values.elements import to_leaf
from parafeed.values.structure import STRING, as_dtype, dtype_name

DEFAULT_BUFFER_SIZE = 256 << 10
_CSV_TYPES = {np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64), STRING}


class TextLineReader(DatasetIterator):
    """The lines of one text file as ``bytes``, without their line endings."""

    reads_files = True

    def __init__(self, path: str, compression: str = "", buffer_size: int = DEFAULT_BUFFER_SIZE,
                 storage_options: dict | None = None):  # fmt: skip
        super().__init__()
        self._stream = ByteStream(path, compression, "TextLineDataset", storage_options)
        self._chunk = buffer_size
        self._lines: Iterator[bytes] = iter(())
        self._rest = b""
        self._done = False
        self._count = 0  # lines returned

    def __next__(self) -> bytes:
        line = self._next_line()
        self._count += 1
        return line

    def _get_state(self) -> dict:
        return {"lines": self._count}

    def _set_state(self, state: dict) -> None:
        """Reads up to the saved line again (lines have no index to seek with)."""
        self.skip(self._steps_forward(int(state["lines"]), self._count))

    def _next_line(self) -> bytes:
        for line in self._lines:
            return line
        while not self._done:
            data = self._stream.read(self._chunk)
            if not data:
                self._done = True
                self.close()
                if self._rest:
                    last, self._rest = self._rest, b""
                    return last[:-1] if last.endswith(b"\r") else last
                break
            parts = (self._rest + data).split(b"\n")
            self._rest = parts.pop()
            if parts:
                self._lines = iter([p[:-1] if p.endswith(b"\r") else p for p in parts])
                return next(self._lines)
        raise StopIteration

    def open_ahead(self) -> None:
        self._stream.open_ahead()

    def close(self) -> None:
        self._stream.close()


def _text_lines(stream: ByteStream, chunk: int) -> Iterator[str]:
    """Decoded lines with their endings (csv needs them to see newlines inside quotes)."""
    decode = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape").decode
    rest = ""
    while data := stream.read(chunk):
        lines = (rest + decode(data)).splitlines(keepends=True)
        rest = lines.pop() if lines and not lines[-1].endswith(("\n", "\r")) else ""
        yield from lines
    rest += decode(b"", final=True)
    if rest:
        yield rest


class CsvColumns:
    """The validated column layout of a CsvDataset: per selected column, its dtype and default (None: required)."""

    def __init__(self, record_defaults: list, select_cols: list[int] | None, field_delim: str, na_value: str):
        if not isinstance(record_defaults, (list, tuple)) or not record_defaults:
            raise InvalidArgumentError("CsvDataset: `record_defaults` must be a non-empty list, one item per column")
        self.dtypes: list[np.dtype] = []
        self.defaults: list[Any] = []
        for i, item in enumerate(record_defaults):
            dtype, default = _column(i, _default_item(i, item))
            self.dtypes.append(dtype)
            self.defaults.append(default)
        if select_cols is not None:
            cols = [int(c) for c in select_cols]
            if cols != sorted(set(cols)) or (cols and cols[0] < 0):
                raise InvalidArgumentError(f"CsvDataset: `select_cols` must be increasing and >= 0, got {select_cols}")
            if len(cols) != len(self.dtypes):
                raise InvalidArgumentError(
                    f"CsvDataset: `record_defaults` has {len(self.dtypes)} items but `select_cols` selects {len(cols)}"
                )
        self.select = None if select_cols is None else [int(c) for c in select_cols]
        if not isinstance(field_delim, str) or len(field_delim) != 1:
            raise InvalidArgumentError(f"CsvDataset: `field_delim` must be one character, got {field_delim!r}")
        self.field_delim = field_delim
        self.na_value = na_value

    @property
    def spec(self) -> tuple:
        from parafeed.values.structure import TensorSpec

        return tuple(TensorSpec((), d) for d in self.dtypes)


def _column(i: int, item: Any) -> tuple[np.dtype, Any]:
    """(dtype, default or None) of one record_defaults item: a dtype means required, a value gives the default."""
    is_dtype = isinstance(item, (type, np.dtype)) or hasattr(item, "as_numpy_dtype")
    if is_dtype:
        dtype, default = as_dtype(item), None
    elif isinstance(item, (list, np.ndarray)) and np.size(item) == 0:  # an empty tensor: required
        dtype, default = as_dtype(np.asarray(item).dtype if isinstance(item, np.ndarray) else np.float32), None
    else:
        leaf = to_leaf(item.numpy() if hasattr(item, "numpy") else item, f"CsvDataset: record_defaults[{i}]")
        dtype = STRING if isinstance(leaf, bytes) else leaf.dtype
        default = leaf
    if dtype not in _CSV_TYPES:
        raise InvalidArgumentError(
            f"CsvDataset: record_defaults[{i}] has type {dtype_name(dtype)}; columns may be int32, int64, float32, "
            "float64 or string"
        )
    return dtype, default


class CsvReader(DatasetIterator):
    """The records of one CSV file as tuples of NumPy scalars / bytes."""

    reads_files = True

    def __init__(self, path: str, columns: CsvColumns, compression: str, buffer_size: int, header: bool,
                 use_quote_delim: bool, storage_options: dict | None = None) -> None:  # fmt: skip
        super().__init__()
        self._path = path
        self._stream = ByteStream(path, compression, "CsvDataset", storage_options)
        self._columns = columns
        self._reader = csv.reader(
            _text_lines(self._stream, buffer_size), delimiter=columns.field_delim, quotechar='"',
            doublequote=True, quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE, strict=True,
        )  # fmt: skip
        self._skip_header = header
        self._count = 0  # records read (converted or not)
        self._width = len(columns.dtypes) if columns.select is None else None
        self._needed = len(columns.dtypes) if columns.select is None else columns.select[-1] + 1

    def __next__(self) -> tuple:
        try:
            if self._skip_header:
                self._skip_header = False
                next(self._reader)
            fields = next(self._reader) or [""]
            self._count += 1
        except csv.Error as err:
            raise ParseError(f"CsvDataset: {self._path}:{self._reader.line_num}: malformed CSV: {err}") from None
        except StopIteration:
            self.close()
            raise
        line = self._reader.line_num
        n = len(fields)
        if n < self._needed or (self._width is not None and n > self._width):
            raise ParseError(
                f"CsvDataset: {self._path}:{line}: expected {self._width or f'at least {self._needed}'} fields but "
                f"found {n}; check `field_delim`, quoting and `select_cols`"
            )
        if self._columns.select is not None:
            fields = [fields[c] for c in self._columns.select]
        return tuple(self._convert(i, field, line) for i, field in enumerate(fields))

    def _get_state(self) -> dict:
        return {"records": self._count}

    def _set_state(self, state: dict) -> None:
        """Reads up to the saved record again (CSV records have no index to seek with)."""
        records = int(state["records"])
        forward = self._steps_forward(records, self._count)
        if self._skip_header and records:
            self._skip_header = False
            next(self._reader, None)
        for _ in range(forward):
            next(self._reader, None)
        self._count = records

    def _convert(self, i: int, field: str, line: int) -> Any:
        cols = self._columns
        if field == "" or field == cols.na_value:
            default = cols.defaults[i]
            if default is None:
                raise ParseError(
                    f"CsvDataset: {self._path}:{line}: field {i} is required but missing; give a default value in "
                    "`record_defaults` to allow empty fields"
                )
            return default
        dtype = cols.dtypes[i]
        if dtype == STRING:
            return field.encode("utf-8", "surrogateescape")
        try:
            if dtype.kind == "f":  # (else an integer column: _CSV_TYPES)
                return dtype.type(float(field))
            return _fit(int(field), dtype)
        except (ValueError, OverflowError):
            raise ParseError(
                f"CsvDataset: {self._path}:{line}: field {i} is not a valid {dtype_name(dtype)}: {field!r}"
            ) from None

    def open_ahead(self) -> None:
        self._stream.open_ahead()

    def close(self) -> None:
        self._stream.close()


def _fit(value: int, dtype: np.dtype) -> Any:
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError
    return dtype.type(value)


# ---------------------------------------------------------------------------------------------- decode_csv


def split_csv_record(record: str, delim: str, use_quote_delim: bool, index: int) -> list[tuple[str, bool]]:
    """The fields of one CSV record as (text, was_quoted), with tf.io.decode_csv's quoting rules; an empty record
    has no fields."""
    fields: list[tuple[str, bool]] = []
    if record == "":
        return fields
    pos, n = 0, len(record)
    while True:
        if use_quote_delim and pos < n and record[pos] == '"':
            out, pos = [], pos + 1
            while True:
                end = record.find('"', pos)
                if end < 0:
                    raise ParseError(f"decode_csv: record {index}: a quoted field is not closed: {record!r}")
                out.append(record[pos:end])
                if end + 1 < n and record[end + 1] == '"':
                    out.append('"')
                    pos = end + 2
                    continue
                pos = end + 1
                break
            if pos < n and record[pos] != delim:
                raise ParseError(
                    f"decode_csv: record {index}: Quote inside a string has to be escaped by another quote: {record!r}"
                )
            fields.append(("".join(out), True))
        else:
            end = record.find(delim, pos)
            end = n if end < 0 else end
            text = record[pos:end]
            if use_quote_delim and ('"' in text or "\r" in text or "\n" in text):
                raise ParseError(
                    f"decode_csv: record {index}: Unquoted fields cannot have quotes/CRLFs inside: {record!r}"
                )
            fields.append((text, False))
            pos = end
        if pos >= n:
            return fields
        pos += 1  # the delimiter
        if pos == n:
            fields.append(("", False))
            return fields


def convert_csv_field(columns: CsvColumns, i: int, field: str, where: str) -> Any:
    """Field ``i`` as its column's dtype (the column default when empty or ``na_value``); ``where`` names it."""
    if field == "" or field == columns.na_value:
        default = columns.defaults[i]
        if default is None:
            raise ParseError(f"{where}: field {i} is required but missing; give a default in `record_defaults`")
        return default
    dtype = columns.dtypes[i]
    if dtype == STRING:
        return field.encode("utf-8", "surrogateescape")
    try:
        if "_" in field:
            raise ValueError(field)
        if dtype.kind == "i":
            return _fit(int(field), dtype)
        with np.errstate(over="ignore"):
            return dtype.type(float(field))
    except (ValueError, OverflowError):
        raise ParseError(f"{where}: field {i} is not a valid {dtype_name(dtype)}: {field!r}") from None


def decode_csv(
    records: Any,
    record_defaults: list,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: list[int] | None = None,
) -> list:
    """CSV records (a scalar string: ``bytes``, ``str`` or a 0-d array; or an array of them) as a list of columns,
    each shaped like ``records`` (``tf.io.decode_csv``): a scalar record gives scalars.

    Args:
        record_defaults: per column a default (``[0]``, ``[0.0]``, ``[""]``, ``[np.int64(0)]`` ...) whose type is the
            column's, or an empty list / a dtype for a required column.

    Example:
        >>> pf.io.decode_csv([b"1,2.5,a", b"3,,b"], [[0], [0.0], [""]])
        [array([1, 3], dtype=int32), array([2.5, 0. ], dtype=float32), array([b'a', b'b'], dtype=object)]
    """
    if select_cols is not None and list(select_cols) != sorted(set(int(c) for c in select_cols)):
        raise InvalidArgumentError(f"decode_csv: `select_cols` is not strictly increasing: {select_cols}")
    if not isinstance(field_delim, str) or len(field_delim) != 1:
        raise InvalidArgumentError(f"decode_csv: `field_delim` should be only 1 char, got {field_delim!r}")
    columns = CsvColumns(record_defaults, select_cols, field_delim, na_value)
    scalar = is_scalar_string(records)
    arr = np.asarray([scalar_bytes("decode_csv", records, "records")] if scalar else records, dtype=object)
    width = len(columns.dtypes)
    needed = width if columns.select is None else columns.select[-1] + 1
    out = [np.empty(arr.size, dtype=d) for d in columns.dtypes]
    for r, record in enumerate(arr.reshape(-1).tolist()):
        text = record.decode("utf-8", "surrogateescape") if isinstance(record, bytes) else str(record)
        fields = split_csv_record(text, field_delim, bool(use_quote_delim), r)
        if len(fields) < needed or (columns.select is None and len(fields) != width):
            raise ParseError(f"decode_csv: Expect {width} fields but have {len(fields)} in record {r}")
        if columns.select is not None:
            fields = [fields[c] for c in columns.select]
        for i, (field, _) in enumerate(fields):
            out[i][r] = convert_csv_field(columns, i, field, f"decode_csv: record {r}")
    if scalar:
        return [col[0] for col in out]
    return [col.reshape(arr.shape) for col in out]


def _default_item(i: int, item: Any) -> Any:
    """A record_defaults item with a one-element list or array unwrapped (tf.data's ``[0]`` form)."""
    if hasattr(item, "numpy"):
        item = item.numpy()
    if isinstance(item, (list, tuple, np.ndarray)):
        arr = np.asarray(item, dtype=object if any(isinstance(v, (bytes, str)) for v in np.ravel(item)) else None)
        if arr.ndim > 1:
            raise InvalidArgumentError(f"record_defaults[{i}]: each default should be at most rank 1, got {item!r}")
        if arr.size == 1:
            return item.reshape(-1)[0] if isinstance(item, np.ndarray) else item[0]
        if arr.size > 1:
            raise InvalidArgumentError(f"record_defaults[{i}]: a default must have one value, got {item!r}")
    return item

"""``Dataset.from_huggingface``: a Hugging Face ``datasets.Dataset`` (Arrow tables, random access) or a streaming
``datasets.IterableDataset`` as a parafeed source, one element per row: a dict of column -> value with tf.data's types
(what maps to what: :mod:`parafeed.io.arrow_columns`, docs/formats.md#hugging-face-datasets).

Media columns (``Image``, ``Audio``, ``Video``, ``Pdf``) give their encoded file's bytes (read from the stored path
when the dataset keeps only the path), for ``decode_jpeg`` and the like in a ``map``.

A ``datasets.Dataset`` is read by position, a chunk of rows at a time: its state is the position, ``skip`` and a
restore seek, and its rows can be taken by index (a replica's share under ``balance="labels"``). A streaming dataset
is read in order; its state is the stream's own ``state_dict()`` before the current chunk and the row within it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from parafeed.core.dataset import UNKNOWN, Dataset, iterate
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import ChunkIterator, DatasetIterator
from parafeed.errors import ArgumentTypeError, InvalidArgumentError, StateError

STEP = "from_huggingface"
CHUNK = 1024  # rows converted at a time
MEDIA = ("Image", "Audio", "Video", "Pdf")  # features stored as struct<bytes, path>: given as the file's bytes


def from_huggingface(
    dataset: Any, columns: Sequence[str] | None = None, defaults: dict | None = None, name: str | None = None
) -> Dataset:
    """The source for a ``datasets.Dataset`` or ``datasets.IterableDataset`` (see the module docs)."""
    if not type(dataset).__module__.startswith("datasets."):
        raise ArgumentTypeError(
            f"{STEP}(): expected a Hugging Face datasets.Dataset or datasets.IterableDataset, got "
            f"{type(dataset).__name__}; for arrays use from_tensor_slices(), for Parquet files ParquetDataset()"
        )
    import datasets

    if isinstance(dataset, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        raise InvalidArgumentError(
            f"{STEP}(): got a DatasetDict with the splits {list(dataset)}; pass one split, e.g. dataset['train']"
        )
    if isinstance(columns, (str, bytes)):
        raise InvalidArgumentError(f"{STEP}(): `columns` must be a list of column names, got {columns!r}")
    if isinstance(dataset, datasets.IterableDataset):
        return HuggingFaceStream(dataset, columns, defaults, name)
    return HuggingFaceDataset(dataset, columns, defaults, name=name)


def _describe(dataset: Any, kind: str) -> str:
    """How errors name a Hugging Face dataset: its name and split, where it has them."""
    info = getattr(dataset, "info", None)
    label = getattr(info, "dataset_name", None) or getattr(info, "builder_name", None)
    split = getattr(dataset, "split", None)
    return f"the Hugging Face {kind}" + (f" {label!r}" if label else "") + (f" (split {split})" if split else "")


class _Rows:
    """What is read of a Hugging Face dataset's Arrow tables, and how: the chosen columns, media columns as bytes,
    and the conversion of a table to rows."""

    def __init__(self, schema: Any, features: Any, columns: Sequence[str] | None, defaults: dict | None, where: str):
        from parafeed.io.arrow_columns import Columns, pyarrow_modules

        pa, _, _ = pyarrow_modules(STEP)
        self.where = where
        features = features or {}
        self.media = [c for c in schema.names if type(features.get(c)).__name__ in MEDIA]
        for c in self.media:
            schema = schema.set(schema.get_field_index(c), pa.field(c, pa.binary()))
        self.columns = Columns(schema, columns, defaults, where, STEP)

    @property
    def names(self) -> list[str]:
        return self.columns.names

    def rows(self, table: Any, first: int, positions: np.ndarray | None = None) -> list[dict]:
        """The rows of ``table``, the dataset's rows ``first ...`` (or those at ``positions``), as dicts."""
        table = table.select(self.names)
        for c in self.media:
            if c in self.names:
                table = table.set_column(table.schema.get_field_index(c), c, self._media_bytes(table.column(c)))
        out: list[dict] = []
        here = first
        for batch in table.to_batches():
            if positions is None:
                out += self.columns.rows(batch, self.where, here)
            else:
                out += self._gathered(batch, positions[here - first :])
            here += batch.num_rows
        return out

    def _gathered(self, batch: Any, positions: np.ndarray) -> list[dict]:
        """Rows taken by position: an error names the failing row's own position."""
        try:
            return self.columns.rows(batch, self.where, 0)
        except InvalidArgumentError:
            for k in range(batch.num_rows):
                self.columns.rows(batch.slice(k, 1), self.where, int(positions[k]))
            raise

    def _media_bytes(self, column: Any) -> Any:
        """A media column (struct<bytes, path>) as binary: the stored bytes, else the file at the stored path."""
        import pyarrow as pa
        import pyarrow.compute as pc

        column = column.combine_chunks()
        data = pc.struct_field(column, "bytes")
        if not data.null_count:
            return data
        values = data.to_pylist()
        for k, path in enumerate(pc.struct_field(column, "path").to_pylist()):
            if values[k] is None and path:
                from parafeed.io.storage import open_input

                with open_input(path, STEP) as f:
                    values[k] = f.read()
        return pa.array(values, pa.binary())


class HuggingFaceDataset(Dataset):
    """The rows of a ``datasets.Dataset`` (or of those at ``positions``), read by position (see the module docs).

    Example:
        >>> hf = datasets.load_dataset("imdb", split="train")
        >>> ds = pf.Dataset.from_huggingface(hf, columns=["text", "label"]).distribute(balance="labels")
    """

    kind = SOURCE

    def __init__(
        self, dataset: Any, columns: Sequence[str] | None = None, defaults: dict | None = None,
        positions: np.ndarray | None = None, name: str | None = None, rows: _Rows | None = None,
    ):  # fmt: skip
        super().__init__(name=name)
        self._hf = dataset
        where = _describe(dataset, "dataset")
        self._rows = rows or _Rows(dataset.data.schema, dataset.features, columns, defaults, where)
        self._table = dataset.select_columns(self._rows.names).with_format("arrow")
        self._positions = None if positions is None else np.asarray(positions, dtype=np.int64)

    def __len__(self) -> int:
        return int(self._hf.num_rows if self._positions is None else len(self._positions))

    def take_rows(self, rows: Any) -> HuggingFaceDataset:
        """The same source over its rows at indices ``rows`` only (a replica's share)."""
        rows = np.asarray(rows, dtype=np.int64)
        positions = rows if self._positions is None else self._positions[rows]
        return HuggingFaceDataset(self._hf, positions=positions, name=self._name, rows=self._rows)

    def read(self, start: int, count: int) -> list[dict]:
        """Rows ``start ... start + count`` of this source."""
        stop = min(start + count, len(self))
        if self._positions is None:
            return self._rows.rows(self._table[start:stop], start)
        positions = self._positions[start:stop]
        return self._rows.rows(self._table[positions.tolist()], 0, positions)

    def labels(self, label: str, label_fn: Any) -> np.ndarray:
        """The class id of every row: ``label_fn(row)``, else the integer column ``label``."""
        if label_fn is not None:
            from parafeed.core.functions import call

            return _class_ids(np.asarray([call(label_fn, e) for e in iterate(self)]), STEP)
        if label not in self._hf.column_names:
            raise InvalidArgumentError(
                f"distribute(balance='labels'): {self._rows.where} has no column {label!r} (its columns are "
                f"{self._hf.column_names}); pass `label=` (the column's name) or `label_fn=`"
            )
        column = self._hf.select_columns([label]).with_format("arrow")[label]
        if column.null_count:
            raise InvalidArgumentError(
                f"distribute(balance='labels'): column {label!r} of {self._rows.where} has {column.null_count} "
                "null(s); pass `label_fn=`"
            )
        values = column.to_numpy()
        return _class_ids(values if self._positions is None else values[self._positions], label)

    def _make_iterator(self) -> DatasetIterator:
        return _PositionIterator(self)

    def _element_spec(self) -> Any:
        return dict(self._rows.columns.spec)

    def _cardinality(self) -> int:
        return len(self)


def _class_ids(values: np.ndarray, what: str) -> np.ndarray:
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"distribute(balance='labels'): labels ({what}) must be one integer class id per row, got an array of "
            f"shape {values.shape} and dtype {values.dtype}; pass `label_fn=`"
        )
    return values.astype(np.int64)


class _PositionIterator(ChunkIterator):
    """A ``datasets.Dataset``'s rows in order, converted a chunk at a time. State: ``{"index"}``."""

    def __init__(self, source: HuggingFaceDataset):
        super().__init__(len(source), f"{STEP} has {len(source)} rows", CHUNK)
        self._source = source

    def _read(self, start: int, end: int) -> list[Any]:
        return self._source.read(start, end - start)


class HuggingFaceStream(Dataset):
    """The rows of a streaming ``datasets.IterableDataset``, in its order (see the module docs).

    A stream of Arrow tables (Parquet or Arrow files, a ``Dataset`` streamed) is read as tables. Other streams (from
    generators, or Python functions mapped) are read as Python rows and made into tables of the stream's feature types
    here: ``datasets``' own conversion infers each chunk's types apart (an empty list's items are null), and media
    columns are read undecoded.
    """

    kind = SOURCE

    def __init__(self, dataset: Any, columns: Sequence[str] | None, defaults: dict | None, name: str | None = None):
        super().__init__(name=name)
        self._hf = dataset
        self._features = dataset.features
        self._where = _describe(dataset, "stream")
        self._names = None if columns is None else [str(c) for c in columns]
        self._defaults = defaults
        self._chosen: _Rows | None = None
        self._schema = None  # the tables' schema, when the stream has no features: its first table's
        self._arrow = getattr(getattr(dataset, "_ex_iterable", None), "iter_arrow", None) is not None

    def rows_reader(self) -> _Rows:
        """How rows are read: from the stream's features, else from its first table's schema."""
        if self._chosen is None:
            features = self._features
            schema = features.arrow_schema if features is not None else self._schema
            if schema is None:
                if next(self.tables(self.open(None)), None) is None:
                    raise InvalidArgumentError(f"{STEP}(): the stream has no rows, and no features to read columns of")
                schema = self._schema
            self._chosen = _Rows(schema, features, self._names, self._defaults, self._where)
        return self._chosen

    def open(self, state: dict | None) -> Any:
        """A fresh copy of the stream (its own position), at ``state``."""
        stream = copy.deepcopy(self._hf, _shared(self._hf))
        if self._names is not None:
            stream = stream.select_columns(self._names)
        if self._arrow:
            stream = stream.with_format("arrow")
        else:
            for column, feature in (stream.features or {}).items():
                if type(feature).__name__ in MEDIA:
                    stream = stream.cast_column(column, dataclasses.replace(feature, decode=False))
        if state is not None:
            stream.load_state_dict(state)
        return stream

    def tables(self, stream: Any) -> Iterator[Any]:
        """The stream's rows as Arrow tables of CHUNK rows."""
        import pyarrow as pa

        for batch in stream.iter(batch_size=CHUNK):
            if self._arrow:
                yield batch
                continue
            features = stream.features
            if features is not None:
                table = pa.Table.from_pydict(features.encode_batch(batch), schema=features.arrow_schema)
            elif self._schema is not None:
                table = pa.Table.from_pydict(batch).cast(self._schema)
            else:
                table = pa.Table.from_pydict(batch)
                self._schema = table.schema
            yield table

    def _make_iterator(self) -> DatasetIterator:
        return _StreamIterator(self)

    def _element_spec(self) -> Any:
        return dict(self.rows_reader().columns.spec)

    def _cardinality(self) -> int:
        return UNKNOWN


def _shared(stream: Any) -> dict:
    """What copies of ``stream`` share with it (a ``deepcopy`` memo): the Hugging Face file systems' cache, a global
    dict that copying it would change as it is read."""
    return {id(value): value for key, value in vars(stream).items() if key.endswith("__hffs_cache")}


class _StreamIterator(DatasetIterator):
    """A stream's rows, a chunk at a time. State: the stream's ``state_dict()`` before the current chunk, the row in
    it, and the rows before it (for error messages)."""

    def __init__(self, source: HuggingFaceStream):
        super().__init__()
        self._source = source
        self._stream: Any = None
        self._tables: Any = None
        self._before: dict | None = None  # the stream's state before the current chunk
        self._chunk: list[dict] = []
        self._i = 0
        self._count = 0  # rows before the current chunk
        self._done = False
        self._opened: Any = False  # a fresh stream's state (before its first chunk, state_dict() is not its own yet)

    def _open(self, state: dict | None) -> None:
        self._stream = self._source.open(state)
        self._tables = self._source.tables(self._stream)
        self._opened = state

    def __next__(self) -> dict:
        if self._i < len(self._chunk):
            self._i += 1
            return self._chunk[self._i - 1]
        if self._done:
            raise StopIteration
        if self._tables is None:
            self._open(None)
        before = self._opened if self._opened is not False else self._stream.state_dict()
        table = next(self._tables, None)
        self._opened = False
        if table is None:
            self._done, self._chunk, self._i = True, [], 0
            raise StopIteration
        rows = self._source.rows_reader().rows(table, self._count + len(self._chunk))
        self._count += len(self._chunk)
        self._before, self._chunk, self._i = before, rows, 1
        return rows[0]

    def _get_state(self) -> dict:
        return {"stream": self._before, "row": self._i, "count": self._count, "done": self._done}

    def _set_state(self, state: dict) -> None:
        self._done, self._chunk, self._i = bool(state["done"]), [], 0
        self._count, row = int(state["count"]), int(state["row"])
        self._before = state["stream"]
        self._open(self._before)
        if row and not self._done:
            table = next(self._tables, None)
            if table is None or table.num_rows < row:
                raise StateError(f"set_state(): the stream ended before row {row} of the saved chunk")
            self._chunk = self._source.rows_reader().rows(table, self._count)
            self._i, self._opened = row, False

"""``ParquetDataset``: the rows of Parquet files (pyarrow), with everything a file reader has: splits by file or by
row (rows are reached by position: a row group's rows are counted in the footer), label balance from a column,
resume and elastic resume, object storage."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from parafeed.core.dataset import iterate
from parafeed.errors import InvalidArgumentError
from parafeed.sources.files import FileReaderDataset


class ParquetDataset(FileReaderDataset):
    """The rows of Parquet files, one element per row: a dict of column -> value (docs/formats.md#parquet).

    Integers, floats and booleans come as NumPy scalars of the stored type, strings and binary as ``bytes``, list
    columns as 1-D arrays (lists of lists as RaggedTensors), structs as dicts. A null is an error naming the file, row
    and column, unless ``defaults`` gives the column's value for nulls.

    Args:
        filenames: a file name, a list of them, or a dataset of them.
        columns: the columns to read (all by default), in this order.
        defaults: ``{column: value}`` for nulls in those columns.
        num_parallel_reads: read that many files at once, interleaving their rows one by one.
        storage_options: for files named by URL (``s3://``, ``gs://``, ``https://``), the fsspec filesystem's own
            options.

    Example:
        >>> ds = pf.ParquetDataset(["train-0.parquet", "train-1.parquet"], columns=["text", "label"])
        >>> ds = ds.distribute(policy="RECORD", balance="labels")  # labels from the column "label"
    """

    _step = "ParquetDataset"

    def __init__(
        self,
        filenames: Any,
        columns: Sequence[str] | None = None,
        defaults: dict | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
        *,
        storage_options: dict | None = None,
    ):
        from parafeed.io.arrow_columns import pyarrow_modules
        from parafeed.io.parquet import ParquetFileReader

        pyarrow_modules(self._step)  # (says how to install pyarrow, now rather than at the first read)
        if isinstance(columns, (str, bytes)):
            raise InvalidArgumentError(f"{self._step}: `columns` must be a list of column names, got {columns!r}")
        self._column_names = None if columns is None else [str(c) for c in columns]
        self._defaults = dict(defaults or {})
        self._chosen: Any = None  # the Columns read, from the first file's schema (on first use)
        self.storage_options = storage_options

        def reader(path: str) -> Any:
            return ParquetFileReader(path, self.columns_of, storage_options)

        super().__init__(filenames, reader, num_parallel_reads, name)

    def columns_of(self, schema: Any, path: str) -> Any:
        """The columns read from a file of ``schema``: the first file's choice, checked against this one's."""
        from parafeed.io.arrow_columns import Columns

        if self._chosen is None:
            self._chosen = Columns(schema, self._column_names, self._defaults, path, self._step)
        else:
            self._chosen.check(schema, path)
        return self._chosen

    def _first_columns(self) -> Any:
        if self._chosen is None:
            from parafeed.io.parquet import open_parquet

            files = self.file_list()
            first = files[0] if files else os.fsdecode(next(iter(iterate(self._parents[0])), b""))
            if not first:
                raise InvalidArgumentError(f"{self._step}: no files to read")
            f = open_parquet(first, self.storage_options)
            try:
                self.columns_of(f.schema_arrow, first)
            finally:
                f.close()
        return self._chosen

    def _element_spec(self) -> Any:
        return dict(self._first_columns().spec)

    @property
    def indexed(self) -> bool:
        return True

    def record_count(self, path: str) -> int:
        from parafeed.io.parquet import row_count

        return row_count(path, self.storage_options)

    def open_positions(self, files: list[str], counts: list[int]) -> Any:
        from parafeed.io.parquet import ParquetRows

        return ParquetRows(files, counts, self.columns_of, self.storage_options)

    def labels_of(self, path: str, label: str, label_fn: Any) -> np.ndarray:
        """``label_fn(row)``, else the integer column ``label`` of every row of one file."""
        if label_fn is not None:
            return super().labels_of(path, label, label_fn)
        from parafeed.io.arrow_columns import pyarrow_modules
        from parafeed.io.parquet import open_parquet

        pa, _, _ = pyarrow_modules(self._step)
        f = open_parquet(path, self.storage_options)
        try:
            if label not in f.schema_arrow.names:
                raise InvalidArgumentError(
                    f"distribute(balance='labels'): {path} has no column {label!r}; pass `label=` (the column's "
                    "name) or `label_fn=`"
                )
            column = f.read(columns=[label]).column(label)
        finally:
            f.close()
        if not pa.types.is_integer(column.type) or column.null_count:
            raise InvalidArgumentError(
                f"distribute(balance='labels'): column {label!r} of {path} must be integers without nulls, got "
                f"{column.type} with {column.null_count} null(s); pass `label_fn=`"
            )
        return column.to_numpy().astype(np.int64)

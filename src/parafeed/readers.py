"""File-reading source datasets: ``TFRecordDataset``, ``TextLineDataset`` and ``CsvDataset``."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from parafeed.dataset import AUTOTUNE, UNKNOWN, Dataset, DatasetIterator
from parafeed.errors import InvalidArgumentError
from parafeed.structure import STRING, TensorSpec


def filenames_dataset(step: str, filenames: Any) -> Dataset:
    """A dataset of file names (bytes) from a name, a list of names or a dataset of names."""
    if isinstance(filenames, Dataset):
        spec = filenames.element_spec
        if not (isinstance(spec, TensorSpec) and spec.dtype == STRING and spec.shape == ()):
            raise InvalidArgumentError(f"{step}: a dataset of `filenames` must have scalar string elements, got {spec}")
        return filenames
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    names = [os.fsencode(f) for f in filenames]
    return Dataset.from_tensor_slices(np.array(names, dtype=object).reshape(-1))


def read_files(step: str, filenames: Any, open_file: Any, num_parallel_reads: int | None) -> Dataset:
    """Records of every file in turn (``num_parallel_reads``: that many files interleaved, one record each)."""
    files = filenames_dataset(step, filenames)
    if num_parallel_reads is None:
        return files.flat_map(open_file)
    if num_parallel_reads != AUTOTUNE and num_parallel_reads <= 0:
        raise InvalidArgumentError(f"{step}: `num_parallel_reads` must be > 0 or AUTOTUNE, got {num_parallel_reads}")
    return files.interleave(
        open_file, cycle_length=num_parallel_reads, block_length=1, num_parallel_calls=num_parallel_reads
    )


class _FileRecordsDataset(Dataset):
    """The records of one file, read by ``reader(path)``, a DatasetIterator of bytes."""

    def __init__(self, path: bytes, reader: Any):
        super().__init__()
        self._path = os.fsdecode(path)
        self._reader = reader

    def _make_iterator(self) -> DatasetIterator:
        return self._reader(self._path)

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)

    def _cardinality(self) -> int:
        return UNKNOWN


class TFRecordDataset(Dataset):
    """The records of TFRecord files, as ``bytes`` (like ``tf.data.TFRecordDataset``).

    Args:
        filenames: a file name, a list of them, or a dataset of them.
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: bytes read at a time (1 MiB by default).
        num_parallel_reads: read that many files at once, interleaving their records one by one.

    Example:
        >>> ds = pf.TFRecordDataset(["train-0.tfrecord", "train-1.tfrecord"]).map(parse)
    """

    def __init__(
        self,
        filenames: Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
    ):
        from parafeed.io.streams import compression_type_of
        from parafeed.io.tfrecord import DEFAULT_BUFFER_SIZE, TFRecordFileReader

        compression = compression_type_of(compression_type)
        size = DEFAULT_BUFFER_SIZE if buffer_size is None or buffer_size <= 0 else int(buffer_size)

        def open_file(path: bytes) -> Dataset:
            return _FileRecordsDataset(path, lambda p: TFRecordFileReader(p, compression, size))

        records = read_files("TFRecordDataset", filenames, open_file, num_parallel_reads)
        super().__init__((records,), name=name)

    def _make_iterator(self) -> DatasetIterator:
        return self._parents[0]._iter()

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()


class TextLineDataset(Dataset):
    """The lines of text files as ``bytes`` without line endings (like ``tf.data.TextLineDataset``)."""

    def __init__(
        self,
        filenames: Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
    ):
        from parafeed.io.streams import compression_type_of
        from parafeed.io.text import DEFAULT_BUFFER_SIZE, TextLineReader

        compression = compression_type_of(compression_type)
        size = DEFAULT_BUFFER_SIZE if buffer_size is None or buffer_size <= 0 else int(buffer_size)

        def open_file(path: bytes) -> Dataset:
            return _FileRecordsDataset(path, lambda p: TextLineReader(p, compression, size))

        super().__init__((read_files("TextLineDataset", filenames, open_file, num_parallel_reads),), name=name)

    def _make_iterator(self) -> DatasetIterator:
        return self._parents[0]._iter()

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()


class CsvDataset(Dataset):
    """Records of CSV files as tuples, one NumPy scalar or ``bytes`` per column (``tf.data.experimental.CsvDataset``).

    Args:
        filenames: a file name, a list of them, or a dataset of them.
        record_defaults: per column, a default value (its type gives the column's dtype: ``0`` int32, ``0.0``
            float32, ``""`` string, ``np.int64(0)`` int64 ...) or a dtype (``np.int64``, ``np.float32``, ``bytes``)
            for a required column.
        header: skip the first line of every file.
        field_delim, use_quote_delim, na_value: the CSV dialect; ``na_value`` fields take the default.
        select_cols: indices of the columns to keep (increasing); ``record_defaults`` describes those.
        exclude_cols: or the indices of the columns to drop.

    Example:
        >>> ds = pf.CsvDataset("iris.csv", [0.0, 0.0, 0.0, 0.0, np.int64], header=True)
    """

    def __init__(
        self,
        filenames: Any,
        record_defaults: list,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        header: bool = False,
        field_delim: str = ",",
        use_quote_delim: bool = True,
        na_value: str = "",
        select_cols: list[int] | None = None,
        exclude_cols: list[int] | None = None,
        name: str | None = None,
    ):
        from parafeed.io.streams import compression_type_of
        from parafeed.io.text import DEFAULT_BUFFER_SIZE, CsvColumns, CsvReader

        if exclude_cols is not None:
            if select_cols is not None:
                raise InvalidArgumentError("CsvDataset: give `select_cols` or `exclude_cols`, not both")
            excluded = {int(c) for c in exclude_cols}
            select_cols = [c for c in range(len(record_defaults) + len(excluded)) if c not in excluded]
        self._columns = columns = CsvColumns(record_defaults, select_cols, field_delim, na_value)
        compression = compression_type_of(compression_type)
        size = DEFAULT_BUFFER_SIZE if buffer_size is None or buffer_size <= 0 else int(buffer_size)

        def open_file(path: bytes) -> Dataset:
            return _FileRecordsDataset(
                path, lambda p: CsvReader(p, columns, compression, size, bool(header), bool(use_quote_delim))
            )

        records = filenames_dataset("CsvDataset", filenames).flat_map(open_file)
        super().__init__((records,), name=name)

    def _make_iterator(self) -> DatasetIterator:
        return self._parents[0]._iter()

    def _element_spec(self) -> Any:
        return self._columns.spec

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()

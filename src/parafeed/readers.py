"""File-reading source datasets: ``TFRecordDataset``, ``TextLineDataset`` and ``CsvDataset``."""

from __future__ import annotations

import copy
import os
from typing import Any

import numpy as np

from parafeed.dataset import AUTOTUNE, UNKNOWN, Dataset
from parafeed.errors import InvalidArgumentError
from parafeed.iterator import DatasetIterator
from parafeed.ops.shuffle import ShuffleDataset
from parafeed.ops.sources import TensorSlicesDataset
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
    """The records of one file, read by ``reader(path)``, a DatasetIterator."""

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


class FileReaderDataset(Dataset):
    """Base of the readers: the records of a list of files, read by ``reader(path)`` one file after another (or
    ``num_parallel_reads`` files interleaved). It knows its files, so replica sharding can split them."""

    _step = "reader"

    def __init__(self, filenames: Any, reader: Any, num_parallel_reads: int | None, name: str | None):
        self._files = filenames_dataset(self._step, filenames)
        self._reader = reader
        self._num_parallel_reads = num_parallel_reads

        def open_file(path: bytes) -> Dataset:
            return _FileRecordsDataset(path, reader)

        records = read_files(self._step, self._files, open_file, num_parallel_reads)
        super().__init__((records,), name=name)

    def _make_iterator(self) -> DatasetIterator:
        return self._parents[0]._iter()

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()

    def _with_files(self, files: Dataset) -> FileReaderDataset:
        """The same reader over other files (replica sharding by file)."""
        clone = copy.copy(self)
        FileReaderDataset.__init__(clone, files, self._reader, self._num_parallel_reads, self._name)
        return clone

    def file_list(self) -> list[str] | None:
        """The file names, when they are a fixed list (not computed by a pipeline)."""
        files = self._files
        if isinstance(files, ShuffleDataset):
            files = files._parent
        if not isinstance(files, TensorSlicesDataset):
            return None
        return [os.fsdecode(f) for f in files._flat[0].tolist()]

    def record_count(self, path: str) -> int:
        """Records in one file (read once to count them; TFRecord files use their index)."""
        it = self._reader(path)
        try:
            return sum(1 for _ in it)
        finally:
            it.close()


class TFRecordDataset(FileReaderDataset):
    """The records of TFRecord files, as ``bytes`` (like ``tf.data.TFRecordDataset``).

    Args:
        filenames: a file name, a list of them, or a dataset of them.
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: bytes read at a time (1 MiB by default).
        num_parallel_reads: read that many files at once, interleaving their records one by one.

    Example:
        >>> ds = pf.TFRecordDataset(["train-0.tfrecord", "train-1.tfrecord"]).map(parse)
    """

    _step = "TFRecordDataset"

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

        self._compression = compression = compression_type_of(compression_type)
        size = DEFAULT_BUFFER_SIZE if buffer_size is None or buffer_size <= 0 else int(buffer_size)
        super().__init__(filenames, lambda p: TFRecordFileReader(p, compression, size), num_parallel_reads, name)

    def record_count(self, path: str) -> int:
        if self._compression:
            return super().record_count(path)
        from parafeed.io.index import record_offsets

        return len(record_offsets(path))


class TextLineDataset(FileReaderDataset):
    """The lines of text files as ``bytes`` without line endings (like ``tf.data.TextLineDataset``)."""

    _step = "TextLineDataset"

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
        super().__init__(filenames, lambda p: TextLineReader(p, compression, size), num_parallel_reads, name)


class CsvDataset(FileReaderDataset):
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

    _step = "CsvDataset"

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

        def reader(path: str) -> CsvReader:
            return CsvReader(path, columns, compression, size, bool(header), bool(use_quote_delim))

        super().__init__(filenames, reader, None, name)

    def _element_spec(self) -> Any:
        return self._columns.spec


class TFRecordSelectionDataset(Dataset):
    """Chosen records of uncompressed TFRecord files, by position in the files' concatenation, in file order (read
    by seeking with each file's record index): one replica's share of a stratified split."""

    def __init__(self, files: list[str], counts: list[int], positions: Any, name: str | None = None):
        super().__init__(name=name)
        self._files = files
        starts = np.cumsum([0, *counts])
        positions = np.sort(np.asarray(positions, dtype=np.int64))
        owner = np.searchsorted(starts, positions, side="right") - 1
        self._selection = [(f, positions[owner == i] - starts[i]) for i, f in enumerate(files) if (owner == i).any()]
        self._count = len(positions)

    def _make_iterator(self) -> DatasetIterator:
        return _SelectionIterator(self._selection)

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)

    def _cardinality(self) -> int:
        return self._count


class _SelectionIterator(DatasetIterator):
    def __init__(self, selection: list):
        super().__init__()
        self._selection = selection
        self._seek(0)

    def _seek(self, index: int) -> None:
        from parafeed.io.index import read_records

        def records() -> Any:
            left = index
            for path, indices in self._selection:
                if left < len(indices):
                    yield from read_records(path, indices[left:])
                left = max(0, left - len(indices))

        self._records = records()
        self._index = index

    def __next__(self) -> bytes:
        x = next(self._records)
        self._index += 1
        return x

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        self._records.close()
        self._seek(int(state["index"]))

    def close(self) -> None:
        self._records.close()

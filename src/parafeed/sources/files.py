"""File sources: ``TFRecordDataset``, ``ArrayRecordDataset``, ``TextLineDataset``, ``CsvDataset``,
``FixedLengthRecordDataset`` and ``Dataset.list_files``.

A reader is a source node whose parent is the dataset of file names it reads (a fixed list, a ``list_files`` result
or any pipeline of names). It reports its files and their record counts through methods, so replica sharding can
split them; ``with_parents(names)`` is the same reader over other files.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core import graph
from parafeed.core.dataset import AUTOTUNE, UNKNOWN, Dataset, PassThroughDataset
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import InvalidArgumentError
from parafeed.io.storage import glob
from parafeed.sources.memory import TensorSlicesDataset
from parafeed.values.structure import STRING, TensorSpec

log = logging.getLogger("parafeed")


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


def fixed_names(files: Dataset) -> list[str] | None:
    """The names a dataset of file names yields, when they are a fixed list in any order (``list_files`` shuffles
    them: a step that gives its input's own elements in another order keeps the list); None when a pipeline computes
    them."""
    files = graph.down(files, lambda n: n.kind == graph.REORDERING and isinstance(n, PassThroughDataset))
    if not isinstance(files, TensorSlicesDataset):
        return None
    return [os.fsdecode(f) for f in np.asarray(files.tensors).reshape(-1).tolist()]


def _stream_settings(compression_type: Any, buffer_size: int | None, default_size: int) -> tuple[str, int]:
    """A reader's compression name and read size (the default when ``buffer_size`` is None or <= 0)."""
    from parafeed.io.streams import compression_type_of

    size = default_size if buffer_size is None or buffer_size <= 0 else int(buffer_size)
    return compression_type_of(compression_type), size


class _FileRecordsDataset(Dataset):
    """The records of one file, read by ``reader(path)``, a DatasetIterator."""

    kind = graph.SOURCE

    def __init__(self, path: bytes, reader: Callable[[str], DatasetIterator]):
        super().__init__()
        self._path = os.fsdecode(path)
        self._reader = reader

    def _make_iterator(self) -> DatasetIterator:
        return self._reader(self._path)

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)


class FileReaderDataset(Dataset):
    """Base of the readers: the records of a list of files, read by ``reader(path)`` one file after another (or
    ``num_parallel_reads`` files interleaved, one record from each in turn)."""

    kind = graph.SOURCE
    _step = "reader"
    storage_options: dict | None = None  # the filesystem's options, for files named by URL

    def __init__(
        self,
        filenames: Any,
        reader: Callable[[str], DatasetIterator],
        num_parallel_reads: int | None,
        name: str | None,
    ):
        if num_parallel_reads is not None and num_parallel_reads != AUTOTUNE and num_parallel_reads <= 0:
            raise InvalidArgumentError(
                f"{self._step}: `num_parallel_reads` must be > 0 or AUTOTUNE, got {num_parallel_reads}"
            )
        super().__init__((filenames_dataset(self._step, filenames),), name=name)
        self._reader = reader
        self._num_parallel_reads = num_parallel_reads

    @property
    def num_parallel_reads(self) -> int | None:
        return self._num_parallel_reads

    @property
    def indexed(self) -> bool:
        """Whether records can be read by position (uncompressed TFRecord files, through their index)."""
        return False

    def open_positions(self, files: list[str], counts: list[int]) -> Any:
        """Random access to the records of ``files`` (holding ``counts`` records) by position in their
        concatenation: an object with ``read(position)``, ``remote`` (whether reading ahead on I/O threads pays) and
        ``close()``; only for an ``indexed`` reader."""
        raise NotImplementedError(f"{self._step} reads its records in order only")

    def labels_of(self, path: str, label: str, label_fn: Any) -> np.ndarray:
        """The label of every record of one file, ``label_fn(record)`` (int64), for ``balance="labels"``."""
        if label_fn is None:
            raise InvalidArgumentError(f"distribute(balance='labels'): {self._step} records need `label_fn=`")
        it = self._reader(path)
        try:
            return np.asarray([label_fn(r) for r in it], dtype=np.int64)
        finally:
            it.close()

    def _records(self) -> Dataset:
        """The records of every file in turn, or ``num_parallel_reads`` files interleaved."""

        def open_file(path: bytes) -> Dataset:
            return _FileRecordsDataset(path, self._reader)

        files = self._parents[0]
        if self._num_parallel_reads is None:
            return files.flat_map(open_file)
        n = self._num_parallel_reads
        return files.interleave(open_file, cycle_length=n, block_length=1, num_parallel_calls=n)

    def _make_iterator(self) -> DatasetIterator:
        return self._records()._iter()

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)

    def _sample_element(self) -> Any:
        return self._records()._sample_element()

    def file_list(self) -> list[str] | None:
        """The file names, when they are a fixed list (not computed by a pipeline); a ``list_files`` shuffle of a
        fixed list counts (its order changes, not its files)."""
        return fixed_names(self._parents[0])

    def record_count(self, path: str) -> int:
        """Records in one file (read once to count them; uncompressed TFRecord files use their index)."""
        it = self._reader(path)
        try:
            return sum(1 for _ in it)
        finally:
            it.close()

    def record_counts(self) -> list[int] | None:
        """Every file's record count, for a fixed list of files; None when the files are computed or cannot be
        read (with a warning saying why)."""
        files = self.file_list()
        if files is None:
            return None
        try:
            return [self.record_count(f) for f in files]
        except Exception as err:
            log.warning("%s: could not count the records of %d files (%s)", self._step, len(files), err)
            return None

    def _count_records(self) -> int:
        counts = self.record_counts()
        return UNKNOWN if counts is None else sum(counts)

    def record_order(self, files: list[int], counts: list[int]) -> np.ndarray:
        """The positions (in the concatenation of ``file_list()``, whose files hold ``counts`` records) of the
        records in the order this reader yields them when its files come in the order ``files`` (indices)."""
        starts = np.cumsum([0, *counts])
        if self._num_parallel_reads is None:
            return np.concatenate([np.arange(starts[k], starts[k + 1]) for k in files] or [np.zeros(0, np.int64)])
        order = Dataset.from_tensor_slices(np.asarray(files, np.int64)).interleave(
            lambda k: Dataset.range(int(starts[k]), int(starts[k + 1])),
            cycle_length=self._num_parallel_reads,
            block_length=1,
        )  # the reader's own interleave order, over positions instead of records
        return np.fromiter(order, np.int64)


class TFRecordDataset(FileReaderDataset):
    """The records of TFRecord files, as ``bytes`` (like ``tf.data.TFRecordDataset``).

    Args:
        filenames: a file name, a list of them, or a dataset of them.
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: bytes read at a time (1 MiB by default).
        num_parallel_reads: read that many files at once, interleaving their records one by one.
        storage_options: for files named by URL (``s3://``, ``gs://``, ``https://``), the fsspec filesystem's own
            options (credentials, endpoint); the other readers take it too (docs/storage.md).

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
        *,
        storage_options: dict | None = None,
    ):
        from parafeed.io.tfrecord import DEFAULT_BUFFER_SIZE, TFRecordFileReader

        compression, size = _stream_settings(compression_type, buffer_size, DEFAULT_BUFFER_SIZE)
        self._compression = compression
        self.storage_options = storage_options

        def reader(path: str) -> DatasetIterator:
            return TFRecordFileReader(path, compression, size, storage_options=storage_options)

        super().__init__(filenames, reader, num_parallel_reads, name)

    @property
    def indexed(self) -> bool:
        return not self._compression

    def record_count(self, path: str) -> int:
        if self._compression:
            return super().record_count(path)
        from parafeed.io.index import record_offsets

        return len(record_offsets(path, self.storage_options))

    def open_positions(self, files: list[str], counts: list[int]) -> Any:
        from parafeed.io.index import RecordFiles

        return RecordFiles(files, counts, self.storage_options)

    def labels_of(self, path: str, label: str, label_fn: Any) -> np.ndarray:
        """``label_fn(record)``, else the int64 tf.Example feature ``label`` of every record of one file."""
        return super().labels_of(path, label, label_fn) if label_fn is not None else example_labels(self, path, label)


def example_labels(reader: FileReaderDataset, path: str, label: str) -> np.ndarray:
    """The int64 tf.Example feature ``label`` of every record of one file of ``reader``'s."""
    from parafeed.io import VarLenFeature, parse_example

    it = reader._reader(path)
    try:
        records = list(it)
    finally:
        it.close()
    parsed = parse_example(records, {label: VarLenFeature("int64")})[label] if records else None
    if parsed is not None and len(parsed.values) != len(records):
        raise InvalidArgumentError(
            f"distribute(balance='labels'): every record of {path} needs exactly one int64 {label!r} feature; pass "
            "`label=` (the feature's name) or `label_fn=`"
        )
    return np.asarray([] if parsed is None else parsed.values, dtype=np.int64)


class ArrayRecordDataset(FileReaderDataset):
    """The records of ArrayRecord files (the ``array_record`` package's format, Grain's), as ``bytes``.

    Records are read by index: splits by record, global shuffles and resume seek to exactly the records wanted,
    without reading what comes before (docs/formats.md#arrayrecord).

    Args:
        filenames: a file name, a list of them, or a dataset of them.
        num_parallel_reads: read that many files at once, interleaving their records one by one.
        storage_options: for files named by URL, the fsspec filesystem's own options.

    Example:
        >>> ds = pf.ArrayRecordDataset(["train-00000-of-00008.array_record"]).map(parse)
    """

    _step = "ArrayRecordDataset"

    def __init__(
        self,
        filenames: Any,
        num_parallel_reads: int | None = None,
        name: str | None = None,
        *,
        storage_options: dict | None = None,
    ):
        from parafeed.io.array_record import ArrayRecordFileReader, reader_class

        reader_class()  # (says how to install array_record, now rather than at the first read)
        self.storage_options = storage_options

        def reader(path: str) -> DatasetIterator:
            return ArrayRecordFileReader(path, storage_options)

        super().__init__(filenames, reader, num_parallel_reads, name)

    @property
    def indexed(self) -> bool:
        return True

    def record_count(self, path: str) -> int:
        from parafeed.io.array_record import record_count

        return record_count(path, self.storage_options)

    def open_positions(self, files: list[str], counts: list[int]) -> Any:
        from parafeed.io.array_record import ArrayRecords

        return ArrayRecords(files, counts, self.storage_options)

    def labels_of(self, path: str, label: str, label_fn: Any) -> np.ndarray:
        """``label_fn(record)``, else the int64 tf.Example feature ``label`` of every record of one file."""
        return super().labels_of(path, label, label_fn) if label_fn is not None else example_labels(self, path, label)


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
        *,
        storage_options: dict | None = None,
    ):
        from parafeed.io.text import DEFAULT_BUFFER_SIZE, TextLineReader

        compression, size = _stream_settings(compression_type, buffer_size, DEFAULT_BUFFER_SIZE)

        def reader(path: str) -> DatasetIterator:
            return TextLineReader(path, compression, size, storage_options)

        super().__init__(filenames, reader, num_parallel_reads, name)


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
        *,
        storage_options: dict | None = None,
    ):
        from parafeed.io.text import DEFAULT_BUFFER_SIZE, CsvColumns, CsvReader

        if exclude_cols is not None:
            if select_cols is not None:
                raise InvalidArgumentError("CsvDataset: give `select_cols` or `exclude_cols`, not both")
            excluded = {int(c) for c in exclude_cols}
            select_cols = [c for c in range(len(record_defaults) + len(excluded)) if c not in excluded]
        self._columns = columns = CsvColumns(record_defaults, select_cols, field_delim, na_value)
        compression, size = _stream_settings(compression_type, buffer_size, DEFAULT_BUFFER_SIZE)

        def reader(path: str) -> DatasetIterator:
            return CsvReader(path, columns, compression, size, bool(header), bool(use_quote_delim), storage_options)

        super().__init__(filenames, reader, None, name)

    def _element_spec(self) -> Any:
        return self._columns.spec


class FixedLengthRecordDataset(FileReaderDataset):
    """Records of ``record_bytes`` bytes from binary files with optional header and footer
    (``tf.data.FixedLengthRecordDataset``).

    Example:
        >>> ds = pf.FixedLengthRecordDataset("images.bin", record_bytes=3073, header_bytes=0)
    """

    _step = "FixedLengthRecordDataset"

    def __init__(
        self,
        filenames: Any,
        record_bytes: int,
        header_bytes: int | None = None,
        footer_bytes: int | None = None,
        buffer_size: int | None = None,
        compression_type: str | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
        *,
        storage_options: dict | None = None,
    ):
        from parafeed.io.fixed_length import DEFAULT_BUFFER_SIZE, FixedLengthRecordReader

        compression, size = _stream_settings(compression_type, buffer_size, DEFAULT_BUFFER_SIZE)
        record, header, footer = int(record_bytes), int(header_bytes or 0), int(footer_bytes or 0)

        def reader(path: str) -> DatasetIterator:
            return FixedLengthRecordReader(path, record, header, footer, compression, size, storage_options)

        super().__init__(filenames, reader, num_parallel_reads, name)


def list_files(file_pattern: str | list[str], shuffle: bool | None, seed: int | None, name: str | None,
               storage_options: dict | None = None) -> Dataset:  # fmt: skip
    """The files matching glob pattern(s), local or URLs, as ``bytes`` names; shuffled each epoch unless
    ``shuffle=False``."""
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
    # one sorted list of every pattern's matches, as TensorFlow's MatchingFiles gives them
    names = sorted(
        os.fsencode(p) for pattern in patterns for p in glob(os.fsdecode(pattern), storage_options, "list_files()")
    )  # fmt: skip
    if not names:
        raise InvalidArgumentError(f"list_files(): no files matched pattern(s) {', '.join(map(str, patterns))}")
    files = TensorSlicesDataset(np.array(names, dtype=object), name=name)
    if shuffle is False:
        return files
    return files.shuffle(len(names), seed=seed)

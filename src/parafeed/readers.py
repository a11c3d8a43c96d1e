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
        from parafeed.io.tfrecord import DEFAULT_BUFFER_SIZE, TFRecordFileReader, compression_type_of

        compression = compression_type_of(compression_type)
        size = DEFAULT_BUFFER_SIZE if buffer_size is None or buffer_size <= 0 else int(buffer_size)

        def open_file(path: bytes) -> Dataset:
            return _FileRecordsDataset(path, lambda p: TFRecordFileReader(p, compression, size))

        records = read_files("TFRecordDataset", filenames, open_file, num_parallel_reads)
        super().__init__((records,), name=name)

    def _make_iterator(self) -> DatasetIterator:
        return self._parents[0]._make_iterator()

    def _element_spec(self) -> Any:
        return TensorSpec((), STRING)

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()

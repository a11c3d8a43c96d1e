"""``pf.experimental.TFRecordWriter``: write a dataset of strings to a TFRecord file (tf.data.experimental's)."""

from __future__ import annotations

import os
from typing import Any

from parafeed.errors import ArgumentTypeError
from parafeed.values.structure import STRING, TensorSpec


class DatasetTFRecordWriter:
    """Writes every element of a dataset of scalar strings as one record of ``filename``.

    Example:
        >>> pf.experimental.TFRecordWriter("out.tfrecord", "GZIP").write(pf.Dataset.from_tensor_slices([b"a", b"b"]))
    """

    def __init__(self, filename: str | os.PathLike, compression_type: str | None = None):
        from parafeed.io.streams import compression_type_of

        self._filename = os.fspath(filename)
        self._compression = compression_type_of(compression_type)

    def write(self, dataset: Any) -> None:
        """Write the records (the file is replaced; an error while iterating leaves the records before it)."""
        from parafeed.core.dataset import Dataset
        from parafeed.io.tfrecord import TFRecordWriter

        if not isinstance(dataset, Dataset):
            raise ArgumentTypeError(f"`dataset` must be a `pf.Dataset` object, got {type(dataset).__name__}.")
        spec = dataset.element_spec
        if not (isinstance(spec, TensorSpec) and spec.dtype == STRING and spec.shape == ()):
            raise ArgumentTypeError(
                "Invalid `dataset`. Expected a dataset that produces scalar string elements, but got a dataset which "
                f"produces elements with spec {spec}."
            )
        with TFRecordWriter(self._filename, self._compression or None) as writer:
            for record in dataset.as_numpy_iterator():
                writer.write(record)

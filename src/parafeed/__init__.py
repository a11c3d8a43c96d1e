"""parafeed: tf.data's API on NumPy elements, for data-parallel input pipelines.

Example:
    >>> import parafeed as pf
    >>> ds = pf.Dataset.from_tensor_slices({"x": [1, 2, 3], "y": [b"a", b"b", b"c"]}).batch(2)
    >>> next(iter(ds))["x"]
    array([1, 2], dtype=int32)
"""

from parafeed import distribute, errors, image, io
from parafeed.dataset import AUTOTUNE, INFINITE, UNKNOWN, Dataset, DatasetIterator
from parafeed.options import Options
from parafeed.readers import CsvDataset, TextLineDataset, TFRecordDataset
from parafeed.sparse import SparseTensor
from parafeed.structure import DatasetSpec, TensorSpec

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN

__version__ = "0.1.0"

__all__ = [
    "AUTOTUNE",
    "INFINITE",
    "INFINITE_CARDINALITY",
    "Options",
    "UNKNOWN",
    "UNKNOWN_CARDINALITY",
    "CsvDataset",
    "Dataset",
    "DatasetIterator",
    "DatasetSpec",
    "SparseTensor",
    "TFRecordDataset",
    "TensorSpec",
    "TextLineDataset",
    "distribute",
    "errors",
    "image",
    "io",
]

"""parafeed: tf.data's API on NumPy elements, for data-parallel input pipelines.

Example:
    >>> import parafeed as pf
    >>> ds = pf.Dataset.from_tensor_slices({"x": [1, 2, 3], "y": [b"a", b"b", b"c"]}).batch(2)
    >>> next(iter(ds))["x"]
    array([1, 2], dtype=int32)
"""

from parafeed import checkpoint, distribute, errors, experimental, image, io
from parafeed.dataset import AUTOTUNE, INFINITE, UNKNOWN, Dataset
from parafeed.iterator import DatasetIterator
from parafeed.options import Options
from parafeed.sources.files import CsvDataset, TextLineDataset, TFRecordDataset
from parafeed.sparse import SparseTensor
from parafeed.structure import DatasetSpec, TensorSpec

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    if name == "adapters":  # loaded on first use: the adapters import nothing heavy until called
        import importlib

        return importlib.import_module("parafeed.adapters")
    raise AttributeError(f"module 'parafeed' has no attribute {name!r}")


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
    "adapters",
    "checkpoint",
    "distribute",
    "errors",
    "experimental",
    "image",
    "io",
]

"""parafeed: tf.data's API on NumPy elements, for data-parallel input pipelines.

Example:
    >>> import parafeed as pf
    >>> ds = pf.Dataset.from_tensor_slices({"x": [1, 2, 3], "y": [b"a", b"b", b"c"]}).batch(2)
    >>> next(iter(ds))["x"]
    array([1, 2], dtype=int32)
"""

from typing import TYPE_CHECKING

from parafeed import checkpoint, distribute, errors, io
from parafeed.core import stats
from parafeed.core.dataset import AUTOTUNE, INFINITE, UNKNOWN, Dataset
from parafeed.core.iterator import DatasetIterator
from parafeed.core.options import Options, ThreadingOptions
from parafeed.io import example_messages as train
from parafeed.sources.files import (
    ArrayRecordDataset,
    CsvDataset,
    FixedLengthRecordDataset,
    TextLineDataset,
    TFRecordDataset,
)
from parafeed.sources.parquet import ParquetDataset
from parafeed.sources.webdataset import WebDataset
from parafeed.tensor_ops import image, ragged
from parafeed.values.dtypes import (
    DType,
    as_dtype,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from parafeed.values.ragged_spec import RaggedTensorSpec
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor, SparseTensorSpec
from parafeed.values.structure import DatasetSpec, TensorSpec
from parafeed.values.tensor import Dimension, Tensor, TensorShape

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN

__version__ = "0.1.0"

if TYPE_CHECKING:  # (loaded on first use: see __getattr__)
    from parafeed import adapters, experimental, feed


# namespaces loaded on first use, to keep `import parafeed` fast: name -> module
_LAZY = {
    "adapters": "parafeed.adapters",
    "audio": "parafeed.tensor_ops.audio",
    "compat": "parafeed.compat",
    "dtypes": "parafeed.values.dtypes",
    "experimental": "parafeed.experimental",
    "feed": "parafeed.feed",
    "math": "parafeed.tensor_ops.math_ops",
    "lookup": "parafeed.io.lookup",
    "nest": "parafeed.tensor_ops.nest",
    "random": "parafeed.tensor_ops.random_ops",
    "signal": "parafeed.tensor_ops.signal",
    "sparse": "parafeed.tensor_ops.sparse",
    "strings": "parafeed.tensor_ops.strings",
}
# TensorFlow's top-level operations (pf.cast, pf.reshape, pf.maximum ...), looked up in these modules on first use
_OPERATIONS = tuple(
    f"parafeed.tensor_ops.{m}" for m in ("array_ops", "math_ops", "python_ops", "control_flow", "random_ops")
)


_MISSING = object()


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY:
        value: object = importlib.import_module(_LAZY[name])
    elif name == "data":  # (`import parafeed as tf` code says tf.data.Dataset: parafeed has these names itself)
        import sys

        value = sys.modules[__name__]
    elif name == "function":
        from parafeed.core.tensor_functions import function as value
    elif name == "bfloat16":
        value = importlib.import_module("parafeed.values.dtypes").bfloat16
    else:
        modules = (importlib.import_module(m) for m in _OPERATIONS)
        home = next((m for m in modules if name in m.__all__), None)
        value = getattr(home, name) if home is not None else _MISSING
    if value is not _MISSING:
        globals()[name] = value
        return value
    from parafeed.core.missing import TOP, missing

    raise missing("parafeed", TOP, name)


__all__ = [
    "AUTOTUNE",
    "INFINITE",
    "INFINITE_CARDINALITY",
    "Options",
    "UNKNOWN",
    "UNKNOWN_CARDINALITY",
    "ArrayRecordDataset",
    "CsvDataset",
    "Dataset",
    "DatasetIterator",
    "DatasetSpec",
    "FixedLengthRecordDataset",
    "ParquetDataset",
    "RaggedTensor",
    "RaggedTensorSpec",
    "SparseTensor",
    "SparseTensorSpec",
    "TFRecordDataset",
    "DType",
    "Dimension",
    "Tensor",
    "TensorShape",
    "TensorSpec",
    "TextLineDataset",
    "ThreadingOptions",
    "WebDataset",
    "adapters",
    "as_dtype",
    "bool",
    "complex64",
    "complex128",
    "double",
    "float16",
    "float32",
    "float64",
    "half",
    "int8",
    "int16",
    "int32",
    "int64",
    "string",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "checkpoint",
    "distribute",
    "errors",
    "experimental",
    "feed",
    "image",
    "io",
    "ragged",
    "stats",
    "train",
]

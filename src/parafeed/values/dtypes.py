"""tf's dtype names as :class:`~parafeed.values.dtype_object.DType` objects, so that ``tf.int64`` / ``tf.string`` in
ported code become ``pf.int64`` / ``pf.string``. Strings are ``bytes`` in object arrays (``pf.string``), as
``tensor.numpy()`` gives them."""

from typing import Any

import numpy as np

from parafeed.values.dtype_object import STRING, of
from parafeed.values.dtype_object import DType as DType

bool = of(np.dtype(np.bool_))  # tf.bool
uint8 = of(np.dtype(np.uint8))
uint16 = of(np.dtype(np.uint16))
uint32 = of(np.dtype(np.uint32))
uint64 = of(np.dtype(np.uint64))
int8 = of(np.dtype(np.int8))
int16 = of(np.dtype(np.int16))
int32 = of(np.dtype(np.int32))
int64 = of(np.dtype(np.int64))
float16 = of(np.dtype(np.float16))
half = float16
float32 = of(np.dtype(np.float32))
float64 = of(np.dtype(np.float64))
double = float64
complex64 = of(np.dtype(np.complex64))
complex128 = of(np.dtype(np.complex128))
string = of(STRING)

NAMES = ("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16", "half",
         "float32", "float64", "double", "complex64", "complex128", "string")  # fmt: skip


def as_dtype(dtype: Any) -> DType:
    """``tf.as_dtype``: the :class:`DType` of a dtype given as NumPy, as a name, or as a TensorFlow DType."""
    from parafeed.values.structure import as_dtype as numpy_dtype

    return of(numpy_dtype(dtype))


def __getattr__(name: str) -> DType:
    if name == "bfloat16":  # (ml_dtypes loaded on first use)
        import ml_dtypes

        return of(np.dtype(ml_dtypes.bfloat16))
    raise AttributeError(f"module 'parafeed.dtypes' has no attribute {name!r}")

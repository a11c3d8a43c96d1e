"""tf's dtype names as NumPy dtypes, so that ``tf.int64`` / ``tf.string`` in ported code become ``pf.int64`` /
``pf.string``. Strings are ``bytes`` in object arrays (``pf.string``), as ``tensor.numpy()`` gives them."""

import numpy as np

from parafeed.values.structure import STRING

bool = np.dtype(np.bool_)  # tf.bool
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
float16 = np.dtype(np.float16)
half = float16
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
double = float64
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
string = STRING

NAMES = ("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16", "half",
         "float32", "float64", "double", "complex64", "complex128", "string")  # fmt: skip

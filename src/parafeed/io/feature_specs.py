"""tf.io's feature specs for parsing tf.train.Example: ``FixedLenFeature``, ``VarLenFeature`` and
``FixedLenSequenceFeature`` (``RaggedFeature`` is in ``ragged_feature.py``), and the dtypes a feature holds."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import STRING, as_dtype, as_shape

FEATURE_DTYPES = ("string", "float32", "int64")  # what a tf.train.Example holds


def feature_dtype(dtype: Any) -> str:
    """``dtype`` as a feature dtype name: "float32", "int64" or "string"."""
    if isinstance(dtype, str) and dtype in FEATURE_DTYPES:
        return dtype
    dt = as_dtype(dtype)
    name = "string" if dt == STRING else dt.name
    if name not in FEATURE_DTYPES:
        raise InvalidArgumentError(
            f"feature dtype must be float32, int64 or string (what a tf.train.Example holds), got {dtype!r}"
        )
    return name


@dataclass(frozen=True)
class FixedLenFeature:
    """A feature with a fixed number of values, parsed into an array of ``shape`` (like tf.io.FixedLenFeature)."""

    shape: Any
    dtype: Any
    default_value: Any = None
    size: int = field(init=False, repr=False, compare=False)  # values per example (set by __post_init__)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", as_shape(self.shape) or ())
        object.__setattr__(self, "dtype", feature_dtype(self.dtype))
        if None in self.shape:
            raise InvalidArgumentError(f"FixedLenFeature: shape must be fully defined, got {self.shape}")

        object.__setattr__(self, "size", math.prod(self.shape))  # values per example


@dataclass(frozen=True)
class VarLenFeature:
    """A feature with any number of values, parsed into a :class:`SparseTensor` (like tf.io.VarLenFeature)."""

    dtype: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", feature_dtype(self.dtype))


@dataclass(frozen=True)
class FixedLenSequenceFeature:
    """A feature holding a sequence of ``shape``-sized items, parsed into ``(length, *shape)`` arrays padded to the
    batch's longest with ``default_value`` (like tf.io.FixedLenSequenceFeature)."""

    shape: Any
    dtype: Any
    allow_missing: bool = False
    default_value: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", as_shape(self.shape) or ())
        object.__setattr__(self, "dtype", feature_dtype(self.dtype))


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a feature dtype name."""
    return STRING if name == "string" else np.dtype(name)

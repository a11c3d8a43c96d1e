"""``SparseTensor``: the sparse values of a ``VarLenFeature``, as ``tf.sparse.SparseTensor`` gives them."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.structure import STRING, dtype_name


class SparseTensorSpec:
    """Spec of a :class:`SparseTensor` leaf: the dense shape (``None`` where unknown) and the values' dtype."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: tuple, dtype: np.dtype):
        self.shape = shape
        self.dtype = dtype

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SparseTensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"SparseTensorSpec(shape={self.shape}, dtype={dtype_name(self.dtype)})"


class SparseTensor:
    """A sparse tensor: ``values[k]`` sits at ``indices[k]`` in a dense tensor of ``dense_shape``.

    Args:
        indices: int64 array of shape (N, rank).
        values: array of shape (N,).
        dense_shape: int64 array of shape (rank,).
    """

    __slots__ = ("dense_shape", "indices", "values")

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self.indices = np.asarray(indices, dtype=np.int64).reshape(-1, len(dense_shape))
        self.values = values if isinstance(values, np.ndarray) else np.asarray(values)
        self.dense_shape = np.asarray(dense_shape, dtype=np.int64)

    def to_dense(self, default_value: Any = None) -> np.ndarray:
        """The dense array, ``default_value`` (0 or b"") where no value is given."""
        dtype = self.values.dtype
        fill = (b"" if dtype == STRING else 0) if default_value is None else default_value
        out = np.full(tuple(self.dense_shape), fill, dtype=dtype)
        if len(self.values):
            out[tuple(self.indices.T)] = self.values
        return out

    def _leaf_spec(self) -> SparseTensorSpec:
        return SparseTensorSpec(tuple(int(d) for d in self.dense_shape), self.values.dtype)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SparseTensor)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.dense_shape, other.dense_shape)
            and self.values.dtype == other.values.dtype
            and np.array_equal(self.values, other.values)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SparseTensor(indices={self.indices.tolist()}, values={self.values.tolist()}, "
            f"dense_shape={self.dense_shape.tolist()})"
        )

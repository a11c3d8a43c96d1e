"""``RaggedTensorSpec``: the spec of a :class:`~parafeed.RaggedTensor` leaf, and the row splits' dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import (
    as_dtype,
    as_shape,
    dtype_name,
    most_specific_compatible_shape,
    shape_compatible,
    shape_str,
)

SPLITS_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def splits_dtype(dtype: Any, what: str = "row_splits_dtype") -> np.dtype:
    """``dtype`` as a row-splits dtype (int32 or int64)."""
    dt = as_dtype(dtype)
    if dt not in SPLITS_DTYPES:
        raise InvalidArgumentError(f"{what} must be int32 or int64, got {dtype!r}")
    return dt


class RaggedTensorSpec:
    """Spec of a :class:`RaggedTensor` leaf (like ``tf.RaggedTensorSpec``): shape with ``None`` for ragged
    dimensions, dtype, ragged rank (the number of ragged dimensions) and the row splits' dtype.

    A spec with ``ragged_rank=0`` describes plain arrays that tf.data treats as ragged: batching them gives a
    RaggedTensor (as for the rows of ``from_tensor_slices`` of a RaggedTensor).
    """

    __slots__ = ("dtype", "ragged_rank", "row_splits_dtype", "shape")

    def __init__(self, shape: Any = None, dtype: Any = np.float32, ragged_rank: int | None = None,
                 row_splits_dtype: Any = np.int64):  # fmt: skip
        self.shape = as_shape(shape)
        self.dtype = as_dtype(dtype)
        if ragged_rank is None:
            if self.shape is None:
                raise InvalidArgumentError("RaggedTensorSpec: give `ragged_rank` when the shape's rank is unknown")
            ragged_rank = len(self.shape) - 1
        if self.shape is not None and not 0 <= ragged_rank < max(len(self.shape), 1):
            raise InvalidArgumentError(
                f"RaggedTensorSpec: ragged_rank must be >= 0 and < rank {len(self.shape)}, got {ragged_rank}"
            )
        self.ragged_rank = int(ragged_rank)
        self.row_splits_dtype = splits_dtype(row_splits_dtype)

    def is_compatible_with(self, other: Any) -> bool:
        """Whether ``other`` (a spec or a :class:`RaggedTensor`) has this dtype, ragged rank and a compatible shape."""
        if not isinstance(other, RaggedTensorSpec) and hasattr(other, "_leaf_spec"):  # a RaggedTensor
            other = other._leaf_spec()
        return (
            isinstance(other, RaggedTensorSpec)
            and (self.dtype, self.ragged_rank, self.row_splits_dtype)
            == (other.dtype, other.ragged_rank, other.row_splits_dtype)
            and shape_compatible(self.shape, other.shape)
        )

    def most_specific_compatible(self, other: RaggedTensorSpec) -> RaggedTensorSpec:
        shape = most_specific_compatible_shape(self.shape, other.shape)
        return RaggedTensorSpec(shape, self.dtype, self.ragged_rank, self.row_splits_dtype)

    def _batch(self, batch_size: int | None) -> RaggedTensorSpec:
        shape = None if self.shape is None else (batch_size, *self.shape)
        return RaggedTensorSpec(shape, self.dtype, self.ragged_rank + 1, self.row_splits_dtype)

    def _unbatch(self, step: str = "unbatch()") -> Any:
        from parafeed.values.structure import TensorSpec

        if self.shape is not None and len(self.shape) == 0:
            raise InvalidArgumentError(f"{step}: cannot unbatch a scalar, got {self!r}")
        shape = None if self.shape is None else self.shape[1:]
        if self.ragged_rank == 0:
            return TensorSpec(shape, self.dtype)
        return RaggedTensorSpec(shape, self.dtype, self.ragged_rank - 1, self.row_splits_dtype)

    def _key(self) -> tuple[Any, ...]:
        return (self.shape, self.dtype, self.ragged_rank, self.row_splits_dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RaggedTensorSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RaggedTensorSpec(shape={shape_str(self.shape)}, dtype={dtype_name(self.dtype)}, "
            f"ragged_rank={self.ragged_rank}, row_splits_dtype={self.row_splits_dtype.name})"
        )

"""``SparseTensor`` and ``SparseTensorSpec``: sparse elements as ``tf.sparse.SparseTensor`` gives them, and how
``batch``, ``unbatch`` and ``rebatch`` stack and split them.

A batch of sparse tensors is one sparse tensor of rank + 1: every index is prefixed by its row in the batch, and the
dense shape is the batch size followed by the largest size of each dimension, as tf.data batches them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.values.elements import to_leaf
from parafeed.values.structure import (
    STRING,
    as_dtype,
    as_shape,
    dtype_name,
    map_structure,
    shape_compatible,
    shape_str,
)


class SparseTensorSpec:
    """Spec of a :class:`SparseTensor` leaf: its dense shape (``None`` where unknown) and its values' dtype.

    Example:
        >>> pf.SparseTensorSpec(shape=(None, 3), dtype="int64")
        SparseTensorSpec(shape=(None, 3), dtype=int64)
    """

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: Any = None, dtype: Any = np.float32):
        self.shape = as_shape(shape)
        self.dtype = as_dtype(dtype)

    @property
    def value_type(self) -> type:
        """The type of the values this spec describes: :class:`SparseTensor`."""
        return SparseTensor

    @classmethod
    def from_value(cls, value: SparseTensor) -> SparseTensorSpec:
        return cls(tuple(int(d) for d in value.dense_shape), value.values.dtype)

    def is_compatible_with(self, other: Any) -> bool:
        """Whether ``other`` (a spec or a :class:`SparseTensor`) has this dtype and a compatible dense shape."""
        if isinstance(other, SparseTensor):
            other = SparseTensorSpec.from_value(other)
        return (
            isinstance(other, SparseTensorSpec)
            and self.dtype == other.dtype
            and shape_compatible(self.shape, other.shape)
        )

    def most_specific_compatible(self, other: SparseTensorSpec) -> SparseTensorSpec:
        if self.shape is None or other.shape is None or len(self.shape) != len(other.shape):
            return SparseTensorSpec(None, self.dtype)
        return SparseTensorSpec(tuple(a if a == b else None for a, b in zip(self.shape, other.shape)), self.dtype)

    def _batch(self, batch_size: int | None) -> SparseTensorSpec:
        return SparseTensorSpec(None if self.shape is None else (batch_size, *self.shape), self.dtype)

    def _unbatch(self, step: str) -> SparseTensorSpec:
        if self.shape is not None and len(self.shape) == 0:
            raise InvalidArgumentError(
                f"{step}: unbatching a SparseTensor needs rank >= 1, got a sparse scalar (dense shape ())"
            )
        return SparseTensorSpec(None if self.shape is None else self.shape[1:], self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SparseTensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"SparseTensorSpec(shape={shape_str(self.shape)}, dtype={dtype_name(self.dtype)})"


class SparseTensor:
    """A sparse tensor: ``values[k]`` sits at ``indices[k]`` in a dense tensor of ``dense_shape``.

    Values convert as ``tf.sparse.SparseTensor`` converts them: Python ints give int32 (int64 when they do not fit),
    Python floats float32, NumPy arrays keep their dtype; indices and the dense shape are int64.

    Args:
        indices: integers of shape (N, rank).
        values: N values, shape (N,).
        dense_shape: rank integers.

    Example:
        >>> st = pf.SparseTensor(indices=[[0, 1], [2, 0]], values=[7, 8], dense_shape=[3, 2])
        >>> st.to_dense().tolist()
        [[0, 7], [0, 0], [8, 0]]
    """

    __slots__ = ("dense_shape", "indices", "values")

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self.indices = _int64(indices, "indices", 2)
        self.values = _values(values)
        self.dense_shape = _int64(dense_shape, "dense_shape", 1)
        n, rank = self.indices.shape
        if n != len(self.values) or rank != len(self.dense_shape):
            raise InvalidArgumentError(
                f"SparseTensor: indices of shape {shape_str(self.indices.shape)} need {n} values and a dense_shape "
                f"of {rank} dimensions, got {len(self.values)} values and dense_shape {self.dense_shape.tolist()}"
            )

    @classmethod
    def _trusted(cls, indices: np.ndarray, values: np.ndarray, dense_shape: np.ndarray) -> SparseTensor:
        """A sparse tensor from arrays already of the right dtypes and shapes (no checks, no copies)."""
        out = object.__new__(cls)
        out.indices, out.values, out.dense_shape = indices, values, dense_shape
        return out

    @property
    def dtype(self) -> np.dtype:
        """The values' dtype."""
        return self.values.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        """The dense shape, as a tuple."""
        return tuple(int(d) for d in self.dense_shape)

    def to_dense(self, default_value: Any = None) -> np.ndarray:
        """The dense array, ``default_value`` (0 or b"") where no value is given."""
        dtype = self.values.dtype
        fill = (b"" if dtype == STRING else 0) if default_value is None else default_value
        out = np.full(tuple(self.dense_shape), fill, dtype=dtype)
        if len(self.values):
            out[tuple(self.indices.T)] = self.values
        return out

    def _leaf_spec(self) -> SparseTensorSpec:
        return SparseTensorSpec.from_value(self)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SparseTensor)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.dense_shape, other.dense_shape)
            and self.values.dtype == other.values.dtype
            and np.array_equal(self.values, other.values)
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable, as __eq__ compares values (typeshed's is a method)

    def __repr__(self) -> str:
        return (
            f"SparseTensor(indices={self.indices.tolist()}, values={self.values.tolist()}, "
            f"dense_shape={self.dense_shape.tolist()})"
        )


def _int64(value: Any, what: str, rank: int) -> np.ndarray:
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if arr.dtype != np.int64:
        if arr.size and arr.dtype.kind not in "iub":
            raise ElementTypeError(f"SparseTensor: `{what}` must be integers, got dtype {arr.dtype}: {value!r:.80}")
        arr = arr.astype(np.int64)
    if arr.ndim != rank:
        raise InvalidArgumentError(
            f"SparseTensor: `{what}` must have rank {rank}, got shape {shape_str(arr.shape)}: {value!r:.80}"
        )
    return arr


def _values(values: Any) -> np.ndarray:
    if isinstance(values, (list, tuple)) and any(isinstance(v, (np.generic, np.ndarray)) for v in values):
        values = np.array(values)  # NumPy scalars stand for tensors: they keep their dtype, as in a tf.function
    if type(values) is not np.ndarray:
        values = to_leaf(list(values) if isinstance(values, tuple) else values, "SparseTensor values")
    if not isinstance(values, np.ndarray) or values.ndim != 1:
        raise InvalidArgumentError(f"SparseTensor: `values` must have rank 1, got {values!r:.80}")
    if values.dtype.kind in "US":
        strings: np.ndarray = to_leaf(values, "SparseTensor values")
        return strings
    return values


# ------------------------------------------------------------------------------------ batching and unbatching


def stack_sparse(tensors: list[Any], step: str, component: str = "0") -> SparseTensor:
    """One sparse tensor of rank + 1 from same-rank sparse tensors (the ``batch`` of sparse elements)."""
    first = tensors[0]
    rank, dtype = len(first.dense_shape), first.values.dtype
    for i, st in enumerate(tensors):
        if not isinstance(st, SparseTensor):
            raise ElementTypeError(
                f"{step}: component {component} of element {i} is {type(st).__name__}, but the first element of "
                "the batch has a SparseTensor there"
            )
        if len(st.dense_shape) != rank:
            raise InvalidArgumentError(
                f"{step}: cannot batch SparseTensors of different ranks in component {component}: the first element "
                f"had rank {rank} and element {i} had rank {len(st.dense_shape)}"
            )
        if st.values.dtype != dtype:
            raise ElementTypeError(
                f"{step}: component {component} of element {i} has dtype {dtype_name(st.values.dtype)}, but the "
                f"first element of the batch has {dtype_name(dtype)}"
            )
    counts = [len(st.values) for st in tensors]
    rows = np.repeat(np.arange(len(tensors), dtype=np.int64), counts)
    inner = np.concatenate([st.indices for st in tensors]) if tensors else np.zeros((0, rank), np.int64)
    indices = np.concatenate([rows[:, None], inner.reshape(-1, rank)], axis=1)
    values = np.concatenate([st.values for st in tensors])
    dims = np.max(np.stack([st.dense_shape for st in tensors]), axis=0) if rank else np.zeros(0, np.int64)
    dense_shape = np.concatenate([np.array([len(tensors)], np.int64), dims.astype(np.int64)])
    return SparseTensor._trusted(indices, values, dense_shape)


def sparse_rows(st: SparseTensor, step: str) -> list[SparseTensor]:
    """The rows of a sparse tensor of rank >= 2, each a sparse tensor of rank - 1 (the ``unbatch`` of it)."""
    rank = len(st.dense_shape)
    if rank < 2:
        raise InvalidArgumentError(
            f"{step}: cannot unbatch a SparseTensor of rank {rank} (dense shape {st.dense_shape.tolist()}): its "
            "rows would be sparse scalars, which tf.data cannot produce; give it rank >= 2 or unbatch its values "
            "with to_dense() in a map() first"
        )
    rows = split_sparse(st, [1] * int(st.dense_shape[0]))
    return [SparseTensor._trusted(r.indices[:, 1:], r.values, r.dense_shape[1:]) for r in rows]


def split_sparse(st: SparseTensor, sizes: list[int]) -> list[SparseTensor]:
    """``st`` cut along its first dimension into pieces of ``sizes`` rows (the rank is kept)."""
    order = np.argsort(st.indices[:, 0], kind="stable")
    indices, values = st.indices[order], st.values[order]
    bounds = np.cumsum([0, *sizes])
    cuts = np.searchsorted(indices[:, 0], bounds)
    out = []
    for k, size in enumerate(sizes):
        lo, hi = cuts[k], cuts[k + 1]
        piece = indices[lo:hi].copy()
        piece[:, 0] -= bounds[k]
        shape = st.dense_shape.copy()
        shape[0] = size
        out.append(SparseTensor._trusted(piece, values[lo:hi], shape))
    return out


def concat_sparse(pieces: list[SparseTensor]) -> SparseTensor:
    """Sparse tensors of the same rank joined along their first dimension (other dimensions: the largest)."""
    offsets = np.cumsum([0] + [int(p.dense_shape[0]) for p in pieces[:-1]])
    indices = np.concatenate([p.indices + np.eye(1, p.indices.shape[1], dtype=np.int64) * o
                              for p, o in zip(pieces, offsets)])  # fmt: skip
    values = np.concatenate([p.values for p in pieces])
    shapes = np.stack([p.dense_shape for p in pieces])
    dense_shape = np.concatenate([[shapes[:, 0].sum()], shapes[:, 1:].max(axis=0)]).astype(np.int64)
    return SparseTensor._trusted(indices, values, dense_shape)


def densify(element: Any) -> Any:
    """The element with every :class:`SparseTensor` leaf as its dense array (what ``as_numpy_iterator`` gives)."""
    return map_structure(lambda leaf: leaf.to_dense() if isinstance(leaf, SparseTensor) else leaf, element)


def conform_sparse(value: Any, spec: SparseTensorSpec, what: str) -> SparseTensor:
    """``value`` (a SparseTensor, or TensorFlow's SparseTensor / SparseTensorValue) as a :class:`SparseTensor` of
    ``spec``'s dtype and a compatible dense shape."""
    if not all(hasattr(value, f) for f in ("indices", "values", "dense_shape")):
        raise ElementTypeError(f"{what} {value!r:.80}, where a SparseTensor of {spec!r} was expected")
    fields = [
        np.asarray(f.numpy() if hasattr(f, "numpy") else f) for f in (value.indices, value.values, value.dense_shape)
    ]
    values = fields[1]
    try:
        values = values.astype(spec.dtype) if spec.dtype != STRING else to_leaf(values.astype(object), what)
    except (TypeError, ValueError):
        raise ElementTypeError(f"{what} with values of dtype {values.dtype}, where {spec!r} was expected") from None
    st = SparseTensor(fields[0], values, fields[2])
    if not shape_compatible(spec.shape, st.shape):
        raise ElementTypeError(f"{what} of dense shape {shape_str(st.shape)}, where {spec!r} was expected")
    return st

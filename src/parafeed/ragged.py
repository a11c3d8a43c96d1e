"""``RaggedTensor``: rows of different lengths, as ``tf.RaggedTensor`` holds them (values and row splits).

Also ``constant`` (``pf.ragged.constant``, like ``tf.ragged.constant``) and the stacking that batches ragged
components (used by ``batch``, ``ragged_batch`` and ``parse_example``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.structure import (
    STRING,
    as_dtype,
    as_shape,
    dtype_name,
    flatten,
    map_structure,
    most_specific_compatible_shape,
    shape_compatible,
    shape_str,
)

_SPLITS_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def splits_dtype(dtype: Any, what: str = "row_splits_dtype") -> np.dtype:
    """``dtype`` as a row-splits dtype (int32 or int64)."""
    dt = as_dtype(dtype)
    if dt not in _SPLITS_DTYPES:
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
        if isinstance(other, RaggedTensor):
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
        from parafeed.structure import TensorSpec

        if self.shape is not None and len(self.shape) == 0:
            raise InvalidArgumentError(f"{step}: cannot unbatch a scalar, got {self!r}")
        shape = None if self.shape is None else self.shape[1:]
        if self.ragged_rank == 0:
            return TensorSpec(shape, self.dtype)
        return RaggedTensorSpec(shape, self.dtype, self.ragged_rank - 1, self.row_splits_dtype)

    def _key(self) -> tuple:
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


def _as_values(values: Any, what: str) -> Any:
    if isinstance(values, RaggedTensor):
        return values
    from parafeed.elements import to_leaf

    arr = to_leaf(values, what) if not isinstance(values, np.ndarray) or values.dtype.kind in "USO" else values
    if not isinstance(arr, np.ndarray) or arr.ndim == 0:
        raise InvalidArgumentError(f"{what}: values must have rank >= 1, got {values!r:.80}")
    return arr


def _as_partition(x: Any, what: str, dtype: Any = None) -> np.ndarray:
    arr = np.asarray(x)
    if dtype is not None:
        arr = arr.astype(splits_dtype(dtype))
    elif arr.dtype not in _SPLITS_DTYPES:
        if arr.size and arr.dtype.kind not in "iu":
            raise InvalidArgumentError(f"{what} must hold integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64)
    if arr.ndim != 1:
        raise InvalidArgumentError(f"{what} must be 1-D, got shape {arr.shape}")
    return arr


def _nvals(values: Any) -> int:
    return values.nrows() if isinstance(values, RaggedTensor) else len(values)


class RaggedTensor:
    """Rows of different lengths: row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``; ``values`` is an array
    or itself a RaggedTensor (more ragged dimensions). What ``tf.RaggedTensor`` is, on NumPy.

    Build one with ``from_row_splits``, ``from_row_lengths``, ``from_value_rowids``, ``from_nested_row_splits`` or
    :func:`constant`.

    Example:
        >>> rt = pf.RaggedTensor.from_row_lengths([1, 2, 3], [2, 0, 1])
        >>> rt.to_list()
        [[1, 2], [], [3]]
    """

    __slots__ = ("row_splits", "values")

    def __init__(self, values: Any, row_splits: np.ndarray):
        self.values = values
        self.row_splits = row_splits

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, validate: bool = True) -> RaggedTensor:
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``."""
        values = _as_values(values, "RaggedTensor.from_row_splits()")
        splits = _as_partition(row_splits, "row_splits")
        if validate:
            if len(splits) == 0 or splits[0] != 0:
                raise InvalidArgumentError(f"RaggedTensor: row_splits must start with 0, got {splits.tolist()}")
            if (np.diff(splits) < 0).any():
                raise InvalidArgumentError(f"RaggedTensor: row_splits must be sorted, got {splits.tolist()}")
            if splits[-1] != _nvals(values):
                raise InvalidArgumentError(
                    f"RaggedTensor: the last row split ({int(splits[-1])}) must equal the number of values "
                    f"({_nvals(values)})"
                )
        return cls(values, splits)

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, validate: bool = True) -> RaggedTensor:
        """Rows of ``row_lengths[i]`` consecutive values."""
        lengths = _as_partition(row_lengths, "row_lengths")
        if validate and (lengths < 0).any():
            raise InvalidArgumentError(f"RaggedTensor: row_lengths must be >= 0, got {lengths.tolist()}")
        splits = np.concatenate([np.zeros(1, lengths.dtype), np.cumsum(lengths, dtype=lengths.dtype)])
        return cls.from_row_splits(values, splits, validate)

    @classmethod
    def from_row_starts(cls, values: Any, row_starts: Any, validate: bool = True) -> RaggedTensor:
        """Rows starting at ``row_starts[i]`` (the last one ending with the values)."""
        starts = _as_partition(row_starts, "row_starts")
        end = np.array([_nvals(_as_values(values, "RaggedTensor.from_row_starts()"))], starts.dtype)
        return cls.from_row_splits(values, np.concatenate([starts, end]), validate)

    @classmethod
    def from_row_limits(cls, values: Any, row_limits: Any, validate: bool = True) -> RaggedTensor:
        """Rows ending at ``row_limits[i]``."""
        limits = _as_partition(row_limits, "row_limits")
        return cls.from_row_splits(values, np.concatenate([np.zeros(1, limits.dtype), limits]), validate)

    @classmethod
    def from_value_rowids(cls, values: Any, value_rowids: Any, nrows: int | None = None,
                          validate: bool = True) -> RaggedTensor:  # fmt: skip
        """Value ``j`` in row ``value_rowids[j]`` (sorted); ``nrows`` defaults to the last row id + 1."""
        ids = _as_partition(value_rowids, "value_rowids")
        if validate and ((ids < 0).any() or (np.diff(ids) < 0).any()):
            raise InvalidArgumentError(f"RaggedTensor: value_rowids must be sorted and >= 0, got {ids.tolist()}")
        n = (int(ids[-1]) + 1 if len(ids) else 0) if nrows is None else int(nrows)
        lengths = np.bincount(ids, minlength=n).astype(ids.dtype) if len(ids) else np.zeros(n, ids.dtype)
        return cls.from_row_lengths(values, lengths[:n] if len(lengths) > n else lengths, validate)

    @classmethod
    def from_nested_row_splits(cls, flat_values: Any, nested_row_splits: Any, validate: bool = True) -> RaggedTensor:
        """Several ragged dimensions at once: ``nested_row_splits`` from the outermost."""
        if not len(nested_row_splits):
            raise InvalidArgumentError("RaggedTensor.from_nested_row_splits(): give at least one row_splits")
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values: Any, nested_row_lengths: Any, validate: bool = True) -> RaggedTensor:
        """Several ragged dimensions at once: ``nested_row_lengths`` from the outermost."""
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate)
        return result

    @classmethod
    def from_tensor(cls, tensor: Any, lengths: Any = None, ragged_rank: int = 1,
                    row_splits_dtype: Any = np.int64) -> RaggedTensor:  # fmt: skip
        """A dense array as a RaggedTensor with uniform rows (``lengths`` keeps each row's first ``lengths[i]``
        items; only with ``ragged_rank=1``)."""
        arr = _as_values(tensor, "RaggedTensor.from_tensor()")
        if not 0 < ragged_rank < arr.ndim:
            raise InvalidArgumentError(
                f"RaggedTensor.from_tensor(): ragged_rank must be > 0 and < rank {arr.ndim}, got {ragged_rank}"
            )
        if lengths is None:
            return from_dense(arr, ragged_rank, splits_dtype(row_splits_dtype))
        if ragged_rank != 1:
            raise InvalidArgumentError("RaggedTensor.from_tensor(): `lengths` is supported with ragged_rank=1 only")
        lengths = np.minimum(_as_partition(lengths, "lengths", row_splits_dtype), arr.shape[1])
        keep = np.arange(arr.shape[1])[None, :] < lengths[:, None]
        return cls.from_row_lengths(arr[keep], lengths)

    # ------------------------------------------------------------------ properties

    @property
    def flat_values(self) -> np.ndarray:
        values = self.values
        while isinstance(values, RaggedTensor):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple[np.ndarray, ...]:
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_splits)
            rt = rt.values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> np.dtype:
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> np.dtype:
        return self.row_splits.dtype

    @property
    def shape(self) -> tuple:
        """``(nrows, None, ..., *uniform inner dimensions)``: ``None`` for every ragged dimension."""
        return (self.nrows(), *[None] * self.ragged_rank, *self.flat_values.shape[1:])

    def nrows(self) -> int:
        return len(self.row_splits) - 1

    def row_lengths(self) -> np.ndarray:
        """The length of every row (of the outermost ragged dimension)."""
        return np.diff(self.row_splits)

    def row_starts(self) -> np.ndarray:
        return self.row_splits[:-1]

    def row_limits(self) -> np.ndarray:
        return self.row_splits[1:]

    def value_rowids(self) -> np.ndarray:
        """The row of every value."""
        return np.repeat(np.arange(self.nrows(), dtype=self.row_splits.dtype), self.row_lengths())

    def with_values(self, values: Any) -> RaggedTensor:
        return RaggedTensor.from_row_splits(values, self.row_splits)

    def with_flat_values(self, flat_values: Any) -> RaggedTensor:
        return RaggedTensor.from_nested_row_splits(flat_values, self.nested_row_splits)

    # ------------------------------------------------------------------ conversions

    def to_list(self) -> list:
        """Nested Python lists of the values (as ``tf.RaggedTensor.to_list``)."""
        values = self.values.to_list() if isinstance(self.values, RaggedTensor) else self.values.tolist()
        s = self.row_splits.tolist()
        return [values[s[i] : s[i + 1]] for i in range(len(s) - 1)]

    def to_tensor(self, default_value: Any = None, shape: Any = None) -> np.ndarray:
        """A dense array padded with ``default_value`` (0 or b"") to the longest rows, or to ``shape`` (``None``
        dimensions: the longest; smaller dimensions crop)."""
        inner = self.values.to_tensor(default_value) if isinstance(self.values, RaggedTensor) else self.values
        lengths = self.row_lengths()
        width = int(lengths.max()) if len(lengths) else 0
        fill = (b"" if inner.dtype == STRING else 0) if default_value is None else default_value
        out = np.full((self.nrows(), width, *inner.shape[1:]), fill, dtype=inner.dtype)
        rows = np.repeat(np.arange(self.nrows()), lengths)
        cols = np.arange(len(rows)) - np.repeat(self.row_splits[:-1], lengths)
        out[rows, cols] = inner[self.row_splits[0] : self.row_splits[-1]]
        if shape is None:
            return out
        want = as_shape(shape)
        if want is None or len(want) != out.ndim:
            raise InvalidArgumentError(f"RaggedTensor.to_tensor(): shape {shape!r} must have rank {out.ndim}")
        target = tuple(o if w is None else w for o, w in zip(out.shape, want))
        result = np.full(target, fill, dtype=out.dtype)
        common = tuple(slice(0, min(a, b)) for a, b in zip(out.shape, target))
        result[common] = out[common]
        return result

    def numpy(self) -> np.ndarray:
        """What ``tf.RaggedTensor.numpy()`` (and tf.data's ``as_numpy_iterator``) gives: an object array of rows
        when their lengths differ, a plain array when they are equal."""
        values = self.values.numpy() if isinstance(self.values, RaggedTensor) else self.values
        s = self.row_splits
        rows = [values[s[i] : s[i + 1]] for i in range(len(s) - 1)]
        if not rows:
            return np.zeros((0, 0, *values.shape[1:]), dtype=values.dtype)
        if any(len(r) != len(rows[0]) for r in rows):
            out = np.empty(len(rows), dtype=object)
            out[:] = rows
            return out
        return np.array(rows)

    # ------------------------------------------------------------------ rows

    def __len__(self) -> int:
        return self.nrows()

    def __getitem__(self, index: Any) -> Any:
        """Row ``index`` (an array, or a RaggedTensor with one ragged dimension less), or rows ``start:stop``."""
        n = self.nrows()
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                raise InvalidArgumentError("RaggedTensor: row slices must have step 1")
            stop = max(start, stop)
            a, b = self.row_splits[start], self.row_splits[stop]
            return RaggedTensor(_rows_of(self.values, a, b), self.row_splits[start : stop + 1] - a)
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise InvalidArgumentError(f"RaggedTensor: index rows with an int or a slice, got {index!r:.40}")
        i = int(index) + n if index < 0 else int(index)
        if not 0 <= i < n:
            raise IndexError(f"RaggedTensor: row {index} out of range for {n} rows")
        return _rows_of(self.values, self.row_splits[i], self.row_splits[i + 1])

    def __iter__(self) -> Any:
        return (self[i] for i in range(self.nrows()))

    # ------------------------------------------------------------------ element protocol

    def _leaf_spec(self) -> RaggedTensorSpec:
        return RaggedTensorSpec(self.shape, self.dtype, self.ragged_rank, self.row_splits.dtype)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RaggedTensor):
            return False
        mine, theirs = self.nested_row_splits, other.nested_row_splits
        return (
            len(mine) == len(theirs)
            and all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(mine, theirs))
            and self.dtype == other.dtype
            and self.flat_values.shape == other.flat_values.shape
            and np.array_equal(self.flat_values, other.flat_values)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<pf.RaggedTensor {self.to_list()!r:.300}>"


def _rows_of(values: Any, start: Any, stop: Any) -> Any:
    return values[int(start) : int(stop)]


# --------------------------------------------------------------------------------------------------- building


def constant(pylist: Any, dtype: Any = None, ragged_rank: int | None = None,
             row_splits_dtype: Any = np.int64) -> Any:  # fmt: skip
    """A RaggedTensor from nested Python lists (like ``tf.ragged.constant``; ints give int32, floats float32); an
    array when nothing is ragged (a flat list, or ``ragged_rank=0``), as tf.ragged.constant gives a Tensor.

    Example:
        >>> pf.ragged.constant([[1, 2], [3]]).row_splits
        array([0, 2, 3])
    """
    depth = _depth(pylist)
    rank = depth - 1 if ragged_rank is None else int(ragged_rank)
    if rank == 0 and depth >= 1:  # nothing ragged: a plain array, as tf.ragged.constant gives a Tensor
        from parafeed.elements import to_leaf

        flat = to_leaf(_plain(pylist), "ragged.constant()")
        return flat if dtype is None else flat.astype(as_dtype(dtype))
    if depth < 2 or not 0 < rank < depth:
        raise InvalidArgumentError(
            f"ragged.constant(): need nested lists deeper than ragged_rank ({ragged_rank}), got depth {depth}"
        )
    dtype_s = splits_dtype(row_splits_dtype)
    rows, splits = _as_list(pylist), []
    for _ in range(rank):
        lengths = [len(_as_list(r)) for r in rows]
        splits.append(np.concatenate([[0], np.cumsum(lengths)]).astype(dtype_s))
        rows = [x for r in rows for x in _as_list(r)]
    if rows:
        from parafeed.elements import to_leaf

        flat = to_leaf([_plain(r) for r in rows], "ragged.constant()")
    else:
        flat = np.zeros((0,) * (depth - rank), np.float32)
    if dtype is not None:
        flat = np.asarray(flat).astype(as_dtype(dtype))
    return RaggedTensor.from_nested_row_splits(flat, splits)


def _as_list(x: Any) -> list:
    if isinstance(x, np.ndarray):
        return list(x)
    if not isinstance(x, (list, tuple)):
        raise InvalidArgumentError(f"ragged.constant(): expected a list at this depth, got {x!r:.60}")
    return list(x)


def _plain(x: Any) -> Any:
    return [_plain(v) for v in x] if isinstance(x, (list, tuple)) else x


def _depth(x: Any) -> int:
    if isinstance(x, np.ndarray):
        return x.ndim
    if isinstance(x, (list, tuple)):
        return 1 + max((_depth(v) for v in x), default=0)
    return 0


def from_dense(arr: np.ndarray, ragged_rank: int, row_splits_dtype: np.dtype) -> Any:
    """``arr`` with its first ``ragged_rank + 1`` dimensions as rows of uniform length (0: ``arr`` itself)."""
    if ragged_rank == 0:
        return arr
    shape = arr.shape
    flat = arr.reshape((math.prod(shape[: ragged_rank + 1]), *shape[ragged_rank + 1 :]))
    splits = [
        np.arange(math.prod(shape[: k + 1]) + 1, dtype=row_splits_dtype) * shape[k + 1] for k in range(ragged_rank)
    ]
    return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)


def stack(leaves: list, row_splits_dtype: np.dtype | None, step: str, component: str = "0") -> RaggedTensor:
    """Batch ``leaves`` (RaggedTensors of one ragged rank, or arrays: ragged rank 0) into a RaggedTensor with one
    more ragged dimension; new row splits are ``row_splits_dtype`` (for arrays) or the leaves' own."""
    nested = [leaf.nested_row_splits if isinstance(leaf, RaggedTensor) else () for leaf in leaves]
    flats = [leaf.flat_values if isinstance(leaf, RaggedTensor) else leaf for leaf in leaves]
    first, rank = flats[0], len(nested[0])
    for i, (splits, flat) in enumerate(zip(nested, flats)):
        if not isinstance(flat, np.ndarray) or flat.ndim == 0:
            raise InvalidArgumentError(f"{step}: component {component} of element {i} is a scalar, not a row")
        if len(splits) != rank or flat.shape[1:] != first.shape[1:] or flat.dtype != first.dtype:
            raise InvalidArgumentError(
                f"{step}: cannot batch component {component} into a RaggedTensor: element 0 has ragged rank {rank}, "
                f"inner shape {shape_str(first.shape[1:])} and dtype {dtype_name(first.dtype)}, element {i} has "
                f"ragged rank {len(splits)}, inner shape {shape_str(flat.shape[1:])} and dtype "
                f"{dtype_name(flat.dtype)}; only the ragged dimensions may differ"
            )
    dtype = nested[0][0].dtype if rank else row_splits_dtype
    counts = [len(s[0]) - 1 if rank else len(f) for s, f in zip(nested, flats)]
    levels = [np.concatenate([[0], np.cumsum(counts)]).astype(dtype)]
    for k in range(rank):
        levels.append(_concat_splits([s[k] for s in nested]).astype(dtype, copy=False))
    values = np.concatenate(flats) if len(flats) > 1 else flats[0]
    return RaggedTensor.from_nested_row_splits(values, levels, validate=False)


def _concat_splits(parts: list) -> np.ndarray:
    """Splits of consecutive pieces joined: each piece's splits shifted by the values before it."""
    out = [parts[0][:1] * 0]
    offset = 0
    for p in parts:
        out.append(p[1:] - p[0] + offset)
        offset += int(p[-1] - p[0])
    return np.concatenate(out)


def has_ragged(structure: Any) -> bool:
    """Whether a (nested) value holds a RaggedTensor (parafeed's or TensorFlow's) leaf."""
    return any(isinstance(leaf, RaggedTensor) or _is_tf_ragged(leaf) for leaf in flatten(structure))


def _is_tf_ragged(value: Any) -> bool:
    return (
        type(value).__name__ == "RaggedTensor"
        and not isinstance(value, RaggedTensor)
        and hasattr(value, "nested_row_splits")
    )


def from_tf(structure: Any) -> Any:
    """``structure`` with TensorFlow RaggedTensors made parafeed RaggedTensors (ported code passes them)."""

    def convert(leaf: Any) -> Any:
        if not _is_tf_ragged(leaf):
            return leaf
        return RaggedTensor.from_nested_row_splits(
            np.asarray(leaf.flat_values.numpy()), [s.numpy() for s in leaf.nested_row_splits], validate=False
        )

    return map_structure(convert, structure)

"""``RaggedTensor``: rows of different lengths, as ``tf.RaggedTensor`` holds them (values and row splits)."""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.values.ragged_spec import SPLITS_DTYPES, RaggedTensorSpec, splits_dtype
from parafeed.values.structure import STRING, as_shape


def _as_values(values: Any, what: str) -> Any:
    if isinstance(values, RaggedTensor):
        return values
    from parafeed.values.elements import to_leaf

    arr = to_leaf(values, what) if not isinstance(values, np.ndarray) or values.dtype.kind in "USO" else values
    if not isinstance(arr, np.ndarray) or arr.ndim == 0:
        raise InvalidArgumentError(f"{what}: values must have rank >= 1, got {values!r:.80}")
    return arr


def _as_partition(x: Any, what: str, dtype: Any = None) -> np.ndarray:
    arr = np.asarray(x)
    if dtype is not None:
        arr = arr.astype(splits_dtype(dtype))
    elif arr.dtype not in SPLITS_DTYPES:
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
        return cast(RaggedTensor, result)  # (one row_splits at least)

    @classmethod
    def from_nested_row_lengths(cls, flat_values: Any, nested_row_lengths: Any, validate: bool = True) -> RaggedTensor:
        """Several ragged dimensions at once: ``nested_row_lengths`` from the outermost."""
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate)
        return cast(RaggedTensor, result)  # (flat_values itself when no row_lengths are given)

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
            return cast(RaggedTensor, from_dense(arr, ragged_rank, splits_dtype(row_splits_dtype)))  # (ragged_rank > 0)
        if ragged_rank != 1:
            raise InvalidArgumentError("RaggedTensor.from_tensor(): `lengths` is supported with ragged_rank=1 only")
        lengths = np.minimum(_as_partition(lengths, "lengths", row_splits_dtype), arr.shape[1])
        keep = np.arange(arr.shape[1])[None, :] < lengths[:, None]
        return cls.from_row_lengths(arr[keep], lengths)

    # ------------------------------------------------------------------ properties

    @property
    def flat_values(self) -> np.ndarray:
        values: np.ndarray | RaggedTensor = self.values
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
    def shape(self) -> tuple[int | None, ...]:
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

    def to_list(self) -> list[Any]:
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
        values = self.values.numpy() if isinstance(self.values, RaggedTensor) else np.asarray(self.values)
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

    __hash__ = None  # type: ignore[assignment]  # unhashable, as __eq__ compares values (typeshed's is a method)

    def __repr__(self) -> str:
        return f"<pf.RaggedTensor {self.to_list()!r:.300}>"


def _rows_of(values: Any, start: Any, stop: Any) -> Any:
    return values[int(start) : int(stop)]


def from_dense(arr: np.ndarray, ragged_rank: int, row_splits_dtype: np.dtype) -> np.ndarray | RaggedTensor:
    """``arr`` with its first ``ragged_rank + 1`` dimensions as rows of uniform length (0: ``arr`` itself)."""
    if ragged_rank == 0:
        return arr
    shape = arr.shape
    flat = arr.reshape((math.prod(shape[: ragged_rank + 1]), *shape[ragged_rank + 1 :]))
    splits = [
        np.arange(math.prod(shape[: k + 1]) + 1, dtype=row_splits_dtype) * shape[k + 1] for k in range(ragged_rank)
    ]
    return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)

"""Building RaggedTensors: from nested lists (``pf.ragged.constant``), by stacking rows (what ``batch``,
``ragged_batch`` and ``parse_example`` do with ragged components), and from TensorFlow's RaggedTensors (dense arrays:
:func:`~parafeed.values.ragged_tensor.from_dense`)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.values.ragged_spec import splits_dtype
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.structure import as_dtype, dtype_name, flatten, map_structure, shape_str


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
        from parafeed.values.elements import to_leaf

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
        from parafeed.values.elements import to_leaf

        flat = to_leaf([_plain(r) for r in rows], "ragged.constant()")
    else:
        flat = np.zeros((0,) * (depth - rank), np.float32)
    if dtype is not None:
        flat = np.asarray(flat).astype(as_dtype(dtype))
    return RaggedTensor.from_nested_row_splits(flat, splits)


def _as_list(x: Any) -> list[Any]:
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


def stack(leaves: list[Any], row_splits_dtype: np.dtype | None, step: str, component: str = "0") -> RaggedTensor:
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


def _concat_splits(parts: list[np.ndarray]) -> np.ndarray:
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
    """Whether ``value`` is a TensorFlow RaggedTensor (TensorFlow is not imported for this: if the program has not
    imported it, no value can be one)."""
    tf = sys.modules.get("tensorflow")
    return tf is not None and isinstance(value, tf.RaggedTensor)


def from_tf(structure: Any) -> Any:
    """``structure`` with TensorFlow RaggedTensors made parafeed RaggedTensors (ported code passes them)."""

    def convert(leaf: Any) -> Any:
        if not _is_tf_ragged(leaf):
            return leaf
        return RaggedTensor.from_nested_row_splits(
            np.asarray(leaf.flat_values.numpy()), [s.numpy() for s in leaf.nested_row_splits], validate=False
        )

    return map_structure(convert, structure)

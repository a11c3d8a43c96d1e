"""Stacking elements into batches and cutting batches into rows: the array work of ``batch``, ``unbatch`` and
``rebatch`` (and of the other steps that stack elements)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.values import buffers
from parafeed.values.elements import SCALAR_TYPES
from parafeed.values.ragged_build import stack as stack_ragged
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor, concat_sparse, sparse_rows, split_sparse, stack_sparse
from parafeed.values.structure import STRING, flatten, is_nested, pack_as, same_structure, shape_str

# ---------------------------------------------------------------------------------------------- elements -> batch


def stack_leaves(leaves: list[Any], step: str, component: str = "0") -> np.ndarray | SparseTensor | RaggedTensor:
    """Stack same-shaped leaves into one array; a clear error names the first element that differs."""
    first = leaves[0]
    if type(first) is SparseTensor:
        return stack_sparse(leaves, step, component)
    if type(first) is RaggedTensor:
        return stack_ragged(leaves, None, step, component)
    if type(first) is bytes:
        out = np.empty(len(leaves), dtype=STRING)
        out[:] = leaves
        if not all(type(x) is bytes for x in leaves):
            _raise_mismatch(leaves, step, component)
        return out
    try:
        if isinstance(first, np.ndarray):
            dtype = first.dtype
            if first.nbytes * len(leaves) >= buffers.MIN_BYTES and all(x.dtype == dtype for x in leaves):
                return np.stack(leaves, out=buffers.empty((len(leaves), *first.shape), dtype))
            return np.stack(leaves)
        out = np.array(leaves)
    except ValueError:
        _raise_mismatch(leaves, step, component)
    if out.dtype == object and first.__class__ in SCALAR_TYPES:
        _raise_mismatch(leaves, step, component)
    if out.ndim != 1 and not isinstance(first, np.ndarray):
        _raise_mismatch(leaves, step, component)
    return out


def _raise_mismatch(leaves: list[Any], step: str, component: str) -> None:
    first_shape = np.shape(leaves[0])
    for i, leaf in enumerate(leaves):
        if type(leaf) is SparseTensor:
            raise ElementTypeError(
                f"{step}: component {component} of element {i} is a SparseTensor, but the first element of the "
                "batch has a dense value there"
            )
        if not hasattr(leaf, "shape") and type(leaf) is not bytes:
            raise ElementTypeError(f"{step}: component {component} of element {i} is not an array: {leaf!r:.80}")
        if np.shape(leaf) != first_shape:
            raise InvalidArgumentError(
                f"{step}: cannot batch elements with different shapes in component {component}: the first element "
                f"had shape {shape_str(first_shape)} and element {i} had shape {shape_str(np.shape(leaf))}. Use "
                "padded_batch() to pad them to a common shape, or make them equal (e.g. resize or crop) in a map() "
                "before batching."
            )
    raise ElementTypeError(f"{step}: component {component} mixes strings and numbers or dtypes that cannot be stacked")


def stack_elements(elements: list[Any], step: str) -> Any:
    """Stack a list of elements of the same structure into one batched element."""
    first = elements[0]
    if not is_nested(first):
        return stack_leaves(elements, step)
    if type(first) is tuple and not any(is_nested(c) for c in first):
        columns = list(zip(*elements))
        if len(columns) != len(first) or any(len(e) != len(first) for e in elements):
            _raise_structure(elements, step)
        return tuple(stack_leaves(list(col), step, str(j)) for j, col in enumerate(columns))
    flats = [flatten(e) for e in elements]
    width = len(flats[0])
    if any(len(f) != width for f in flats):
        _raise_structure(elements, step)
    return pack_as(first, [stack_leaves([f[j] for f in flats], step, str(j)) for j in range(width)])


def _raise_structure(elements: list[Any], step: str) -> None:
    for i, e in enumerate(elements):
        if not same_structure(elements[0], e):
            raise ElementTypeError(
                f"{step}: element {i} has a different structure from the first element of the batch: "
                f"{e!r:.120} vs {elements[0]!r:.120}"
            )


# ---------------------------------------------------------------------------------------------- batch -> rows


def split_rows(element: Any, step: str) -> list[Any]:
    """The rows of a batched element, each an element."""
    if not is_nested(element):
        if type(element) is SparseTensor:
            return sparse_rows(element, step)
        if type(element) not in (np.ndarray, RaggedTensor):
            raise InvalidArgumentError(f"{step}: the input elements must have rank >= 1, got a scalar {element!r:.60}")
        return list(element)
    flat = flatten(element)
    for j, leaf in enumerate(flat):
        if type(leaf) is SparseTensor:
            flat[j] = sparse_rows(leaf, step)
        elif type(leaf) not in (np.ndarray, RaggedTensor):
            raise InvalidArgumentError(
                f"{step}: component {j} of the input element is a scalar; every component needs rank >= 1"
            )
    sizes = [len(leaf) for leaf in flat]
    if len(set(sizes)) > 1:
        raise InvalidArgumentError(
            f"{step}: the input element must have the same batch size in each component; got sizes {sizes}"
        )
    return [pack_as(element, row) for row in zip(*flat)]


def row_count(element: Any) -> int:
    """The batch size of a batched element: its components' shared first dimension."""
    flat = flatten(element)
    sizes = {_leading(leaf) for leaf in flat}
    if -1 in sizes:
        raise InvalidArgumentError("rebatch(): every component of the input elements must have rank >= 1")
    if len(sizes) > 1:
        raise InvalidArgumentError(f"rebatch(): components have different batch sizes {sorted(sizes)}")
    return sizes.pop()


def _leading(leaf: Any) -> int:
    if type(leaf) is SparseTensor:
        return int(leaf.dense_shape[0]) if len(leaf.dense_shape) else -1
    return leaf.shape[0] if isinstance(leaf, np.ndarray) and leaf.ndim else -1


def _slice_leaf(leaf: Any, start: int, stop: int) -> Any:
    if type(leaf) is SparseTensor:
        rows = int(leaf.dense_shape[0])
        return split_sparse(leaf, [start, stop - start, rows - stop])[1]
    return leaf[start:stop]


def _concat_leaves(leaves: list[Any]) -> Any:
    return concat_sparse(leaves) if type(leaves[0]) is SparseTensor else np.concatenate(leaves)


def slice_rows(element: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of a batched element."""
    if not is_nested(element):
        return _slice_leaf(element, start, stop)
    return pack_as(element, [_slice_leaf(leaf, start, stop) for leaf in flatten(element)])


def concat_rows(pieces: list[Any]) -> Any:
    """Batched elements of one structure joined along their first dimension."""
    first = pieces[0]
    if not is_nested(first):
        return _concat_leaves(pieces)
    flats = [flatten(p) for p in pieces]
    return pack_as(first, [_concat_leaves([f[j] for f in flats]) for j in range(len(flats[0]))])

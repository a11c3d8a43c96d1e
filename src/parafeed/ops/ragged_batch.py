"""Ragged steps: ``ragged_batch``, ``batch`` of components tf.data types as ragged, and ``from_tensor_slices`` of
RaggedTensors.

Which components a ragged batch makes ragged follows tf.data: a component whose spec has an unknown dimension becomes
a RaggedTensor whose ragged dimensions run up to the last unknown one; fully defined components (scalars included)
stay dense; RaggedTensor components gain one ragged dimension. tf.data reads that off its traced element spec. A
user function's output has no traced spec in parafeed, so after one the first batch decides: a dimension counts as
unknown when it differs between the first batch's elements (see docs/porting.md, "ragged-batch-shapes").
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from parafeed.core.arguments import positive_int
from parafeed.core.dataset import Dataset, iterate
from parafeed.core.graph import BATCHING, SOURCE, batched_cardinality, batched_counts
from parafeed.core.iterator import DatasetIterator, PositionIterator, take
from parafeed.errors import InvalidArgumentError
from parafeed.values.ragged_build import from_tf, stack
from parafeed.values.ragged_spec import RaggedTensorSpec, splits_dtype
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor, sparse_rows
from parafeed.values.stacking import stack_leaves
from parafeed.values.structure import TensorSpec, batch_spec, flatten, map_structure, pack_as, shape_str, spec_of

_STEP = "ragged_batch()"

# A layout holds, per flat component, None (stack as a dense array) or the row-splits dtype name of a component
# batched into a RaggedTensor with ``ragged_rank`` dimensions made ragged first: [ragged_rank, dtype name].


def _ragged_spec(spec: Any, row_splits_dtype: np.dtype | None) -> Any:
    """tf.data's ragged encoding of a leaf spec: TensorSpecs with an unknown dimension become RaggedTensorSpecs
    (ragged up to the last unknown dimension) when ``row_splits_dtype`` is given (``ragged_batch``)."""
    if row_splits_dtype is None or not isinstance(spec, TensorSpec) or spec.shape is None or None not in spec.shape:
        return spec
    rank = max(i for i, d in enumerate(spec.shape) if d is None)
    return RaggedTensorSpec(spec.shape, spec.dtype, rank, row_splits_dtype)


def _layout(spec: Any) -> list:
    """The layout for elements of ``spec`` (after ``_ragged_spec``)."""
    return [[s.ragged_rank, s.row_splits_dtype.name] if isinstance(s, RaggedTensorSpec) else None
            for s in flatten(spec)]  # fmt: skip


def _infer_layout(flats: list, row_splits_dtype: np.dtype) -> list:
    """The layout of a first batch, for inputs without a static spec: dimensions that differ are unknown."""
    layout: list = []
    for j in range(len(flats[0])):
        leaves = [f[j] for f in flats]
        first = leaves[0]
        if isinstance(first, RaggedTensor):
            layout.append([first.ragged_rank, first.row_splits_dtype.name])
            continue
        if not isinstance(first, np.ndarray):
            layout.append(None)  # scalars, sparse tensors, datasets: batched as batch() does
            continue
        shapes = {np.shape(x) for x in leaves}
        ranks = {len(s) for s in shapes}
        if len(shapes) == 1 or len(ranks) > 1:
            layout.append(None)  # uniform (or unbatchable: stack_leaves says why)
            continue
        varying = [a for a in range(ranks.pop()) if len({s[a] for s in shapes}) > 1]
        layout.append([max(varying), row_splits_dtype.name])
    return layout


def _stack(elements: list, layout: list, step: str, inferred: bool) -> Any:
    flats = [flatten(e) for e in elements]
    width = len(flats[0])
    if any(len(f) != width for f in flats):
        raise InvalidArgumentError(f"{step}: the elements of a batch have different structures")
    out = []
    for j, how in enumerate(layout):
        leaves = [f[j] for f in flats]
        if how is None:
            try:
                out.append(stack_leaves(leaves, step, str(j)))
            except InvalidArgumentError as err:
                if not inferred:
                    raise
                raise InvalidArgumentError(
                    f"{step}: component {j} had one shape in the first batch, so it is batched as a dense array (as "
                    f"tf.data batches components of fully defined shape), but its shapes differ in a later batch: "
                    f"{err}. Give the input a spec with unknown dimensions (e.g. from_generator(output_signature=...))"
                ) from None
            continue
        rank, dtype = how
        leaves = [_as_ragged(x, rank, dtype, step, j) for x in leaves]
        out.append(stack(leaves, np.dtype(dtype), step, str(j)))
    return pack_as(elements[0], out)


def _as_ragged(leaf: Any, rank: int, dtype: str, step: str, j: int) -> Any:
    if isinstance(leaf, RaggedTensor) or rank == 0:
        return leaf
    if not isinstance(leaf, np.ndarray) or leaf.ndim <= rank:
        raise InvalidArgumentError(
            f"{step}: component {j} must have rank > {rank} to batch it into a RaggedTensor, got shape "
            f"{shape_str(np.shape(leaf))}"
        )
    from parafeed.values.ragged_tensor import from_dense

    return from_dense(leaf, rank, np.dtype(dtype))


class RaggedBatchDataset(Dataset):
    """Batches in which components of varying shape become RaggedTensors (``Dataset.ragged_batch``)."""

    kind = BATCHING

    def __init__(self, parent: Dataset, batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = np.int64,
                 name: str | None = None):  # fmt: skip
        super().__init__((parent,), name=name)
        self.batch_size: int = positive_int(_STEP, "batch_size", batch_size)
        self.drop_remainder = bool(drop_remainder)
        self._splits_dtype = splits_dtype(row_splits_dtype, "ragged_batch(): row_splits_dtype")

    def _static_layout(self) -> list | None:
        parent = self._parents[0]
        if not parent._static_shapes():
            return None
        return _layout(map_structure(lambda s: _ragged_spec(s, self._splits_dtype), parent.element_spec))

    def _make_iterator(self) -> DatasetIterator:
        return RaggedBatchIterator(self._parents[0]._iter(), self.batch_size, self.drop_remainder,
                                   self._static_layout(), self._splits_dtype, _STEP)  # fmt: skip

    def _element_spec(self) -> Any:
        if not self._parents[0]._static_shapes():  # the first batch's, but for the batch dimension
            it = iterate(self)
            try:
                first = next(it, None)
            finally:
                it.close()
            if first is not None:
                return map_structure(self._with_batch_dim, spec_of(first))
        spec = map_structure(lambda s: _ragged_spec(s, self._splits_dtype), self._parents[0].element_spec)
        return batch_spec(spec, self.batch_size if self.drop_remainder else None)

    def _sample_when_empty(self) -> Any:
        sample = self._parents[0]._sample_element()
        layout = self._static_layout()
        if layout is None:  # every dimension of an input without a static spec may vary: tf.data's unknown ones
            dtype = self._splits_dtype.name
            layout = [[x.ndim - 1, dtype] if isinstance(x, np.ndarray) and x.ndim else None for x in flatten(sample)]
        return _stack([sample], layout, _STEP, False)

    def _with_batch_dim(self, spec: Any) -> Any:
        if spec.shape is None:
            return spec
        shape = (self.batch_size if self.drop_remainder else None, *spec.shape[1:])
        if isinstance(spec, RaggedTensorSpec):
            return RaggedTensorSpec(shape, spec.dtype, spec.ragged_rank, spec.row_splits_dtype)
        return TensorSpec(shape, spec.dtype)

    def _cardinality(self) -> int:
        return batched_cardinality(self._parents[0]._cardinality(), self.batch_size, self.drop_remainder)

    def _replica_counts(self, start: Any = 0) -> list[int] | None:
        return batched_counts(self._parents[0]._replica_counts(start), self.batch_size, self.drop_remainder)


def ragged_batch_iterator(parent: Dataset, batch_size: int, drop_remainder: bool) -> DatasetIterator | None:
    """``batch()``'s iterator when ``parent``'s static spec has components tf.data types as ragged (RaggedTensorSpec
    of ragged rank 0, as the rows of a RaggedTensor are): their batches are RaggedTensors. None otherwise."""
    layout = _layout(parent.element_spec)
    if not any(layout):
        return None
    return RaggedBatchIterator(parent._iter(), batch_size, drop_remainder, layout, None, "batch()")


class RaggedBatchIterator(DatasetIterator):
    """Batches stacked by a layout: given (static) or read off the first batch (saved in the state)."""

    def __init__(self, parent: DatasetIterator, batch_size: int, drop_remainder: bool, layout: list | None,
                 row_splits_dtype: np.dtype | None, step: str):  # fmt: skip
        super().__init__(parent)
        self._parent = parent
        self._batch_size = batch_size
        self._drop_remainder = drop_remainder
        self._inferred = layout is None
        self._layout = layout
        self._splits_dtype = row_splits_dtype
        self._step = step

    def __next__(self) -> Any:
        buf = take(self._parent, self._batch_size)
        if not buf or (self._drop_remainder and len(buf) < self._batch_size):
            raise StopIteration
        if self._layout is None:
            splits = cast(np.dtype, self._splits_dtype)  # (given where the layout is not)
            self._layout = _infer_layout([flatten(e) for e in buf], splits)
        return _stack(buf, self._layout, self._step, self._inferred)

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "layout": self._layout if self._inferred else None}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        if self._inferred:
            self._layout = state["layout"]


# --------------------------------------------------------------------------------------------------- slices


class RaggedSlicesDataset(Dataset):
    """``from_tensor_slices`` of (nests of) arrays and RaggedTensors: the rows of each along the first dimension."""

    kind = SOURCE

    def __init__(self, tensors: Any, name: str | None = None):
        super().__init__(name=name)
        from parafeed.values.elements import to_element

        self._element = to_element(from_tf(tensors), "from_tensor_slices()")
        self._flat = flatten(self._element)
        self._specs = [_row_spec(leaf) for leaf in self._flat]
        self._flat = [sparse_rows(x, "from_tensor_slices()") if isinstance(x, SparseTensor) else x for x in self._flat]
        sizes = []
        for j, leaf in enumerate(self._flat):
            if not isinstance(leaf, (np.ndarray, RaggedTensor, list)):
                raise InvalidArgumentError(
                    f"from_tensor_slices(): component {j} is a scalar ({leaf!r:.60}); every component needs a first "
                    "dimension to slice along. Use from_tensors() for a single element."
                )
            sizes.append(len(leaf))
        if len(set(sizes)) > 1:
            raise InvalidArgumentError(
                f"from_tensor_slices(): all components must have the same size in the first dimension, got {sizes}"
            )
        self._length = sizes[0]

    def _make_iterator(self) -> DatasetIterator:
        return _RaggedSlicesIterator(self._element, self._flat, self._length)

    def _element_spec(self) -> Any:
        return pack_as(self._element, self._specs)

    def _cardinality(self) -> int:
        return self._length


def _row_spec(leaf: Any) -> Any:
    if isinstance(leaf, (RaggedTensor, SparseTensor)):
        return leaf._leaf_spec()._unbatch("from_tensor_slices()")
    if isinstance(leaf, np.ndarray):
        return TensorSpec(leaf.shape[1:], leaf.dtype)
    return None  # a scalar: refused below


class _RaggedSlicesIterator(PositionIterator):
    def __init__(self, structure: Any, flat: list, length: int):
        super().__init__(length, f"from_tensor_slices() has {length} elements")
        self._structure = structure
        self._flat = flat

    def __next__(self) -> Any:
        if self._index >= self._length:
            raise StopIteration
        i = self._index
        self._index += 1
        return pack_as(self._structure, [leaf[i] for leaf in self._flat])

"""``sparse_batch`` (``tf.data.experimental.dense_to_sparse_batch``): batches of elements of different shapes as one
:class:`~parafeed.values.sparse.SparseTensor` each."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core.arguments import positive_int
from parafeed.core.dataset import Dataset
from parafeed.core.graph import BATCHING, batched_cardinality, batched_counts
from parafeed.core.iterator import DatasetIterator, take
from parafeed.errors import ArgumentTypeError, DataLossError, InvalidArgumentError
from parafeed.values.sparse import SparseTensor, SparseTensorSpec
from parafeed.values.structure import STRING, TensorSpec, as_shape, is_nested, shape_str

_STEP = "sparse_batch()"


class SparseBatchDataset(Dataset):
    """Batches of ``batch_size`` elements as sparse tensors of dense shape ``(rows, *row_shape)``; a ``None``
    dimension of ``row_shape`` is the batch's largest."""

    kind = BATCHING

    def __init__(self, parent: Dataset, batch_size: int, row_shape: Any, name: str | None = None):
        super().__init__((parent,), name=name)
        self.batch_size: int = positive_int(_STEP, "batch_size", batch_size)
        try:
            shape = as_shape(row_shape)
        except InvalidArgumentError:
            raise InvalidArgumentError(
                f"{_STEP}: `row_shape` must be a list of dimensions >= 0 (None or -1 for the batch's largest), got "
                f"{row_shape!r}"
            ) from None
        if shape is None:
            raise InvalidArgumentError(f"{_STEP}: `row_shape` must have a known rank, got None")
        self._row_shape = shape
        if parent._static_shapes():
            self.element_spec  # noqa: B018 - one tensor component, as tf.data checks when it is built

    def _make_iterator(self) -> DatasetIterator:
        return _SparseBatchIterator(self._parents[0]._iter(), self.batch_size, self._row_shape)

    def _element_spec(self) -> Any:
        spec = self._parents[0].element_spec
        if is_nested(spec) or not isinstance(spec, TensorSpec):
            raise ArgumentTypeError(
                f"{_STEP}: the elements must be single tensors (one component), got element spec {spec!r}; "
                "use map() to pick one component"
            )
        return SparseTensorSpec((None, *self._row_shape), spec.dtype)

    def _sample_when_empty(self) -> Any:
        return to_sparse_batch([self._parents[0]._sample_element()], self._row_shape)

    def _cardinality(self) -> int:
        return batched_cardinality(self._parents[0]._cardinality(), self.batch_size, False)

    def _replica_counts(self, start: Any = 0) -> list[int] | None:
        return batched_counts(self._parents[0]._replica_counts(start), self.batch_size, False)


def to_sparse_batch(elements: list, row_shape: tuple) -> SparseTensor:
    """Every entry of each dense element, indexed by (row, position), in one sparse tensor."""
    arrays = [np.asarray(e, dtype=STRING if type(e) is bytes else None) for e in elements]
    for a in arrays:
        if a.ndim != len(row_shape):
            raise InvalidArgumentError(
                f"{_STEP}: an input element had shape {shape_str(a.shape)} that is incompatible with the row shape "
                f"{shape_str(row_shape)} (rank {a.ndim} vs {len(row_shape)})"
            )
        if any(want is not None and have > want for have, want in zip(a.shape, row_shape)):
            raise DataLossError(
                f"{_STEP}: an input element had shape {shape_str(a.shape)} that is larger than the row shape "
                f"{shape_str(row_shape)}; increase `row_shape` or use None for the batch's largest"
            )
    dims = [want if want is not None else max(a.shape[d] for a in arrays) for d, want in enumerate(row_shape)]
    indices = [
        np.concatenate([np.full((a.size, 1), i, np.int64), np.indices(a.shape).reshape(a.ndim, a.size).T], axis=1)
        for i, a in enumerate(arrays)
    ]
    values = np.concatenate([a.reshape(-1) for a in arrays])
    dense_shape = np.array([len(arrays), *dims], np.int64)
    return SparseTensor._trusted(np.concatenate(indices).astype(np.int64), values, dense_shape)


class _SparseBatchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, batch_size: int, row_shape: tuple):
        super().__init__(parent)
        self._parent = parent
        self._batch_size = batch_size
        self._row_shape = row_shape

    def __next__(self) -> Any:
        buf = take(self._parent, self._batch_size)
        if not buf:
            raise StopIteration
        return to_sparse_batch(buf, self._row_shape)

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state()}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])

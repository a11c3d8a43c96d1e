"""``padded_batch``: batch elements of different shapes by padding each component to a common shape."""

from __future__ import annotations

from itertools import islice
from typing import Any

import numpy as np

from parafeed.arguments import positive_int
from parafeed.dataset import Dataset
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.graph import BATCHING
from parafeed.iterator import DatasetIterator
from parafeed.ops.batch import batched_cardinality, batched_counts
from parafeed.structure import (
    STRING,
    DatasetSpec,
    TensorSpec,
    as_shape,
    batch_spec,
    flatten,
    is_nested,
    map_structure_up_to,
    pack_as,
    shape_str,
)

_STEP = "padded_batch()"


class PaddedBatchDataset(Dataset):
    """Batches whose components are padded to ``padded_shapes`` (``None`` dimensions: the batch's largest)."""

    kind = BATCHING

    def __init__(
        self,
        parent: Dataset,
        batch_size: int,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: bool = False,
        name: str | None = None,
    ):
        super().__init__((parent,), name=name)
        self.batch_size = positive_int(_STEP, "batch_size", batch_size)
        self._padded_shapes = padded_shapes
        self._padding_values = padding_values
        self.drop_remainder = bool(drop_remainder)

    def _make_iterator(self) -> DatasetIterator:
        return _PaddedBatchIterator(self._parents[0]._iter(), self)

    def _element_spec(self) -> Any:
        spec = self._parents[0].element_spec
        for s in flatten(spec):
            if isinstance(s, DatasetSpec):
                raise ElementTypeError(f"{_STEP}: datasets of datasets cannot be batched")
        if self._padded_shapes is not None:
            shapes = _flat_shapes(spec, self._padded_shapes)
            spec = pack_as(spec, [TensorSpec(sh, s.dtype) for sh, s in zip(shapes, flatten(spec))])
        return batch_spec(spec, self.batch_size if self.drop_remainder else None)

    def _sample_element(self) -> Any:
        return _Padder(self._padded_shapes, self._padding_values)(
            [self._parents[0]._sample_element()] * self.batch_size
        )

    def _cardinality(self) -> int:
        return batched_cardinality(self._parents[0]._cardinality(), self.batch_size, self.drop_remainder)

    def _replica_counts(self, start: int = 0) -> list[int] | None:
        return batched_counts(self._parents[0]._replica_counts(start), self.batch_size, self.drop_remainder)


def _flat_shapes(structure: Any, padded_shapes: Any) -> list:
    shapes: list = []
    try:
        map_structure_up_to(structure, lambda s: shapes.append(as_shape(s)), padded_shapes)
    except ValueError:
        raise InvalidArgumentError(
            f"{_STEP}: `padded_shapes` {padded_shapes!r} must have the structure of the elements "
            f"(one shape per component), e.g. ([None], []) for (sequence, label) elements"
        ) from None
    return shapes


def _flat_padding_values(structure: Any, padding_values: Any) -> list:
    if padding_values is None:
        return [None] * len(flatten(structure))
    if not is_nested(structure) and not is_nested(padding_values):
        return [padding_values]
    values: list = []
    try:
        map_structure_up_to(structure, values.append, padding_values)
    except ValueError:
        raise InvalidArgumentError(
            f"{_STEP}: `padding_values` {padding_values!r} must have the structure of the elements (None for "
            "the default 0 / empty string)"
        ) from None
    return values


class _Padder:
    """Pads and stacks a list of elements; the per-component shapes and fills are resolved on first use."""

    def __init__(self, padded_shapes: Any, padding_values: Any):
        self._padded_shapes = padded_shapes
        self._padding_values = padding_values
        self._shapes: list | None = None
        self._fills: list = []

    def __call__(self, elements: list) -> Any:
        first = elements[0]
        if self._shapes is None:
            ps = self._padded_shapes
            self._shapes = [None] * len(flatten(first)) if ps is None else _flat_shapes(first, ps)
            self._fills = _flat_padding_values(first, self._padding_values)
        flats = [[e] for e in elements] if not is_nested(first) else [flatten(e) for e in elements]
        width = len(self._shapes)
        if any(len(f) != width for f in flats):
            raise ElementTypeError(f"{_STEP}: the elements of a batch must all have the same structure")
        columns = [_pad_component([f[j] for f in flats], self._shapes[j], self._fills[j], j) for j in range(width)]
        return columns[0] if not is_nested(first) else pack_as(first, columns)


class _PaddedBatchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, ds: PaddedBatchDataset):
        super().__init__(parent)
        self._parent = parent
        self._batch_size = ds.batch_size
        self._drop_remainder = ds.drop_remainder
        self._pad = _Padder(ds._padded_shapes, ds._padding_values)

    def __next__(self) -> Any:
        buf = list(islice(self._parent, self._batch_size))
        if not buf or (self._drop_remainder and len(buf) < self._batch_size):
            raise StopIteration
        return self._pad(buf)

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state()}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])


def _pad_component(leaves: list, padded_shape: tuple | None, fill: Any, component: int) -> np.ndarray:
    is_string = type(leaves[0]) is bytes or (isinstance(leaves[0], np.ndarray) and leaves[0].dtype == STRING)
    dtype = STRING if is_string else np.asarray(leaves[0]).dtype
    shapes = [np.shape(leaf) for leaf in leaves]
    rank = len(shapes[0])
    for i, shape in enumerate(shapes):
        if len(shape) != rank:
            raise InvalidArgumentError(
                f"{_STEP}: component {component} of element {i} has rank {len(shape)} but the first element of the "
                f"batch has rank {rank}; padding can change sizes, not ranks"
            )
    if padded_shape is not None and len(padded_shape) != rank:
        raise InvalidArgumentError(
            f"{_STEP}: `padded_shapes` {shape_str(padded_shape)} for component {component} has rank "
            f"{len(padded_shape)}, but the elements have rank {rank} (shape {shape_str(shapes[0])})"
        )
    target = [max(s[d] for s in shapes) for d in range(rank)]
    if padded_shape is not None:
        for d, want in enumerate(padded_shape):
            if want is None:
                continue
            if target[d] > want:
                i = next(i for i, s in enumerate(shapes) if s[d] > want)
                raise InvalidArgumentError(
                    f"{_STEP}: component {component} of element {i} has shape {shape_str(shapes[i])}, larger than "
                    f"padded_shapes {shape_str(padded_shape)} in dimension {d}. Increase that padded size, or set it "
                    "to None to pad to the longest element of each batch."
                )
            target[d] = want
    out = np.full((len(leaves), *target), _fill_value(fill, dtype, component), dtype=dtype)
    for i, leaf in enumerate(leaves):
        out[(i, *(slice(0, n) for n in shapes[i]))] = leaf
    return out


def _fill_value(fill: Any, dtype: np.dtype, component: int) -> Any:
    if fill is None:
        return b"" if dtype == STRING else dtype.type(0)
    if dtype == STRING:
        if isinstance(fill, str):
            return fill.encode()
        if isinstance(fill, bytes):
            return fill
    elif np.ndim(fill) == 0 and not isinstance(fill, (str, bytes)):
        if isinstance(fill, np.generic) and fill.dtype != dtype:
            raise ElementTypeError(
                f"{_STEP}: padding value {fill!r} for component {component} has dtype {fill.dtype}, but the "
                f"component has dtype {dtype}; give a Python number or a {dtype} scalar"
            )
        return np.asarray(fill, dtype=dtype)[()]
    raise ElementTypeError(
        f"{_STEP}: padding value {fill!r} for component {component} must be a scalar of the component's dtype "
        f"({'string' if dtype == STRING else dtype})"
    )

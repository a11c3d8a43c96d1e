"""``padded_batch``: batch elements of different shapes by padding each component to a common shape."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core.arguments import positive_int
from parafeed.core.dataset import Dataset
from parafeed.core.graph import BATCHING, batched_cardinality, batched_counts
from parafeed.core.iterator import DatasetIterator, take
from parafeed.errors import ArgumentTypeError, DataLossError, ElementTypeError, InvalidArgumentError
from parafeed.values.structure import (
    STRING,
    TensorSpec,
    as_shape,
    batch_spec,
    dtype_name,
    flatten,
    is_nested,
    map_structure_up_to,
    pack_as,
    shape_str,
    spec_of,
)

_STEP = "padded_batch()"


class PaddedBatchDataset(Dataset):
    """Batches whose components are padded to ``padded_shapes`` (``None`` dimensions: the batch's largest)."""

    kind = BATCHING
    whole_batches = True

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
        self.batch_size: int = positive_int(_STEP, "batch_size", batch_size)
        self._padded_shapes = padded_shapes
        self._padding_values = padding_values
        self.drop_remainder = bool(drop_remainder)
        if parent._static_shapes():  # tf.data checks the arguments against the element spec when it is built
            self.element_spec  # noqa: B018

    def _make_iterator(self) -> DatasetIterator:
        static = self._parents[0]._static_shapes()
        spec = self._parents[0].element_spec if static else None
        return _PaddedBatchIterator(self._parents[0]._iter(), self, spec)

    def _element_spec(self) -> Any:
        parent = self._parents[0]
        spec = parent.element_spec
        shapes, _ = resolve(spec, self._padded_shapes, self._padding_values, static=parent._static_shapes())
        spec = pack_as(spec, [TensorSpec(sh, s.dtype) for sh, s in zip(shapes, flatten(spec))])
        return batch_spec(spec, self.batch_size if self.drop_remainder else None)

    def _sample_element(self) -> Any:
        return _Padder(self._padded_shapes, self._padding_values, None)(
            [self._parents[0]._sample_element()] * self.batch_size
        )

    def _cardinality(self) -> int:
        return batched_cardinality(self._parents[0]._cardinality(), self.batch_size, self.drop_remainder)

    def _replica_counts(self, start: Any = 0) -> list[int] | None:
        return batched_counts(self._parents[0]._replica_counts(start), self.batch_size, self.drop_remainder)


def resolve(spec: Any, padded_shapes: Any, padding_values: Any, static: bool) -> tuple[list, list]:
    """Every component's padded shape (``None`` where unknown) and padding value, checked against ``spec`` as
    tf.data checks them; sizes are compared only where ``static`` (a spec read off a sample has sizes that other
    elements need not share)."""
    leaves = flatten(spec)
    for j, s in enumerate(leaves):
        if not isinstance(s, TensorSpec):
            what = "datasets of datasets" if hasattr(s, "element_spec") else f"elements with a {type(s).__name__}"
            raise ElementTypeError(
                f"{_STEP}: only tensor components can be padded, but component {j} of the elements has spec {s!r} "
                f"({what}). Use batch() for them, or convert them in a map() first"
            )
    if padded_shapes is None:
        for j, s in enumerate(leaves):
            if s.shape is None:
                raise InvalidArgumentError(
                    f"{_STEP}: component {j} has unknown rank, so `padded_shapes` must be given (e.g. [None] for "
                    "vectors padded to the longest in each batch)"
                )
        shapes = [s.shape if static else (None if s.shape is None else (None,) * len(s.shape)) for s in leaves]
    else:
        shapes = _flat_shapes(spec, padded_shapes)
        for j, (want, s) in enumerate(zip(shapes, leaves)):
            if not _fits(want, s.shape, static):
                raise InvalidArgumentError(
                    f"{_STEP}: the padded shape {shape_str(want)} is not compatible with the shape "
                    f"{shape_str(s.shape)} of component {j} of the elements: it needs the same rank, and sizes no "
                    "smaller than the elements'"
                )
    values = _flat_padding_values(spec, padding_values)
    return shapes, [_fill_value(v, s.dtype, j) for j, (v, s) in enumerate(zip(values, leaves))]


def _fits(padded: tuple | None, shape: tuple | None, static: bool) -> bool:
    if padded is None or shape is None:
        return True
    if len(padded) != len(shape):
        return False
    return not static or all(p is None or d is None or p >= d for p, d in zip(padded, shape))


def _flat_shapes(structure: Any, padded_shapes: Any) -> list:
    if is_nested(structure) and not is_nested(padded_shapes):
        raise ArgumentTypeError(
            f"{_STEP}: `padded_shapes` {padded_shapes!r} must have the structure of the elements (one shape per "
            "component, in a tuple or dict like the elements), e.g. ([None], []) for (sequence, label) elements"
        )
    shapes: list = []
    try:
        map_structure_up_to(structure, lambda s: shapes.append(_as_padded_shape(s)), padded_shapes)
    except ValueError as err:
        if isinstance(err, InvalidArgumentError) and str(err).startswith(_STEP):
            raise
        raise InvalidArgumentError(
            f"{_STEP}: `padded_shapes` {padded_shapes!r} must have the structure of the elements (one shape per "
            f"component), e.g. ([None], []) for (sequence, label) elements"
        ) from None
    return shapes


def _as_padded_shape(shape: Any) -> tuple | None:
    if isinstance(shape, np.ndarray) and shape.dtype.kind not in "iu":
        raise ArgumentTypeError(f"{_STEP}: a padded shape must hold integers, got dtype {shape.dtype}: {shape!r}")
    try:
        return as_shape(shape)
    except InvalidArgumentError:
        raise InvalidArgumentError(
            f"{_STEP}: padded shape {shape!r} must be a vector of ints (None or -1 for the batch's longest)"
        ) from None


def _flat_padding_values(structure: Any, padding_values: Any) -> list:
    width = len(flatten(structure))
    if padding_values is None:
        return [None] * width
    if not is_nested(padding_values):  # one value for every component, as tf.data broadcasts it
        return [padding_values] * width
    values: list = []
    if not _expand(padding_values, structure, values):
        raise InvalidArgumentError(
            f"{_STEP}: `padding_values` {padding_values!r} must be one scalar or have the structure of the "
            "elements (None for the defaults, 0 / empty string, of a component or a whole sub-structure)"
        )
    return values


def _expand(values: Any, structure: Any, out: list) -> bool:
    """Append the padding value of every component of ``structure``; False where ``values`` does not fit it."""
    if values is None:  # as tf.data: None gives the defaults of the whole sub-structure it stands for
        out.extend([None] * len(flatten(structure)))
        return True
    if not is_nested(values) or not is_nested(structure):
        out.append(values)
        return not is_nested(values) and not is_nested(structure)
    if isinstance(values, dict) != isinstance(structure, dict) or len(values) != len(structure):
        return False
    if isinstance(values, dict):
        if set(values) != set(structure):
            return False
        return all(_expand(values[k], structure[k], out) for k in sorted(structure))
    return all(_expand(v, s, out) for v, s in zip(values, structure))


class _Padder:
    """Pads and stacks a list of elements; the per-component shapes and fills come from the static spec, or are
    resolved from the first batch when the spec was read off a sample."""

    def __init__(self, padded_shapes: Any, padding_values: Any, spec: Any):
        self._padded_shapes = padded_shapes
        self._padding_values = padding_values
        self._shapes: list | None = None
        self._fills: list = []
        if spec is not None:
            self._shapes, self._fills = resolve(spec, padded_shapes, padding_values, static=True)

    def __call__(self, elements: list) -> Any:
        first = elements[0]
        if self._shapes is None:
            self._shapes, self._fills = resolve(spec_of(first), self._padded_shapes, self._padding_values, False)
        flats = [[e] for e in elements] if not is_nested(first) else [flatten(e) for e in elements]
        width = len(self._shapes)
        if any(len(f) != width for f in flats):
            raise ElementTypeError(f"{_STEP}: the elements of a batch must all have the same structure")
        columns = [_pad_component([f[j] for f in flats], self._shapes[j], self._fills[j], j) for j in range(width)]
        return columns[0] if not is_nested(first) else pack_as(first, columns)


class _PaddedBatchIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, ds: PaddedBatchDataset, spec: Any):
        super().__init__(parent)
        self._parent = parent
        self._batch_size = ds.batch_size
        self._drop_remainder = ds.drop_remainder
        self._pad = _Padder(ds._padded_shapes, ds._padding_values, spec)

    def __next__(self) -> Any:
        buf = take(self._parent, self._batch_size)
        if not buf or (self._drop_remainder and len(buf) < self._batch_size):
            raise StopIteration
        return self._pad(buf)

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state()}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])


def _pad_component(leaves: list, padded_shape: tuple | None, fill: Any, component: int) -> np.ndarray:
    first = leaves[0]
    if not isinstance(first, (np.ndarray, np.generic, bytes)):
        raise ElementTypeError(
            f"{_STEP}: component {component} of the elements is a {type(first).__name__}; only tensor components "
            "can be padded. Use batch() for them, or convert them in a map() first"
        )
    is_string = type(first) is bytes or (isinstance(first, np.ndarray) and first.dtype == STRING)
    dtype = STRING if is_string else np.asarray(first).dtype
    shapes = [np.shape(leaf) for leaf in leaves]
    rank = len(shapes[0]) if padded_shape is None else len(padded_shape)
    for i, shape in enumerate(shapes):
        if len(shape) != rank:
            other = "the first element of the batch" if padded_shape is None else "the padded shape"
            raise InvalidArgumentError(
                f"{_STEP}: component {component} of element {i} has rank {len(shape)}, but {other} has rank "
                f"{rank}; padding can change sizes, not ranks"
            )
    target = [max(s[d] for s in shapes) for d in range(rank)]
    if padded_shape is not None:
        for d, want in enumerate(padded_shape):
            if want is None:
                continue
            if target[d] > want:
                i = next(i for i, s in enumerate(shapes) if s[d] > want)
                raise DataLossError(
                    f"{_STEP}: attempted to pad to a smaller size than the input element: component {component} of "
                    f"element {i} has shape {shape_str(shapes[i])}, larger than padded_shapes "
                    f"{shape_str(padded_shape)} in dimension {d}. Increase that padded size, or set it to None to "
                    "pad to the longest element of each batch."
                )
            target[d] = want
    out = np.full((len(leaves), *target), _fill_value(fill, dtype, component), dtype=dtype)
    for i, leaf in enumerate(leaves):
        region: tuple[int | slice, ...] = (i, *(slice(0, n) for n in shapes[i]))  # (row i, its leading part)
        out[region] = leaf
    return out


def _fill_value(fill: Any, dtype: np.dtype, component: int) -> Any:
    """The padding value for a component: None gives 0 or b""; a Python number is cast to the component's dtype."""
    if fill is None:
        return b"" if dtype == STRING else dtype.type(0)
    if np.ndim(fill) != 0:
        raise InvalidArgumentError(
            f"{_STEP}: padding values must be scalars, got shape {shape_str(np.shape(fill))} for component "
            f"{component}: {fill!r:.80}"
        )
    if dtype == STRING:
        if isinstance(fill, str):
            return fill.encode()
        if isinstance(fill, bytes):
            return fill
    elif not isinstance(fill, (str, bytes)) and np.asarray(fill).dtype.kind in "biufc":
        fill_dtype = getattr(fill, "dtype", None)
        if fill_dtype is not None and fill_dtype != dtype:
            raise ElementTypeError(
                f"{_STEP}: padding value {fill!r} for component {component} has dtype {fill_dtype}, but the "
                f"component has dtype {dtype}; give a Python number or a {dtype} scalar"
            )
        return np.asarray(fill, dtype=dtype)[()]
    raise ElementTypeError(
        f"{_STEP}: padding value {fill!r} for component {component} does not match the component's dtype "
        f"({dtype_name(dtype)})"
    )

"""``pad_to_cardinality``: fill a dataset of dicts up to a count with zero elements marked invalid."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np

from parafeed.core.arguments import as_int
from parafeed.core.dataset import Dataset
from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import STRING, TensorSpec, map_structure


def pad_to_cardinality(cardinality: int, mask_key: str = "valid") -> Callable[[Dataset], Dataset]:
    """A transformation (for ``ds.apply``) that adds ``mask_key: True`` to each dict element and then
    ``cardinality - len(ds)`` elements of zeros (empty strings) with ``mask_key: False``.

    The dataset needs a known, finite cardinality no larger than ``cardinality`` and dict elements.

    Example:
        >>> ds = pf.Dataset.from_tensor_slices({"a": [1, 2]}).apply(pf.experimental.pad_to_cardinality(3))
        >>> [(int(e["a"]), bool(e["valid"])) for e in ds]
        [(1, True), (2, True), (0, False)]
    """
    target = as_int("pad_to_cardinality()", "cardinality", cardinality)

    def apply(dataset: Dataset) -> Dataset:
        n = int(dataset.cardinality())
        if n < 0:
            raise InvalidArgumentError(
                f"The dataset passed into `pad_to_cardinality` must have a known cardinalty, but has cardinality {n}"
            )
        if n > target:
            raise InvalidArgumentError(
                "The dataset passed into `pad_to_cardinality` must have a cardinalty less than the target "
                f"cardinality ({target}), but has cardinality {n}"
            )
        spec = dataset.element_spec
        if not isinstance(spec, Mapping):
            raise InvalidArgumentError(
                f"`pad_to_cardinality` requires its input dataset to be a dictionary, got elements of spec {spec!r}"
            )
        filler = map_structure(_zeros, spec)
        filler[mask_key] = np.False_
        padding = Dataset.from_tensors(filler).repeat(target - n)
        return dataset.map(lambda x: _marked(x, mask_key)).concatenate(padding)

    return apply


def _marked(element: dict[str, Any], mask_key: str) -> Any:
    out = type(element)(element)
    out[mask_key] = np.True_
    return out


def _zeros(spec: Any) -> Any:
    if not isinstance(spec, TensorSpec):
        raise InvalidArgumentError(f"pad_to_cardinality(): cannot make a padding element for a leaf of spec {spec!r}")
    if spec.shape is None or None in spec.shape:
        raise InvalidArgumentError(
            f"pad_to_cardinality(): cannot make a padding element of spec {spec!r}: its shape is not fully known"
        )
    shape = cast("tuple[int, ...]", spec.shape)  # (fully known: checked above)
    if spec.dtype == STRING:
        return np.full(shape, b"", dtype=STRING)[()]
    return np.zeros(shape, spec.dtype)[()]

"""The common spec of several datasets' elements (tf.data's most specific common supertype): the same structure and
dtypes, shapes merged; what a mixture of datasets produces."""

from __future__ import annotations

from typing import Any

from parafeed.errors import ElementTypeError
from parafeed.values.structure import (
    DatasetSpec,
    TensorSpec,
    flatten,
    most_specific_compatible_shape,
    pack_as,
    same_structure,
)


class _Incompatible(Exception):
    pass


def common_spec(step: str, specs: list[Any]) -> Any:
    """The most specific spec describing elements of every spec in ``specs`` (tf.data's common supertype: the same
    structure and dtypes, shapes merged); ElementTypeError when there is none."""
    merged = specs[0]
    for i, spec in enumerate(specs[1:], 1):
        try:
            merged = _supertype(merged, spec)
        except _Incompatible:
            raise ElementTypeError(
                f"{step}: Invalid `datasets`. `datasets` must have compatible element specs: dataset 0 has "
                f"element_spec={specs[0]!r}, dataset {i} has element_spec={spec!r}. Give them the same structure "
                "and dtypes (shapes may differ), e.g. with map()."
            ) from None
    return merged


def _supertype(a: Any, b: Any) -> Any:
    if not same_structure(a, b):
        raise _Incompatible
    return pack_as(a, [_leaf_supertype(x, y) for x, y in zip(flatten(a), flatten(b))])


def _leaf_supertype(x: Any, y: Any) -> Any:
    if type(x) is not type(y):
        raise _Incompatible
    if isinstance(x, TensorSpec):
        if x.dtype != y.dtype:
            raise _Incompatible
        return TensorSpec(most_specific_compatible_shape(x.shape, y.shape), x.dtype)
    if isinstance(x, DatasetSpec):
        return DatasetSpec(_supertype(x.element_spec, y.element_spec))
    if x == y:
        return x
    if getattr(x, "dtype", None) == getattr(y, "dtype", None) and hasattr(x, "most_specific_compatible"):
        return x.most_specific_compatible(y)  # sparse and ragged specs
    raise _Incompatible

"""``pf.experimental.from_list``: a dataset of a list's elements, which may differ in shape."""

from __future__ import annotations

from parafeed.core.dataset import Dataset
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.sources.memory import ElementsDataset, read_only
from parafeed.values.elements import short_repr, to_element
from parafeed.values.structure import (
    flatten,
    iter_leaves_with_paths,
    most_specific_compatible_spec,
    same_structure,
    spec_of,
)


def from_list(elements: list, name: str | None = None) -> Dataset:
    """A dataset of the elements of the list ``elements``, one by one (``pf.experimental.from_list``).

    Unlike ``from_tensor_slices``, elements may differ in shape (the spec's dimensions that differ are None); they
    must have one structure and dtypes.

    Example:
        >>> [x.tolist() for x in pf.experimental.from_list([[1], [2, 3]])]
        [[1], [2, 3]]
    """
    if not isinstance(elements, list):
        raise InvalidArgumentError(
            f"from_list(): Invalid `elements`. `elements` must be a list, got {type(elements).__name__}"
        )
    if not elements:
        raise InvalidArgumentError(
            "from_list(): Invalid `elements`. `elements` should not be empty. If you want an empty dataset, use "
            "`pf.Dataset.range(0)`."
        )
    converted = [read_only(to_element(e, "from_list()")) for e in elements]
    spec = spec_of(converted[0])
    for i, element in enumerate(converted[1:], 1):
        other = spec_of(element)
        if not same_structure(spec, other):
            raise InvalidArgumentError(
                f"from_list(): element {i} ({short_repr(elements[i])}) does not have the nested structure of element 0 "
                f"({short_repr(elements[0])}); every element needs the same structure"
            )
        for (path, a), b in zip(iter_leaves_with_paths(spec), flatten(other)):
            if type(a) is not type(b) or getattr(a, "dtype", None) != getattr(b, "dtype", None):
                raise ElementTypeError(
                    f"from_list(): component {path} of element {i} is {b!r}, element 0 has {a!r}; every "
                    "element needs the same dtypes"
                )
        spec = most_specific_compatible_spec(spec, other)
    return ElementsDataset(converted, element_spec=spec, name=name)

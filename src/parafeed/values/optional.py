"""``Optional``: a value that may be missing, as ``it.get_next_as_optional()`` returns (tf.experimental.Optional)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError

_NONE = object()


class Optional:
    """An element, or nothing: ``has_value()`` says which, ``get_value()`` gives the element.

    Example:
        >>> it = iter(pf.Dataset.range(1))
        >>> [it.get_next_as_optional().has_value() for _ in range(2)]
        [True, False]
    """

    __slots__ = ("_value", "element_spec")

    def __init__(self, value: Any = _NONE, element_spec: Any = None):
        self._value = value
        self.element_spec = element_spec

    @staticmethod
    def from_value(value: Any) -> Optional:
        """An Optional holding ``value``."""
        from parafeed.values.structure import spec_of

        return Optional(value, spec_of(value))

    @staticmethod
    def empty(element_spec: Any) -> Optional:
        """An Optional with no value, for elements of ``element_spec``."""
        return Optional(_NONE, element_spec)

    def has_value(self, name: str | None = None) -> np.bool_:
        """Whether there is a value (a NumPy bool, as tf.data's ``has_value()`` gives it)."""
        return np.bool_(self._value is not _NONE)

    def get_value(self, name: str | None = None) -> Any:
        """The value; an InvalidArgumentError when there is none (as tf.data)."""
        if self._value is _NONE:
            raise InvalidArgumentError("Optional.get_value(): the optional does not have a value; check has_value()")
        return self._value

    def __repr__(self) -> str:
        return f"Optional({self._value!r})" if self.has_value() else "Optional(<empty>)"

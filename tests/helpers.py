"""Helpers shared by tests: exact comparison of elements, the way tf.data's `as_numpy_iterator` gives them."""

from __future__ import annotations

from typing import Any

import numpy as np


def describe(element: Any) -> Any:
    """A comparable description of an element: structure, leaf types, dtypes, shapes and values."""
    if isinstance(element, dict):
        return ("dict", tuple((k, describe(v)) for k, v in element.items()))
    if isinstance(element, tuple):
        kind = type(element).__name__ if hasattr(type(element), "_fields") else "tuple"
        return (kind, tuple(describe(v) for v in element))
    if isinstance(element, bytes):
        return ("bytes", element)
    if isinstance(element, np.ndarray):
        if element.dtype == object:
            return ("ndarray", "string", element.shape, tuple(element.reshape(-1).tolist()))
        return ("ndarray", element.dtype.str, element.shape, element.tobytes())
    if isinstance(element, np.generic):
        return ("scalar", element.dtype.str, element.tobytes())
    raise AssertionError(f"not an element leaf: {type(element).__name__} {element!r}")


def assert_elements_equal(expected: list, actual: list, context: str = "") -> None:
    """Same number of elements, and each with the same structure, leaf types, dtypes, shapes and values."""
    assert len(actual) == len(expected), f"{context}: {len(actual)} elements, expected {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        de, da = describe(e), describe(a)
        assert da == de, f"{context}: element {i} differs:\n  expected {e!r}\n  actual   {a!r}"

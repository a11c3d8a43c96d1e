"""Calling user functions on elements the way tf.data does.

A tuple element is spread into positional arguments (``fn(*element)``); any other element, namedtuples and dicts
included, is passed as one argument. A returned list is a tuple of components (tf.data's rule), and results are
converted to elements with tf.data's dtypes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.values.elements import SCALAR_TYPES, to_element


def call(fn: Any, element: Any) -> Any:
    """``fn(*element)`` for a tuple element, ``fn(element)`` otherwise."""
    return fn(*element) if type(element) is tuple else fn(element)


def element_fn(fn: Any, what: str) -> Any:
    """``fn`` applied to one element the way ``map`` applies it, whichever executor runs it: a tuple element is spread
    into arguments and the result converted to an element (``what`` names it in errors)."""

    def apply(x: Any) -> Any:
        y = fn(*x) if type(x) is tuple else fn(x)
        return y if type(y) in SCALAR_TYPES else to_result(y, what)

    return apply


def to_result(value: Any, what: str) -> Any:
    """A user function's result as an element; a top-level list counts as a tuple."""
    if type(value) in SCALAR_TYPES:
        return value
    if type(value) is list:
        value = tuple(value)
    return to_element(value, what)


def fn_name(fn: Any) -> str:
    fn = getattr(fn, "__wrapped__", fn)  # (the user's function, not parafeed's wrapper of it)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"`{name}`"


def user_error(err: Exception, step: str, fn: Any, index: int | None) -> Exception:
    """The exception to raise for ``err`` from a user function: noted with the step, function and element.

    A ``StopIteration`` escaping a user function would silently end the pipeline, so it becomes a RuntimeError.
    """
    where = "" if index is None else f" on input element {index}"
    context = f"raised by the {step} function {fn_name(fn)}{where}"
    if isinstance(err, StopIteration):
        new = RuntimeError(f"{step}: the function {fn_name(fn)} raised StopIteration{where}; return a value instead")
        new.__cause__ = err
        return new
    if hasattr(err, "add_note"):  # Python >= 3.11
        err.add_note(f"({context})")
    return err


class PredicateResultError(InvalidArgumentError, ElementTypeError):
    """A predicate returned something other than a boolean scalar: a ValueError, as tf.data raises, and a TypeError."""


def as_bool(step: str, fn: Any, value: Any) -> bool:
    """A predicate's result, which must be a boolean scalar."""
    t = type(value)
    if t is np.bool_ or t is bool:
        return bool(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype == np.bool_:
        return bool(value)
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", type(value).__name__)
    raise PredicateResultError(
        f"{step}: `predicate` {fn_name(fn)} must return a boolean scalar, but returned {dtype} "
        f"{'with shape ' + str(shape) + ' ' if shape is not None else ''}({value!r:.60}); "
        "compare or reduce it to a single bool, e.g. `np.all(...)` or `x > 0`"
    )


def as_int64_scalar(step: str, name: str, fn: Any, value: Any) -> np.int64:
    """A key function's result, which must be an integer scalar."""
    arr = np.asarray(value)
    if arr.shape != () or arr.dtype.kind not in "iu" or isinstance(value, (bool, np.bool_)):
        raise ElementTypeError(
            f"{step}: `{name}` {fn_name(fn)} must return an int64 scalar, got {arr.dtype} with shape {arr.shape}"
        )
    key: np.int64 = np.int64(arr)  # (annotated: numpy's stubs give Any on Python 3.10)
    return key

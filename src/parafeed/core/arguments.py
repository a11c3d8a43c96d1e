"""Checks of step arguments, with tf.data-style messages that name the step."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError


def as_int(step: str, name: str, value: Any) -> int:
    """``value`` as a Python int; bools, floats and other types are refused."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
            return int(value)
        raise InvalidArgumentError(f"{step}: `{name}` must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def positive_int(step: str, name: str, value: Any) -> int:
    """``value`` as an int > 0."""
    n = as_int(step, name, value)
    if n <= 0:
        raise InvalidArgumentError(f"{step}: `{name}` must be > 0, got {n}")
    return n


def count_arg(step: str, name: str, value: Any) -> int:
    """A count that may be -1 for "all"."""
    n = as_int(step, name, value)
    if n < -1:
        raise InvalidArgumentError(f"{step}: `{name}` must be >= -1 (-1 means all), got {n}")
    return n


def parallelism_arg(step: str, value: Any) -> int | None:
    """``num_parallel_calls``: None (serial), AUTOTUNE (-1) or an int > 0."""
    if value is None:
        return None
    n = as_int(step, "num_parallel_calls", value)
    if n != -1 and n <= 0:
        raise InvalidArgumentError(f"{step}: `num_parallel_calls` must be > 0 or AUTOTUNE (-1), got {n}")
    return n


def deterministic_arg(step: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{step}: `deterministic` must be None, True or False, got {value!r}")
    return None if value is None else bool(value)


def callable_arg(step: str, name: str, value: Any) -> Any:
    """A user function, checked, with its closure and the constants it reads from its globals read now (as TensorFlow
    reads them when it traces); given Tensors for arguments if its code calls tensor methods on them
    (:mod:`parafeed.core.tensor_functions`)."""
    if not callable(value):
        raise InvalidArgumentError(f"{step}: `{name}` must be callable, got {type(value).__name__} {value!r}")
    from parafeed.core.globals_read import globals_read_now
    from parafeed.core.tensor_functions import closures_read_now, with_tensor_arguments

    return with_tensor_arguments(globals_read_now(closures_read_now(value)))

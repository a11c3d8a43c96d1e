"""``pf.py_function``, ``pf.numpy_function`` and TF1's ``pf.py_func``: TensorFlow's ways of calling Python from a
graph. parafeed functions are Python already, so these call ``func`` directly; they stay so that ported code runs
unchanged, with TensorFlow's conversions of the results to ``Tout``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.tensor_ops.convert import array, out
from parafeed.values.structure import as_dtype, dtype_name
from parafeed.values.tensor import as_tensor


def _results(op: str, func: Callable[..., Any], result: Any, Tout: Any) -> Any:
    if Tout is None:
        return None
    many = isinstance(Tout, (list, tuple))
    dtypes = list(Tout) if many else [Tout]
    if many and not dtypes and (result is None or (isinstance(result, (list, tuple)) and not result)):
        return []  # (no outputs: a function called for its side effects, as TensorFlow allows)
    values = list(result) if many and isinstance(result, (list, tuple)) else [result]
    if len(values) != len(dtypes):
        raise InvalidArgumentError(
            f"{op}: {getattr(func, '__name__', func)} returned {len(values)} values, `Tout` names {len(dtypes)}"
        )
    converted = []
    for i, (value, dtype) in enumerate(zip(values, dtypes)):
        try:  # (as TensorFlow converts the results: to Tout's dtypes where no value changes)
            converted.append(out(array(value, op, dtype)))
        except (ArgumentTypeError, InvalidArgumentError) as err:
            raise InvalidArgumentError(
                f"{op}: result {i} does not convert to {dtype_name(as_dtype(dtype))}: {err}"
            ) from None
    return converted if many else converted[0]


def py_function(func: Callable[..., Any] | None = None, inp: Any = None, Tout: Any = None,
                name: str | None = None) -> Any:  # fmt: skip
    """``tf.py_function``: ``func`` gets Tensors (with ``.numpy()``) and its results are converted to ``Tout``. As
    a decorator (``@pf.py_function(Tout=pf.float32)``), the decorated function's arguments are ``inp``."""
    if func is None:
        return lambda f: _decorated(f, Tout)
    if inp is None:
        return _decorated(func, Tout)
    return _results("py_function()", func, func(*[as_tensor(array(x, "py_function()")) for x in inp]), Tout)


def _decorated(func: Callable[..., Any], Tout: Any) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        return py_function(func, list(args), Tout)

    call.__wrapped__ = func  # type: ignore[attr-defined]
    return call


def numpy_function(func: Callable[..., Any], inp: Any, Tout: Any, stateful: bool = True, name: str | None = None
                   ) -> Any:  # fmt: skip
    """``tf.numpy_function``: ``func`` gets NumPy arrays and its results are converted to ``Tout``."""
    args = [np.asarray(array(x, "numpy_function()")) for x in inp]
    result = func(*[a[()] if a.ndim == 0 else a for a in args])
    if Tout is None:
        return None
    if isinstance(Tout, (list, tuple)):  # (TensorFlow converts the results as they are: Tout only counts them)
        return [out(array(r, "numpy_function()")) for r in result]
    return out(array(result, "numpy_function()"))


def py_func(func: Callable[..., Any], inp: Any, Tout: Any, stateful: bool = True, name: str | None = None) -> Any:
    """TF1's ``tf.py_func`` (``tf.compat.v1.py_func``): as :func:`numpy_function`."""
    return numpy_function(func, inp, Tout, stateful)


__all__ = [
    "numpy_function",
    "py_func",
    "py_function",
]

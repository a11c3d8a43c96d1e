"""User functions written against TensorFlow's tensor API: which need Tensors as arguments, and ``pf.function``.

Elements are plain NumPy, and a function that only does NumPy (or calls ``pf.*`` operations) gets them as they are:
no wrapping, no cost. A function that calls tensor methods on its arguments (``x.set_shape(...)``,
``x.shape.as_list()``, ``x.numpy()`` ...) gets its arguments as :class:`~parafeed.values.tensor.Tensor`\\ s, which
have them. Which functions do is read once, when the step is built, off the names their code uses: the function's
own code, the functions nested in it, and the functions, methods and callable objects it reaches through its globals
and closure (user code only, not libraries). ``@pf.function`` (TensorFlow's ``@tf.function``, renamed) says so
explicitly, for a function reached in a way the scan cannot follow (through a container, ``getattr``).

What a user function reads from outside is read when the step is built, as TensorFlow reads it when it traces the
function: its closure (:func:`closures_read_now`) and the Python constants it reads from its globals
(:func:`parafeed.core.globals_read.globals_read_now`).
"""

from __future__ import annotations

import dis
import functools
import inspect
import os
import sysconfig
import types
from collections.abc import Callable
from typing import Any

from parafeed.values.tensor import tensor_leaves, tensors_everywhere

TENSOR_METHODS = frozenset(
    {
        "set_shape", "get_shape", "as_list", "numpy", "ndims", "dtype", "is_fully_defined", "num_elements",
        "merge_with", "assert_has_rank", "assert_is_compatible_with", "is_compatible_with", "with_rank",
        "with_rank_at_least", "newaxis",
    }
)  # fmt: skip
"""Names that, used in a function's code, make parafeed give it Tensors (``newaxis``: ``record[pf.newaxis]`` indexes
a scalar string, which only a 0-d Tensor can)."""

_PATHS = sysconfig.get_paths()
_LIBRARIES = tuple({os.path.realpath(_PATHS[k]) + os.sep for k in ("stdlib", "purelib", "platlib")})
_PARAFEED = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


class TensorFunction:
    """``fn`` called with Tensors for arguments (array, scalar and string leaves of each argument). Picklable when
    ``fn`` is, so it runs in worker processes too."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        functools.update_wrapper(self, fn, updated=())  # (and __wrapped__: error messages name the user's function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with tensors_everywhere():
            return self.fn(*[tensor_leaves(a) for a in args], **{k: tensor_leaves(v) for k, v in kwargs.items()})

    def __reduce__(self) -> tuple[Any, ...]:
        return TensorFunction, (self.fn,)

    def __repr__(self) -> str:
        return f"<pf.function {getattr(self.fn, '__qualname__', self.fn)!r}>"


def function(func: Callable[..., Any] | None = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: Any = None, reduce_retracing: bool = False, **experimental: Any) -> Any:  # fmt: skip
    """``tf.function`` for input code: ``func`` called with Tensors for arguments, in a pipeline or directly. There
    is nothing to trace or compile (parafeed functions are Python), so the other arguments are accepted and
    ignored; a Python side effect runs on every call, not once at tracing."""
    if func is None:
        return function
    return func if isinstance(func, TensorFunction) else TensorFunction(func)


def closures_read_now(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the variables it closes over read now, when the step is built, as TensorFlow reads them when it
    traces the function: ``for i in ...: ds.map(lambda x: f(x, i))`` keeps each ``i``. A function that assigns
    one of them (``nonlocal``) keeps its live closure, and so does anything that is not a plain function."""
    if not isinstance(fn, types.FunctionType) or not fn.__closure__:
        return fn
    code = fn.__code__
    if any(i.opname == "STORE_DEREF" and i.argval in code.co_freevars for i in dis.get_instructions(code)):
        return fn
    cells = []
    for cell in fn.__closure__:
        try:
            cells.append(types.CellType(cell.cell_contents))
        except ValueError:  # (not assigned yet: a function defined before a variable it uses)
            cells.append(cell)
    read = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells))
    read.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(read, fn)
    del read.__wrapped__  # type: ignore[attr-defined]  # (set by update_wrapper: read is no wrapper of fn)
    return read


def with_tensor_arguments(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself, or ``fn`` taking Tensors when its code calls tensor methods (see the module docstring)."""
    if isinstance(fn, TensorFunction) or not (names_used(fn) & TENSOR_METHODS):
        return fn
    return TensorFunction(fn)


def draws_random(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s code (or the user code it reaches) calls random operations (``pf.random.*``,
    ``pf.image.random_*``, ``stateless_random_*``): a map then keys each element's draws (``ops/map_draws.py``)."""
    return any(n == "random" or n.startswith(("random_", "stateless_random")) for n in names_used(fn))


def names_used(fn: Any) -> set[str]:
    """The attribute and global names used by ``fn``'s code and the user code it reaches (see the module docstring)."""
    names: set[str] = set()
    classes: set[type] = set()  # classes whose methods the code may call: their methods named in `names` are scanned
    seen: set[int] = set()
    pending: list[Any] = [fn]
    while pending:
        while pending:
            obj = pending.pop()
            if id(obj) not in seen:
                seen.add(id(obj))
                pending.extend(_reached(obj, names, classes))
        pending = [m for cls in classes for m in _methods(cls, names) if id(m) not in seen]
    return names


def _reached(obj: Any, names: set[str], classes: set[type]) -> list[Any]:
    """Adds ``obj``'s names to ``names`` and the classes it uses to ``classes``; returns the functions it reaches."""
    if isinstance(obj, functools.partial):
        return [obj.func, *(a for a in (*obj.args, *obj.keywords.values()) if callable(a))]
    if isinstance(obj, TensorFunction):
        return [obj.fn]
    if inspect.ismethod(obj):
        classes.add(type(obj.__self__))
        return [obj.__func__]
    if not isinstance(obj, types.FunctionType):
        if callable(obj) and not isinstance(obj, type):  # a callable object
            names.add("__call__")
            classes.add(type(obj))
        return []
    code = obj.__code__
    if code.co_filename.startswith(_LIBRARIES):
        return []
    cells = []
    for cell in obj.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # (an empty cell)
            continue
    if code.co_filename.startswith(_PARAFEED):  # a wrapper of parafeed's: only the user functions it holds
        return [c for c in cells if callable(c)]
    own = _code_names(code)
    names.update(own)
    found: list[Any] = []
    for value in [obj.__globals__[n] for n in own if n in obj.__globals__] + cells:
        if isinstance(value, types.ModuleType):  # module.function(...): the module's functions named in the code
            # (from the module's namespace: not its __getattr__, where NumPy warns of its removed names)
            found += [a for a in map(vars(value).get, own) if isinstance(a, types.FunctionType)]
        elif isinstance(value, type):  # a class the code makes or calls
            classes.add(value)
        elif isinstance(value, (types.FunctionType, types.MethodType, functools.partial, TensorFunction)):
            found.append(value)
        elif type(value).__module__ != "builtins":  # an object whose methods the code calls (or that it calls)
            classes.add(type(value))
            if callable(value):
                names.add("__call__")
    return found


def _methods(cls: type, names: set[str]) -> list[Any]:
    found = []
    for klass in cls.__mro__:
        for name, attr in vars(klass).items():
            if name in names and isinstance(attr, (types.FunctionType, staticmethod, classmethod, property)):
                found.append(attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr))
    return found


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names

"""Python constants a user function reads from its globals, read when the step is built (``map()``, ``filter()``
...), as TensorFlow reads every Python value a function uses when it traces it: :func:`globals_read_now`.

The scan reads the function's bytecode (the globals it loads and stores, in it and in the code nested in it) and
follows the user functions it reaches by name, through globals and closure cells. Constants (``None``, numbers,
strings, bytes, NumPy scalars and arrays, tuples of them) are read now, arrays copied; anything else (lists, dicts,
objects, modules, functions) is read when the function runs. A function that reads a constant, or reaches one that
does, runs as a copy whose globals hold the values read now; the user's function and module are left as they are.
"""

from __future__ import annotations

import builtins
import dis
import functools
import sys
import types
import weakref
from typing import Any, NamedTuple, cast

import numpy as np

from parafeed.core.tensor_functions import _LIBRARIES, _PARAFEED, TensorFunction

COPY_LIMIT = 1 << 24
"""The largest NumPy array (in bytes) that :func:`globals_read_now` copies. A larger one, like a memory-mapped one,
is read at run time, as a list is: copying it at every ``map()`` call (a ``map()`` in an interleave's function runs
once per element) would cost more than it is worth."""

_NOT_CONSTANT: Any = object()
_LOADS = frozenset(dis.opmap[n] for n in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS") if n in dis.opmap)
_GLOBAL_STORES = frozenset({dis.opmap["STORE_GLOBAL"], dis.opmap["DELETE_GLOBAL"]})
_DEREF_STORES = frozenset({dis.opmap["STORE_DEREF"], dis.opmap["DELETE_DEREF"]})
_WATCHED = _LOADS | _GLOBAL_STORES | _DEREF_STORES
_LOAD_GLOBAL, _EXTENDED_ARG = dis.opmap["LOAD_GLOBAL"], dis.opmap["EXTENDED_ARG"]
_GLOBAL_ARG_SHIFTED = sys.version_info >= (3, 11)  # (LOAD_GLOBAL's argument: the name's index << 1, + 1 for a NULL)
_DUNDERS = ("__builtins__", "__name__", "__package__", "__spec__", "__loader__", "__file__", "__path__")


class _CodeOps(NamedTuple):
    """What a code object, and the code nested in it (lambdas, comprehensions, inner functions), does with names."""

    loads: frozenset[str]  # names read as globals
    stores: frozenset[str]  # names assigned or deleted as globals (`global x; x = ...`)
    deref_stores: frozenset[str]  # closure variables assigned or deleted (`nonlocal x; x = ...`)


class _ReadNowGlobals(dict):  # type: ignore[type-arg]
    """The globals of a function that :func:`globals_read_now` made: the constants read when the step was built (with
    the functions it made in place of those it reaches, and, to save a lookup, the modules and builtins the code uses
    and the module's import attributes), over the function's own globals, read at run time for every other name. A
    real dict, as Python's ``LOAD_GLOBAL`` wants: a name not held here goes to ``__missing__``, which each subclass
    (one per module dict, :func:`_globals_class`) sets to that dict's own ``__getitem__``, a C call (about 50 ns a
    name; a held name, about 5 ns more than in a module dict, which Python's ``LOAD_GLOBAL`` specializes for)."""

    __slots__ = ()
    _source: dict[str, Any]

    def __contains__(self, key: object) -> bool:  # (cloudpickle sends the globals a function reads that are `in` it)
        return dict.__contains__(self, key) or key in self._source

    def get(self, key: str, default: Any = None) -> Any:  # (dict.get would not look in the source)
        try:
            return self[key]
        except KeyError:
            return default


_CODE_OPS: weakref.WeakKeyDictionary[types.CodeType, _CodeOps] = weakref.WeakKeyDictionary()
_GLOBALS_CLASSES: weakref.WeakValueDictionary[int, type[_ReadNowGlobals]] = weakref.WeakValueDictionary()


def globals_read_now(fn: Any) -> Any:
    """``fn`` with the Python constants it reads from its globals read now, when the step is built, as TensorFlow
    reads them when it traces the function: ``for i in ...: ds.map(lambda x: f(x, i))`` at module level (or in a
    notebook) keeps each ``i``. Constants are ``None``, bools, numbers, strings, bytes, NumPy scalars, NumPy arrays
    (copied: a later in-place change is not seen; up to :data:`COPY_LIMIT` bytes) and tuples of them; every other
    global (a module, function, class, list, dict, object) is read at run time, as before. The user functions ``fn``
    reaches through its globals and closure are read so too, so a constant that a helper reads is kept as well;
    functions reached through a module, an object or a container are not.

    ``fn`` itself is not changed: a function that reads a constant global, or reaches one that does, is a new function
    of the same code whose globals are a :class:`_ReadNowGlobals` (the constants, over the original globals); any
    other is returned as it is, and so is library code. A function that assigns a global (``global x; x = ...``) or
    calls ``globals()`` keeps its own globals, and a global that a reached function assigns is read at run time."""
    if type(fn) is functools.partial:
        func = globals_read_now(fn.func)
        return fn if func is fn.func else functools.partial(func, *fn.args, **fn.keywords)
    if type(fn) is TensorFunction:
        func = globals_read_now(fn.fn)
        return fn if func is fn.fn else TensorFunction(func)
    if isinstance(fn, types.MethodType):
        func = globals_read_now(fn.__func__)
        return fn if func is fn.__func__ else types.MethodType(func, fn.__self__)
    if not _user_function(fn):
        return fn
    return _GlobalsReadNow(fn).result


def _user_function(obj: Any) -> bool:
    return isinstance(obj, types.FunctionType) and not obj.__code__.co_filename.startswith((*_LIBRARIES, _PARAFEED))


def _code_ops(code: types.CodeType) -> _CodeOps:
    ops = _CODE_OPS.get(code)
    if ops is None:
        loads: set[str] = set()
        stores: set[str] = set()
        deref_stores: set[str] = set()
        pending = [code]
        while pending:
            c = pending.pop()
            pending += [k for k in c.co_consts if isinstance(k, types.CodeType)]
            for op, arg in _instructions(c):
                if op in _LOADS:
                    loads.add(c.co_names[arg >> 1 if op == _LOAD_GLOBAL and _GLOBAL_ARG_SHIFTED else arg])
                elif op in _GLOBAL_STORES:
                    stores.add(c.co_names[arg])
                elif op in _DEREF_STORES:
                    deref_stores.add(_deref_name(c, arg))
        ops = _CODE_OPS[code] = _CodeOps(frozenset(loads), frozenset(stores), frozenset(deref_stores))
    return ops


def _instructions(code: types.CodeType) -> list[tuple[int, int]]:
    """``code``'s (opcode, argument) pairs: the bytes read directly, a tenth of ``dis.get_instructions``'s cost."""
    raw, found, extended = code.co_code, [], 0
    for i in range(0, len(raw), 2):
        op, arg = raw[i], raw[i + 1] | extended
        extended = arg << 8 if op == _EXTENDED_ARG else 0
        if op in _WATCHED:
            found.append((op, arg))
    return found


def _deref_name(code: types.CodeType, arg: int) -> str:
    if hasattr(code, "_varname_from_oparg"):  # (Python 3.11 on: an index into all the locals, cells and free vars)
        return cast(str, code._varname_from_oparg(arg))
    return (code.co_cellvars + code.co_freevars)[arg]


def _constant(value: Any) -> Any:
    """``value`` as TensorFlow captures it when it traces (an array copied), or ``_NOT_CONSTANT``."""
    if value is None or isinstance(value, (int, float, complex, str, bytes, np.generic)):
        return value
    if isinstance(value, np.ndarray):
        if isinstance(value, np.memmap) or value.nbytes > COPY_LIMIT:
            return _NOT_CONSTANT
        return value.copy()
    if type(value) is tuple or (isinstance(value, tuple) and hasattr(type(value), "_make")):  # (or a namedtuple)
        items = [_constant(v) for v in value]
        if any(v is _NOT_CONSTANT for v in items):
            return _NOT_CONSTANT
        if all(a is b for a, b in zip(items, value)):
            return value
        return tuple(items) if type(value) is tuple else cast(Any, type(value))._make(items)
    return _NOT_CONSTANT


def _globals_class(source: dict[str, Any]) -> type[_ReadNowGlobals]:
    cls = _GLOBALS_CLASSES.get(id(source))
    if cls is None or cls._source is not source:
        namespace = {"__slots__": (), "_source": source, "__missing__": staticmethod(source.__getitem__)}
        cls = _GLOBALS_CLASSES[id(source)] = cast("type[_ReadNowGlobals]",
                                                  type("_ReadNowGlobals", (_ReadNowGlobals,), namespace))  # fmt: skip
    return cls


class _GlobalsReadNow:
    """One :func:`globals_read_now`: the user functions ``fn`` reaches through globals and closure cells, which of them
    read a constant global or reach one that does (``changed``), and a new function for each of those."""

    def __init__(self, fn: types.FunctionType):
        self.functions: dict[int, types.FunctionType] = {}
        self.fixed: set[int] = set()  # functions that keep their own globals (they assign one, or call globals())
        self.stored: dict[int, set[str]] = {}  # id(globals dict) -> the names that reached functions assign in it
        self.constants: dict[int, list[str]] = {}  # id(function) -> the names of its constant globals
        self.modules: dict[int, list[str]] = {}  # id(function) -> the names of the modules it reads (held: faster)
        self.values: dict[tuple[int, str], Any] = {}  # (id(globals dict), name) -> the constant, read now
        self.global_edges: dict[int, list[tuple[str, int]]] = {}  # id(function) -> (name, id(function it names))
        self.cell_edges: dict[int, list[tuple[int, int]]] = {}  # id(function) -> (cell index, id(function in it))
        self._reach(fn)
        changed = self._changed()
        self.result: Any = fn
        if id(fn) in changed:
            self.builtins = {key: self._builtins(self.functions[key]) for key in changed}
            self.exact = {id(f.__globals__) for f in self.functions.values()}  # globals dicts that need no fallback
            for key in changed:
                if not self._all_held(key, changed):
                    self.exact.discard(id(self.functions[key].__globals__))
            self.new_globals: dict[int, dict[str, Any]] = {}
            made = {key: self._make(self.functions[key], changed) for key in changed}
            for key in changed:
                self._fill(key, made)
            self.result = made[id(fn)]

    def _reach(self, fn: types.FunctionType) -> None:
        pending = [fn]
        while pending:
            f = pending.pop()
            key = id(f)
            if key in self.functions:
                continue
            self.functions[key] = f
            ops = _code_ops(f.__code__)
            source = f.__globals__
            self.stored.setdefault(id(source), set()).update(ops.stores)
            if ops.stores or "globals" in ops.loads:
                self.fixed.add(key)
            held = isinstance(source, _ReadNowGlobals)  # (a function made at run time by one that this made before)
            constants, modules, edges, cell_edges = [], [], [], []
            for name in ops.loads:
                if name not in source or (held and dict.__contains__(source, name)):
                    continue
                value = source[name]
                if _user_function(value):
                    edges.append((name, id(value)))
                    pending.append(value)
                elif isinstance(value, types.ModuleType):
                    modules.append(name)
                elif (id(source), name) in self.values:
                    constants.append(name)
                else:
                    constant = _constant(value)
                    if constant is not _NOT_CONSTANT:
                        self.values[id(source), name] = constant
                        constants.append(name)
            for i, (var, cell) in enumerate(zip(f.__code__.co_freevars, f.__closure__ or ())):
                try:
                    value = cell.cell_contents
                except ValueError:  # (an empty cell)
                    continue
                if _user_function(value) and var not in ops.deref_stores:
                    cell_edges.append((i, id(value)))
                    pending.append(value)
            self.constants[key], self.modules[key] = constants, modules
            self.global_edges[key], self.cell_edges[key] = edges, cell_edges

    def _changed(self) -> set[int]:
        """The functions to make anew: those that read a constant global, then those that reach one of them."""
        for key, f in self.functions.items():  # (a name that some reached function assigns is read at run time)
            stored = self.stored[id(f.__globals__)]
            if stored:
                self.constants[key] = [n for n in self.constants[key] if n not in stored]
                self.modules[key] = [n for n in self.modules[key] if n not in stored]
                self.global_edges[key] = [(n, k) for n, k in self.global_edges[key] if n not in stored]
        changed = {key for key in self.functions if key not in self.fixed and self.constants[key]}
        grown = True
        while grown:
            grown = False
            for key in self.functions:
                edges = (*self.global_edges[key], *self.cell_edges[key])
                if key not in changed and key not in self.fixed and any(k in changed for _, k in edges):
                    changed.add(key)
                    grown = True
        return changed

    def _builtins(self, f: types.FunctionType) -> dict[str, Any]:
        """The builtins that ``f``'s code uses (and its module does not shadow), held too: no lookup that misses."""
        source = f.__globals__
        scope = source.get("__builtins__", builtins)
        scope = vars(scope) if isinstance(scope, types.ModuleType) else scope
        return {n: scope[n] for n in _code_ops(f.__code__).loads if n not in source and n in scope}

    def _all_held(self, key: int, changed: set[int]) -> bool:
        """Whether every global the function reads is held by its new globals, which can then be a plain dict (Python
        specializes its lookups there: no cost at all) in place of a :class:`_ReadNowGlobals` (about 25 ns a lookup
        of a held name, 45 ns of another)."""
        ops = _code_ops(self.functions[key].__code__)
        held = {*self.constants[key], *self.modules[key], *self.builtins[key]}
        held.update(n for n, k in self.global_edges[key] if k in changed)
        return ops.loads <= held and not ops.loads & {"eval", "exec"}  # (code run by eval may read any name)

    def _make(self, f: types.FunctionType, changed: set[int]) -> types.FunctionType:
        """A new function of ``f``'s code over new globals (filled by :meth:`_fill`): one per globals dict."""
        source = f.__globals__
        new_globals = self.new_globals.get(id(source))
        if new_globals is None:
            new_globals = {} if id(source) in self.exact else _globals_class(source)()
            self.new_globals[id(source)] = new_globals
            dict.update(new_globals, {k: source[k] for k in _DUNDERS if k in source})
        closure = f.__closure__
        if closure is not None and any(k in changed for _, k in self.cell_edges[id(f)]):
            cells = list(closure)
            for i, k in self.cell_edges[id(f)]:
                if k in changed:
                    cells[i] = types.CellType()  # (filled by _fill with the function made for the one it held)
            closure = tuple(cells)
        new = types.FunctionType(f.__code__, new_globals, f.__name__, f.__defaults__, closure)
        new.__kwdefaults__ = f.__kwdefaults__
        functools.update_wrapper(new, f)  # (name, qualname, module, doc, annotations, __dict__)
        if "__wrapped__" in f.__dict__:
            new.__wrapped__ = f.__wrapped__  # type: ignore[attr-defined]
        else:
            del new.__wrapped__  # type: ignore[attr-defined]  # (set by update_wrapper: new is no wrapper of f)
        return new

    def _fill(self, key: int, made: dict[int, types.FunctionType]) -> None:
        f, new = self.functions[key], made[key]
        source, new_globals = f.__globals__, new.__globals__
        for name in self.constants[key]:
            new_globals[name] = self.values[id(source), name]
        for name in self.modules[key]:  # (the module object: `importlib.reload` changes it in place)
            new_globals[name] = source[name]
        for name, k in self.global_edges[key]:
            if k in made:
                new_globals[name] = made[k]
        for i, k in self.cell_edges[key]:
            if k in made:
                cast("tuple[types.CellType, ...]", new.__closure__)[i].cell_contents = made[k]
        new_globals.update(self.builtins[key])

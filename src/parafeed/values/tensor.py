"""``pf.Tensor``, ``pf.TensorShape`` and ``pf.Dimension``: the methods TensorFlow code calls on tensors, on NumPy.

Elements are plain NumPy arrays and scalars, and stay so between steps: that is what makes a pipeline fast and what
users get from it. Input code written for TensorFlow calls methods on the tensors its functions receive or make
(``image.set_shape([None, None, 3])``, ``x.get_shape().as_list()``, ``x.shape.as_list()``, ``t.numpy()``), which
NumPy arrays lack. :class:`Tensor` is an ``ndarray`` subclass that has them; it is NumPy everywhere else.
parafeed's TensorFlow-style operations (``pf.cast``, ``pf.reshape``, ``pf.image.*`` ...) return Tensors, and a
user function that calls these methods on its arguments gets Tensors as arguments (see
:mod:`parafeed.core.fn_needs`); what a function returns goes back to plain NumPy (a Tensor's ``numpy()``).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import types
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError


class Dimension:
    """TF1's ``tf.compat.v1.Dimension``: one dimension, ``value`` an int or None (unknown)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        given = value.value if isinstance(value, Dimension) else value
        self.value: int | None = None if given is None else int(given)
        if self.value is not None and self.value < 0:
            raise InvalidArgumentError(f"Dimension(): a dimension must be >= 0 or None, got {value!r}")

    def __repr__(self) -> str:
        return f"Dimension({self.value})"

    def __str__(self) -> str:
        return "?" if self.value is None else str(self.value)

    def __int__(self) -> int:
        if self.value is None:
            raise InvalidArgumentError("int(Dimension(None)): the dimension is unknown")
        return self.value

    __index__ = __int__

    def __eq__(self, other: object) -> Any:
        other_value = other.value if isinstance(other, Dimension) else other
        if self.value is None or other_value is None:
            return None  # (TensorFlow's answer: unknown)
        return self.value == other_value

    def __hash__(self) -> int:
        return hash(self.value)

    def is_compatible_with(self, other: Any) -> bool:
        other_value = dimension_value(other)
        return self.value is None or other_value is None or self.value == other_value


def dimension_value(dimension: Any) -> int | None:
    """``tf.compat.dimension_value``: the int (or None) of a dimension or an int."""
    if isinstance(dimension, Dimension):
        return dimension.value
    return None if dimension is None else int(dimension)


class TensorShape(tuple):  # type: ignore[type-arg]  # (of int | None)
    """``tf.TensorShape``: a tuple of dimensions (ints, None where unknown), or of unknown rank (``TensorShape(None)``,
    then empty and ``rank`` None). Compares equal to lists and tuples of the same dimensions, as TensorFlow's does."""

    _unknown_rank: bool

    def __new__(cls, dims: Any = ()) -> TensorShape:
        if isinstance(dims, TensorShape):
            return dims
        unknown = dims is None
        if unknown:
            values: tuple[int | None, ...] = ()
        elif isinstance(dims, (int, np.integer, Dimension)):
            values = (dimension_value(dims),)
        else:
            values = tuple(dimension_value(d) for d in _iterable(dims))
        if any(v is not None and v < 0 for v in values):
            raise InvalidArgumentError(f"TensorShape(): dimensions must be >= 0 or None, got {dims!r}")
        shape = super().__new__(cls, values)
        shape._unknown_rank = unknown
        return shape

    def __repr__(self) -> str:
        return "TensorShape(None)" if self._unknown_rank else f"TensorShape({list(self)})"

    def __str__(self) -> str:
        if self._unknown_rank:
            return "<unknown>"
        return "(" + ", ".join("None" if d is None else str(d) for d in self) + ("," if len(self) == 1 else "") + ")"

    def __len__(self) -> int:
        if self._unknown_rank:
            raise InvalidArgumentError("Cannot take the length of shape with unknown rank.")
        return tuple.__len__(self)

    def __bool__(self) -> bool:
        return not self._unknown_rank  # (TensorFlow's: a known rank is true, even 0)

    def __eq__(self, other: object) -> bool:
        try:
            other = TensorShape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._unknown_rank == other._unknown_rank and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return TensorShape(None) if self._unknown_rank else TensorShape(tuple.__getitem__(self, key))
        if self._unknown_rank:
            return None
        return tuple.__getitem__(self, key)

    def __add__(self, other: Any) -> TensorShape:
        return self.concatenate(other)

    @property
    def rank(self) -> int | None:
        return None if self._unknown_rank else tuple.__len__(self)

    ndims = rank

    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._unknown_rank else [Dimension(d) for d in self]

    def as_list(self) -> list[int | None]:
        if self._unknown_rank:
            raise InvalidArgumentError("as_list() is not defined on an unknown TensorShape.")
        return list(tuple.__iter__(self))

    def is_fully_defined(self) -> bool:
        return not self._unknown_rank and all(d is not None for d in self)

    def num_elements(self) -> int | None:
        return int(np.prod(self, dtype=np.int64)) if self.is_fully_defined() else None

    def is_compatible_with(self, other: Any) -> bool:
        other = TensorShape(other)
        if self._unknown_rank or other._unknown_rank:
            return True
        return tuple.__len__(self) == tuple.__len__(other) and all(
            a is None or b is None or a == b for a, b in zip(self, other)
        )

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise InvalidArgumentError(f"Shapes {self} and {TensorShape(other)} are incompatible")

    def merge_with(self, other: Any) -> TensorShape:
        shape = TensorShape(other)
        self.assert_is_compatible_with(shape)
        if self._unknown_rank:
            return shape
        if shape._unknown_rank:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self, shape)])

    def concatenate(self, other: Any) -> TensorShape:
        other = TensorShape(other)
        if self._unknown_rank or other._unknown_rank:
            return TensorShape(None)
        return TensorShape(tuple(self) + tuple(other))

    def with_rank(self, rank: int) -> TensorShape:
        return self.merge_with(TensorShape([None] * rank))

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self.rank is not None and self.rank < rank:
            raise InvalidArgumentError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        if self.rank is not None and self.rank > rank:
            raise InvalidArgumentError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        if self.rank not in (None, rank):
            raise InvalidArgumentError(f"Shape {self} must have rank {rank}")

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise InvalidArgumentError(f"Shape {self} is not fully defined")

    def most_specific_compatible_shape(self, other: Any) -> TensorShape:
        other = TensorShape(other)
        if self._unknown_rank or other._unknown_rank or len(self) != len(other):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self, other)])


def _iterable(dims: Any) -> Iterable[Any]:
    if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
        raise InvalidArgumentError(f"TensorShape(): expected a list of dimensions or None, got {dims!r}")
    values: Iterable[Any] = (
        np.asarray(dims, dtype=object).reshape(-1).tolist() if isinstance(dims, np.ndarray) else dims
    )
    return values


_ndarray_shape: Any = np.ndarray.shape


class Tensor(np.ndarray):
    """An ``ndarray`` with the methods TensorFlow's tensors have: ``shape`` is a :class:`TensorShape`; ``set_shape``,
    ``get_shape``, ``numpy``. Operations on Tensors give Tensors (0-d results included, as TensorFlow's do)."""

    @property
    def shape(self) -> TensorShape:
        return TensorShape(_ndarray_shape.__get__(self))

    @shape.setter
    def shape(self, value: Any) -> None:
        _ndarray_shape.__set__(self, value)

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        """Checks that the shape is compatible with ``shape`` (a NumPy array's is always fully known, so there is
        nothing to refine): TensorFlow's ValueError when it is not."""
        if not self.shape.is_compatible_with(shape):
            raise InvalidArgumentError(
                f"Tensor's shape {self.shape} is not compatible with supplied shape {TensorShape(shape)}."
            )

    def numpy(self) -> Any:
        """The value as plain NumPy: an array, or for a 0-d tensor a NumPy scalar (``bytes`` for a string)."""
        plain = self.view(np.ndarray)
        return plain[()] if plain.ndim == 0 else plain

    def __bytes__(self) -> bytes:
        """A scalar string's bytes (NumPy would give the object pointers of a string array); a numeric tensor's
        data, as ``bytes(array)`` gives it."""
        if self.dtype != object:
            return self.tobytes()
        if self.ndim == 0:
            return bytes(self.numpy())
        raise TypeError(f"bytes(): a string Tensor of shape {self.shape} holds several strings; take one, or .numpy()")

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        # 0-d results stay Tensors (NumPy would give scalars), so that `.numpy()` works on them as on TF's
        return array.view(Tensor) if isinstance(array, np.ndarray) else array

    def __getitem__(self, key: Any) -> Any:  # (one element of a tensor is a 0-d tensor, as in TensorFlow)
        item = super().__getitem__(key)
        return item if isinstance(item, np.ndarray) else as_tensor(item)

    def __eq__(self, other: Any) -> Any:
        return np.ndarray.__eq__(self, _python_operand(self, _as_strings(self, other)))

    def __ne__(self, other: Any) -> Any:
        return np.ndarray.__ne__(self, _python_operand(self, _as_strings(self, other)))

    def __repr__(self) -> str:
        return f"<pf.Tensor: shape={self.shape}, dtype={_dtype_name(self.dtype)}, numpy={self._numpy_text(repr)}>"

    def __str__(self) -> str:  # (what `print(x)` shows, as TensorFlow's `tf.Tensor(1, shape=(), dtype=int32)`)
        return f"pf.Tensor({self._numpy_text(str)}, shape={self.shape}, dtype={_dtype_name(self.dtype)})"

    def _numpy_text(self, text: Any) -> str:
        value = self.numpy()
        return str(value) if self.ndim == 0 else text(value)  # (a scalar as `1`, not NumPy 2's `np.int32(1)`)

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iterating over a 0-d Tensor is not allowed")
        return super().__iter__()


def _dtype_name(dtype: np.dtype) -> str:
    return "string" if dtype.kind == "O" else dtype.name


def _binary(name: str) -> Any:
    numpy_method = getattr(np.ndarray, name)
    add = name == "__add__"

    def method(self: Tensor, other: Any) -> Any:
        return numpy_method(self, _python_operand(self, other, add))

    method.__name__ = name
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor"):
    setattr(Tensor, f"__{_name}__", _binary(f"__{_name}__"))
    setattr(Tensor, f"__r{_name}__", _binary(f"__r{_name}__"))
for _name in ("lt", "le", "gt", "ge"):
    setattr(Tensor, f"__{_name}__", _binary(f"__{_name}__"))


def _python_operand(tensor: Tensor, other: Any, add: bool = False) -> Any:
    """A Python list or tuple operand in the tensor's dtype, as TensorFlow converts it (NumPy would make it an int64 or
    float64 array and widen the result): ``image - (123.7, 116.3, 103.5)`` stays float32, integers wrap into an
    integer tensor's dtype. Floats for an integer tensor, or numbers for a bool tensor, are TensorFlow's TypeError
    (its InvalidArgumentError for ``tensor + list``, which converts on another path)."""
    if type(other) not in (list, tuple) or tensor.dtype.kind not in "biufc":
        return other
    values = np.asarray(other)
    if values.dtype.kind not in "biufc":
        return other
    narrowing = {"c": "biuf", "f": "biu", "i": "b", "u": "b"}.get(values.dtype.kind, "")
    if tensor.dtype.kind in narrowing:
        error = InvalidArgumentError if add and tensor.dtype.kind != "b" else TypeError
        raise error(f"Cannot convert {other!r:.60} to EagerTensor of dtype {tensor.dtype.name}; cast one of them")
    with np.errstate(all="ignore"):
        return values.astype(tensor.dtype)


def _as_strings(tensor: Tensor, other: Any) -> Any:
    """``other`` for comparing with a string tensor: Python ``str`` as UTF-8 ``bytes`` (TensorFlow's strings)."""
    if tensor.dtype != object or not isinstance(other, (str, list, tuple)):
        return other
    encoded = np.empty(np.shape(other), dtype=object)
    encoded.reshape(-1)[:] = [s.encode() if isinstance(s, str) else s for s in np.asarray(other, object).reshape(-1)]
    return encoded


class ScalarString(bytes):
    """A scalar string as a loop takes it from ``iter(ds)``: the ``bytes`` themselves (so hashing, joining, writing,
    ``len`` and ``decode`` see the value; a 0-d string array would hand NumPy's object pointers to the buffer
    protocol), with the members of TensorFlow's scalar string tensor: ``numpy()``, ``shape``, ``dtype``, and
    ``x[pf.newaxis]`` (a 1-d string :class:`Tensor`)."""

    __slots__ = ()
    ndim = 0
    dtype = np.dtype(object)

    @property
    def shape(self) -> TensorShape:
        return TensorShape(())

    def get_shape(self) -> TensorShape:
        return TensorShape(())

    def numpy(self) -> bytes:
        return bytes(self)

    def __getitem__(self, key: Any) -> Any:
        if key is None or (type(key) is tuple and all(k is None or k is Ellipsis for k in key)):
            return as_tensor(bytes(self))[key]  # (`raw[tf.newaxis]`: a batch of one)
        return bytes.__getitem__(self, key)

    def __repr__(self) -> str:
        return f"<pf.Tensor: shape=(), dtype=string, numpy={bytes(self)!r}>"

    def __str__(self) -> str:
        return f"pf.Tensor({bytes(self)!r}, shape=(), dtype=string)"


def as_tensor(value: Any) -> Tensor:
    """``value`` (an array, a NumPy or Python scalar, ``bytes``) as a :class:`Tensor`, without a copy for arrays."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return value.view(Tensor)
    if isinstance(value, (bytes, str)):
        out = np.empty((), dtype=object)
        out[()] = value.encode() if isinstance(value, str) else value
        return out.view(Tensor)
    return np.asarray(value).view(Tensor)


def tensor_leaves(element: Any, strings: bool = True) -> Any:
    """``element`` with its array, scalar and (with ``strings``) ``bytes`` leaves as Tensors (sparse and ragged
    leaves, datasets and structures as they are): the arguments of a user function that calls tensor methods."""
    t = type(element)
    if t is np.ndarray:  # (the common cases first: this runs on every result of every op)
        return element.view(Tensor)
    if t is Tensor:
        return element
    if t is dict:
        return {k: tensor_leaves(v, strings) for k, v in element.items()}
    if t is tuple or t is list:
        return t([tensor_leaves(v, strings) for v in element])
    if isinstance(element, tuple) and hasattr(t, "_fields"):
        return t(*(tensor_leaves(v, strings) for v in element))
    if isinstance(element, dict):
        return t((k, tensor_leaves(v, strings)) for k, v in element.items())
    if isinstance(element, (np.ndarray, np.generic)) or (strings and isinstance(element, bytes)):
        return as_tensor(element)
    return element


class _Calls(threading.local):
    tensors = False  # inside a function that gets Tensors (string results are Tensors too)


_calls = _Calls()


@contextlib.contextmanager
def tensors_everywhere() -> Iterator[None]:
    """Inside the block, operations give Tensors for scalar strings too (a function written for TensorFlow may call
    ``.dtype`` or ``.numpy()`` on what ``read_file`` or a parser returns)."""
    outer = _calls.tensors
    _calls.tensors = True
    try:
        yield
    finally:
        _calls.tensors = outer


def tensor_results(fn: Any) -> Any:
    """``fn`` returning Tensors: the array and number leaves of its result (a structure of them included), as
    TensorFlow's operations return tensors; a scalar string stays ``bytes`` (what writers, hashes and dict keys
    take) except inside a function that gets Tensors (:func:`tensors_everywhere`). The op namespaces (``pf.image``,
    ``pf.io``, ``pf.strings`` ...) export their functions so; inside parafeed the plain functions are called."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return tensor_leaves(fn(*args, **kwargs), strings=_calls.tensors)

    call.__wrapped__ = fn
    return call


def export_tensor_results(namespace: dict[str, Any]) -> None:
    """Every public function named in ``namespace["__all__"]`` replaced by its :func:`tensor_results` form."""
    wrapped: dict[int, Any] = {}  # (one wrapper per function: aliases stay the same object)
    for name in namespace["__all__"]:
        value = namespace[name]
        if isinstance(value, types.FunctionType):
            namespace[name] = wrapped.setdefault(id(value), tensor_results(value))

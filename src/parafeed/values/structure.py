"""Nested element structures and element specs.

An element is a leaf or a nest of tuples, namedtuples and dicts whose leaves are NumPy arrays, NumPy scalars, ``bytes``
(scalar strings) or datasets. Lists are leaves (tf.data turns them into tensors). As in ``tf.nest``, dicts flatten in
sorted key order and pack back in the key order of the structure they are packed like.

Specs describe leaves: :class:`TensorSpec` (shape, dtype) and :class:`DatasetSpec` (a dataset-valued leaf, as made by
``window``). Shapes are tuples of ints with ``None`` for an unknown dimension, or ``None`` for an unknown rank.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.values import dtype_object as dtypes
from parafeed.values.dtype_object import STRING as STRING  # (re-exported: every layer takes it from here)

_DTYPE_NAMES = {"string": STRING, "str": STRING, "bytes": STRING}


# --------------------------------------------------------------------------------------------------- nests


def is_nested(value: Any) -> bool:
    """Whether ``value`` is a tuple, namedtuple or dict (a structure), not a leaf."""
    return isinstance(value, (tuple, dict))


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _children(value: tuple[Any, ...] | dict[Any, Any]) -> Sequence[Any]:
    if isinstance(value, dict):
        return [value[k] for k in _sorted_keys(value)]
    return value


def _sorted_keys(mapping: dict[Any, Any]) -> list[Any]:
    try:
        return sorted(mapping)
    except TypeError as err:
        raise ElementTypeError(
            f"dict keys of an element must be sortable (strings, say), got keys {list(mapping)!r}"
        ) from err


def flatten(value: Any) -> list[Any]:
    """Leaves of ``value`` in tf.nest order (dict values by sorted key)."""
    if isinstance(value, tuple):
        if not value:
            return []
        out: list[Any] = []
        for child in value:
            if isinstance(child, (tuple, dict)):
                out.extend(flatten(child))
            else:
                out.append(child)
        return out
    if isinstance(value, dict):
        return flatten(tuple(_children(value)))
    return [value]


def _rebuild(template: Any, children: list[Any]) -> Any:
    if isinstance(template, dict):
        by_key = dict(zip(_sorted_keys(template), children))
        return type(template)((k, by_key[k]) for k in template)
    if _is_namedtuple(template):
        return type(template)(*children)
    return tuple(children)


def pack_as(structure: Any, flat: Sequence[Any]) -> Any:
    """Inverse of :func:`flatten`: the leaves ``flat`` in the shape of ``structure``."""
    it = iter(flat)

    def build(node: Any) -> Any:
        if isinstance(node, (tuple, dict)):
            return _rebuild(node, [build(child) for child in _children(node)])
        return next(it)

    try:
        packed = build(structure)
    except StopIteration:
        raise InvalidArgumentError(f"pack_as: too few leaves ({len(flat)}) for structure {structure!r}") from None
    if next(it, _END) is not _END:
        raise InvalidArgumentError(f"pack_as: too many leaves ({len(flat)}) for structure {structure!r}")
    return packed


_END = object()


def same_structure(a: Any, b: Any, check_types: bool = True) -> bool:
    """Whether ``a`` and ``b`` have the same nesting (and, with ``check_types``, the same container types)."""
    if type(a) is tuple and type(b) is tuple:  # the common case, plain tuples: leaves need no call each
        return len(a) == len(b) and all(
            same_structure(x, y, check_types)
            for x, y in zip(a, b)
            if isinstance(x, (tuple, dict)) or isinstance(y, (tuple, dict))
        )
    a_nested, b_nested = isinstance(a, (tuple, dict)), isinstance(b, (tuple, dict))
    if a_nested != b_nested:
        return False
    if not a_nested:
        return True
    if isinstance(a, dict) != isinstance(b, dict):
        return False
    if isinstance(a, dict):
        if set(a) != set(b):
            return False
    elif len(a) != len(b):
        return False
    if check_types and _is_namedtuple(a) != _is_namedtuple(b):
        return False
    if check_types and _is_namedtuple(a) and type(a) is not type(b):
        return False
    return all(same_structure(x, y, check_types) for x, y in zip(_children(a), _children(b)))


def map_structure(fn: Callable[..., Any], *structures: Any) -> Any:
    """Apply ``fn`` to the corresponding leaves of one or more structures of the same nesting."""
    first = structures[0]
    for other in structures[1:]:
        if not same_structure(first, other, check_types=False):
            raise InvalidArgumentError(f"map_structure: structures differ: {first!r} vs {other!r}")
    flats = [flatten(s) for s in structures]
    return pack_as(first, [fn(*leaves) for leaves in zip(*flats)])


def map_structure_up_to(shallow: Any, fn: Callable[[Any], Any], deep: Any) -> Any:
    """Apply ``fn`` to the sub-structures of ``deep`` found at the leaves of ``shallow``."""
    if not isinstance(shallow, (tuple, dict)):
        return fn(deep)
    if not same_structure(shallow, deep, check_types=False) and not _same_top(shallow, deep):
        raise InvalidArgumentError(f"structure {deep!r} does not match {shallow!r}")
    return _rebuild(shallow, [map_structure_up_to(s, fn, d) for s, d in zip(_children(shallow), _children(deep))])


def _same_top(shallow: Any, deep: Any) -> bool:
    if isinstance(shallow, dict):
        return isinstance(deep, dict) and set(shallow) == set(deep)
    return isinstance(deep, tuple) and len(deep) == len(shallow)


# --------------------------------------------------------------------------------------------------- dtypes, shapes

Shape = tuple[int | None, ...] | None
"""A shape: its dimensions (None for an unknown one), or None for an unknown rank."""


def as_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype for a dtype given as NumPy, as a name ("float32", "string") or as a TensorFlow DType.

    Strings are ``np.dtype(object)`` holding ``bytes``.
    """
    if dtype is None:
        raise InvalidArgumentError("dtype must be given, got None")
    if isinstance(dtype, dtypes.DType):
        return dtype.dtype
    if hasattr(dtype, "as_numpy_dtype"):  # a tf.DType, accepted without importing TensorFlow
        numpy_dtype: np.dtype = np.dtype(dtype.as_numpy_dtype)  # (annotated: numpy's stubs give Any on Python 3.10)
        return numpy_dtype
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    if dtype in (bytes, str, object, np.bytes_, np.str_):
        return STRING
    if dtype is int:
        raise InvalidArgumentError("dtype `int` is ambiguous: use 'int32' or 'int64' (tf.data gives int64 for range)")
    if dtype is float:
        float32: np.dtype = np.dtype(np.float32)
        return float32
    try:
        dt: np.dtype = np.dtype(dtype)
    except TypeError as err:
        raise InvalidArgumentError(f"cannot interpret {dtype!r} as a dtype; use a NumPy dtype or a name") from err
    if dt.kind in "USO":
        return STRING
    if dt.kind not in "biufc":
        raise InvalidArgumentError(f"dtype {dt} is not supported; use a bool, integer, float, complex or string dtype")
    return dt


def dtype_name(dtype: Any) -> str:
    """The tf-style name of a dtype: "string" for byte strings, the NumPy name otherwise."""
    return "string" if dtype == STRING else np.dtype(dtype).name


def as_shape(shape: Any) -> Shape:
    """Normalise a shape given as a tuple/list (``None`` or ``-1`` for unknown), a TensorShape or ``None``."""
    if shape is None:
        return None
    if hasattr(shape, "as_list"):  # tf.TensorShape
        if getattr(shape, "rank", 0) is None:
            return None
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if isinstance(shape, np.ndarray):
        shape = shape.tolist()
    if not isinstance(shape, (tuple, list)):
        raise InvalidArgumentError(f"a shape must be a tuple or list of ints (None for unknown), got {shape!r}")
    dims: list[int | None] = []
    for d in shape:
        if d is None or (isinstance(d, (int, np.integer)) and d == -1):
            dims.append(None)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0:
            dims.append(int(d))
        elif hasattr(d, "value"):  # tf.compat.v1.Dimension
            dims.append(d.value)
        else:
            raise InvalidArgumentError(f"a shape dimension must be an int >= 0 or None, got {d!r} in {shape!r}")
    return tuple(dims)


def shape_compatible(a: Shape, b: Shape) -> bool:
    """Whether two shapes can describe the same value (``None`` matches anything)."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def most_specific_compatible_shape(a: Shape, b: Shape) -> Shape:
    """The tightest shape that describes values of both shapes: unequal dimensions become ``None``."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def shape_str(shape: Shape) -> str:
    if shape is None:
        return "<unknown>"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# --------------------------------------------------------------------------------------------------- specs


class TensorSpec:
    """Shape and dtype of one leaf of an element, like ``tf.TensorSpec``.

    Example:
        >>> pf.TensorSpec(shape=(None, 3), dtype="float32")
        TensorSpec(shape=(None, 3), dtype=float32)
    """

    __slots__ = ("dtype", "name", "shape")

    def __init__(self, shape: Any, dtype: Any = np.float32, name: str | None = None):
        self.shape = as_shape(shape)
        self.dtype = dtypes.of(as_dtype(dtype))  # (a pf.DType: NumPy takes it as a dtype, tf code reads .max ...)
        self.name = name

    @classmethod
    def from_value(cls, value: Any) -> TensorSpec:
        if isinstance(value, bytes):
            return cls((), STRING)
        value = np.asarray(value)
        return cls(value.shape, value.dtype)

    def is_compatible_with(self, other: Any) -> bool:
        """Whether ``other`` (a spec or a value) has this dtype and a compatible shape."""
        if not isinstance(other, TensorSpec):
            if isinstance(other, (TensorSpec, DatasetSpec)) or is_nested(other):
                return False
            other = TensorSpec.from_value(other)
        return self.dtype == other.dtype and shape_compatible(self.shape, other.shape)

    def most_specific_compatible(self, other: TensorSpec) -> TensorSpec:
        return TensorSpec(most_specific_compatible_shape(self.shape, other.shape), self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={shape_str(self.shape)}, dtype={dtype_name(self.dtype)})"


class DatasetSpec:
    """Spec of a dataset-valued leaf (the windows made by ``Dataset.window``)."""

    __slots__ = ("element_spec",)

    def __init__(self, element_spec: Any):
        self.element_spec = element_spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatasetSpec) and specs_equal(self.element_spec, other.element_spec)

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec!r})"


def spec_of(element: Any) -> Any:
    """The spec structure of an element (fully defined shapes)."""
    return map_structure(_leaf_spec, element)


def _leaf_spec(leaf: Any) -> Any:
    if hasattr(leaf, "element_spec"):
        return DatasetSpec(leaf.element_spec)
    spec_fn = getattr(leaf, "_leaf_spec", None)  # leaf types of other modules (SparseTensor)
    return spec_fn() if spec_fn else TensorSpec.from_value(leaf)


def specs_equal(a: Any, b: Any) -> bool:
    if not same_structure(a, b):
        return False
    return all(x == y for x, y in zip(flatten(a), flatten(b)))


def specs_compatible(a: Any, b: Any) -> bool:
    """Whether two spec structures have the same nesting, dtypes and compatible shapes."""
    if not same_structure(a, b):
        return False
    for x, y in zip(flatten(a), flatten(b)):
        if type(x) is not type(y):
            return False
        if hasattr(x, "is_compatible_with") and not x.is_compatible_with(y):  # tensor and sparse specs
            return False
    return True


def most_specific_compatible_spec(a: Any, b: Any) -> Any:
    def merge(x: Any, y: Any) -> Any:
        if hasattr(x, "most_specific_compatible"):  # tensor and sparse specs
            return x.most_specific_compatible(y)
        return x

    return map_structure(merge, a, b)


def batch_spec(spec: Any, batch_size: int | None) -> Any:
    """The spec of batches of ``spec`` elements (a leading dimension of ``batch_size``)."""

    def add_dim(s: Any) -> Any:
        if hasattr(s, "_batch"):  # leaf specs of other modules (SparseTensorSpec)
            return s._batch(batch_size)
        if not isinstance(s, TensorSpec):
            raise ElementTypeError(f"cannot batch a leaf with spec {s!r}")
        return TensorSpec(None if s.shape is None else (batch_size, *s.shape), s.dtype)

    return map_structure(add_dim, spec)


def unbatch_spec(spec: Any, step: str = "unbatch()") -> Any:
    """The spec of the rows of ``spec`` elements (the first dimension dropped); scalars cannot be unbatched."""

    def drop_dim(s: Any) -> Any:
        if hasattr(s, "_unbatch"):  # leaf specs of other modules (SparseTensorSpec)
            return s._unbatch(step)
        if not isinstance(s, TensorSpec):
            raise ElementTypeError(f"{step}: cannot unbatch a leaf with spec {s!r}")
        if s.shape is not None and len(s.shape) == 0:
            raise InvalidArgumentError(
                f"{step}: cannot unbatch an input with scalar components: every component needs rank >= 1, got "
                f"spec {s!r}"
            )
        return TensorSpec(None if s.shape is None else s.shape[1:], s.dtype)

    return map_structure(drop_dim, spec)


def iter_leaves_with_paths(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, leaf) pairs, paths like ``[0]['image']``, for error messages."""
    if isinstance(value, dict):
        for k in _sorted_keys(value):
            yield from iter_leaves_with_paths(value[k], f"{prefix}[{k!r}]")
    elif isinstance(value, tuple):
        for i, child in enumerate(value):
            yield from iter_leaves_with_paths(child, f"{prefix}[{i}]")
    else:
        yield prefix or "element", value

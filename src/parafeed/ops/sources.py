"""Source datasets: in-memory tensors, ranges, Python generators and file lists."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.arguments import as_int
from parafeed.dataset import UNKNOWN, Dataset
from parafeed.elements import _short, to_element
from parafeed.errors import ElementTypeError, InvalidArgumentError, StateError
from parafeed.iterator import DatasetIterator
from parafeed.structure import (
    STRING,
    TensorSpec,
    as_dtype,
    dtype_name,
    flatten,
    is_nested,
    iter_leaves_with_paths,
    map_structure,
    map_structure_up_to,
    pack_as,
    shape_compatible,
    shape_str,
    spec_of,
)


def _read_only(element: Any) -> Any:
    """The element with its arrays as read-only views, so a user function cannot change the source in place."""

    def freeze(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray):
            view = leaf.view()
            view.flags.writeable = False
            return view
        return leaf

    return map_structure(freeze, element)


class TensorsDataset(Dataset):
    """One element: the given (nested) tensors."""

    def __init__(self, tensors: Any, name: str | None = None):
        super().__init__(name=name)
        self._element = _read_only(to_element(tensors, "from_tensors()"))

    def _make_iterator(self) -> DatasetIterator:
        return _TensorsIterator(self._element)

    def _element_spec(self) -> Any:
        return spec_of(self._element)

    def _cardinality(self) -> int:
        return 1


class _TensorsIterator(DatasetIterator):
    def __init__(self, element: Any):
        super().__init__()
        self._element = element
        self._done = False

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        self._done = True
        return self._element

    def _get_state(self) -> dict:
        return {"done": self._done}

    def _set_state(self, state: dict) -> None:
        self._done = bool(state["done"])


class TensorSlicesDataset(Dataset):
    """The slices of (nested) tensors along their first dimension."""

    def __init__(self, tensors: Any, name: str | None = None):
        super().__init__(name=name)
        element = to_element(tensors, "from_tensor_slices()")
        sizes = []
        for path, leaf in iter_leaves_with_paths(element):
            if not isinstance(leaf, np.ndarray):
                raise InvalidArgumentError(
                    f"from_tensor_slices(): component {path} is a scalar ({_short(leaf)}); every component needs a "
                    "first dimension to slice along. Use from_tensors() for a single element."
                )
            sizes.append((path, leaf.shape[0]))
        if not sizes:
            raise InvalidArgumentError("from_tensor_slices(): `tensors` has no components")
        if len({n for _, n in sizes}) > 1:
            listed = ", ".join(f"{p}: {n}" for p, n in sizes)
            raise InvalidArgumentError(
                f"from_tensor_slices(): all components must have the same size in the first dimension, got {listed}"
            )
        self._element = _read_only(element)
        self._flat = flatten(self._element)
        self._length = sizes[0][1]

    def _make_iterator(self) -> DatasetIterator:
        return _SlicesIterator(self._element, self._flat, self._length)

    def _element_spec(self) -> Any:
        return map_structure(lambda s: TensorSpec(s.shape[1:], s.dtype), spec_of(self._element))

    def _sample_element(self) -> Any:
        if self._length == 0:
            return pack_as(self._element, [np.zeros(a.shape[1:], a.dtype)[()] for a in self._flat])
        return pack_as(self._element, [a[0] for a in self._flat])

    def _cardinality(self) -> int:
        return self._length


class _SlicesIterator(DatasetIterator):
    def __init__(self, structure: Any, flat: list[np.ndarray], length: int):
        super().__init__()
        self._structure = structure
        self._plain_tuple = type(structure) is tuple and not any(is_nested(c) for c in structure)
        self._single = len(flat) == 1 and not is_nested(structure)
        self._flat = flat
        self._it = iter(flat[0]) if self._single else zip(*flat)
        self._index = 0
        self._length = length

    def __next__(self) -> Any:
        item = next(self._it)
        self._index += 1
        if self._single or self._plain_tuple:
            return item
        return pack_as(self._structure, item)

    def skip(self, n: int) -> int:
        done = max(0, min(n, self._length - self._index))
        self._seek(self._index + done)
        return done

    def _seek(self, index: int) -> None:
        flat = [a[index:] for a in self._flat]
        self._it = iter(flat[0]) if self._single else zip(*flat)
        self._index = index

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        self._seek(int(state["index"]))


class RangeDataset(Dataset):
    """``range(stop)`` / ``range(start, stop[, step])`` as scalars of ``output_type`` (int64 by default)."""

    _CHUNK = 4096

    def __init__(self, *args: int, output_type: Any = np.int64, name: str | None = None):
        super().__init__(name=name)
        if not 1 <= len(args) <= 3:
            raise InvalidArgumentError(
                f"range(): takes 1 to 3 positional arguments (start, stop, step), got {len(args)}"
            )
        ints = [as_int("range()", "argument", a) for a in args]
        start, stop, step = (0, ints[0], 1) if len(ints) == 1 else (ints[0], ints[1], ints[2] if len(ints) == 3 else 1)
        if step == 0:
            raise InvalidArgumentError("range(): `step` must not be 0")
        self._start, self._stop, self._step = start, stop, step
        self._dtype = as_dtype(output_type)
        if self._dtype == STRING or self._dtype.kind not in "iuf":
            raise InvalidArgumentError(f"range(): `output_type` must be an integer or float dtype, got {output_type!r}")

    def _make_iterator(self) -> DatasetIterator:
        return _RangeIterator(self._start, self._stop, self._step, self._dtype)

    def _element_spec(self) -> Any:
        return TensorSpec((), self._dtype)

    def _sample_element(self) -> Any:
        return self._dtype.type(self._start)

    def _cardinality(self) -> int:
        return len(range(self._start, self._stop, self._step))


class _RangeIterator(DatasetIterator):
    def __init__(self, start: int, stop: int, step: int, dtype: np.dtype):
        super().__init__()
        self._start, self._stop, self._step, self._dtype = start, stop, step, dtype
        self._seek(0)

    def _seek(self, index: int) -> None:
        self._index = index  # elements returned before the current chunk
        self._chunk_size = 0
        total = len(range(self._start, self._stop, self._step))
        self._next_start = self._start + index * self._step
        self._remaining = max(0, total - index)
        self._chunk: Any = iter(())

    def __next__(self) -> Any:
        try:
            return next(self._chunk)
        except StopIteration:
            pass
        self._index += self._chunk_size
        self._chunk_size = 0
        n = min(self._remaining, RangeDataset._CHUNK)
        if n <= 0:
            raise StopIteration
        start = self._next_start
        self._next_start = start + n * self._step
        self._remaining -= n
        self._chunk = iter(np.arange(start, start + n * self._step, self._step, dtype=np.int64).astype(self._dtype))
        self._chunk_size = n
        return next(self._chunk)

    def _get_state(self) -> dict:
        left = self._chunk.__length_hint__()  # elements of the current chunk not yet returned
        return {"index": self._index + self._chunk_size - left}

    def _set_state(self, state: dict) -> None:
        self._seek(int(state["index"]))


class GeneratorDataset(Dataset):
    """Elements yielded by a Python generator, checked against ``output_signature`` and converted to its dtypes."""

    def __init__(
        self,
        generator: Callable[..., Any],
        output_types: Any,
        output_shapes: Any,
        args: tuple | None,
        output_signature: Any,
        name: str | None = None,
    ):
        super().__init__(name=name)
        if not callable(generator):
            raise InvalidArgumentError(
                "from_generator(): `generator` must be a callable that returns an iterator (e.g. a generator "
                f"function), got {type(generator).__name__}; pass `lambda: gen` to wrap an existing iterator"
            )
        self._generator = generator
        self._args = tuple(to_element(a, "from_generator() args") for a in (args or ()))
        self._signature = _signature(output_types, output_shapes, output_signature)

    def _make_iterator(self) -> DatasetIterator:
        return _GeneratorIterator(self._generator(*self._args), self._signature)

    def _element_spec(self) -> Any:
        return self._signature

    def _cardinality(self) -> int:
        return UNKNOWN


def _signature(output_types: Any, output_shapes: Any, output_signature: Any) -> Any:
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise InvalidArgumentError(
                "from_generator(): give either `output_signature` or `output_types`/`output_shapes`, not both"
            )

        def check(spec: Any) -> Any:
            if hasattr(spec, "shape") and hasattr(spec, "dtype") and not isinstance(spec, TensorSpec):
                return TensorSpec(spec.shape, spec.dtype)  # a tf.TensorSpec
            if not isinstance(spec, TensorSpec):
                raise InvalidArgumentError(
                    f"from_generator(): `output_signature` must be a (nested) structure of TensorSpec, got {spec!r}"
                )
            return spec

        return map_structure(check, output_signature)
    if output_types is None:
        raise InvalidArgumentError(
            "from_generator(): `output_signature` is required, e.g. output_signature=pf.TensorSpec((), 'int64')"
        )
    if output_shapes is None:
        return map_structure(lambda t: TensorSpec(None, t), output_types)
    shapes: list = []
    try:
        map_structure_up_to(output_types, shapes.append, output_shapes)
    except ValueError:
        raise InvalidArgumentError(
            f"from_generator(): `output_shapes` {output_shapes!r} must have the structure of `output_types`"
        ) from None
    return pack_as(output_types, [TensorSpec(s, t) for t, s in zip(flatten(output_types), shapes)])


class _GeneratorIterator(DatasetIterator):
    def __init__(self, source: Any, signature: Any):
        super().__init__()
        try:
            self._source = iter(source)
        except TypeError:
            raise InvalidArgumentError(
                f"from_generator(): `generator()` must return an iterator, returned {type(source).__name__}"
            ) from None
        self._signature = signature
        self._index = 0

    def __next__(self) -> Any:
        value = next(self._source)
        self._index += 1
        return _conform(value, self._signature, self._index - 1)

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        """Replays the generator up to the saved index: resuming needs a generator that yields the same sequence
        each time it is called (a file or a seeded computation), as tf.data's checkpoints of generators do not
        exist at all."""
        index = int(state["index"])
        while self._index < index:
            try:
                next(self._source)
            except StopIteration:
                raise StateError(
                    f"set_state(): from_generator(): the generator ended after {self._index} elements, before the "
                    f"saved position {index}; resuming needs a generator that yields the same sequence again"
                ) from None
            self._index += 1

    def close(self) -> None:
        closer = getattr(self._source, "close", None)
        if closer is not None:
            closer()


def _conform(value: Any, signature: Any, index: int) -> Any:
    if isinstance(signature, TensorSpec):
        return _conform_leaf(value, signature, index)
    ok = (isinstance(signature, dict) and isinstance(value, dict) and set(value) == set(signature)) or (
        isinstance(signature, tuple) and isinstance(value, tuple) and len(value) == len(signature)
    )
    if not ok:
        raise ElementTypeError(
            f"from_generator(): `generator` yielded element {index} that did not match the expected structure. "
            f"The expected structure was {signature!r}, but the yielded element was {_short(value)}."
        )
    if isinstance(signature, dict):
        return type(signature)((k, _conform(value[k], s, index)) for k, s in signature.items())
    items = [_conform(v, s, index) for v, s in zip(value, signature)]
    return type(signature)(*items) if hasattr(type(signature), "_fields") else tuple(items)


def _conform_leaf(value: Any, spec: TensorSpec, index: int) -> Any:
    try:
        arr = _string_array(value) if spec.dtype == STRING else np.asarray(value, dtype=spec.dtype)
    except (TypeError, ValueError, OverflowError):
        raise ElementTypeError(
            f"from_generator(): `generator` yielded element {index} that could not be converted to the expected "
            f"type. The expected type was {dtype_name(spec.dtype)}, but the yielded element was {_short(value)}."
        ) from None
    if not shape_compatible(spec.shape, arr.shape):
        raise ElementTypeError(
            f"from_generator(): `generator` yielded element {index} of shape {shape_str(arr.shape)} where an "
            f"element of shape {shape_str(spec.shape)} was expected."
        )
    return arr[()] if arr.ndim == 0 else arr


def _string_array(value: Any) -> np.ndarray:
    if isinstance(value, (bytes, str)):
        return np.array(value.encode() if isinstance(value, str) else value, dtype=object)
    leaf = to_element(value)
    arr = np.asarray(leaf, dtype=object)
    if not all(isinstance(x, bytes) for x in arr.reshape(-1)):
        raise TypeError("not strings")
    return arr


def list_files(file_pattern: str | list[str], shuffle: bool | None, seed: int | None, name: str | None) -> Dataset:
    """The files matching glob pattern(s), as ``bytes`` names; shuffled each epoch unless ``shuffle=False``."""
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
    names: list[bytes] = []
    for pattern in patterns:
        pattern = os.fsdecode(pattern)
        names.extend(os.fsencode(p) for p in sorted(glob.glob(pattern)))
    if not names:
        raise InvalidArgumentError(f"list_files(): no files matched pattern(s) {', '.join(map(str, patterns))}")
    files = TensorSlicesDataset(np.array(names, dtype=object), name=name)
    if shuffle is False:
        return files
    return files.shuffle(len(names), seed=seed)


class ElementsDataset(Dataset):
    """A dataset over a list of elements already in memory (windows, groups, cached data)."""

    def __init__(self, elements: list, element_spec: Any = None, name: str | None = None):
        super().__init__(name=name)
        self._elements = elements
        if element_spec is not None:
            self._spec = element_spec

    def _make_iterator(self) -> DatasetIterator:
        return _ListIterator(self._elements)

    def _cardinality(self) -> int:
        return len(self._elements)


class _ListIterator(DatasetIterator):
    def __init__(self, elements: list):
        super().__init__()
        self._elements = elements
        self._it = iter(elements)
        self._index = 0

    def __next__(self) -> Any:
        x = next(self._it)
        self._index += 1
        return x

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        self._index = int(state["index"])
        self._it = iter(self._elements[self._index :])

"""``from_generator``: elements yielded by a Python generator, checked against and converted to a signature."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.dataset import UNKNOWN, Dataset
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError, StateError
from parafeed.values.elements import short_repr, to_element
from parafeed.values.sparse import SparseTensorSpec, conform_sparse
from parafeed.values.structure import (
    STRING,
    TensorSpec,
    dtype_name,
    flatten,
    map_structure,
    map_structure_up_to,
    pack_as,
    shape_compatible,
    shape_str,
)


class YieldedElementError(InvalidArgumentError, ElementTypeError):
    """A generator yielded an element that does not fit the signature: tf.data's ``InvalidArgumentError``, and a
    TypeError (an element of the wrong structure or type)."""


class GeneratorDataset(Dataset):
    """Elements yielded by a Python generator, checked against ``output_signature`` and converted to its dtypes."""

    kind = SOURCE

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
            raise ArgumentTypeError(
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


def _is_tf_sparse_spec(spec: Any) -> bool:
    """Whether ``spec`` is TensorFlow's SparseTensorSpec (ported signatures use it; if the program has not imported
    TensorFlow, no value can be one)."""
    tf = sys.modules.get("tensorflow")
    return tf is not None and isinstance(spec, tf.SparseTensorSpec)


def _signature(output_types: Any, output_shapes: Any, output_signature: Any) -> Any:
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise InvalidArgumentError(
                "from_generator(): give either `output_signature` or `output_types`/`output_shapes`, not both"
            )

        def check(spec: Any) -> Any:
            if isinstance(spec, SparseTensorSpec) or _is_tf_sparse_spec(spec):
                return SparseTensorSpec(spec.shape, spec.dtype)
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
    if isinstance(signature, SparseTensorSpec):
        return conform_sparse(value, signature, f"from_generator(): `generator` yielded element {index}")
    ok = (isinstance(signature, dict) and isinstance(value, dict) and set(value) == set(signature)) or (
        isinstance(signature, tuple) and isinstance(value, tuple) and len(value) == len(signature)
    )
    if not ok:
        raise YieldedElementError(
            f"from_generator(): `generator` yielded element {index} that did not match the expected structure. "
            f"The expected structure was {signature!r}, but the yielded element was {short_repr(value)}."
        )
    if isinstance(signature, dict):
        return type(signature)((k, _conform(value[k], s, index)) for k, s in signature.items())
    items = [_conform(v, s, index) for v, s in zip(value, signature)]
    return type(signature)(*items) if hasattr(type(signature), "_fields") else tuple(items)


def _conform_leaf(value: Any, spec: TensorSpec, index: int) -> Any:
    try:
        arr = _string_array(value) if spec.dtype == STRING else np.asarray(value, dtype=spec.dtype)
    except (TypeError, ValueError, OverflowError):
        raise YieldedElementError(
            f"from_generator(): `generator` yielded element {index} that could not be converted to the expected "
            f"type. The expected type was {dtype_name(spec.dtype)}, but the yielded element was {short_repr(value)}."
        ) from None
    if not shape_compatible(spec.shape, arr.shape):
        raise YieldedElementError(
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
        raise ElementTypeError("not strings")
    return arr

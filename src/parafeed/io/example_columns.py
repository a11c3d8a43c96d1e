"""Reading features out of serialized tf.train.Example into per-feature columns (a batch's values of one feature).

The ``parafeed.io._native`` C decoder reads the wire format straight into columns; a batch it does not handle (unusual
encodings, malformed bytes) is decoded with protobuf, which defines the semantics. Both give the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from parafeed.errors import ParseError
from parafeed.io.example_proto import message_classes
from parafeed.io.feature_specs import numpy_dtype
from parafeed.values.structure import STRING

try:
    from parafeed.io import _native
except ImportError:
    _native = None  # type: ignore[assignment]  # (an optional extension)

_KINDS = {"string": 0, "float32": 1, "int64": 2}  # the C decoder's codes for the feature dtypes
_KIND_FIELD = ["bytes_list", "float_list", "int64_list"]
MISSING, MISMATCH = -1, -2  # counts for an example without the feature, or with values of another type


class Column:
    """One feature's values across a batch: ``counts[i]`` values of example i (-1 missing, -2 other type)."""

    __slots__ = ("counts", "values")

    def __init__(self, counts: np.ndarray, values: Any):
        self.counts = counts
        self.values = values


def read_columns(serialized: Sequence[bytes], keys: list[str], dtypes: list[str]) -> list[Column]:
    """The columns of features ``keys`` (of ``dtypes``) across the batch ``serialized``."""
    return _columns_native(serialized, keys, dtypes) or _columns_protobuf(serialized, keys, dtypes)


def native_decoder() -> bool:
    return _native is not None


def wire_kinds(dtypes: list[str]) -> bytes:
    """The C decoder's codes for feature dtypes."""
    return bytes(_KINDS[d] for d in dtypes)


def decode_single(serialized: bytes, keys: tuple[bytes, ...], kinds: bytes) -> tuple | None:
    """``(counts, values)`` per key of one example from the C decoder (None: it leaves this one to protobuf)."""
    return _native.decode_examples((serialized,), keys, kinds)


def _columns_native(serialized: Sequence[bytes], keys: list[str], dtypes: list[str]) -> list[Column] | None:
    if _native is None:
        return None
    out = _native.decode_examples(serialized, tuple(k.encode() for k in keys), wire_kinds(dtypes))
    if out is None:
        return None
    columns = []
    for (counts, values), dtype in zip(out, dtypes):
        if dtype == "string":
            arr = np.empty(len(values), dtype=STRING)
            arr[:] = values
        else:
            arr = np.frombuffer(values, "<f4" if dtype == "float32" else np.int64)
        columns.append(Column(np.frombuffer(counts, np.int64), arr))
    return columns


def decode_message(message: Any, data: Any, what: str) -> Any:
    if not isinstance(data, bytes):
        raise ParseError(f"{what} must be bytes (a serialized proto), got {type(data).__name__}")
    try:
        return message.FromString(data)
    except Exception as err:
        raise ParseError(f"{what} is not a valid {message.DESCRIPTOR.name}: {err}") from None


def feature_values(feature: Any, dtype: str) -> tuple[int, list]:
    """(count, values) of a Feature message for the expected dtype: count -1 when empty, -2 for another type."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return MISSING, []
    if kind != _KIND_FIELD[_KINDS[dtype]]:
        return MISMATCH, []
    values = list(getattr(feature, kind).value)
    return len(values), values


def _columns_protobuf(serialized: Sequence[bytes], keys: list[str], dtypes: list[str]) -> list[Column]:
    example_class = message_classes()["Example"]
    counts = np.full((len(keys), len(serialized)), MISSING, np.int64)
    values: list[list] = [[] for _ in keys]
    for i, data in enumerate(serialized):
        feature_map = decode_message(example_class, data, f"serialized[{i}]").features.feature
        for j, (key, dtype) in enumerate(zip(keys, dtypes)):
            if key in feature_map:
                counts[j, i], vals = feature_values(feature_map[key], dtype)
                values[j].extend(vals)
    return [make_column(dtype, counts[j], values[j]) for j, dtype in enumerate(dtypes)]


def actual_type(serialized: Sequence[bytes], i: int, key: str) -> str:
    """The type name (as tf.io's errors give it) of feature ``key`` in example ``i``."""
    feature = decode_message(message_classes()["Example"], serialized[i], f"serialized[{i}]").features.feature[key]
    return {"bytes_list": "bytes", "float_list": "float", "int64_list": "int64"}[feature.WhichOneof("kind")]


def make_column(dtype: str, counts: Any, values: list) -> Column:
    """A column of ``values`` (Python values of ``dtype``) with the examples' ``counts``."""
    if dtype == "string":
        arr = np.empty(len(values), dtype=STRING)
        arr[:] = values
    else:
        arr = np.array(values, dtype=numpy_dtype(dtype))
    return Column(np.array(counts, np.int64), arr)

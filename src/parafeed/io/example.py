"""Parsing tf.train.Example and SequenceExample into NumPy, with tf.io's feature specs, results and errors.

``parse_example`` decodes a batch at once: the ``parafeed._native`` C decoder reads the wire format straight into
per-feature columns; a batch it does not handle (unusual encodings, malformed bytes) is decoded with protobuf, which
defines the semantics. Both give the same columns, which are then checked and shaped here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError, ParseError
from parafeed.io.example_proto import message_classes
from parafeed.io.ragged_feature import RaggedFeature, output_order, parse_ragged
from parafeed.sparse import SparseTensor
from parafeed.structure import STRING, as_dtype, as_shape

try:
    from parafeed import _native
except ImportError:
    _native = None

_KINDS = {"string": 0, "float32": 1, "int64": 2}
_KIND_FIELD = ["bytes_list", "float_list", "int64_list"]
_TYPE_NAME = {"string": "bytes", "float32": "float", "int64": "int64"}  # the names in tf.io's messages
_MISSING, _MISMATCH = -1, -2


def _feature_dtype(dtype: Any) -> str:
    if isinstance(dtype, str) and dtype in _KINDS:
        return dtype
    dt = as_dtype(dtype)
    name = "string" if dt == STRING else dt.name
    if name not in _KINDS:
        raise InvalidArgumentError(
            f"feature dtype must be float32, int64 or string (what a tf.train.Example holds), got {dtype!r}"
        )
    return name


@dataclass(frozen=True)
class FixedLenFeature:
    """A feature with a fixed number of values, parsed into an array of ``shape`` (like tf.io.FixedLenFeature)."""

    shape: Any
    dtype: Any
    default_value: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", as_shape(self.shape) or ())
        object.__setattr__(self, "dtype", _feature_dtype(self.dtype))
        if None in self.shape:
            raise InvalidArgumentError(f"FixedLenFeature: shape must be fully defined, got {self.shape}")

        object.__setattr__(self, "size", math.prod(self.shape))  # values per example


@dataclass(frozen=True)
class VarLenFeature:
    """A feature with any number of values, parsed into a :class:`SparseTensor` (like tf.io.VarLenFeature)."""

    dtype: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _feature_dtype(self.dtype))


@dataclass(frozen=True)
class FixedLenSequenceFeature:
    """A feature holding a sequence of ``shape``-sized items, parsed into ``(length, *shape)`` arrays padded to the
    batch's longest with ``default_value`` (like tf.io.FixedLenSequenceFeature)."""

    shape: Any
    dtype: Any
    allow_missing: bool = False
    default_value: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", as_shape(self.shape) or ())
        object.__setattr__(self, "dtype", _feature_dtype(self.dtype))


def _as_spec(key: str, spec: Any) -> Any:
    """Our spec from ours or from a tf.io spec (duck-typed by class name, so ported code keeps working)."""
    if isinstance(spec, (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, RaggedFeature)):
        return spec
    kind = type(spec).__name__
    if kind == "RaggedFeature":
        from parafeed.io.ragged_feature import from_tf

        return from_tf(spec)
    if kind == "FixedLenFeature":
        return FixedLenFeature(spec.shape, spec.dtype, spec.default_value)
    if kind == "VarLenFeature":
        return VarLenFeature(spec.dtype)
    if kind == "FixedLenSequenceFeature":
        return FixedLenSequenceFeature(spec.shape, spec.dtype, spec.allow_missing, spec.default_value)
    raise InvalidArgumentError(
        f"feature {key!r}: unsupported spec {spec!r}; use FixedLenFeature, VarLenFeature, FixedLenSequenceFeature "
        "or RaggedFeature"
    )


def _numpy_dtype(name: str) -> np.dtype:
    return STRING if name == "string" else np.dtype(name)


# ---------------------------------------------------------------------------------------------- columns


class _Column:
    """One feature's values across a batch: ``counts[i]`` values of example i (-1 missing, -2 other type)."""

    __slots__ = ("counts", "values")

    def __init__(self, counts: np.ndarray, values: Any):
        self.counts = counts
        self.values = values


def _columns_native(serialized: Sequence[bytes], keys: list[str], dtypes: list[str]) -> list[_Column] | None:
    if _native is None:
        return None
    out = _native.decode_examples(serialized, tuple(k.encode() for k in keys), bytes(_KINDS[d] for d in dtypes))
    if out is None:
        return None
    columns = []
    for (counts, values), dtype in zip(out, dtypes):
        if dtype == "string":
            arr = np.empty(len(values), dtype=STRING)
            arr[:] = values
        else:
            arr = np.frombuffer(values, "<f4" if dtype == "float32" else np.int64)
        columns.append(_Column(np.frombuffer(counts, np.int64), arr))
    return columns


def _decode(message: Any, data: Any, what: str) -> Any:
    if not isinstance(data, bytes):
        raise ParseError(f"{what} must be bytes (a serialized proto), got {type(data).__name__}")
    try:
        return message.FromString(data)
    except Exception as err:
        raise ParseError(f"{what} is not a valid {message.DESCRIPTOR.name}: {err}") from None


def _feature_values(feature: Any, dtype: str) -> tuple[int, list]:
    """(count, values) of a Feature message for the expected dtype: count -1 when empty, -2 for another type."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return _MISSING, []
    if kind != _KIND_FIELD[_KINDS[dtype]]:
        return _MISMATCH, []
    values = list(getattr(feature, kind).value)
    return len(values), values


def _columns_protobuf(serialized: Sequence[bytes], keys: list[str], dtypes: list[str]) -> list[_Column]:
    example_class = message_classes()["Example"]
    counts = np.full((len(keys), len(serialized)), _MISSING, np.int64)
    values: list[list] = [[] for _ in keys]
    for i, data in enumerate(serialized):
        feature_map = _decode(example_class, data, f"serialized[{i}]").features.feature
        for j, (key, dtype) in enumerate(zip(keys, dtypes)):
            if key in feature_map:
                counts[j, i], vals = _feature_values(feature_map[key], dtype)
                values[j].extend(vals)
    return [_column(dtype, counts[j], values[j]) for j, dtype in enumerate(dtypes)]


def _actual_type(serialized: Sequence[bytes], i: int, key: str) -> str:
    feature = _decode(message_classes()["Example"], serialized[i], f"serialized[{i}]").features.feature[key]
    return {"bytes_list": "bytes", "float_list": "float", "int64_list": "int64"}[feature.WhichOneof("kind")]


# ---------------------------------------------------------------------------------------------- shaping


def _default(key: str, spec: Any, size: int) -> np.ndarray:
    dtype = _numpy_dtype(spec.dtype)
    if spec.default_value is None:
        return np.full(size, b"" if dtype == STRING else 0, dtype=dtype)
    value = np.asarray(spec.default_value, dtype=object if dtype == STRING else dtype)
    if value.size != size and not (isinstance(spec, FixedLenSequenceFeature) and value.size == 1):
        raise InvalidArgumentError(
            f"feature {key!r}: default_value has {value.size} values but shape {spec.shape} needs {size}"
        )
    flat = np.resize(value.reshape(-1), size)
    if dtype == STRING:
        flat = np.array([v.encode() if isinstance(v, str) else v for v in flat], dtype=STRING).reshape(-1)
    return flat


def _check_types(key: str, spec: Any, column: _Column, serialized: Sequence[bytes]) -> None:
    bad = np.flatnonzero(column.counts == _MISMATCH)
    if len(bad):
        i = int(bad[0])
        raise ParseError(
            f"Key: {key}, Index: {i}.  Data types don't match. Data type: {_actual_type(serialized, i, key)} but "
            f"expected type: {_TYPE_NAME[spec.dtype]}"
        )


def _fixed(key: str, spec: FixedLenFeature, column: _Column, batch: int) -> np.ndarray:
    size, counts = spec.size, column.counts
    missing = counts == _MISSING
    # an empty default (for a shape with no values) means "required", as in tf.io.parse_example
    if missing.any() and (spec.default_value is None or size == 0):
        raise ParseError(f"Feature: {key} (data type: {_TYPE_NAME[spec.dtype]}) is required but could not be found.")
    wrong = np.flatnonzero(~missing & (counts != size))
    if len(wrong):
        i = int(wrong[0])
        raise ParseError(
            f"Key: {key}, Index: {i}.  Number of {_TYPE_NAME[spec.dtype]} values != expected.  Values size: "
            f"{int(counts[i])} but output shape: {list(spec.shape)}"
        )
    out = np.empty((batch, size), dtype=_numpy_dtype(spec.dtype))
    out[missing] = _default(key, spec, size)
    out[~missing] = column.values.reshape(batch - int(missing.sum()), size)
    return out.reshape((batch, *spec.shape))


def _var_len(column: _Column, batch: int) -> SparseTensor:
    counts = np.maximum(column.counts, 0)
    total = int(counts.sum())
    rows = np.repeat(np.arange(batch, dtype=np.int64), counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    cols = np.arange(total, dtype=np.int64) - starts
    width = int(counts.max()) if batch else 0
    return SparseTensor(np.stack([rows, cols], axis=1), column.values, [batch, width])


def _sequence(key: str, spec: FixedLenSequenceFeature, column: _Column, batch: int) -> np.ndarray:
    stride = int(np.prod(spec.shape, dtype=np.int64))
    counts = column.counts
    if not spec.allow_missing and (counts == _MISSING).any():
        raise ParseError(f"Feature: {key} (data type: {_TYPE_NAME[spec.dtype]}) is required but could not be found.")
    counts = np.maximum(counts, 0)
    if stride == 0 or (counts % stride).any():
        i = int(np.flatnonzero(counts % stride)[0]) if stride else 0
        raise ParseError(
            f"Key: {key}, Index: {i}.  Number of {_TYPE_NAME[spec.dtype]} values is not a multiple of stride length. "
            f"Saw {int(counts[i])} values but output shape is {list(spec.shape)}"
        )
    steps = counts // stride
    longest = int(steps.max()) if batch else 0
    out = np.empty((batch, longest, stride), dtype=_numpy_dtype(spec.dtype))
    out[...] = _default(key, spec, stride)
    mask = np.arange(longest)[None, :] < steps[:, None]
    out[mask] = column.values.reshape(-1, stride)
    return out.reshape((batch, longest, *spec.shape))


# ---------------------------------------------------------------------------------------------- public API


def _prepare(features: Mapping[str, Any], step: str) -> dict[str, Any]:
    if not isinstance(features, Mapping) or not features:
        raise InvalidArgumentError(f"{step}: `features` must be a non-empty dict of feature specs")
    specs = {key: _as_spec(key, spec) for key, spec in features.items()}
    # tf.io's order: sparse (VarLen) features, then dense ones, each sorted by key
    specs = dict(sorted(specs.items(), key=lambda kv: (not isinstance(kv[1], VarLenFeature), kv[0])))
    for key, spec in specs.items():
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            raise InvalidArgumentError(
                f"{step}: Unsupported: FixedLenSequenceFeature requires allow_missing to be True (feature {key!r})."
            )
    return specs


def _as_batch(serialized: Any, step: str) -> list:
    if isinstance(serialized, np.ndarray):
        if serialized.ndim != 1:
            raise InvalidArgumentError(f"{step}: `serialized` must be a 1-D batch, got shape {serialized.shape}")
        return serialized.tolist()
    if isinstance(serialized, (bytes, str)):
        raise InvalidArgumentError(f"{step}: `serialized` must be a batch (list or 1-D array) of bytes; use "
                                   "parse_single_example for one")  # fmt: skip
    return list(serialized)


def parse_example(serialized: Any, features: Mapping[str, Any]) -> dict[str, Any]:
    """Parse a batch of serialized tf.train.Example into ``{key: array or SparseTensor}`` (like tf.io.parse_example).

    Example:
        >>> batch = pf.io.parse_example(records, {"x": pf.io.FixedLenFeature([16], "float32"),
        ...                                       "label": pf.io.FixedLenFeature([], "int64")})
        >>> batch["x"].shape
        (256, 16)
    """
    specs = _prepare(features, "parse_example")
    batch = _as_batch(serialized, "parse_example")
    plain = [k for k in specs if not isinstance(specs[k], RaggedFeature)]
    reads = _ragged_columns(specs, [(k, specs[k].dtype) for k in plain])
    keys, dtypes = [k for k, _ in reads], [d for _, d in reads]
    columns = _columns_native(batch, keys, dtypes) or _columns_protobuf(batch, keys, dtypes)
    out: dict[str, Any] = {}
    for key, column in zip(plain, columns):
        spec = specs[key]
        values = column.values
        if (
            type(spec) is FixedLenFeature
            and len(values) == spec.size * len(batch)
            and (column.counts == spec.size).all()
        ):
            out[key] = values.reshape((len(batch), *spec.shape))  # a FixedLenFeature present everywhere
            continue
        _check_types(key, spec, column, batch)
        if isinstance(spec, FixedLenFeature):
            out[key] = _fixed(key, spec, column, len(batch))
        elif isinstance(spec, VarLenFeature):
            out[key] = _var_len(column, len(batch))
        else:
            out[key] = _sequence(key, spec, column, len(batch))
    if len(plain) < len(specs):
        out.update(_ragged(specs, reads, columns, batch))
    return out


def _ragged_columns(specs: dict[str, Any], reads: list) -> list:
    """``reads`` with the value and partition columns of the RaggedFeatures added (each column read once)."""
    have, splits = dict(reads), {}
    for key in sorted(specs):
        if isinstance(specs[key], RaggedFeature):
            split = specs[key].row_splits_dtype.name
            for column, dtype in specs[key].columns(key):
                if have.setdefault(column, dtype) != dtype:
                    raise InvalidArgumentError(
                        f"parse_example: Conflicting type {have[column]} vs {dtype} for feature {column}."
                    )
                if splits.setdefault(column, split) != split:
                    raise InvalidArgumentError(
                        f"parse_example: Conflicting partition type {splits[column]} vs {split} for feature {column}."
                    )
    return list(have.items())


def _ragged(specs: dict[str, Any], reads: list, columns: list, serialized: list) -> dict[str, Any]:
    by_key = {}
    for (key, dtype), column in zip(reads, columns):
        _check_types(key, VarLenFeature(dtype), column, serialized)
        counts = np.maximum(column.counts, 0)
        by_key[key] = (np.concatenate([[0], np.cumsum(counts)]), column.values)
    return {key: parse_ragged(key, specs[key], by_key, len(serialized)) for key in output_order(specs)}


def parse_single_example(serialized: bytes, features: Mapping[str, Any]) -> dict[str, Any]:
    """Parse one serialized tf.train.Example (like tf.io.parse_single_example): arrays without the batch dimension."""
    if not isinstance(serialized, bytes):
        raise ParseError(f"parse_single_example: `serialized` must be bytes, got {type(serialized).__name__}")
    parsed = parse_example([serialized], features)
    return {key: _unbatch(value) for key, value in parsed.items()}


def _unbatch(value: Any) -> Any:
    if isinstance(value, SparseTensor):
        return SparseTensor(value.indices[:, 1:], value.values, value.dense_shape[1:])
    return value[0]


def parse_single_sequence_example(
    serialized: bytes,
    context_features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse one serialized tf.train.SequenceExample into ``(context, sequences)`` (like tf.io's function).

    Context features are FixedLen/VarLen features; sequence features are FixedLenSequenceFeature (an array of
    ``(frames, *shape)``) or VarLenFeature (a SparseTensor indexed by frame and position).
    """
    message = _decode(message_classes()["SequenceExample"], serialized, "serialized")
    context: dict[str, Any] = {}
    if context_features:
        specs = {key: _as_spec(key, s) for key, s in context_features.items()}
        for key, spec in specs.items():
            if isinstance(spec, FixedLenSequenceFeature):
                raise InvalidArgumentError(f"context feature {key!r}: use FixedLenFeature or VarLenFeature")
            count, values = _MISSING, []
            if key in message.context.feature:
                count, values = _feature_values(message.context.feature[key], spec.dtype)
            column = _column(spec.dtype, [count], values)
            if count == _MISMATCH:
                raise ParseError(f"Context feature: {key}.  Data types don't match. Expected type: {spec.dtype}")
            parsed = _fixed(key, spec, column, 1) if isinstance(spec, FixedLenFeature) else _var_len(column, 1)
            context[key] = _unbatch(parsed)
    sequences: dict[str, Any] = {}
    for key, spec in ((k, _as_spec(k, s)) for k, s in (sequence_features or {}).items()):
        lists = message.feature_lists.feature_list
        if key not in lists:
            if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
                raise ParseError(f"Feature list: {key} is required but could not be found.")
            frames = []
        else:
            frames = list(lists[key].feature)
        pairs = [_feature_values(f, spec.dtype) for f in frames]
        if any(c == _MISMATCH for c, _ in pairs):
            raise ParseError(f"Feature list: {key}.  Data types don't match. Expected type: {spec.dtype}")
        counts = [max(c, 0) for c, _ in pairs]
        column = _column(spec.dtype, counts, [v for _, vals in pairs for v in vals])
        if isinstance(spec, VarLenFeature):
            sequences[key] = _var_len(column, len(frames))
        else:
            size = int(np.prod(spec.shape, dtype=np.int64))
            bad = [i for i, c in enumerate(counts) if c != size]
            if bad:
                raise ParseError(
                    f"Feature list: {key}, Index: {bad[0]}.  Number of {_TYPE_NAME[spec.dtype]} values != expected. "
                    f" Values size: {counts[bad[0]]} but output shape: {list(spec.shape)}"
                )
            dtype = _numpy_dtype(spec.dtype)
            sequences[key] = column.values.astype(dtype).reshape((len(frames), *spec.shape))
    return context, sequences


def _column(dtype: str, counts: Any, values: list) -> _Column:
    if dtype == "string":
        arr = np.empty(len(values), dtype=STRING)
        arr[:] = values
    else:
        arr = np.array(values, dtype=_numpy_dtype(dtype))
    return _Column(np.array(counts, np.int64), arr)

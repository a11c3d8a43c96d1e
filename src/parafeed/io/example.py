"""Parsing tf.train.Example and SequenceExample into NumPy, with tf.io's feature specs, results and errors.

``parse_example`` decodes a batch at once: ``example_columns.py`` reads each feature into a column (the C decoder, or
protobuf), and the columns are checked and shaped here into arrays, SparseTensors and RaggedTensors. The feature specs
are in ``feature_specs.py`` and ``ragged_feature.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError, ParseError
from parafeed.io.example_columns import (
    MISMATCH,
    MISSING,
    Column,
    actual_type,
    decode_message,
    decode_single,
    feature_values,
    make_column,
    native_decoder,
    read_columns,
    wire_kinds,
)
from parafeed.io.example_proto import message_classes
from parafeed.io.feature_specs import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, numpy_dtype
from parafeed.io.ragged_feature import RaggedFeature, output_order, parse_ragged
from parafeed.values.byte_strings import is_scalar_string, scalar_bytes
from parafeed.values.sparse import SparseTensor
from parafeed.values.structure import STRING

_TYPE_NAME = {"string": "bytes", "float32": "float", "int64": "int64"}  # the names in tf.io's messages


def as_feature_spec(key: str, spec: Any) -> Any:
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


# ---------------------------------------------------------------------------------------------- shaping


def _default(key: str, spec: Any, size: int) -> np.ndarray:
    dtype = numpy_dtype(spec.dtype)
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


def _check_types(key: str, spec: Any, column: Column, serialized: Sequence[bytes]) -> None:
    bad = np.flatnonzero(column.counts == MISMATCH)
    if len(bad):
        i = int(bad[0])
        raise ParseError(
            f"Key: {key}, Index: {i}.  Data types don't match. Data type: {actual_type(serialized, i, key)} but "
            f"expected type: {_TYPE_NAME[spec.dtype]}"
        )


def _fixed(key: str, spec: FixedLenFeature, column: Column, batch: int) -> np.ndarray:
    size, counts = spec.size, column.counts
    missing = counts == MISSING
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
    out = np.empty((batch, size), dtype=numpy_dtype(spec.dtype))
    out[missing] = _default(key, spec, size)
    out[~missing] = column.values.reshape(batch - int(missing.sum()), size)
    return out.reshape((batch, *spec.shape))


def _var_len(column: Column, batch: int) -> SparseTensor:
    counts = np.maximum(column.counts, 0)
    total = int(counts.sum())
    rows = np.repeat(np.arange(batch, dtype=np.int64), counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    cols = np.arange(total, dtype=np.int64) - starts
    width = int(counts.max()) if batch else 0
    return SparseTensor(np.stack([rows, cols], axis=1), column.values, [batch, width])


def _sequence(key: str, spec: FixedLenSequenceFeature, column: Column, batch: int) -> np.ndarray:
    stride = int(np.prod(spec.shape, dtype=np.int64))
    counts = column.counts
    if not spec.allow_missing and (counts == MISSING).any():
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
    out = np.empty((batch, longest, stride), dtype=numpy_dtype(spec.dtype))
    out[...] = _default(key, spec, stride)
    mask = np.arange(longest)[None, :] < steps[:, None]
    out[mask] = column.values.reshape(-1, stride)
    return out.reshape((batch, longest, *spec.shape))


# ---------------------------------------------------------------------------------------------- public API


def _prepare(features: Mapping[str, Any], step: str) -> dict[str, Any]:
    if not isinstance(features, Mapping) or not features:
        raise InvalidArgumentError(f"{step}: `features` must be a non-empty dict of feature specs")
    specs = {key: as_feature_spec(key, spec) for key, spec in features.items()}
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
            raise InvalidArgumentError(
                f"{step}: `serialized` must be a scalar or a 1-D batch, got shape {serialized.shape}"
            )
        return serialized.tolist()
    return list(serialized)


def parse_example(serialized: Any, features: Mapping[str, Any]) -> dict[str, Any]:
    """Parse a batch of serialized tf.train.Example into ``{key: array or SparseTensor}`` (like tf.io.parse_example).

    A scalar ``serialized`` (``bytes`` or a 0-d array) parses as :func:`parse_single_example` does, as in TensorFlow.

    Example:
        >>> batch = pf.io.parse_example(records, {"x": pf.io.FixedLenFeature([16], "float32"),
        ...                                       "label": pf.io.FixedLenFeature([], "int64")})
        >>> batch["x"].shape
        (256, 16)
    """
    if is_scalar_string(serialized):
        return parse_single_example(serialized, features)
    specs = _prepare(features, "parse_example")
    batch = _as_batch(serialized, "parse_example")
    plain = [k for k in specs if not isinstance(specs[k], RaggedFeature)]
    reads = _ragged_columns(specs, [(k, specs[k].dtype) for k in plain])
    keys, dtypes = [k for k, _ in reads], [d for _, d in reads]
    columns = read_columns(batch, keys, dtypes)
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
    have = dict(reads)
    splits: dict[str, str] = {}
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


def parse_single_example(serialized: Any, features: Mapping[str, Any]) -> dict[str, Any]:
    """Parse one serialized tf.train.Example (like tf.io.parse_single_example): arrays without the batch dimension.

    ``serialized`` is ``bytes`` or a 0-d array of them (``np.reshape(record, [])``, a string element of a dataset).
    """
    if type(serialized) is not bytes:
        serialized = scalar_bytes("parse_single_example", serialized, "serialized", ParseError, text=False)
    plan = _single_plan(features)
    if plan is not None:
        parsed = plan.parse(serialized)
        if parsed is not None:
            return parsed
    parsed = parse_example([serialized], features)
    return {key: _unbatch(value) for key, value in parsed.items()}


class _SinglePlan:
    """The fast path of :func:`parse_single_example` when every feature is a FixedLenFeature (the usual image and
    label records): one call to the C decoder and no batch dimension to add and remove. Any record it does not
    handle as such (a feature missing or of another size, unusual encodings) takes the general path, which decides
    what to return or raise."""

    def __init__(self, specs: dict[str, FixedLenFeature]):
        self.keys = tuple(specs)
        self.wire_keys = tuple(k.encode() for k in specs)
        self.kinds = wire_kinds([spec.dtype for spec in specs.values()])
        self.fields = [
            (spec.shape, spec.size, np.int64(spec.size).tobytes(), None if spec.dtype == "string" else
             np.dtype("<f4" if spec.dtype == "float32" else np.int64))
            for spec in specs.values()
        ]  # fmt: skip

    def parse(self, serialized: bytes) -> dict[str, Any] | None:
        columns = decode_single(serialized, self.wire_keys, self.kinds)
        if columns is None:
            return None
        out = {}
        for key, (shape, size, count, dtype), (counts, values) in zip(self.keys, self.fields, columns):
            if counts != count:
                return None
            if dtype is not None:
                array = np.frombuffer(values, dtype)
                out[key] = array.reshape(shape) if shape else array[0]
            elif shape:
                array = np.empty(size, STRING)
                array[:] = values
                out[key] = array.reshape(shape)
            else:
                out[key] = values[0]
        return out


_plans: dict[tuple, _SinglePlan | None] = {}  # the features' items -> their plan


def _single_plan(features: Mapping[str, Any]) -> _SinglePlan | None:
    """The fast path's plan for ``features``, made once for equal features (a parse function often builds its
    features dict anew for each record, as TensorFlow's guides do)."""
    try:
        key = tuple(features.items())
        return _plans[key]
    except KeyError:
        pass
    except (TypeError, AttributeError):  # unhashable (a list as default value), or not a mapping: no fast path
        return None
    specs = _prepare(features, "parse_single_example")
    plan = _SinglePlan(specs) if all(type(s) is FixedLenFeature for s in specs.values()) and native_decoder() else None
    if len(_plans) >= 64:
        _plans.clear()
    _plans[key] = plan
    return plan


def _unbatch(value: Any) -> Any:
    if isinstance(value, SparseTensor):
        return SparseTensor(value.indices[:, 1:], value.values, value.dense_shape[1:])
    return value[0]


def parse_single_sequence_example(
    serialized: Any,
    context_features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse one serialized tf.train.SequenceExample into ``(context, sequences)`` (like tf.io's function).

    Context features are FixedLen/VarLen features; sequence features are FixedLenSequenceFeature (an array of
    ``(frames, *shape)``) or VarLenFeature (a SparseTensor indexed by frame and position). ``serialized`` is
    ``bytes`` or a 0-d array of them.
    """
    if type(serialized) is not bytes:
        serialized = scalar_bytes("parse_single_sequence_example", serialized, "serialized", ParseError, text=False)
    message = decode_message(message_classes()["SequenceExample"], serialized, "serialized")
    context: dict[str, Any] = {}
    if context_features:
        specs = {key: as_feature_spec(key, s) for key, s in context_features.items()}
        for key, spec in specs.items():
            if isinstance(spec, FixedLenSequenceFeature):
                raise InvalidArgumentError(f"context feature {key!r}: use FixedLenFeature or VarLenFeature")
            count = MISSING
            values: list[Any] = []
            if key in message.context.feature:
                count, values = feature_values(message.context.feature[key], spec.dtype)
            column = make_column(spec.dtype, [count], values)
            if count == MISMATCH:
                raise ParseError(f"Context feature: {key}.  Data types don't match. Expected type: {spec.dtype}")
            parsed = _fixed(key, spec, column, 1) if isinstance(spec, FixedLenFeature) else _var_len(column, 1)
            context[key] = _unbatch(parsed)
    sequences: dict[str, Any] = {}
    for key, spec in ((k, as_feature_spec(k, s)) for k, s in (sequence_features or {}).items()):
        lists = message.feature_lists.feature_list
        if key not in lists:
            if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
                raise ParseError(f"Feature list: {key} is required but could not be found.")
            frames = []
        else:
            frames = list(lists[key].feature)
        pairs = [feature_values(f, spec.dtype) for f in frames]
        if any(c == MISMATCH for c, _ in pairs):
            raise ParseError(f"Feature list: {key}.  Data types don't match. Expected type: {spec.dtype}")
        counts = [max(c, 0) for c, _ in pairs]
        column = make_column(spec.dtype, counts, [v for _, vals in pairs for v in vals])
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
            dtype = numpy_dtype(spec.dtype)
            sequences[key] = column.values.astype(dtype).reshape((len(frames), *spec.shape))
    return context, sequences

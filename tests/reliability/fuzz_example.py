"""Fuzz target: the tf.train.Example parser (native decoding against protobuf, and against the features encoded)."""

from __future__ import annotations

import contextlib
import math
import random
from typing import Any

import numpy as np

import parafeed as pf
from parafeed.errors import ParseError
from parafeed.io import example_columns
from parafeed.values.sparse import SparseTensor
from tests.reliability import wire
from tests.reliability.fuzz_rules import check, leaf_equal, mutate_bytes


def fuzz_one(rng: random.Random, i: int, workdir: str) -> tuple[str, bool, str]:
    batch = [wire.random_example(rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    serialized = [s for s, _ in batch]
    features = [f for _, f in batch]
    specs = random_specs(rng, features)
    mutation = "valid"
    if rng.random() < 0.6:
        k = rng.randrange(len(serialized))
        serialized[k], mutation = mutate_example(rng, serialized[k])
    actual = parse_outcome(serialized, specs, native=True)
    reference = parse_outcome(serialized, specs, native=False)
    check(same_outcome(actual, reference), f"native and protobuf decoding disagree: {_brief(actual)} vs "
                                           f"{_brief(reference)}")  # fmt: skip
    if mutation == "valid":
        expected = expected_parse(features, specs)
        check(same_outcome(actual, expected), f"parsed {_brief(actual)}, expected {_brief(expected)}")
    if len(serialized) == 1:
        single = parse_outcome(serialized, specs, native=True, single=True)
        check(same_outcome(single, unbatch_outcome(actual)), "parse_single_example differs from parse_example")
    if rng.random() < 0.05:  # a SequenceExample parser on the same bytes: protobuf decides; only errors checked
        with contextlib.suppress(ParseError):
            pf.io.parse_single_sequence_example(serialized[0], {"a": pf.io.VarLenFeature("int64")},
                                                {"b": pf.io.VarLenFeature("float32")})  # fmt: skip
    outcome = actual if isinstance(actual, str) else "ok"
    return outcome, mutation == "valid", mutation


_DTYPE = {"bytes": "string", "float": "float32", "int64": "int64"}
_NP = {"string": np.dtype(object), "float32": np.dtype(np.float32), "int64": np.dtype(np.int64)}


def random_specs(rng: random.Random, features: list[dict]) -> dict[str, Any]:
    """A feature spec for the batch: mostly fitting the first example's features, sometimes not."""
    first = features[0]
    keys = list(first) + [k for f in features[1:] for k in f if k not in first]
    chosen = rng.sample(keys, min(len(keys), rng.randint(1, 4))) if keys else []
    if not chosen or rng.random() < 0.2:
        chosen.append(rng.choice([k for k in wire.KEYS if k not in chosen] or ["zz"]))
    specs: dict[str, Any] = {}
    for key in chosen:
        kind, values = first.get(key, (None, []))
        if kind is None or rng.random() < 0.1:
            kind = rng.choice(wire.KINDS)
        dtype = _DTYPE[kind]
        n = len(values)
        style = rng.choice(["fixed", "fixed", "varlen", "sequence"])
        if style == "fixed":
            shape = rng.choice([[n], [n], [1, n], [n, 1]] if n != 1 else [[], [], [1], [1, 1]])
            if n == 4 and rng.random() < 0.5:
                shape = [2, 2]
            if rng.random() < 0.1:
                shape = [rng.randint(0, 3)]
            default = None
            if rng.random() < 0.4:
                size = math.prod(shape)
                default = wire.random_values(rng, kind, size)
                default = np.array(default, dtype=_NP[dtype]).reshape(shape) if dtype != "string" else \
                    np.array(default, dtype=object).reshape(shape)  # fmt: skip
            specs[key] = pf.io.FixedLenFeature(shape, dtype, default)
        elif style == "varlen":
            specs[key] = pf.io.VarLenFeature(dtype)
        else:
            shape = rng.choice([[], [], [2], [1, 1]])
            default = wire.random_values(rng, kind, 1)[0] if rng.random() < 0.3 else None
            specs[key] = pf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=True, default_value=default)
    return specs


class Expected(Exception):
    """The error the parser is expected to raise."""


def expected_parse(features: list[dict], specs: dict[str, Any]) -> Any:
    """What parse_example must give for a batch whose decoded features are ``features`` (or "ParseError")."""
    out: dict[str, Any] = {}
    batch = len(features)
    for key, spec in specs.items():
        dtype = _NP[spec.dtype]
        kind = {v: k for k, v in _DTYPE.items()}[spec.dtype]
        column = []
        for f in features:
            k, values = f.get(key, (None, []))
            if k is None:
                column.append(None)
            elif k != kind:
                return "ParseError"
            else:
                column.append(values)
        if isinstance(spec, pf.io.FixedLenFeature):
            size = math.prod(spec.shape)
            rows = []
            for values in column:
                if values is None:
                    if spec.default_value is None or size == 0:
                        return "ParseError"
                    rows.append(list(np.asarray(spec.default_value, dtype=dtype).reshape(-1)))
                elif len(values) != size:
                    return "ParseError"
                else:
                    rows.append(values)
            out[key] = _array(rows, dtype).reshape((batch, *spec.shape))
        elif isinstance(spec, pf.io.VarLenFeature):
            indices = [[i, j] for i, values in enumerate(column) for j in range(len(values or []))]
            values = [v for values in column for v in (values or [])]
            width = max((len(v or []) for v in column), default=0)
            out[key] = ("sparse", np.array(indices, np.int64).reshape(-1, 2), _array([values], dtype).reshape(-1),
                        np.array([batch, width], np.int64))  # fmt: skip
        else:
            stride = math.prod(spec.shape)
            counts = [len(v or []) for v in column]
            if any(c % stride for c in counts):
                return "ParseError"
            longest = max(counts) // stride if counts else 0
            fill = spec.default_value if spec.default_value is not None else (b"" if spec.dtype == "string" else 0)
            arr = np.empty((batch, longest * stride), dtype=dtype)
            arr[...] = fill
            for i, values in enumerate(column):
                if values:
                    arr[i, : len(values)] = _array([values], dtype).reshape(-1)
            out[key] = arr.reshape((batch, longest, *spec.shape))
    return out


def _array(rows: list[list], dtype: np.dtype) -> np.ndarray:
    flat = [v for row in rows for v in row]
    if dtype == np.dtype(object):
        arr = np.empty(len(flat), dtype=object)
        arr[:] = flat
        return arr
    return np.array(flat, dtype=dtype)


def parse_outcome(serialized: list[bytes], specs: dict, native: bool, single: bool = False) -> Any:
    """The parser's result as comparable values, or the name of the parafeed error it raised."""
    saved = example_columns._native
    if not native:
        example_columns._native = None
    try:
        parse = pf.io.parse_single_example if single else pf.io.parse_example
        result = parse(serialized[0] if single else serialized, specs)
    except ParseError:
        return "ParseError"
    finally:
        example_columns._native = saved
    return {k: ("sparse", v.indices, v.values, v.dense_shape) if isinstance(v, SparseTensor) else v
            for k, v in result.items()}  # fmt: skip


def unbatch_outcome(outcome: Any) -> Any:
    if isinstance(outcome, str):
        return outcome
    return {k: ("sparse", v[1][:, 1:], v[2], v[3][1:]) if isinstance(v, tuple) else v[0] for k, v in outcome.items()}


def same_outcome(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a.keys() != b.keys():
        return False
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, tuple) != isinstance(y, tuple):
            return False
        if isinstance(x, tuple):
            if not all(leaf_equal(p, q) for p, q in zip(x[1:], y[1:])):
                return False
        elif not leaf_equal(x, y):
            return False
    return True


def _brief(outcome: Any) -> str:
    if isinstance(outcome, str):
        return outcome
    return "{" + ", ".join(f"{k!r}: {v!r:.80}" for k, v in outcome.items()) + "}"


def mutate_example(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A damaged or odd serialized Example: generic byte damage or protobuf-aware garbage."""
    roll = rng.random()
    if roll < 0.45:
        out, kinds = data, []
        for _ in range(rng.randint(1, 3)):
            out, kind = mutate_bytes(rng, out)
            kinds.append(kind)
        return out, "+".join(kinds)
    at = rng.randint(0, len(data))
    if roll < 0.6:  # a random field number and wire type, with a few bytes after it
        number = rng.choice([0, 1, 2, 3, 4, 15, 16, 2**29 - 1, 2**29, 2**32, rng.getrandbits(35)])
        piece = wire.varint((number << 3) | rng.randrange(8)) + rng.randbytes(rng.randint(0, 10))
        return data[:at] + piece + data[at:], "tag"
    if roll < 0.72:  # a length-delimited field holding garbage or a damaged message
        inner = rng.randbytes(rng.randint(0, 30)) if rng.random() < 0.5 else mutate_bytes(rng, data)[0]
        return data[:at] + wire.ld(rng.choice([1, 2, 3, 1000]), inner) + data[at:], "nested"
    if roll < 0.82:  # a huge length prefix
        huge = rng.choice([2**31 - 1, 2**31, 2**32 + 5, 2**62, 2**63, 2**64 - 1])
        return data[:at] + wire.tag(rng.choice([1, 2, 3]), 2) + wire.varint(huge) + rng.randbytes(4) + data[at:], \
            "huge_length"  # fmt: skip
    if roll < 0.88:  # an overlong (11-byte) or unterminated varint
        return data[:at] + wire.tag(rng.choice([1, 5, 9]), 0) + b"\xff" * rng.choice([10, 11, 20]) + data[at:], \
            "bad_varint"  # fmt: skip
    if roll < 0.94:  # deep nesting
        inner = rng.randbytes(rng.randint(0, 8))
        for _ in range(rng.choice([5, 50, 99, 101, 300])):
            inner = wire.ld(1, inner)
        return inner if rng.random() < 0.5 else data[:at] + inner + data[at:], "deep"
    return rng.randbytes(rng.randint(0, 64)), "random"

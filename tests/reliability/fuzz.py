"""Fuzzing parafeed's readers of untrusted bytes: TFRecord files, tf.train.Example parsing, cache files.

    python -m tests.reliability.fuzz --inputs 100000 [--seed 0] [--targets tfrecord,example] [--json report.json]

``--inputs`` is shared evenly by the TFRecord reader and the Example parser; the cache-file reader adds a tenth more
(``--cache-inputs``). Every input is derived from (seed, target, index) alone, so a failure prints the command that
reproduces it. Inputs are valid files / messages spelled in many ways (checked against what the format says they
hold) or mutations of them: bit flips, truncations, inserted / deleted / duplicated bytes, bad and huge lengths
(with valid length CRCs), random field numbers and wire types, nested garbage, random bytes.

Rules checked for every input (a broken rule is a failure; the run exits 1):
  * the only exceptions are parafeed's errors for damaged data (DataLossError from the readers, ParseError from
    the parser, DataLossError / InvalidArgumentError from the cache reader); no other type, no MemoryError (the
    runner caps its address space), no crash, and no input takes more than a few seconds (a watchdog aborts);
  * a valid input gives exactly what it holds; a damaged TFRecord file gives every record before the damage, only
    records that are intact frames in the file (in file order), and with one damaged frame every other record;
  * the C fast paths (TFRecord framing, Example decoding) agree with the pure-Python / protobuf ones;
  * an exhausted reader stays exhausted, and ``TFRecordDataset(...).ignore_errors()`` gives the reader's records.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import faulthandler
import json
import math
import os
import random
import shutil
import struct
import sys
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import parafeed as pf
from parafeed.errors import DataLossError, InvalidArgumentError, ParseError
from parafeed.io import cache_file, example, index, tfrecord
from parafeed.sparse import SparseTensor
from tests.reliability import wire

TARGETS = ("tfrecord", "example", "cache")
SLOW_SECONDS = 10.0  # an input taking longer than this counts as a hang


class FuzzFailure(AssertionError):
    """An input broke one of the rules."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise FuzzFailure(message)


# ---------------------------------------------------------------------------------------------- byte mutations


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One generic mutation of ``data`` and its name."""
    b = bytearray(data)
    kind = rng.choice(["flip", "byte", "truncate", "insert", "delete", "duplicate", "zero", "tail", "random"])
    n = len(b)
    if kind == "flip" and n:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(n)] ^= 1 << rng.randrange(8)
    elif kind == "byte" and n:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(n)] = rng.randrange(256)
    elif kind == "truncate" and n:
        del b[rng.randrange(n) :]
    elif kind == "insert":
        at = rng.randint(0, n)
        b[at:at] = rng.randbytes(rng.randint(1, 32))
    elif kind == "delete" and n:
        at = rng.randrange(n)
        del b[at : at + rng.randint(1, 32)]
    elif kind == "duplicate" and n:
        at = rng.randrange(n)
        piece = b[at : at + rng.randint(1, 64)]
        to = rng.randint(0, n)
        b[to:to] = piece
    elif kind == "zero" and n:
        at = rng.randrange(n)
        b[at : at + rng.randint(1, 32)] = bytes(len(b[at : at + rng.randint(1, 32)]))
    elif kind == "tail":
        b += rng.randbytes(rng.randint(1, 40))
    else:
        kind = "random"
        b = bytearray(rng.randbytes(rng.choice([0, 1, 11, 12, 16, 30, 100, 500])))
    return bytes(b), kind


# ---------------------------------------------------------------------------------------------- TFRecord target


def random_records(rng: random.Random) -> list[bytes]:
    records = []
    for _ in range(rng.choice([0, 1, 2, 3, 5, 8, 12, 20])):
        size = rng.choice([0, rng.randint(1, 16), rng.randint(17, 300), rng.randint(17, 300), rng.randint(300, 3000)])
        style = rng.random()
        if style < 0.1:  # records holding TFRecord frames: intact-looking headers inside data
            record = b"".join(wire.frame(rng.randbytes(rng.randint(0, 20))) for _ in range(rng.randint(1, 3)))
        elif style < 0.2:
            record = bytes(size)
        else:
            record = rng.randbytes(size)
        records.append(record)
    return records


@dataclass
class TFRecordCase:
    data: bytes  # the uncompressed bytes
    mutation: str
    expected: list | None = None  # exact events ("record", bytes) / ("error",) when the mutation makes them known


def tfrecord_case(rng: random.Random, records: list[bytes]) -> TFRecordCase:
    """The framed ``records``, intact or damaged, with the exact results when the damage makes them known."""
    frames = [wire.frame(r) for r in records]
    offsets = [0]
    for f in frames:
        offsets.append(offsets[-1] + len(f))
    data = b"".join(frames)
    rec = [("record", r) for r in records]

    def one_lost(damaged: bytes, j: int) -> list | None:
        """Every record but j and one error, unless resynchronising after a damaged header of frame j could stop at
        an intact-looking header inside it (then what follows is not known in advance)."""
        start, end = offsets[j], offsets[j + 1]
        if damaged == data:  # the flips undid each other
            return rec
        if damaged[start : start + 12] != data[start : start + 12] and any(
            _header_ok(damaged, p) for p in range(start + 1, end)
        ):
            return None
        return [*rec[:j], ("error",), *rec[j + 1 :]]

    roll = rng.random()
    if not records or roll < 0.12:
        if records and roll < 0.06:
            return TFRecordCase(data, "valid", rec)
        damaged, kind = mutate_bytes(rng, data)
        return TFRecordCase(damaged, kind)
    j = rng.randrange(len(records))
    start, end = offsets[j], offsets[j + 1]
    if roll < 0.35:  # bits flipped inside one frame: only that record is lost
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(start, end)] ^= 1 << rng.randrange(8)
        return TFRecordCase(bytes(b), "flip_in_frame", one_lost(bytes(b), j))
    if roll < 0.45:  # a wrong length with its CRC fixed up: the framing itself lies
        n = len(records[j])
        length = rng.choice([n + 1, max(n - 1, 0), n + 2**32, 2**63, 2**64 - 1, rng.getrandbits(32), 2**31 - 1])
        return TFRecordCase(data[:start] + wire.frame(records[j], length) + data[end:], "bad_length")
    if roll < 0.52:  # a wrong length without its CRC: caught at the header, the next frames are found again
        b = bytearray(data)
        b[start : start + 8] = struct.pack("<Q", rng.getrandbits(64))
        return TFRecordCase(bytes(b), "bad_length_crc", rec if bytes(b) == data else one_lost(bytes(b), j))
    if roll < 0.65:  # truncated: every whole record before the cut, then one error
        cut = rng.randrange(start, end)
        return TFRecordCase(data[:cut], "truncate", rec[:j] if cut == start else [*rec[:j], ("error",)])
    if roll < 0.7:  # garbage after the last record: every record, then one error
        tail = rng.randbytes(rng.randint(1, 40))
        expected = None if any(_header_ok(tail, p) for p in range(len(tail))) else [*rec, ("error",)]
        return TFRecordCase(data + tail, "tail", expected)
    if roll < 0.75:
        other = b"".join(wire.frame(r) for r in random_records(rng))
        return TFRecordCase(data[: rng.randint(0, len(data))] + other[rng.randint(0, len(other)) :], "splice")
    kinds = []
    for _ in range(rng.randint(1, 3)):
        data, kind = mutate_bytes(rng, data)
        kinds.append(kind)
    return TFRecordCase(data, "+".join(kinds))


def _header_ok(buf: bytes, p: int) -> bool:
    return len(buf) - p >= 12 and wire.masked_crc(buf[p : p + 8]) == struct.unpack_from("<I", buf, p + 8)[0]


def read_events(path: str, compression: str, buffer_size: int, native: bool, limit: int) -> list[tuple]:
    """Everything the reader gives: ("record", bytes) and ("error", message), until its end."""
    saved = tfrecord._native
    if not native:
        tfrecord._native = None
    try:
        reader = tfrecord.TFRecordFileReader(path, compression, buffer_size)
        events: list[tuple] = []
        try:
            for _ in range(limit):
                try:
                    events.append(("record", next(reader)))
                except StopIteration:
                    break
                except DataLossError as err:
                    events.append(("error", str(err)))
            else:
                raise FuzzFailure(f"the reader gave more than {limit} results for a {os.path.getsize(path)}-byte file")
            for _ in range(2):
                try:
                    next(reader)
                    raise FuzzFailure("an exhausted reader gave another record")
                except StopIteration:
                    pass
        finally:
            reader.close()
        return events
    finally:
        tfrecord._native = saved


def check_sound(data: bytes, events: list[tuple], what: str) -> None:
    """Every record returned is an intact frame of ``data``, in file order."""
    pos = 0
    for event in events:
        if event[0] == "record":
            at = data.find(wire.frame(event[1]), pos)
            check(at >= 0, f"{what}: a {len(event[1])}-byte record returned is not an intact frame of the file "
                           f"after offset {pos}")  # fmt: skip
            pos = at + 16 + len(event[1])


def check_errors(events: list[tuple], path: str) -> None:
    for event in events:
        if event[0] == "error":
            check(path in event[1] and "TFRecordDataset" in event[1], f"error does not name the file: {event[1]}")
            check("byte offset" in event[1] or "compressed" in event[1], f"error gives no offset: {event[1]}")


def shape_events(events: list[tuple]) -> list[tuple]:
    return [e if e[0] == "record" else ("error",) for e in events]


def compress(rng: random.Random, plain: bytes, compression: str) -> bytes:
    if compression == "ZLIB":
        return zlib.compress(plain, rng.choice([0, 1, 6, 9]))
    cuts = sorted(rng.randint(0, len(plain)) for _ in range(rng.choice([0, 0, 1, 2])))
    members, last = [], 0
    for cut in [*cuts, len(plain)]:  # several GZIP members, as `cat a.gz b.gz` makes
        c = zlib.compressobj(rng.choice([1, 6, 9]), zlib.DEFLATED, 31)
        members.append(c.compress(plain[last:cut]) + c.flush())
        last = cut
    return b"".join(members)


def decompress_reference(data: bytes, compression: str) -> tuple[bytes, bool]:
    """The longest decodable prefix of the stream(s), and whether the whole file is a valid stream (an empty file
    is: no records, as in TensorFlow)."""
    if not data:
        return b"", True
    out, rest = [], data
    while True:
        d = zlib.decompressobj(31 if compression == "GZIP" else 15)
        try:
            out.append(d.decompress(rest))
        except zlib.error:
            d = zlib.decompressobj(31 if compression == "GZIP" else 15)
            try:
                for i in range(len(rest)):
                    out.append(d.decompress(rest[i : i + 1]))
            except zlib.error:
                pass
            return b"".join(out), False
        if not d.eof:
            return b"".join(out), False
        rest = d.unused_data
        if compression == "ZLIB" or not rest:
            return b"".join(out), True


class Fuzzer:
    """Runs inputs of each target in a scratch directory and tallies the outcomes."""

    def __init__(self, workdir: str):
        self.workdir = workdir

    # ------------------------------------------------------------------ TFRecord

    def tfrecord(self, rng: random.Random, i: int) -> tuple[str, bool, str]:
        records = random_records(rng)
        case = tfrecord_case(rng, records)
        compression = rng.choices(["", "GZIP", "ZLIB"], weights=[8, 1, 1])[0]
        buffer_size = rng.choice([1, 5, 16, 100, 4096, 1 << 20])
        path = os.path.join(self.workdir, f"in-{i}.tfrecord")
        mutation = case.mutation
        file_bytes = case.data
        stream_ok = True
        if compression:
            file_bytes = compress(rng, case.data, compression)
            if rng.random() < 0.5:
                file_bytes, kind = mutate_bytes(rng, file_bytes)
                mutation += f"+z_{kind}"
                stream_ok = False
        with open(path, "wb") as f:
            f.write(file_bytes)
        try:
            return self._tfrecord_checks(rng, path, compression, buffer_size, case, file_bytes, stream_ok, mutation)
        finally:
            for p in (path, path + index.INDEX_SUFFIX, path + ".plain"):
                if os.path.exists(p):
                    os.remove(p)
            index._memory.clear()  # the in-memory index cache would otherwise keep every input's offsets

    def _tfrecord_checks(self, rng, path, compression, buffer_size, case, file_bytes, stream_ok, mutation):
        data = case.data
        if not compression:
            events = read_events(path, "", buffer_size, True, len(data) + 3)
            python = read_events(path, "", buffer_size, False, len(data) + 3)
            check(events == python, f"native and Python framing disagree:\n  {events[:5]}\n  {python[:5]}")
            plain, complete = data, True
        else:
            plain, complete = decompress_reference(file_bytes, compression)
            events = read_events(path, compression, buffer_size, True, len(plain) + 16 * len(file_bytes) + 10)
        check_errors(events, path)
        if complete:
            check_sound(plain, events, "reader")
            good, _, end = wire.strict_frames(plain)
            check(shape_events(events[: len(good)]) == [("record", r) for r in good],
                  f"the {len(good)} intact records at the start of the file are not the first ones returned")  # fmt: skip
            if end == len(plain):
                check(
                    shape_events(events) == [("record", r) for r in good], "a valid file gave errors or extra records"
                )
            if compression:  # the same bytes uncompressed give the same results
                with open(path + ".plain", "wb") as f:
                    f.write(plain)
                same = read_events(path + ".plain", "", buffer_size, True, len(plain) + 3)
                same = [e if e[0] == "record" else (e[0], e[1].replace(path + ".plain", path)) for e in same]
                check(same == events,
                      "a compressed file gives other results than its uncompressed bytes")  # fmt: skip
            if stream_ok and case.expected is not None:
                check(shape_events(events) == case.expected,
                      f"{case.mutation}: expected {_describe(case.expected)}, got {_describe(shape_events(events))}")  # fmt: skip
            exact = end == len(plain) or (stream_ok and case.expected is not None)
            if not compression:
                self._index_checks(rng, path, plain, events, end == len(plain), buffer_size)
        else:
            exact = False
            check(any(e[0] == "error" for e in events), "a damaged compressed stream raised no DataLossError")
            check_sound(plain, events, "reader (damaged stream)")
        if rng.random() < 0.1:  # the dataset layer: ignore_errors gives the same records and counts the errors
            ds = pf.TFRecordDataset(path, compression, buffer_size).ignore_errors()
            got = list(ds)
            check(got == [e[1] for e in events if e[0] == "record"], "TFRecordDataset.ignore_errors() lost records")
            check(ds.ignored.count == sum(e[0] == "error" for e in events), "ignore_errors() miscounted")
        errors = [e for e in events if e[0] == "error"]
        return ("ok" if not errors else "DataLossError"), exact, mutation

    def _index_checks(self, rng, path, data, events, valid, buffer_size) -> None:
        good, offsets, _ = wire.strict_frames(data)
        try:
            found = index.record_offsets(path).tolist()
        except DataLossError:
            check(not valid, "the index of a valid file raised DataLossError")
        else:
            pos = 0  # the index covers the whole file with intact headers
            for off in found:
                check(off == pos and _header_ok(data, off), f"index offset {off} is not an intact header")
                pos = off + 16 + struct.unpack_from("<Q", data, off)[0]
            check(pos == len(data), "the index does not cover the file")
            if valid:
                check(found == offsets, "index offsets differ from the file's records")
        if valid and good:  # skipping by seeking gives the records after the skipped ones
            k, m = rng.randint(0, len(good)), rng.randint(0, len(good) + 2)
            reader = tfrecord.TFRecordFileReader(path, "", buffer_size)
            try:
                head = [next(reader) for _ in range(k)]
                skipped = reader.skip(m)
                rest = list(reader)
            finally:
                reader.close()
            ok = head == good[:k] and skipped == min(m, len(good) - k) and rest == good[k + m :]
            check(ok, f"skip({m}) after {k} records gave the wrong records")

    # ------------------------------------------------------------------ Example

    def example(self, rng: random.Random, i: int) -> tuple[str, bool, str]:
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

    # ------------------------------------------------------------------ cache files

    def cache(self, rng: random.Random, i: int) -> tuple[str, bool, str]:
        elements, dtypes = random_cache_elements(rng)
        path = os.path.join(self.workdir, f"cache-{i}.pfcache")
        writer = cache_file.CacheWriter(path)
        for e in elements:
            writer.write(e)
        writer.finish()
        with open(path, "rb") as f:
            data = f.read()
        mutated, mutation = mutate_cache(rng, data)
        with open(path, "wb") as f:
            f.write(mutated)
        try:
            # with the pipeline's dtypes, or with the header's alone (as a replay does)
            got = list(cache_file.read_cache(path, dtypes if rng.random() < 0.5 else None))
        except (DataLossError, InvalidArgumentError) as err:
            check(path in str(err) and "cache()" in str(err), f"cache error does not name the file: {err}")
            check(mutated != data, f"an intact cache file raised {err!r}")
            return type(err).__name__, False, mutation
        finally:
            os.remove(path)
        if mutated == data:
            check(len(got) == len(elements), "the cache file gave another number of elements")
            for want, have in zip(elements, got):
                check(len(want) == len(have) and all(_leaf_equal(a, b) for a, b in zip(want, have)),
                      "the cache file gave other values")  # fmt: skip
        return "ok", mutated == data, mutation


def _describe(events: list[tuple]) -> str:
    return "[" + ", ".join(f"record({len(e[1])})" if e[0] == "record" else "error" for e in events) + "]"


# ---------------------------------------------------------------------------------------------- Example target

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
    saved = example._native
    if not native:
        example._native = None
    try:
        parse = pf.io.parse_single_example if single else pf.io.parse_example
        result = parse(serialized[0] if single else serialized, specs)
    except ParseError:
        return "ParseError"
    finally:
        example._native = saved
    return {k: ("sparse", v.indices, v.values, v.dense_shape) if isinstance(v, SparseTensor) else v
            for k, v in result.items()}  # fmt: skip


def unbatch_outcome(outcome: Any) -> Any:
    if isinstance(outcome, str):
        return outcome
    return {k: ("sparse", v[1][:, 1:], v[2], v[3][1:]) if isinstance(v, tuple) else v[0] for k, v in outcome.items()}


def _leaf_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bytes) or isinstance(b, bytes):
        return type(a) is type(b) and a == b
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return a.reshape(-1).tolist() == b.reshape(-1).tolist()
    if a.dtype.kind in "fc":
        return np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a.real), np.signbit(b.real))
    return np.array_equal(a, b)


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
            if not all(_leaf_equal(p, q) for p, q in zip(x[1:], y[1:])):
                return False
        elif not _leaf_equal(x, y):
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


# ---------------------------------------------------------------------------------------------- cache target

_CACHE_DTYPES = ["int8", "uint16", "int32", "int64", "float16", "float32", "float64", "bool", "complex64"]


def random_cache_elements(rng: random.Random) -> tuple[list[tuple], list[np.dtype]]:
    kinds = [rng.choice([*_CACHE_DTYPES, "bytes", "strings"]) for _ in range(rng.randint(1, 4))]
    ranks = [rng.randint(0, 3) for _ in kinds]
    elements = []
    for _ in range(rng.choice([0, 1, 2, 3, 6])):
        leaves: list[Any] = []
        for kind, rank in zip(kinds, ranks):
            shape = tuple(rng.randint(0, 3) for _ in range(rank))
            if kind == "bytes" or (kind == "strings" and rank == 0):  # a scalar string is bytes
                leaves.append(rng.randbytes(rng.randint(0, 10)))
            elif kind == "strings":
                arr = np.empty(shape, dtype=object)
                for idx in np.ndindex(shape):
                    arr[idx] = rng.randbytes(rng.randint(0, 6))
                leaves.append(arr)
            else:
                raw = np.frombuffer(rng.randbytes(8 * max(1, math.prod(shape)) * 2), np.uint8)
                arr = raw[: math.prod(shape) * np.dtype(kind).itemsize].view(kind).reshape(shape)
                if kind == "bool":
                    arr = arr.astype(bool)
                leaves.append(arr[()] if rank == 0 else arr.copy())
        elements.append(tuple(leaves))
    dtypes = [np.dtype(object) if k in ("bytes", "strings") else np.dtype(k) for k in kinds]
    return elements, dtypes


def mutate_cache(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    roll = rng.random()
    if roll < 0.15:
        return data, "valid"
    if roll < 0.4:
        return mutate_bytes(rng, data)
    (n,) = struct.unpack_from("<I", data, 8)
    if roll < 0.5:  # a wrong header length
        value = rng.choice([0, n - 1, n + 1, 2**32 - 1, 2**31, rng.getrandbits(32)]) & 0xFFFFFFFF
        return data[:8] + struct.pack("<I", value) + data[12:], "header_length"
    records, pos, end = [], 16 + n, len(data) - 16
    while pos + 8 <= end:
        length = struct.unpack_from("<I", data, pos)[0]
        records.append((pos, length))
        pos += 8 + length
    if roll < 0.6:  # a wrong record count in the footer
        count = struct.unpack_from("<Q", data, len(data) - 8)[0]
        value = rng.choice([count + 1, max(count - 1, 0), 2**63, 2**64 - 1])
        return data[:-8] + struct.pack("<Q", value), "footer_count"
    if not records:
        return mutate_bytes(rng, data)
    at, length = rng.choice(records)
    payload = bytearray(data[at + 8 : at + 8 + length])
    if roll < 0.7:  # a wrong record length
        value = rng.choice([0, length + 1, max(length - 1, 0), 2**32 - 1, 2**31])
        return data[:at] + struct.pack("<I", value) + data[at + 4 :], "record_length"
    # a damaged payload with a valid CRC: ranks, dimensions and string lengths that lie, some huge
    if payload and rng.random() < 0.3:
        payload[0] = rng.choice([0, 1, 3, 8, 32, 64, 255])
        kind = "payload_rank"
    elif len(payload) >= 9:
        p = rng.randrange(0, len(payload) - 8)
        huge = rng.choice([2**63, 2**64 - 1, 2**40, 2**32, 2**31 - 1, rng.getrandbits(64), 7, 0])
        payload[p : p + 8] = struct.pack("<Q", huge)
        kind = "payload_u64"
    else:
        payload, kind = bytearray(mutate_bytes(rng, bytes(payload))[0]), "payload_bytes"
    record = struct.pack("<II", len(payload), zlib.crc32(payload)) + payload
    return data[:at] + record + data[at + 8 + length :], kind


# ---------------------------------------------------------------------------------------------- runner


@dataclass
class Report:
    seed: int
    inputs: collections.Counter = field(default_factory=collections.Counter)
    exact: collections.Counter = field(default_factory=collections.Counter)  # output checked against the answer
    outcomes: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    mutations: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    seconds: collections.Counter = field(default_factory=collections.Counter)
    slowest: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "seed": self.seed,
            "inputs": dict(self.inputs),
            "total_inputs": sum(self.inputs.values()),
            "checked_exactly": dict(self.exact),
            "outcomes": {t: dict(c) for t, c in self.outcomes.items()},
            "mutations": {t: dict(c.most_common()) for t, c in self.mutations.items()},
            "seconds": {t: round(s, 2) for t, s in self.seconds.items()},
            "slowest_input_seconds": {t: round(s, 4) for t, s in self.slowest.items()},
            "failures": self.failures,
        }

    def summary(self) -> str:
        lines = [f"fuzz: seed {self.seed}, {sum(self.inputs.values())} inputs, {len(self.failures)} failures"]
        for target in self.inputs:
            outcomes = ", ".join(f"{k} {v}" for k, v in self.outcomes[target].most_common())
            lines.append(
                f"  {target:9} {self.inputs[target]:7} inputs ({self.exact[target]} checked exactly) in "
                f"{self.seconds[target]:.1f} s, slowest {self.slowest.get(target, 0) * 1000:.0f} ms: {outcomes}"
            )
        for failure in self.failures[:10]:
            lines.append(f"  FAILURE {failure['target']} #{failure['index']}: {failure['error']}")
            lines.append(f"    reproduce: {failure['reproduce']}")
        return "\n".join(lines)


def run(counts: dict[str, int], seed: int = 0, start: int = 0, watchdog: bool = False,
        progress: Callable[[str], None] | None = None) -> Report:  # fmt: skip
    """Fuzz each target with ``counts[target]`` inputs (indices ``start`` ...); returns the tally."""
    report = Report(seed)
    workdir = tempfile.mkdtemp(prefix="parafeed-fuzz-")
    fuzzer = Fuzzer(workdir)
    try:
        for target, n in counts.items():
            fn = getattr(fuzzer, target)
            began = time.perf_counter()
            for i in range(start, start + n):
                rng = random.Random(f"{seed}:{target}:{i}")
                if watchdog:
                    faulthandler.dump_traceback_later(SLOW_SECONDS * 6, exit=True)
                t0 = time.perf_counter()
                try:
                    outcome, exact, mutation = fn(rng, i)
                except Exception as err:  # any other exception type, or a broken rule
                    outcome, exact, mutation = "FAILURE", False, "?"
                    text = str(err) if isinstance(err, FuzzFailure) else traceback.format_exc(limit=-6)
                    report.failures.append({
                        "target": target, "index": i, "error": f"{type(err).__name__}: {text}",
                        "reproduce": f"python -m tests.reliability.fuzz --targets {target} --seed {seed} --start {i} "
                                     "--inputs 1",
                    })  # fmt: skip
                took = time.perf_counter() - t0
                if took > SLOW_SECONDS:
                    report.failures.append({"target": target, "index": i, "error": f"took {took:.1f} s",
                                            "reproduce": f"--targets {target} --seed {seed} --start {i}"})  # fmt: skip
                report.slowest[target] = max(report.slowest.get(target, 0.0), took)
                report.inputs[target] += 1
                report.exact[target] += bool(exact)
                report.outcomes[target][outcome] += 1
                report.mutations[target][mutation.split("+")[0]] += 1
                if progress is not None and (i - start + 1) % 10000 == 0:
                    progress(f"{target}: {i - start + 1}/{n} inputs, {len(report.failures)} failures")
            report.seconds[target] = time.perf_counter() - began
    finally:
        if watchdog:
            faulthandler.cancel_dump_traceback_later()
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def split_inputs(total: int, targets: list[str], cache_inputs: int | None) -> dict[str, int]:
    main = [t for t in targets if t != "cache"]
    counts = {t: total // len(main) + (k < total % len(main)) for k, t in enumerate(main)} if main else {}
    if "cache" in targets:
        counts["cache"] = cache_inputs if cache_inputs is not None else (total // 10 if main else total)
    return counts


def limit_memory(extra_bytes: int = 3 << 30) -> None:
    """Cap the address space at what is mapped now plus ``extra_bytes``: a huge allocation fails (MemoryError)."""
    import resource

    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra_bytes, resource.getrlimit(resource.RLIMIT_AS)[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000, help="inputs shared by the TFRecord and Example targets")
    parser.add_argument("--cache-inputs", type=int, default=None, help="cache-file inputs (default: inputs / 10)")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="index of the first input (to reproduce one)")
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args(argv)
    targets = [t for t in args.targets.split(",") if t]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {unknown}; choose from {TARGETS}")
    limit_memory()
    counts = split_inputs(args.inputs, targets, args.cache_inputs)
    report = run(counts, args.seed, args.start, watchdog=True, progress=lambda s: print(s, file=sys.stderr))
    print(report.summary())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report.as_dict(), f, indent=1)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())

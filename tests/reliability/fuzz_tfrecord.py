"""Fuzz target: the TFRecord reader (native and Python framing, GZIP/ZLIB streams, the index, skip, ignore_errors)."""

from __future__ import annotations

import os
import random
import struct
import zlib
from dataclasses import dataclass

import parafeed as pf
from parafeed.errors import DataLossError
from parafeed.io import index, tfrecord
from tests.reliability import wire
from tests.reliability.fuzz_rules import FuzzFailure, check, mutate_bytes


def fuzz_one(rng: random.Random, i: int, workdir: str) -> tuple[str, bool, str]:
    records = random_records(rng)
    case = tfrecord_case(rng, records)
    compression = rng.choices(["", "GZIP", "ZLIB"], weights=[8, 1, 1])[0]
    buffer_size = rng.choice([1, 5, 16, 100, 4096, 1 << 20])
    path = os.path.join(workdir, f"in-{i}.tfrecord")
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
        return _checks(rng, path, compression, buffer_size, case, file_bytes, stream_ok, mutation)
    finally:
        for p in (path, path + index.INDEX_SUFFIX, path + ".plain"):
            if os.path.exists(p):
                os.remove(p)
        index._memory.clear()  # the in-memory index cache would otherwise keep every input's offsets


def _checks(rng, path, compression, buffer_size, case, file_bytes, stream_ok, mutation):
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
            check(shape_events(events) == [("record", r) for r in good], "a valid file gave errors or extra records")
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
            _index_checks(rng, path, plain, events, end == len(plain), buffer_size)
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


def _index_checks(rng, path, data, events, valid, buffer_size) -> None:
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


def _describe(events: list[tuple]) -> str:
    return "[" + ", ".join(f"record({len(e[1])})" if e[0] == "record" else "error" for e in events) + "]"

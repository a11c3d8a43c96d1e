"""Independent encoders for the fuzzers: TFRecord framing and the protobuf wire format of tf.train.Example.

Written from the format specifications, not from parafeed's code, so that valid inputs built here check parafeed's
readers against the formats themselves. The Example encoder can spell the same message in many valid ways (packed
or unpacked lists, unknown fields at every level, split or repeated sub-messages, overlong varints), and
:func:`effective_features` says what protobuf makes of each spelling.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field

import google_crc32c
import numpy as np

KINDS = ("bytes", "float", "int64")
LIST_FIELD = {"bytes": 1, "float": 2, "int64": 3}  # Feature.bytes_list / float_list / int64_list

# ---------------------------------------------------------------------------------------------- TFRecord


def masked_crc(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(record: bytes, length: int | None = None, fix_length_crc: bool = True) -> bytes:
    """One TFRecord frame; ``length`` overrides the stored length (with a valid length CRC if ``fix_length_crc``)."""
    header = struct.pack("<Q", len(record) if length is None else length)
    length_crc = masked_crc(header) if fix_length_crc else masked_crc(struct.pack("<Q", len(record)))
    return header + struct.pack("<I", length_crc) + record + struct.pack("<I", masked_crc(record))


def strict_frames(data: bytes) -> tuple[list[bytes], list[int], int]:
    """The intact records from the start of ``data``: (records, their offsets, where the first bad frame starts).

    The last value is ``len(data)`` when the whole of ``data`` is intact records.
    """
    records, offsets, pos = [], [], 0
    while len(data) - pos >= 16:
        (length,) = struct.unpack_from("<Q", data, pos)
        if masked_crc(data[pos : pos + 8]) != struct.unpack_from("<I", data, pos + 8)[0]:
            break
        end = pos + 16 + length
        if end > len(data):
            break
        record = data[pos + 12 : end - 4]
        if masked_crc(record) != struct.unpack_from("<I", data, end - 4)[0]:
            break
        records.append(record)
        offsets.append(pos)
        pos = end
    return records, offsets, pos


def is_frame_at(data: bytes, pos: int, record: bytes) -> bool:
    """Whether an intact frame holding ``record`` starts at ``pos``."""
    n = len(record)
    return (
        pos + 16 + n <= len(data)
        and struct.unpack_from("<Q", data, pos)[0] == n
        and masked_crc(data[pos : pos + 8]) == struct.unpack_from("<I", data, pos + 8)[0]
        and data[pos + 12 : pos + 12 + n] == record
        and masked_crc(record) == struct.unpack_from("<I", data, pos + 12 + n)[0]
    )


# ---------------------------------------------------------------------------------------------- protobuf wire


def varint(n: int, extra: int = 0) -> bytes:
    """Base-128 varint of ``n`` (as uint64); ``extra`` redundant zero groups make it overlong, which protobuf accepts
    while the whole stays within 10 bytes."""
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    if extra:
        out[-1] |= 0x80
        out += b"\x80" * (extra - 1) + b"\x00"
    return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint((number << 3) | wire_type)


def ld(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag(number, 2) + varint(len(payload)) + payload


def unknown_field(rng: random.Random, avoid: tuple[int, ...]) -> bytes:
    """A well-formed field with a number the message does not define (protobuf keeps it as an unknown field)."""
    while True:
        number = rng.choice([rng.randint(1, 20), rng.randint(21, 100000), (1 << 29) - 1])
        if number not in avoid:
            break
    wire_type = rng.choice([0, 1, 2, 5])
    if wire_type == 0:
        return tag(number, 0) + varint(rng.getrandbits(rng.choice([1, 7, 32, 64])))
    if wire_type == 1:
        return tag(number, 1) + rng.randbytes(8)
    if wire_type == 5:
        return tag(number, 5) + rng.randbytes(4)
    return ld(number, rng.randbytes(rng.randint(0, 12)))


# ---------------------------------------------------------------------------------------------- Example model


@dataclass
class Entry:
    """One map entry of Features: a key and its Feature, given as list parts in wire order (a Feature whose oneof
    is set more than once is valid protobuf: the last kind wins, and parts of one kind in a row are merged)."""

    key: str
    parts: list[tuple[str, list]] = field(default_factory=list)


def random_values(rng: random.Random, kind: str, n: int) -> list:
    if kind == "bytes":
        return [rng.randbytes(rng.choice([0, 1, 3, 8, 20])) for _ in range(n)]
    if kind == "int64":
        special = [0, 1, -1, 2**63 - 1, -(2**63), 127, 128, -128, 2**31, -(2**31) - 1]
        return [rng.choice(special) if rng.random() < 0.3 else rng.randint(-(2**63), 2**63 - 1) for _ in range(n)]
    special = [0.0, -0.0, 1.0, -1.5, float("inf"), float("-inf"), float("nan"), 3.4028235e38, 1e-45, -1e-40]
    return [float(np.float32(rng.choice(special) if rng.random() < 0.3 else rng.gauss(0, 1e3))) for _ in range(n)]


KEYS = ["a", "b", "label", "image/encoded", "x.y", "\u043a\u043b\u044e\u0447", "", "k" * 40]


def random_entries(rng: random.Random, merges: bool = True) -> list[Entry]:
    """Map entries with random keys and values; ``merges``: also Features whose oneof is set several times and
    keys given twice, which protobuf merges (TensorFlow's own fast parser merges them differently)."""
    entries = []
    for key in rng.sample(KEYS, rng.randint(0, 5)):
        n_parts = rng.choices([0, 1, 2, 3], weights=[1, 20, 2, 1])[0] if merges else rng.choices([0, 1], [1, 20])[0]
        parts = []
        for _ in range(n_parts):
            kind = rng.choice(KINDS)
            parts.append((kind, random_values(rng, kind, rng.choice([0, 1, 1, 2, 3, 4, 6]))))
        entries.append(Entry(key, parts))
        if merges and rng.random() < 0.05:  # the same key again: the later entry wins
            kind = rng.choice(KINDS)
            entries.append(Entry(key, [(kind, random_values(rng, kind, rng.randint(0, 3)))]))
    return entries


def effective_feature(parts: list[tuple[str, list]]) -> tuple[str | None, list]:
    """What protobuf makes of a Feature's parts: (kind or None when the oneof is unset, values)."""
    if not parts:
        return None, []
    kind = parts[-1][0]
    values: list = []
    for k, vals in reversed(parts):
        if k != kind:
            break
        values[:0] = vals
    return kind, values


def effective_features(messages: list[list[Entry]]) -> dict[str, tuple[str | None, list]]:
    """The feature map protobuf decodes from the Features messages of one Example (merged; later keys win)."""
    out: dict[str, tuple[str | None, list]] = {}
    for entries in messages:
        for entry in entries:
            out[entry.key] = effective_feature(entry.parts)
    return out


def encode_list(rng: random.Random, kind: str, values: list, unknowns: bool, canonical: bool = False) -> bytes:
    """A BytesList / FloatList / Int64List payload, packed or not, possibly with unknown fields between values
    (``canonical``: packed, as protobuf writes it)."""
    fields: list[bytes] = []
    if kind == "bytes":
        fields = [ld(1, v) for v in values]
    elif kind == "float":
        style = "packed" if canonical else rng.choice(["packed", "packed", "unpacked", "split"])
        raw = [struct.pack("<f", v) for v in values]
        if style == "unpacked":
            fields = [tag(1, 5) + r for r in raw]
        elif style == "split" and values:
            cut = rng.randint(0, len(raw))
            fields = [ld(1, b"".join(raw[:cut])), ld(1, b"".join(raw[cut:]))]
        elif values or (rng.random() < 0.5 and not canonical):
            fields = [ld(1, b"".join(raw))]
    else:
        style = "packed" if canonical else rng.choice(["packed", "packed", "unpacked", "split"])
        overlong = [0] if canonical else [0] * 12 + [1, 2]
        enc = [varint(v, extra=rng.choice(overlong) if 0 <= v < 2**56 else 0) for v in values]
        if style == "unpacked":
            fields = [tag(1, 0) + e for e in enc]
        elif style == "split" and values:
            cut = rng.randint(0, len(enc))
            fields = [ld(1, b"".join(enc[:cut])), ld(1, b"".join(enc[cut:]))]
        elif values or (rng.random() < 0.5 and not canonical):
            fields = [ld(1, b"".join(enc))]
    if unknowns:
        for _ in range(rng.randint(1, 2)):
            fields.insert(rng.randint(0, len(fields)), unknown_field(rng, (1,)))
    return b"".join(fields)


def encode_feature(rng: random.Random, parts: list[tuple[str, list]], unknowns: bool, canonical: bool) -> bytes:
    fields = [ld(LIST_FIELD[kind], encode_list(rng, kind, values, unknowns and rng.random() < 0.3, canonical))
              for kind, values in parts]  # fmt: skip
    if unknowns and rng.random() < 0.3:
        fields.insert(rng.randint(0, len(fields)), unknown_field(rng, (1, 2, 3)))
    return b"".join(fields)


def encode_example(rng: random.Random, messages: list[list[Entry]], unknowns: bool, canonical: bool = False) -> bytes:
    """A serialized Example holding ``messages`` (its Features field, repeated when several: protobuf merges them).

    ``canonical``: spelled as protobuf itself writes (packed lists, key before value, shortest varints).
    """
    out = []
    for entries in messages:
        fields = []
        for entry in entries:
            key, value = ld(1, entry.key.encode()), ld(2, encode_feature(rng, entry.parts, unknowns, canonical))
            fields.append(ld(1, key + value if canonical or rng.random() < 0.9 else value + key))  # a map entry
            if unknowns and rng.random() < 0.1:
                fields.append(unknown_field(rng, (1,)))
        out.append(ld(1, b"".join(fields)))
        if unknowns and rng.random() < 0.3:
            out.append(unknown_field(rng, (1,)))
    return b"".join(out)


def random_example(rng: random.Random, canonical: bool = False) -> tuple[bytes, dict[str, tuple[str | None, list]]]:
    """A valid serialized Example in a random spelling, and the features protobuf decodes from it.

    Unless ``canonical``, spellings include unknown fields, unpacked and split lists, overlong varints, and what
    protobuf merges (see :func:`random_entries`; a second Features field).
    """
    messages = [random_entries(rng, not canonical)]
    if not canonical and rng.random() < 0.05:
        messages.append(random_entries(rng))
    unknowns = not canonical and rng.random() < 0.3
    return encode_example(rng, messages, unknowns, canonical), effective_features(messages)

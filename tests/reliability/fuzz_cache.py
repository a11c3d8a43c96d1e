"""Fuzz target: the reader of cache files (``cache(filename)``), with the pipeline's dtypes or the header's alone."""

from __future__ import annotations

import math
import os
import random
import struct
import zlib
from typing import Any

import numpy as np

from parafeed.errors import DataLossError, InvalidArgumentError
from parafeed.io import cache_format
from tests.reliability.fuzz_rules import check, leaf_equal, mutate_bytes


def fuzz_one(rng: random.Random, i: int, workdir: str) -> tuple[str, bool, str]:
    elements, dtypes = random_cache_elements(rng)
    path = os.path.join(workdir, f"cache-{i}.pfcache")
    writer = cache_format.CacheWriter(path)
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
        got = list(cache_format.read_cache(path, dtypes if rng.random() < 0.5 else None))
    except (DataLossError, InvalidArgumentError) as err:
        check(path in str(err) and "cache()" in str(err), f"cache error does not name the file: {err}")
        check(mutated != data, f"an intact cache file raised {err!r}")
        return type(err).__name__, False, mutation
    finally:
        os.remove(path)
    if mutated == data:
        check(len(got) == len(elements), "the cache file gave another number of elements")
        for want, have in zip(elements, got):
            check(len(want) == len(have) and all(leaf_equal(a, b) for a, b in zip(want, have)),
                  "the cache file gave other values")  # fmt: skip
    return "ok", mutated == data, mutation


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

"""What the fuzzer's targets share: the failure type of a broken rule, generic byte mutations, leaf equality."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from parafeed.values.tensor import Tensor


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


def leaf_equal(a: Any, b: Any) -> bool:
    a, b = (x.numpy() if isinstance(x, Tensor) else x for x in (a, b))  # (pf.io's results are Tensors)
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

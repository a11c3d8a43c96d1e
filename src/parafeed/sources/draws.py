"""Seeded uniform draws for the steps that pick at random (``sample_from_datasets``, ``rejection_resample``)."""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from parafeed.core.arguments import as_int

_DRAWS = 1024  # uniform numbers drawn per call to the generator


class UniformDraws:
    """Uniform floats in [0, 1) from a seeded generator, drawn in blocks; its state is the generator's state before
    the current block and how many of the block were used (small, JSON-friendly)."""

    def __init__(self, seed_words: list[int]):
        self._rng = np.random.default_rng(seed_words)
        self._before = self._rng.bit_generator.state
        self._block: list[float] = []
        self._used = 0

    def next(self) -> float:
        if self._used == len(self._block):
            self._before = self._rng.bit_generator.state
            self._block = self._rng.random(_DRAWS).tolist()
            self._used = 0
        self._used += 1
        return self._block[self._used - 1]

    def state(self) -> dict:
        return {"rng": self._before, "used": self._used, "started": bool(self._block)}

    def restore(self, state: dict) -> None:
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = state["rng"]
        self._before = state["rng"]
        self._block, self._used = [], 0
        if state["started"]:
            self._block = self._rng.random(_DRAWS).tolist()
            self._used = int(state["used"])


def draw_seed(step: str, seed: Any) -> tuple[int, bool]:
    """``(seed, seeded)``: the given seed; else one derived from ``pf.random.set_seed``'s global seed when one is set
    (as TensorFlow derives op seeds), else one drawn now (a new order for every dataset object, as tf.data's)."""
    if seed is None:
        from parafeed.tensor_ops.random_ops import op_seed

        derived = op_seed()
        return (derived, True) if derived is not None else (secrets.randbits(63), False)
    return as_int(step, "seed", seed) & (2**63 - 1), True

"""Where the random ops of ``pf.image`` draw their numbers.

Every draw of a stateful op (``random_crop``, ``random_flip_left_right``, ``random_brightness``,
``sample_distorted_bounding_box`` ...) comes from :func:`generator`, which is ``pf.random``'s: inside a map function,
per element from the pipeline's seeds (the same elements on every run, executor and restore); elsewhere one generator
per op ``seed``, seeded from ``pf.random.set_seed``'s global seed (see :mod:`parafeed.tensor_ops.random_ops`). Ops
that take ``rng=`` draw from that generator instead. The ``stateless_*`` ops depend only on their ``seed=(a, b)``:
:func:`stateless_generator` makes a new generator from it for every call.

TensorFlow's random streams (Philox) are not reproduced: the same seed gives other numbers than in TensorFlow, with
the same distributions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.random_ops import generator


def draws(seed: int | None, rng: np.random.Generator | None = None) -> np.random.Generator:
    """``rng`` where the caller passed one, else :func:`generator` for ``seed``."""
    return rng if rng is not None else generator(seed)


def stateless_generator(op: str, seed: Any) -> np.random.Generator:
    """A generator that depends only on ``seed``, a shape-[2] integer seed as TensorFlow's stateless ops take."""
    pair = np.asarray(seed)
    if pair.shape != (2,) or pair.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{op}: `seed` must be a shape [2] integer seed such as (1, 2), got {seed!r}")
    return np.random.default_rng([int(v) & 0xFFFFFFFFFFFFFFFF for v in pair])

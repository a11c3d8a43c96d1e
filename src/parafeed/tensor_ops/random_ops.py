"""``pf.random``: TensorFlow's random operations on NumPy, drawing from the pipeline's seeds.

Where draws come from:

* **Inside a map function** (``ds.map(fn)`` where ``fn``'s code reaches ``pf.random.*``, ``pf.image.random_*`` or
  another random operation), each element's draws come from a generator keyed by the map's seed, the iteration
  (epoch) and the element's index: the same seed gives the same elements on every run, on threads or processes in
  any order, and a restored iterator goes on with exactly the draws the uninterrupted run would have made. The map's
  seed is drawn when it is built, from ``pf.random.set_seed``'s global seed when one is set (as TensorFlow derives
  op seeds from it), else at random (as an unseeded TensorFlow pipeline is).
* **Anywhere else** (called directly, in a filter predicate), from one generator per op seed, seeded from the
  global seed (or the system's entropy when none is set), as TensorFlow's eager ops draw.
* **Stateless operations** (``stateless_uniform(shape, seed=[a, b])``) depend on their seed only.

The numbers are NumPy's (Philox), not TensorFlow's: distributions, dtypes, shapes and errors are TensorFlow's.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.convert import array, ints, out
from parafeed.values.structure import as_dtype, dtype_name
from parafeed.values.tensor import Tensor

_lock = threading.Lock()
_global: dict[str, Any] = {"seed": None, "ops": 0, "generators": {}}
_local = threading.local()  # .key: the element's draw key inside a map function; .generators: its generators


def set_seed(seed: int | None) -> None:
    """``tf.random.set_seed``: the global seed from which unseeded random operations and datasets built after this
    call derive their seeds (deterministically, in the order they are built)."""
    with _lock:
        _global.update(seed=None if seed is None else int(seed), ops=0, generators={})


def op_seed() -> int | None:
    """A seed for a random step being built: derived from the global seed (the next in its sequence) when one is
    set, else None (the step draws one of its own)."""
    with _lock:
        if _global["seed"] is None:
            return None
        _global["ops"] += 1
        key = np.random.SeedSequence([_global["seed"] & (2**63 - 1), _global["ops"]]).generate_state(2, np.uint64)
        return int(key[0]) & (2**63 - 1)


@contextlib.contextmanager
def element_draws(key: tuple[int, ...]) -> Iterator[None]:
    """Draws inside the block come from generators keyed by ``key`` (a map's seed, iteration, element index)."""
    outer = getattr(_local, "key", None), getattr(_local, "generators", None)
    _local.key, _local.generators = key, {}
    try:
        yield
    finally:
        _local.key, _local.generators = outer


def generator(seed: int | None = None) -> np.random.Generator:
    """The generator a random operation with op seed ``seed`` draws from now (see the module docstring)."""
    key = getattr(_local, "key", None)
    if key is not None:
        gens = _local.generators
        gen = gens.get(seed)
        if gen is None:
            salt = () if seed is None else (1, int(seed) & (2**63 - 1))
            gen = gens[seed] = np.random.Generator(np.random.Philox(np.random.SeedSequence([*key, *salt])))
        return gen
    with _lock:
        gens = _global["generators"]
        gen = gens.get(seed)
        if gen is None:
            base = _global["seed"] if _global["seed"] is not None else secrets.randbits(63)
            parts = [base & (2**63 - 1)] + ([] if seed is None else [1, int(seed) & (2**63 - 1)])
            gen = gens[seed] = np.random.Generator(np.random.Philox(np.random.SeedSequence(parts)))
        return gen


def stateless(seed: Any, op: str) -> np.random.Generator:
    """The generator of a stateless operation: a function of its shape-[2] seed alone."""
    pair = np.asarray(seed).reshape(-1)
    if pair.size != 2 or pair.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{op}: `seed` must be a shape [2] integer tensor, got {seed!r}")
    return np.random.Generator(np.random.Philox(np.random.SeedSequence([int(v) & (2**64 - 1) for v in pair])))


# ------------------------------------------------------------------------------------------------ draws


def _uniform(gen: np.random.Generator, shape: Any, minval: Any, maxval: Any, dtype: Any, op: str) -> Tensor:
    dt, dims = as_dtype(dtype), ints(shape, op, "shape")
    if dt.kind == "f":
        lo = float(np.asarray(minval)) if np.ndim(minval) == 0 else array(minval, op).astype(dt)
        hi = 1.0 if maxval is None else (float(np.asarray(maxval)) if np.ndim(maxval) == 0 else array(maxval, op))
        draws = gen.random(dims, dtype=np.float64 if dt.itemsize > 4 else np.float32)
        return out((lo + draws * (np.asarray(hi) - lo)).astype(dt))
    if dt.kind in "iu":
        if maxval is None:
            raise InvalidArgumentError(f"{op}: Must specify maxval for integer dtype {dtype_name(dt)}")
        lo, hi = int(np.asarray(minval)), int(np.asarray(maxval))
        if hi <= lo:
            raise InvalidArgumentError(f"{op}: Need minval < maxval: {lo} >= {hi}")
        return out(gen.integers(lo, hi, dims).astype(dt))
    raise InvalidArgumentError(f"{op}: dtype {dtype_name(dt)} is not supported; use a float or integer dtype")


def _floats(dtype: Any, op: str) -> np.dtype:
    dt = as_dtype(dtype)
    if dt.kind != "f":
        raise InvalidArgumentError(f"{op}: dtype {dtype_name(dt)} is not supported; use a float dtype")
    return dt


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = "float32", seed: int | None = None,
            name: str | None = None) -> Tensor:  # fmt: skip
    """``tf.random.uniform``: values in ``[minval, maxval)`` (``maxval`` 1 for floats; required for integers)."""
    return _uniform(generator(seed), shape, minval, maxval, dtype, "random.uniform()")


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = "float32", seed: int | None = None,
           name: str | None = None) -> Tensor:  # fmt: skip
    dt = _floats(dtype, "random.normal()")
    draws = generator(seed).standard_normal(ints(shape, "random.normal()", "shape"))
    return out((draws * np.asarray(stddev, np.float64) + np.asarray(mean, np.float64)).astype(dt))


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = "float32", seed: int | None = None,
                     name: str | None = None) -> Tensor:  # fmt: skip
    """``tf.random.truncated_normal``: normal draws more than two standard deviations out drawn again."""
    dt = _floats(dtype, "random.truncated_normal()")
    return out(_truncated(generator(seed), ints(shape, "random.truncated_normal()", "shape"), mean, stddev, dt))


def _truncated(gen: np.random.Generator, dims: list[int], mean: Any, stddev: Any, dt: np.dtype) -> np.ndarray:
    draws = gen.standard_normal(dims)
    bad = np.abs(draws) > 2
    while bad.any():
        draws[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(draws) > 2
    return (draws * np.asarray(stddev, np.float64) + np.asarray(mean, np.float64)).astype(dt)


def shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """``tf.random.shuffle``: the rows (first dimension) in a random order."""
    arr = array(value, "random.shuffle()")
    if arr.ndim == 0:
        raise InvalidArgumentError("random.shuffle(): `value` must have rank >= 1, got a scalar")
    return out(arr[generator(seed).permutation(arr.shape[0])])


def categorical(logits: Any, num_samples: int, dtype: Any = "int64", seed: int | None = None,
                name: str | None = None) -> Tensor:  # fmt: skip
    """``tf.random.categorical``: for each row of ``logits`` ([batch, classes]), ``num_samples`` class indices."""
    x = array(logits, "random.categorical()").astype(np.float64)
    if x.ndim != 2:
        raise InvalidArgumentError(f"random.categorical(): `logits` must be 2-D [batch, classes], got shape {x.shape}")
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    gen = generator(seed)
    rows = [gen.choice(x.shape[1], size=int(num_samples), p=row) for row in p]
    return out(np.asarray(rows, dtype=as_dtype(dtype)).reshape(x.shape[0], int(num_samples)))


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None, dtype: Any = "float32",
                      name: str | None = None, alg: Any = "auto_select") -> Tensor:  # fmt: skip
    op = "random.stateless_uniform()"
    return _uniform(stateless(seed, op), shape, minval, maxval, dtype, op)


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = "float32",
                     name: str | None = None, alg: Any = "auto_select") -> Tensor:  # fmt: skip
    op = "random.stateless_normal()"
    draws = stateless(seed, op).standard_normal(ints(shape, op, "shape"))
    return out((draws * np.asarray(stddev) + np.asarray(mean)).astype(_floats(dtype, op)))


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = "float32",
                               name: str | None = None, alg: Any = "auto_select") -> Tensor:  # fmt: skip
    op = "random.stateless_truncated_normal()"
    return out(_truncated(stateless(seed, op), ints(shape, op, "shape"), mean, stddev, _floats(dtype, op)))


def split(seed: Any, num: int = 2, alg: Any = "auto_select") -> Tensor:
    """``tf.random.split`` (``experimental.stateless_split``): ``num`` new shape-[2] seeds from one."""
    return out(stateless(seed, "random.split()").integers(0, 2**63 - 1, (int(num), 2), dtype=np.int64))


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Tensor:
    """``tf.random.fold_in``: a new shape-[2] seed from ``seed`` and an integer."""
    pair = np.asarray(seed).reshape(-1)
    gen = stateless([int(pair[0]) ^ int(np.asarray(data)), int(pair[1])], "random.fold_in()")
    return out(gen.integers(0, 2**63 - 1, 2, dtype=np.int64))


class Generator:
    """``tf.random.Generator``: a generator with its own state (``from_seed``, ``from_non_deterministic_state``).
    Inside a map function it draws per element like the module's functions (its state is not shared across
    elements, which TensorFlow's parallel maps could not order either)."""

    def __init__(self, seed: int | None = None):
        self._seed = secrets.randbits(63) if seed is None else int(seed)
        self._gen = np.random.Generator(np.random.Philox(np.random.SeedSequence([self._seed & (2**63 - 1)])))

    @classmethod
    def from_seed(cls, seed: int, alg: Any = None) -> Generator:
        return cls(seed)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        return cls()

    def _draws(self) -> np.random.Generator:
        return self._gen if getattr(_local, "key", None) is None else generator(self._seed)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = "float32",
                name: str | None = None) -> Tensor:  # fmt: skip
        return _uniform(self._draws(), shape, minval, maxval, dtype, "Generator.uniform()")

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = "float32",
               name: str | None = None) -> Tensor:  # fmt: skip
        draws = self._draws().standard_normal(ints(shape, "Generator.normal()", "shape"))
        return out((draws * stddev + mean).astype(_floats(dtype, "Generator.normal()")))

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = "float32",
                         name: str | None = None) -> Tensor:  # fmt: skip
        op = "Generator.truncated_normal()"
        return out(_truncated(self._draws(), ints(shape, op, "shape"), mean, stddev, _floats(dtype, op)))

    def make_seeds(self, count: int = 1) -> Tensor:
        return out(self._draws().integers(0, 2**63 - 1, (2, int(count)), dtype=np.int64))

    def split(self, count: int = 1) -> list[Generator]:
        return [Generator(int(s)) for s in self._draws().integers(0, 2**63 - 1, int(count))]


experimental = type("experimental", (), {"stateless_split": staticmethod(split), "stateless_fold_in":
                                         staticmethod(fold_in)})  # fmt: skip

__all__ = [
    "Generator",
    "categorical",
    "experimental",
    "fold_in",
    "normal",
    "set_seed",
    "shuffle",
    "split",
    "stateless_normal",
    "stateless_truncated_normal",
    "stateless_uniform",
    "truncated_normal",
    "uniform",
]

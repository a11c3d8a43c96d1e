"""``Dataset.random``: pseudorandom int64 scalars forever.

The numbers are uniform in ``[0, 2**32)`` like tf.data's, but drawn from NumPy's generator, not TensorFlow's Philox
stream: the same seed gives other numbers than in tf.data (see docs/porting.md). What does match is how they repeat:
the same seed gives the same numbers in every process; ``rerandomize_each_iteration=True`` draws new ones for every
``iter()`` and every pass of a ``repeat`` above; a state restores the exact position.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core.arguments import as_int
from parafeed.core.dataset import INFINITE, Dataset
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import DatasetIterator, current_scope
from parafeed.errors import InvalidArgumentError
from parafeed.sources.draws import draw_seed
from parafeed.values.structure import TensorSpec

CHUNK = 1024  # numbers drawn at a time; the generator of chunk k is seeded with (seed, stream, k)


class RandomDataset(Dataset):
    """Pseudorandom int64 scalars in ``[0, 2**32)``, forever.

    Example:
        >>> a = [int(x) for x in pf.Dataset.random(seed=7).take(3)]
        >>> a == [int(x) for x in pf.Dataset.random(seed=7).take(3)]
        True
    """

    kind = SOURCE

    def __init__(self, seed: int | None = None, rerandomize_each_iteration: bool | None = None,
                 name: str | None = None):  # fmt: skip
        super().__init__(name=name)
        self._seeded = seed is not None
        self.seed: int = draw_seed("random()", None)[0] if seed is None else as_int("random()", "seed", seed)
        if rerandomize_each_iteration is not None and not isinstance(rerandomize_each_iteration, (bool, np.bool_)):
            raise InvalidArgumentError(
                "random(): `rerandomize_each_iteration` must be None, True or False, got "
                f"{rerandomize_each_iteration!r}"
            )
        self._rerandomize = bool(rerandomize_each_iteration)

    def _make_iterator(self) -> DatasetIterator:
        scope = current_scope()
        seed = (scope.run.seed_for(self) if scope.run is not None else self.seed) & (2**63 - 1)
        stream = [seed, 1, scope.iteration, *scope.epochs] if self._rerandomize else [seed, 0]
        return _RandomIterator(stream)

    def _element_spec(self) -> Any:
        return TensorSpec((), np.int64)

    def _sample_element(self) -> Any:
        return np.int64(0)

    def _cardinality(self) -> int:
        return INFINITE


class _RandomIterator(DatasetIterator):
    def __init__(self, stream: list[int]):
        super().__init__()
        self._stream = stream
        self._index = 0
        self._chunk: np.ndarray | None = None

    def __next__(self) -> Any:
        k, i = divmod(self._index, CHUNK)
        if i == 0 or self._chunk is None:
            rng = np.random.default_rng([*self._stream, k])
            self._chunk = rng.integers(0, 1 << 32, size=CHUNK, dtype=np.int64)
        self._index += 1
        return self._chunk[i]

    def skip(self, n: int) -> int:
        if n > 0:
            self._index += n
            self._chunk = None
        return max(n, 0)

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        self._index = int(state["index"])
        self._chunk = None

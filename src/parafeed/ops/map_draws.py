"""Random draws inside map functions: each element's key (the map's seed, the iteration, the element's index), so
that ``pf.random.*`` and ``pf.image.random_*`` give the same draws for the same element on every run, executor and
worker, and after a restore (see :mod:`parafeed.tensor_ops.random_ops`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parafeed.core.iterator import DatasetIterator
from parafeed.tensor_ops.random_ops import element_draws


class Keyed(DatasetIterator):
    """The map's input, each element as ``(key, element)``: ``key`` is ``(seed, iteration, index)``. The index is
    part of the state, so a restored iterator keys its elements as the uninterrupted one did."""

    def __init__(self, parent: DatasetIterator, run_key: Callable[[], tuple[int, int]],
                 skipped: Callable[[], int] | None = None):  # fmt: skip
        """``run_key``: the map's ``(seed, iteration)`` in this run, read when the first element is keyed (a restored
        state sets both). ``skipped``: in an input worker, the input elements skipped below so far (the other
        workers' blocks: :func:`parafeed.ops.offload.shard_skips`), which count as the pipeline on one host counts
        them."""
        super().__init__(parent)
        self._parent = parent
        self._run_key = run_key
        self._key: tuple[int, int] | None = None
        self._index = 0
        self._skipped, self._seen = skipped, 0

    def __next__(self) -> tuple[tuple[int, ...], Any]:
        element = next(self._parent)
        if self._skipped is not None:
            skipped = self._skipped()
            self._index, self._seen = self._index + skipped - self._seen, skipped
        if self._key is None:
            self._key = self._run_key()
        self._index += 1
        return (*self._key, self._index - 1), element

    def skip(self, n: int) -> int:
        done = self._parent.skip(n)
        self._index += done
        return done

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "index": self._index}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._index, self._key = int(state["index"]), None


class KeyedCall:
    """``fn`` called on a :class:`Keyed` input's ``(key, element)``: its random operations draw from ``key``'s
    generators. Picklable when ``fn`` is (it runs in worker processes too)."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.__wrapped__ = fn  # (error messages name the user's function)

    def __call__(self, key: tuple[int, ...], element: Any) -> Any:
        with element_draws(key):
            return self.fn(*element) if type(element) is tuple else self.fn(element)

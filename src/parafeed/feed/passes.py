"""``Passes``: a pipeline fed to a framework pass after pass, with a checkpointable position; what every adapter's
iterable (``to_torch()``, ``pf.adapters.jax.to_jax()``) is made of.

Each ``iter()`` starts the next pass (epoch) of the pipeline (:class:`parafeed.distribute.resume.Epochs`: after a
restore, the rest of the saved epoch first). Elements go to the loop either converted on its own thread as the
pipeline makes them (``convert``) or through an :class:`parafeed.feed.ahead.Ahead` made by ``feed`` (readied on a
thread of the feed, ahead of the loop). ``state_dict()`` is the position after what the loop took: exact even when the
feed reads ahead.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from parafeed.core.dataset import Dataset
from parafeed.core.options import Options
from parafeed.distribute.resume import Epochs, save_state
from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.feed.ahead import Ahead
from parafeed.values.structure import flatten


class Passes:
    """Passes over ``dataset`` (see the module docs): ``feed(iterator)`` makes the :class:`Ahead` of a pass, or, when
    ``feed`` is None, ``convert(element)`` runs on the loop's thread."""

    def __init__(self, dataset: Dataset, feed: Callable[[Any], Ahead] | None = None,
                 convert: Callable[[Any], Any] = lambda element: element):  # fmt: skip
        self.dataset = dataset
        self._make_feed, self._convert = feed, convert
        self._it: Any = None
        self._feed: Ahead | None = None
        self._steps = 0
        self._epochs = Epochs(dataset, numpy=True)

    def __iter__(self) -> Iterator[Any]:
        it = self._it = self._epochs.next()
        self._steps = 0
        if self._make_feed is not None:
            feed = self._feed = self._make_feed(it)
            try:
                yield from feed
            finally:
                self._it = self._feed = None
                feed.close()
            return
        try:
            for element in it:
                self._steps += 1
                yield self._convert(element)
        finally:
            self._it = None
            it.close()

    def state_dict(self) -> dict[str, Any]:
        """The position of the pass in progress (elements handed out so far), JSON-serialisable; between passes, how
        the next one starts."""
        if self._feed is not None:
            state: dict[str, Any] = self._feed.position()
            return state
        if self._it is None:
            run = self._epochs.upcoming()
            return {} if run is None else {"run": run}
        saved: dict[str, Any] = save_state(self._it, self._steps)
        return saved

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Make the next pass go on from ``state`` to the end of its epoch, on this or any other world size (see
        ``pf.distribute.resume``); the passes after it are whole epochs again, shuffled as the uninterrupted run's
        would have been."""
        state = state or {}
        self._epochs = Epochs(self.dataset, None if "run" in state else state, state.get("run"), numpy=True)

    def __len__(self) -> int:
        return len(self.dataset)


def check_arguments(adapter: str, takes: str, distribute: bool, distribute_args: dict[str, Any], ahead: int) -> None:
    """An adapter's keywords: ``distribute()``'s only with ``distribute=True``, nothing else unknown, ``ahead`` >= 0."""
    known = [name for name in inspect.signature(Dataset.distribute).parameters if name != "self"]
    unknown = sorted(set(distribute_args) - set(known))
    if unknown:
        raise ArgumentTypeError(
            f"{adapter}(): unknown keyword argument(s) {unknown}; it takes {takes} and, with distribute=True, "
            f"distribute()'s: {known}"
        )
    if distribute_args and not distribute:
        raise InvalidArgumentError(
            f"{adapter}(): {sorted(distribute_args)} are distribute()'s arguments, and distribute is False: pass "
            f"distribute=True (or call ds.distribute(...) before {adapter}())"
        )
    if not isinstance(ahead, int) or isinstance(ahead, bool) or ahead < 0:
        raise InvalidArgumentError(f"{adapter}(): `ahead` must be an int >= 0, got {ahead!r}")


def on_accelerator(dataset: Dataset) -> Dataset:
    """``dataset`` as a feed to an accelerator's training loop runs it: its AUTOTUNE maps that chose no executor on
    worker processes at once (``Options.autotune.executor = "process"``, unless the pipeline sets it), since the
    loop's Python needs the GIL to launch the model's kernels and the map's threads would compete with it."""
    if dataset.options().autotune.executor is not None:
        return dataset
    options = Options()
    options.autotune.executor = "process"
    return dataset.with_options(options)


def rows(batch: Any) -> int:
    """Elements in a batch: the leading dimension of its first array leaf (1 for an unbatched element)."""
    for leaf in flatten(batch):
        shape = getattr(leaf, "shape", None)
        return int(shape[0]) if shape else 1
    return 1


def position_after(it: Any) -> Callable[[int], Any]:
    """``k`` -> the state of ``it`` after ``k`` batches (what :class:`Ahead` records after each)."""
    return lambda k: save_state(it, k)


def agrees(dataset: Dataset) -> bool:
    """Whether the pipeline's replicas agree on their steps at run time through the loop's collectives (which then
    must stay on the loop's thread: no feed thread)."""
    from parafeed.core import graph

    return any(getattr(node, "agrees", False) for node in graph.walk(dataset))

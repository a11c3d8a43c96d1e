"""The run-time context of an iterator tree: its merged options and its per-stage counters.

``iter(ds)`` creates a :class:`Pipeline` and builds the iterator tree with it active; every step reads the options
from it, and with ``Options(stats=True)`` every step's iterator is wrapped to count elements and time. Steps that
create iterators while running (``flat_map``, ``interleave``, ``repeat`` ...) keep the pipeline and re-activate it.

``iterator.stats()`` returns a :class:`StageStats` snapshot per step, and :func:`bottleneck` names the stage where
the time goes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from parafeed.options import Options

_current: ContextVar[Pipeline | None] = ContextVar("parafeed_pipeline", default=None)
_epochs: ContextVar[tuple] = ContextVar("parafeed_epochs", default=())


@dataclass
class StageStats:
    """Counters of one step of a running pipeline.

    ``time`` is the time the consumer spent inside this step's ``next()``, upstream steps included when they run in
    the same thread (``threaded`` False); ``busy`` (computed) removes them. Threaded steps (prefetch, parallel map)
    report the time their workers spent computing in ``worker_time`` and how many ran at once in ``parallelism``.
    """

    name: str
    elements: int = 0
    time: float = 0.0
    bytes: int = 0
    threaded: bool = False
    worker_time: float = 0.0
    parallelism: int = 1
    buffered: int = 0
    buffer_size: int = 0
    inputs: list[StageStats] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def input_time(self) -> float:
        """Time this step waited on its inputs (in the same thread)."""
        return 0.0 if self.threaded else sum(s.time for s in self.inputs)

    @property
    def busy(self) -> float:
        """Time spent in this step itself: its own work, or for threaded steps the workers' time per worker."""
        if self.threaded:
            return self.worker_time / max(1, self.parallelism)
        return max(0.0, self.time - self.input_time)

    def walk(self) -> Iterator[StageStats]:
        """This stage and all upstream ones, depth first (upstream first)."""
        for s in self.inputs:
            yield from s.walk()
        yield self


class Pipeline:
    """Options and stats of one iterator tree."""

    def __init__(self, options: Options):
        self.options = options
        self.collect = bool(options.resolve("stats"))
        self.root: StageStats | None = None
        self.dataset: Any = None  # the dataset iterated
        self.iterations: dict[int, int] = {}  # id(shuffle step) -> which iteration of that step this tree is
        self.started = time.perf_counter()
        self._ram: Any = None
        self._building: list[list[StageStats]] | None = [[]] if self.collect else None

    @property
    def ram(self) -> Any:
        """The pipeline's :class:`~parafeed.parallel.autotune.RamBudget`."""
        if self._ram is None:
            from parafeed.parallel.autotune import RamBudget

            self._ram = RamBudget(self.options.budget)
        return self._ram

    @contextlib.contextmanager
    def active(self) -> Iterator[Pipeline]:
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    def wrap(self, dataset: Any, make: Any) -> Any:
        """Build ``dataset``'s iterator with ``make()``, wrapped to collect stats while the tree is being built."""
        if self._building is None:
            return make()
        stage = StageStats(dataset._name or type(dataset).__name__.removesuffix("Dataset") or "Dataset")
        self._building.append([])
        try:
            it = make()
        finally:
            inputs = self._building.pop()
        if isinstance(it, StatsIterator):  # a node that only forwards to another one's iterator: not a stage
            self._building[-1].extend(inputs)
            return it
        stage.inputs = inputs
        self._building[-1].append(stage)
        it._stage = stage
        return StatsIterator(it, stage)

    def finish_building(self) -> None:
        if self._building is not None:
            roots = self._building[0]
            self.root = roots[-1] if roots else None
            self._building = None

    def stages(self) -> list[StageStats]:
        return list(self.root.walk()) if self.root else []


def current_pipeline() -> Pipeline | None:
    return _current.get()


def current_epochs() -> tuple:
    """The epochs of the ``repeat`` steps (outermost first) that the iterator being built belongs to."""
    return _epochs.get()


@contextlib.contextmanager
def epochs_scope(epochs: tuple) -> Iterator[None]:
    token = _epochs.set(epochs)
    try:
        yield
    finally:
        _epochs.reset(token)


def current_options() -> Options:
    pipeline = _current.get()
    return pipeline.options if pipeline is not None else Options()


def resolve_deterministic(value: bool | None) -> bool:
    """A step's ``deterministic`` argument, or the pipeline's default when it is None."""
    return current_options().resolve("deterministic") if value is None else value


def element_bytes(element: Any) -> int:
    """The bytes an element holds (array data and byte strings)."""
    from parafeed.structure import flatten

    total = 0
    for leaf in flatten(element):
        total += leaf.nbytes if hasattr(leaf, "nbytes") else len(leaf) if isinstance(leaf, bytes) else 8
    return total


class StatsIterator:
    """Counts the elements, bytes and time of the iterator it wraps."""

    _pipeline: Pipeline | None = None  # set when this is the root of the tree

    def __init__(self, inner: Any, stage: StageStats):
        self._inner = inner
        self._stage = stage

    def __iter__(self) -> StatsIterator:
        return self

    def __next__(self) -> Any:
        start = time.perf_counter()
        try:
            x = next(self._inner)
        finally:
            self._stage.time += time.perf_counter() - start
        self._stage.elements += 1
        self._stage.bytes += element_bytes(x)
        return x

    def skip(self, n: int) -> int:
        return self._inner.skip(n)

    def get_state(self) -> dict:
        from parafeed.checkpoint import with_seeds

        return with_seeds(self._pipeline, self._inner.get_state())

    def set_state(self, state: dict) -> None:
        from parafeed.checkpoint import restore_seeds

        restore_seeds(self._pipeline, state)
        self._inner.set_state(state)

    def stats(self) -> list[StageStats]:
        return self._pipeline.stages() if self._pipeline is not None else []

    def close(self) -> None:
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def bottleneck(stages: list[StageStats]) -> StageStats | None:
    """The stage with the most busy time: the one to speed up (or parallelize) first."""
    return max(stages, key=lambda s: s.busy, default=None)


def format_stats(stages: list[StageStats], wall: float) -> str:
    """A table of per-stage throughput and busy share, and the bottleneck."""
    lines = [f"{'stage':<28} {'elements':>10} {'elem/s':>10} {'busy s':>8} {'busy %':>7} {'par':>4} {'buffer':>8}"]
    for s in stages:
        rate = s.elements / wall if wall > 0 else 0.0
        share = 100 * s.busy / wall if wall > 0 else 0.0
        buffer = f"{s.buffered}/{s.buffer_size}" if s.buffer_size else ""
        lines.append(
            f"{s.name:<28} {s.elements:>10} {rate:>10.1f} {s.busy:>8.2f} {share:>6.1f}% {s.parallelism:>4} {buffer:>8}"
        )
    worst = bottleneck(stages)
    if worst is not None and wall > 0:
        lines.append(f"bottleneck: {worst.name} (busy {100 * worst.busy / wall:.0f}% of the time)")
    return "\n".join(lines)

"""Per-stage statistics of a running pipeline: counters, the bottleneck, and a table of them.

With ``Options(stats=True)`` every step's iterator is wrapped (:class:`StatsIterator`) to count its elements, bytes
and time while the run's iterator tree is built (:class:`StatsCollector`). ``iterator.stats()`` returns a
:class:`StageStats` snapshot per step, and :func:`bottleneck` names the stage where the time goes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parafeed.core.iterator import DatasetIterator

if TYPE_CHECKING:
    from parafeed.core.dataset import Dataset


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
    executor: str = ""  # where a parallel step runs its function: "thread", "process", "ray"
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


class StatsCollector:
    """Builds the :class:`StageStats` tree of one run while its iterators are built (``Options(stats=True)``)."""

    def __init__(self) -> None:
        self.root: StageStats | None = None
        self._building: list[list[StageStats]] | None = [[]]

    def wrap(self, dataset: Dataset, make: Callable[[], DatasetIterator]) -> DatasetIterator:
        """Build ``dataset``'s iterator with ``make()``, wrapped to count its elements and time."""
        if self._building is None:  # an iterator built while running (a repeat's next pass): not a new stage
            return make()
        stage = StageStats(dataset.name or type(dataset).__name__.removesuffix("Dataset") or "Dataset")
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
        it.stage = stage
        return StatsIterator(it, stage)

    def finish_building(self) -> None:
        if self._building is not None:
            roots = self._building[0]
            self.root = roots[-1] if roots else None
            self._building = None

    def stages(self) -> list[StageStats]:
        return list(self.root.walk()) if self.root else []


def element_bytes(element: Any) -> int:
    """The bytes an element holds (array data and byte strings)."""
    from parafeed.values.structure import flatten

    total = 0
    for leaf in flatten(element):
        total += leaf.nbytes if hasattr(leaf, "nbytes") else len(leaf) if isinstance(leaf, bytes) else 8
    return total


class StatsIterator(DatasetIterator):
    """Counts the elements, bytes and time of the iterator it wraps; otherwise it is that iterator (same step name
    and state)."""

    def __init__(self, inner: DatasetIterator, stage: StageStats):
        super().__init__(inner)
        self._inner = inner
        self._counts = stage

    def __next__(self) -> Any:
        start = time.perf_counter()
        try:
            x = next(self._inner)
        finally:
            self._counts.time += time.perf_counter() - start
        self._counts.elements += 1
        self._counts.bytes += element_bytes(x)
        return x

    def skip(self, n: int) -> int:
        return self._inner.skip(n)

    @property
    def reads_files(self) -> bool:  # type: ignore[override]
        return self._inner.reads_files

    def open_ahead(self) -> None:
        self._inner.open_ahead()

    def _step_name(self) -> str:
        return self._inner._step_name()

    def _get_state(self) -> dict[str, Any]:
        return self._inner._get_state()

    def _set_state(self, state: dict[str, Any]) -> None:
        self._inner._set_state(state)


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

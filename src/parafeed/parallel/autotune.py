"""AUTOTUNE: parallelism, task sizes and buffer sizes picked from what the running pipeline measures.

Parallelism (in-flight tasks of a parallel step) is hill-climbed on measured throughput. Every window (at least
0.2 s and a few tasks) the tuner compares the step's output rate with the previous window: while the consumer keeps
waiting on the step (the step is a bottleneck) it adds half as many slots as it has (at least one); an increase that
did not raise the rate by 5 % is undone and further increases wait twice as many windows (back-off). The ceiling is
the CPU budget (``Options.max_workers``, by default the CPU count), and buffered bytes stay within
``Options.ram_budget``. A step remembers where the climb settled (:class:`Learned`), and its next pass (the next
epoch) starts there. The first pass starts near the core count (:func:`parafeed.core.options.input_cores`).

Task size (elements per task) is set from the measured time per element so that one task takes about
``TARGET_TASK_SECONDS``: long enough to amortise the hand-off to a worker, short enough to balance the workers.

Prefetch buffers start at 1 element and double, up to 64 and within the RAM budget, each time the consumer finds the
buffer empty after it had been full: the producer is bursty, and a bigger buffer absorbs the bursts (a producer that
is simply slower than the consumer gains nothing from a bigger buffer, so it does not get one).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import NamedTuple

WINDOW_SECONDS = 0.2
GAIN = 1.05


class Learned:
    """What AUTOTUNE learned of one step in its earlier passes: the parallelism its next pass starts from, whether the
    step has warned that threads do not speed its function up (once per step), and the executor it moved the
    function to when they did not (its next passes start there)."""

    __slots__ = ("executor", "parallelism", "warned")

    def __init__(self) -> None:
        self.parallelism: int | None = None
        self.warned = False
        self.executor: str | None = None


class ParallelismTuner:
    """Hill-climbing controller of one step's parallelism (``clock`` gives seconds; tests pass their own)."""

    def __init__(self, maximum: int, start: int = 1, clock: Callable[[], float] = time.perf_counter):
        self.maximum = max(1, maximum)
        self.value = max(1, min(start, self.maximum))
        self._clock = clock
        self._window_start = clock()
        self._elements = 0
        self._waited = 0.0
        self._last_rate: float | None = None
        self._trial_from: int | None = None  # parallelism before the increase being tried
        self._hold = 0  # windows to wait before the next increase
        self._backoff = 1

    def record(self, elements: int, waited: float) -> None:
        """The consumer took ``elements`` and waited ``waited`` seconds for them."""
        self._elements += elements
        self._waited += waited

    def update(self) -> int:
        """Re-evaluate at the end of a window; returns the parallelism to use."""
        now = self._clock()
        span = now - self._window_start
        if span < WINDOW_SECONDS or self._elements < 2 * self.value:
            return self.value
        rate = self._elements / span
        starved = self._waited / span
        if self._trial_from is not None:
            if self._last_rate is not None and rate < self._last_rate * GAIN:
                self.value = self._trial_from  # the extra slot did not pay: undo, and wait longer next time
                self._backoff = min(self._backoff * 2, 64)
                self._hold = self._backoff
            else:
                self._backoff = 1
            self._trial_from = None
        elif self._hold > 0:
            self._hold -= 1
        elif starved > 0.05 and self.value < self.maximum:
            self._trial_from = self.value
            self.value = min(self.maximum, self.value + max(1, self.value // 2))
        self._last_rate = rate
        self._window_start, self._elements, self._waited = now, 0, 0.0
        return self.value

    @property
    def settled(self) -> int:
        """The parallelism that has paid so far (not an increase still on trial)."""
        return self.value if self._trial_from is None else self._trial_from


def task_size(seconds_per_element: float, target: float, limit: int = 256) -> int:
    """Elements per task so that a task takes about ``target`` seconds."""
    if seconds_per_element <= 0:
        return limit
    return max(1, min(limit, int(target / seconds_per_element)))


POOL_WINDOW_SECONDS = 2.0  # a pool of input workers is re-sized at most this often (a resize drops blocks in flight)


class PoolTuner:
    """How many input workers ``offload(workers=AUTOTUNE)`` runs on, from the trainer's wait and the workers' busy
    time (``clock`` gives seconds; tests pass their own).

    Every window (``POOL_WINDOW_SECONDS``): a trainer that waited more than 5 % of the time gets one more worker (twice
    as many when it waited more than half the time), as far as the cluster has room; a trainer that did not wait
    (under 1 %) for two windows in a row, with workers busy little enough that one fewer would be under 70 % busy,
    gets one fewer (its CPU goes back to the cluster). A window starts again when the workers (re)start and when
    their first blocks come: the trainer's wait for them to start, and for the pipeline to fill, is not its speed (else
    each resize reads as a starved trainer and grows the pool again). ``windows`` keeps the last windows' measures and
    what they decided, to log or to explain a count.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._idle_windows = 0
        self.windows: collections.deque[PoolWindow] = collections.deque(maxlen=64)
        self.restart()

    def restart(self) -> None:
        """A new window from now (the workers have just started, or their first blocks have come)."""
        self._window_start = self._clock()
        self._waited = 0.0
        self._busy = 0.0

    def record(self, waited: float, busy: float) -> None:
        """The trainer waited ``waited`` seconds for a call that kept a worker busy ``busy`` seconds."""
        self._waited += waited
        self._busy += busy

    def update(self, workers: int, room: Callable[[], int]) -> int:
        """The number of workers to run on, given ``workers`` now and ``room()`` for that many more in the cluster
        (asked only at the end of a window)."""
        now = self._clock()
        span = now - self._window_start
        if span < POOL_WINDOW_SECONDS:
            return workers
        starved, busy = self._waited / span, self._busy / (workers * span)
        self._window_start, self._waited, self._busy = now, 0.0, 0.0
        self._idle_windows = self._idle_windows + 1 if starved < 0.01 else 0
        more = room() if starved > 0.05 else 0
        count = workers
        if more > 0:
            count = workers + min(more, workers if starved > 0.5 else 1)
        elif self._idle_windows >= 2 and workers > 1 and busy * workers / (workers - 1) < 0.7:
            self._idle_windows = 0
            count = workers - 1
        self.windows.append(PoolWindow(span, starved, busy, workers, more, count))
        return count


class PoolWindow(NamedTuple):
    """One window of :class:`PoolTuner`: its seconds, the share of them the trainer waited, the workers' busy share,
    the workers it ran on, the room for more it saw (asked only when starved) and the workers it decided on."""

    seconds: float
    starved: float
    busy: float
    workers: int
    room: int
    decided: int

"""Noticing a map that threads cannot speed up: a function that holds the GIL.

AUTOTUNE times a thread map's function inline before the map goes parallel (the runner's probe). Once it runs on
threads, the elements finished per second of wall time, times that inline time, is how many threads' worth of speed
the threads give: the *speedup*. A function that releases the GIL (NumPy on large arrays, ``pf.image``) gets about
one per busy thread, up to the cores; one that waits for I/O, one per thread; one that holds the GIL (pure Python),
about one in all, however many threads are busy.

A window of tasks counts only where the map held the pipeline back (its consumer waited for results at least a fifth
of the time: a training loop waits only for what its own step does not cover), its threads were busy (not waiting
for input, nor idle behind a full buffer while a slow consumer works) and cores this process may use stood idle
meanwhile (other work on a busy host slows threads down too, and processes would not help there; read from
``/proc/stat``, where there is one). A window whose speedup stays under half of what its threads could give on these
cores (under 1.3 for two) makes the step warn once, naming the function, the numbers and the fix:
``executor="process"``. tf.data has the same limit for ``py_function`` and says nothing.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

WINDOW_SECONDS = 1.0  # wall time a verdict is drawn over
STARVED = 0.2  # the consumer waited for results at least this share of the window, for it to count (at 0.5, a loop
# that takes the map's batches itself, no prefetch between, and spends over half its time on its own step, never did)
BUSY = 0.6  # the threads were busy at least this share of the window, on average (GIL-bound threads wait for the GIL
# inside their tasks, but the feeder and the consumer wait for it too, so their tasks come late: 0.8 measured)
LEAST = 1.3  # the speedup below which two or more busy threads are held back, whatever the cores
IDLE = 0.5  # cores of this process's that must have stood idle, on average, for a window to count

log = logging.getLogger(__name__)  # each window's measures and verdict, at DEBUG

Ticks = tuple[int, int]  # (idle, all) clock ticks so far of the cores this process may run on


def cpu_ticks() -> Ticks | None:
    """Idle and all clock ticks so far of the cores this process may run on; None where ``/proc/stat`` is missing."""
    try:
        mine = {f"cpu{n}" for n in os.sched_getaffinity(0)}
        with open("/proc/stat") as f:
            rows = [line.split() for line in f if line.split(None, 1)[0] in mine]
    except (AttributeError, OSError, IndexError):
        return None
    idle = sum(int(r[4]) + int(r[5]) for r in rows)  # idle and iowait; steal counts as taken (by other guests)
    return idle, sum(sum(int(v) for v in r[1:]) for r in rows)


class ThreadSpeedup:
    """Tasks finished by a step's threads, window by window (``clock`` gives seconds, ``ticks`` the cores' clock
    ticks; tests pass their own)."""

    def __init__(self, inline_seconds: float, cores: int, clock: Callable[[], float] = time.perf_counter,
                 ticks: Callable[[], Ticks | None] | None = None):  # fmt: skip
        self._inline = inline_seconds  # per element, measured inline by the probe
        self._cores = cores
        self._clock = clock
        self._ticks = ticks or cpu_ticks
        self._start, self._at = clock(), self._ticks()
        self._elements = 0
        self._busy = 0.0  # seconds the window's tasks took on their threads
        self._waited = 0.0  # seconds the consumer waited for them
        self.done = False

    def record(self, elements: int, seconds: float, waited: float, threads: int) -> tuple[float, float] | None:
        """A task of ``elements`` that took ``seconds`` on one of ``threads`` threads, and that the consumer waited
        ``waited`` seconds for. Returns ``(busy threads, speedup)`` of the window it ends, the first time a window
        shows the threads held back; else None."""
        if self.done:
            return None
        self._elements += elements
        self._busy += seconds
        self._waited += waited
        now = self._clock()
        span = now - self._start
        if span < WINDOW_SECONDS:
            return None
        busy, speedup, starved = self._busy / span, self._elements * self._inline / span, self._waited / span
        before, after = self._at, self._ticks()
        self._start, self._at, self._elements, self._busy, self._waited = now, after, 0, 0.0, 0.0
        idle = None
        if before is not None and after is not None and after[1] > before[1]:
            idle = (after[0] - before[0]) / (after[1] - before[1]) * self._cores
        if threads < 2:
            why = "one thread"
        elif starved < STARVED:
            why = "the consumer was not starved"
        elif busy < BUSY * threads:
            why = "the threads were not busy"
        elif speedup >= max(LEAST, min(threads, self._cores) / 2):
            why = "the threads sped it up"
        elif idle is not None and idle < IDLE:
            why = "the cores were in use"  # (by this process or others): not a sign of the GIL
        else:
            why = "held back"
            self.done = True
        if log.isEnabledFor(logging.DEBUG):
            log.debug("thread speedup: %.1fx on %.1f busy of %d threads, consumer waited %.0f%%, %s idle cores: %s",
                      speedup, busy, threads, 100 * starved, "?" if idle is None else f"{idle:.1f}", why)  # fmt: skip
        return (busy, speedup) if self.done else None

"""Noticing a map that threads cannot speed up: a function, or something else in the process, that holds the GIL.

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

The function is not the only thing that holds the GIL: a training loop's Python holds it while it launches the
model's kernels (and waits, inside a launch, for room in CUDA's queue), and then every thread of the pipeline, the one
that hands the map its input included, gets it late; the threads look idle, or fast enough, while the pipeline starves.
So the check also measures the GIL itself: a thread that sleeps :data:`SAMPLE_SECONDS` at a time and adds up how late
it wakes (a woken thread waits for the GIL; the kernel wakes a sleeper at once even on busy cores: 0.1-0.4 ms measured
beside two busy loops on 2 cores). A window in which the consumer waited, a thread waited longer for the GIL, on
average, than the function takes per element (and at least :data:`GIL_WAIT`), and the threads gave under three
quarters of what they could on these cores, is held back too, whoever held the GIL: processes take the map's work,
and its input's, out of this process. The sampler runs while checks read it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from parafeed.parallel import shutdown

WINDOW_SECONDS = 1.0  # wall time a verdict is drawn over
STARVED = 0.2  # the consumer waited for results at least this share of the window, for it to count (at 0.5, a loop
# that takes the map's batches itself, no prefetch between, and spends over half its time on its own step, never did)
BUSY = 0.6  # the threads were busy at least this share of the window, on average (GIL-bound threads wait for the GIL
# inside their tasks, but the feeder and the consumer wait for it too, so their tasks come late: 0.8 measured)
LEAST = 1.3  # the speedup below which two or more busy threads are held back, whatever the cores
IDLE = 0.5  # cores of this process's that must have stood idle, on average, for a window to count
SAMPLE_SECONDS = 0.01  # the GIL sampler's sleep
GIL_WAIT = 0.001  # seconds a woken thread waited for the GIL, on average, at least, for the GIL to hold a map back:
# on 2 cores P5's threads waited 0.15 ms alone, 3.4 ms beside a loop holding the GIL 211 µs per image
GIL_BAR = 0.75  # ... while the threads gave under this share of what they could on these cores (more threads hide
# the wait of a function that sleeps or reads: it ran 2x faster on 8 threads than on processes beside such a loop)
SAMPLER_IDLE = 2.0  # the sampler ends this many seconds after the last check read it

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


GilWaits = tuple[float, int]  # (seconds late, wake-ups) so far of the GIL sampler


class _GilSampler:
    """One thread per process, named ``parafeed-gil-wait``, that sleeps :data:`SAMPLE_SECONDS` at a time and adds up
    how late it wakes; started by the first read, it ends :data:`SAMPLER_IDLE` seconds after the last one."""

    def __init__(self) -> None:
        self._late, self._samples = 0.0, 0
        self._read = 0.0  # when a check last read it
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def read(self) -> GilWaits:
        with self._lock:
            self._read = time.monotonic()
            if self._thread is None and not shutdown.finalizing():  # (no thread starts at exit)
                self._thread = threading.Thread(target=self._run, name="parafeed-gil-wait", daemon=True)
                self._thread.start()
            return self._late, self._samples

    def _run(self) -> None:
        while True:
            with self._lock:
                if time.monotonic() - self._read > SAMPLER_IDLE:
                    self._thread = None
                    return
            start = time.perf_counter()
            time.sleep(SAMPLE_SECONDS)
            late = time.perf_counter() - start - SAMPLE_SECONDS
            with self._lock:
                self._late, self._samples = self._late + late, self._samples + 1


_sampler = _GilSampler()


class ThreadSpeedup:
    """Tasks finished by a step's threads, window by window (``clock`` gives seconds, ``ticks`` the cores' clock
    ticks, ``gil`` the GIL sampler's totals; tests pass their own)."""

    def __init__(self, inline_seconds: float, cores: int, clock: Callable[[], float] = time.perf_counter,
                 ticks: Callable[[], Ticks | None] | None = None,
                 gil: Callable[[], GilWaits] | None = None):  # fmt: skip
        self._inline = inline_seconds  # per element, measured inline by the probe
        self._cores = cores
        self._clock = clock
        self._ticks = ticks or cpu_ticks
        self._gil = gil or _sampler.read
        self._start, self._at, self._gil_at = clock(), self._ticks(), self._gil()
        self._elements = 0
        self._busy = 0.0  # seconds the window's tasks took on their threads
        self._waited = 0.0  # seconds the consumer waited for them
        self.done = False

    def record(self, elements: int, seconds: float, waited: float, threads: int) -> Verdict | None:
        """A task of ``elements`` that took ``seconds`` on one of ``threads`` threads, and that the consumer waited
        ``waited`` seconds for. Returns the window it ends, the first time a window shows the threads held back;
        else None."""
        if self.done:
            return None
        self._elements += elements
        self._busy += seconds
        self._waited += waited
        gil_before, gil_after = self._gil_at, self._gil()  # (read with every task: the sampler runs while it is read)
        now = self._clock()
        span = now - self._start
        if span < WINDOW_SECONDS:
            return None
        busy, speedup, starved = self._busy / span, self._elements * self._inline / span, self._waited / span
        before, after = self._at, self._ticks()
        self._start, self._at, self._gil_at = now, after, gil_after
        self._elements, self._busy, self._waited = 0, 0.0, 0.0
        idle = None
        if before is not None and after is not None and after[1] > before[1]:
            idle = (after[0] - before[0]) / (after[1] - before[1]) * self._cores
        wakeups = gil_after[1] - gil_before[1]
        gil = (gil_after[0] - gil_before[0]) / wakeups if wakeups else None
        by_gil = None  # the GIL's wait, where it decided the verdict
        if threads < 2:
            why = "one thread"
        elif starved < STARVED:
            why = "the consumer was not starved"
        elif gil is not None and gil >= max(GIL_WAIT, self._inline) and speedup < GIL_BAR * min(threads, self._cores):
            why = "held back by the GIL"  # (whoever held it: the threads, their feeder, the training loop)
            self.done, by_gil = True, gil
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
            log.debug("thread speedup: %.1fx on %.1f busy of %d threads, consumer waited %.0f%%, %s idle cores, GIL "
                      "wait %s: %s", speedup, busy, threads, 100 * starved, "?" if idle is None else f"{idle:.1f}",
                      "?" if gil is None else f"{1000 * gil:.2f} ms", why)  # fmt: skip
        return Verdict(busy, speedup, by_gil) if self.done else None


class Verdict(NamedTuple):
    """A window that held the threads back: their busy count, their speedup, and where the GIL's wait decided it,
    that wait (seconds per wake-up; else None)."""

    busy: float
    speedup: float
    gil_wait: float | None

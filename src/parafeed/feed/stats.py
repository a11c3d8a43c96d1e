"""``FeedStats``: what feeding cost the training loop, read while training runs."""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Callable


def process_cpu() -> float:
    """Seconds of CPU this process has used so far: every thread of the training process, no worker process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class FeedStats:
    """How long the training loop (or TensorFlow's input thread) waited for parafeed's batches, and what the training
    process spent per element since the first batch. Pass one to an adapter (``to_torch(stats=...)``,
    ``pf.adapters.tf.distribute(stats=...)``) and read it while training runs.

    A pipeline that keeps up has a batch ready at every request, so ``waited`` stays near zero: time waited here is
    time the accelerator may have waited for input. :meth:`cpu_per_element` is the training process's own CPU
    (``getrusage(RUSAGE_SELF)``: all its threads, not the worker processes) per element handed over: with a loop that
    does nothing but take batches, what the feed costs the process that launches the model's kernels. ``clock`` and
    ``cpu`` give seconds (tests pass their own). On a GPU, ``staged_bytes`` counts the bytes the feed copied into
    page-locked buffers on the host, and ``direct_bytes`` those copied to the device straight from the shared memory
    worker processes wrote them into (:mod:`parafeed.feed.pinned_segments`).

    Example:
        >>> stats = pf.feed.FeedStats()
        >>> for x, y in ds.to_torch(device="cuda", stats=stats):
        ...     ...
        >>> stats.waited, stats.cpu_per_element() * 1e6  # seconds, microseconds
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter, cpu: Callable[[], float] = process_cpu):
        self._lock = threading.Lock()
        self.clock = clock
        self._cpu = cpu
        self.batches = 0
        self.elements = 0
        self.waited = 0.0  # seconds
        self._cpu_from: float | None = None  # the process's CPU when the first batch was handed over ...
        self._cpu_elements = 0  # ... and the elements handed over since
        self.staged_bytes = 0
        self.direct_bytes = 0

    def record(self, batches: int, seconds: float, elements: int = 0) -> None:
        """``batches`` (of ``elements`` in all) were handed over after a wait of ``seconds``."""
        with self._lock:
            self.batches += batches
            self.elements += elements
            self.waited += seconds
            if self._cpu_from is None:  # (CPU from here on: start-up is not the feed's steady cost)
                self._cpu_from = self._cpu()
            else:
                self._cpu_elements += elements

    def record_bytes(self, staged: int, direct: int) -> None:
        """A batch went to the device: ``staged`` bytes through page-locked buffers, ``direct`` from shared memory."""
        with self._lock:
            self.staged_bytes += staged
            self.direct_bytes += direct

    def cpu_per_element(self) -> float:
        """Seconds of the training process's CPU per element handed over after the first batch (0.0 before)."""
        with self._lock:
            if self._cpu_from is None or not self._cpu_elements:
                return 0.0
            return (self._cpu() - self._cpu_from) / self._cpu_elements

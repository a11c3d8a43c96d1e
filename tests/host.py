"""How much slower than the quiet 2-core machine the suite is sized for this host runs it: the tests' time limits
(pytest-timeout's, a job's subprocess timeout) are stretched by :data:`SLOWDOWN`, so that a host with fewer cores
(``taskset -c 0``: two pytest-xdist workers, a Ray cluster and the jobs' processes on one core) or a host already busy
when the suite starts (other jobs, two busy loops: the load average) fails on hangs, not on its speed."""

import os

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
LOAD = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0  # (runnable processes, last minute)
SLOWDOWN = min(4.0, max(1.0, 2.0 / CORES, (LOAD + 1.0) / CORES))


def seconds(limit: float) -> float:
    """``limit`` (sized for 2 idle cores) on this host."""
    return limit * SLOWDOWN

"""How much slower than the quiet 2-core machine the suite is sized for this host runs it: the tests' time limits
(pytest-timeout's, a job's subprocess timeout) are stretched by :func:`slowdown`, so that a host with fewer cores
(``taskset -c 0``: two pytest-xdist workers, a Ray cluster and the jobs' processes on one core) or a host busy with
other work (other jobs, two busy loops: the load average) fails on hangs, not on its speed."""

import os

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
LOAD = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0  # (runnable processes, last minute) at the start
SUITE_LOAD = 2.0  # the suite's own load while it runs: its two pytest-xdist workers
# at the start: the cores, and the other work the host had then
SLOWDOWN = min(4.0, max(1.0, 2.0 / CORES, (LOAD + 1.0) / CORES))


def slowdown() -> float:
    """The stretch now: the one at the start, or more when the load of the last minute is beyond the suite's own
    (other work started since), up to 4x."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return min(4.0, max(SLOWDOWN, (load - SUITE_LOAD + 1.0) / CORES))


def seconds(limit: float) -> float:
    """``limit`` (sized for 2 idle cores) on this host now."""
    return limit * slowdown()

"""How much slower than the quiet 2-core machine the suite is sized for this host runs it: the tests' time limits
(pytest-timeout's, a job's subprocess timeout) are stretched by :func:`slowdown`, so that a host with fewer cores
(``taskset -c 0``: two pytest-xdist workers, a Ray cluster and the jobs' processes on one core) or a host busy with
other work (other jobs, two busy loops: the load average) fails on hangs, not on its speed."""

import math
import os
import shutil
import tempfile
import time

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
LOAD = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0  # (runnable processes, last minute) at the start
# at the start: the cores, and the other work the host had then
SLOWDOWN = min(4.0, max(1.0, 2.0 / CORES, (LOAD + 1.0) / CORES))
WORKERS_DIR = "PARAFEED_TEST_WORKERS"  # (environment) where each pytest-xdist worker says whether it runs a test


def start_suite() -> None:
    """In pytest's main process, before pytest-xdist starts its workers: the folder where they say when they run."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ[WORKERS_DIR] = tempfile.mkdtemp(prefix="parafeed-workers-")


def end_suite() -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ and WORKERS_DIR in os.environ:
        shutil.rmtree(os.environ.pop(WORKERS_DIR), ignore_errors=True)


def running(now: bool) -> None:
    """This worker starts (``now``) or ends a test."""
    folder, worker = os.environ.get(WORKERS_DIR), os.environ.get("PYTEST_XDIST_WORKER")
    if folder and worker:
        with open(os.path.join(folder, worker), "w") as f:
            f.write("1" if now else "0")


def suite_load() -> float:
    """The suite's own share of the load average: its workers running a test count 1 each, one that has had none for
    ``t`` seconds (its peers run the last groups) ``exp(-t / 60)``, as the load average forgets it."""
    folder = os.environ.get(WORKERS_DIR)
    if not folder or not os.path.isdir(folder):
        return float(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    load, now = 0.0, time.time()
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            with open(path) as f:
                busy = f.read() == "1"
            idle = 0.0 if busy else max(0.0, now - os.path.getmtime(path))
        except OSError:  # (being written)
            idle = 0.0
        load += math.exp(-idle / 60.0)
    return max(1.0, load)


def slowdown() -> float:
    """The stretch now: the one at the start, or more when the load of the last minute is beyond the suite's own
    (other work started since), up to 4x."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return min(4.0, max(SLOWDOWN, (load - suite_load() + 1.0) / CORES))


def seconds(limit: float) -> float:
    """``limit`` (sized for 2 idle cores) on this host now."""
    return limit * slowdown()

"""What a pipeline can leave behind: file descriptors, threads, child processes, shared-memory segments.

:class:`Resources` is a snapshot of all four for this process; :func:`wait_until_released` polls (collecting
garbage) until a snapshot is back at a baseline, and says what is left if it never gets there.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from dataclasses import dataclass

SHM_PREFIX = "psm_"  # multiprocessing.shared_memory's names: the rings of parafeed's process executor


def open_fds() -> dict[int, str]:
    """This process's open file descriptors and what they point to."""
    out = {}
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the descriptor listdir itself used, closed since
            out[int(name)] = os.readlink(f"/proc/self/fd/{name}")
    return out


def child_pids() -> set[int]:
    """Live children of any thread of this process (a child is listed under the thread that started it)."""
    pids: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                pids.update(int(p) for p in f.read().split())
        except OSError:
            pass
    return pids


def worker_pids() -> set[int]:
    """Children running parafeed's process-executor worker."""
    out = set()
    for pid in child_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"parafeed.parallel.process_worker" in f.read():
                    out.add(pid)
        except OSError:
            pass
    return out


def shm_segments() -> set[str]:
    """Shared-memory segments that exist now, by any process of the machine."""
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith(SHM_PREFIX)}
    except OSError:
        return set()


def mapped_shm(pid: int | str = "self") -> set[str]:
    """Shared-memory segments a process has mapped (so its own, not another test run's on the same machine)."""
    out = set()
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                at = line.find("/dev/shm/" + SHM_PREFIX)
                if at >= 0:
                    out.add(line[at + len("/dev/shm/") :].split()[0])
    except OSError:
        pass
    return out


def our_shm() -> set[str]:
    """Segments mapped by this process or its children."""
    out = mapped_shm()
    for pid in child_pids():
        out |= mapped_shm(pid)
    return out


@dataclass
class Resources:
    fds: dict[int, str]
    threads: list[str]
    children: set[int]
    shm: set[str]  # segments that exist (any process's)
    ours: set[str]  # segments mapped by this process or its children

    @classmethod
    def now(cls) -> Resources:
        return cls(open_fds(), sorted(t.name for t in threading.enumerate()), child_pids(), shm_segments(),
                   our_shm())  # fmt: skip

    def counts(self) -> dict[str, int]:
        return {"fds": len(self.fds), "threads": len(self.threads), "children": len(self.children),
                "shm": len(self.ours)}  # fmt: skip

    def beyond(self, baseline: Resources, allow_children: int = 0, seen: set[str] = frozenset()) -> dict[str, object]:
        """What this snapshot holds that ``baseline`` did not (empty when nothing leaked)."""
        extra: dict[str, object] = {}
        fds = {fd: target for fd, target in self.fds.items() if baseline.fds.get(fd) != target}
        if len(self.fds) > len(baseline.fds) and fds:
            extra["fds"] = fds
        threads = list(self.threads)
        for name in baseline.threads:
            if name in threads:
                threads.remove(name)
        if threads:
            extra["threads"] = threads
        if len(self.children - baseline.children) > allow_children:
            extra["children"] = sorted(self.children - baseline.children)
        # /dev/shm is shared with every process on the machine: a new segment is ours if we map it now or were
        # seen mapping it (``seen``), and then it must be gone (unlinked) as well as unmapped
        ours = (self.ours - baseline.ours) | ((self.shm - baseline.shm) & seen)
        if ours:
            extra["shm"] = sorted(ours)
        return extra


def baseline() -> Resources:
    """A snapshot to compare with later, taken once the process-wide helpers are up: multiprocessing's resource
    tracker (a child process and a pipe, started by the first shared-memory segment, kept until exit), with no spare
    workers."""
    from multiprocessing import resource_tracker

    from parafeed.parallel.process_startup import release_spares

    resource_tracker.ensure_running()
    gc.collect()
    release_spares()  # from a clean slate: no warm workers left by earlier tests
    return Resources.now()


def wait_until_released(baseline: Resources, timeout: float = 15.0, allow_children: int = 0,
                        seen_shm: set[str] | None = None) -> Resources:  # fmt: skip
    """Collect garbage until nothing beyond ``baseline`` is held; raises AssertionError naming what leaked.

    ``seen_shm``: segments this process was seen mapping while it ran (they must no longer exist).
    """
    from parafeed.parallel.process_startup import release_spares

    deadline = time.monotonic() + timeout
    while True:
        gc.collect()
        release_spares()  # warm spare workers are kept on purpose, for the next pool: a leak is anything else
        now = Resources.now()
        extra = now.beyond(baseline, allow_children, seen_shm or set())
        if not extra:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"left behind after {timeout:.0f} s: {extra}")
        time.sleep(0.05)

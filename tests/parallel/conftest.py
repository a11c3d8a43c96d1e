"""Helpers to find leaks: threads, child processes and shared-memory segments left behind."""

import gc
import os
import threading
import time

import pytest

from tests.reliability.resources import mapped_shm


def parafeed_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("parafeed"))


def child_pids() -> set[int]:
    try:
        with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as f:
            return {int(p) for p in f.read().split()}
    except OSError:
        return set()


def shm_segments() -> set[str]:
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("psm_")}
    except OSError:
        return set()


def process_tree() -> set[int]:
    """This process and all its descendants."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, grew = {os.getpid()}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return tree


def held_elsewhere(segments: set[str]) -> set[str]:
    """Those of ``segments`` mapped by a process outside this process's tree: another test run's on this machine
    (another pytest-xdist worker's, say), not this test's to account for. A segment this test left behind is mapped
    by no one, or by a process of this tree."""
    if not segments:
        return set()
    tree = process_tree()
    held: set[str] = set()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in tree:
            held |= mapped_shm(name) & segments
    return held


class LeakCheck:
    def __init__(self) -> None:
        from multiprocessing import resource_tracker

        # multiprocessing's resource tracker (a child process started by the first shared-memory segment, kept until
        # exit) is up before the snapshot: it is no leak of the test that happens to be the first to use one in this
        # process (run alone, or first on a pytest-xdist worker)
        resource_tracker.ensure_running()
        gc.collect()
        self.threads, self.children, self.shm = parafeed_threads(), child_pids(), shm_segments()

    def assert_clean(self, timeout: float = 30.0) -> None:
        """Polled until clean: only a leak waits the whole ``timeout`` (generous, for a loaded machine)."""
        from parafeed.parallel.process_startup import release_spares

        deadline = time.time() + timeout
        while True:
            gc.collect()
            release_spares()  # warm spare workers are kept on purpose, for the next pool: a leak is anything else
            now = (parafeed_threads(), child_pids(), shm_segments() - self.shm)
            leaked = (
                [t for t in now[0] if t not in self.threads],
                now[1] - self.children,
                now[2] - held_elsewhere(now[2]),
            )
            if not any(leaked) or time.time() > deadline:
                break
            time.sleep(0.05)
        assert not leaked[0], f"threads left: {leaked[0]}"
        assert not leaked[1], f"child processes left: {leaked[1]}"
        assert not leaked[2], f"shared memory left: {leaked[2]}"


@pytest.fixture
def leak_check():
    return LeakCheck()

"""Helpers to find leaks: threads, child processes and shared-memory segments left behind."""

import gc
import os
import threading
import time

import pytest


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


class LeakCheck:
    def __init__(self) -> None:
        gc.collect()
        self.threads, self.children, self.shm = parafeed_threads(), child_pids(), shm_segments()

    def assert_clean(self, timeout: float = 30.0) -> None:
        """Polled until clean: only a leak waits the whole ``timeout`` (generous, for a loaded machine)."""
        from parafeed.parallel.process_startup import release_spares

        deadline = time.time() + timeout
        while True:
            gc.collect()
            release_spares()  # warm spare workers are kept on purpose, for the next pool: a leak is anything else
            now = (parafeed_threads(), child_pids(), shm_segments())
            leaked = (
                [t for t in now[0] if t not in self.threads],
                now[1] - self.children,
                now[2] - self.shm,
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

"""tests/host.py: the suite's own share of the load average is the pytest-xdist workers that run tests, so that the
stretch of a test's limit counts the rest as other work (a worker whose peer has finished sees more of it)."""

import math
import os
import time

from tests import host


def test_the_suite_load_counts_running_workers_and_forgets_idle_ones_as_the_load_average_does(tmp_path, monkeypatch):
    monkeypatch.setenv(host.WORKERS_DIR, str(tmp_path))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    host.running(True)
    (tmp_path / "gw1").write_text("1")
    assert host.suite_load() == 2.0

    (tmp_path / "gw1").write_text("0")  # gw1 ran its last test 60 s ago
    os.utime(tmp_path / "gw1", (time.time() - 60, time.time() - 60))
    assert math.isclose(host.suite_load(), 1.0 + math.exp(-1.0), rel_tol=1e-3)

    (tmp_path / "gw1").write_text("0")  # ... or just now
    assert math.isclose(host.suite_load(), 2.0, rel_tol=1e-3)
    host.running(False)  # both idle long ago: at least one worker's load (this one, asking)
    for name in ("gw0", "gw1"):
        os.utime(tmp_path / name, (time.time() - 600, time.time() - 600))
    assert host.suite_load() == 1.0


def test_the_stretch_counts_load_beyond_the_suite_as_other_work(tmp_path, monkeypatch):
    monkeypatch.setenv(host.WORKERS_DIR, str(tmp_path))
    monkeypatch.setattr(host, "SLOWDOWN", 1.0)
    monkeypatch.setattr(host, "CORES", 2)
    (tmp_path / "gw0").write_text("1")
    (tmp_path / "gw1").write_text("1")
    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 0.0, 0.0))  # two workers and 3 of other work
    assert host.slowdown() == 2.0
    (tmp_path / "gw1").write_text("0")
    os.utime(tmp_path / "gw1", (time.time() - 3600, time.time() - 3600))
    assert host.slowdown() == 2.5  # one worker and 4 of other work
    monkeypatch.setattr(os, "getloadavg", lambda: (20.0, 0.0, 0.0))
    assert host.slowdown() == 4.0  # at most 4x

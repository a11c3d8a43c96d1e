"""Every feed mode ends with its script: at exit mid-epoch without close(), at exit after a whole epoch (the worker
processes then wait, warm, for the next one), on an exception in the training loop, on Ctrl-C and on SIGTERM, at once, with nothing on stderr but the script's own traceback, no worker process left and no
shared-memory segment left in /dev/shm. Each case runs a real training script in a subprocess with a deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.timeout(180)

DEADLINE = 20.0  # seconds from the ending to the script's end (it hung forever before)

SCRIPT = r"""
import signal, sys, time
import numpy as np
import parafeed as pf

mode, ending = sys.argv[1], sys.argv[2]
# Ctrl-C raises KeyboardInterrupt, as in a terminal, also where the suite itself was started in the background with
# SIGINT ignored (a shell's `cmd &`), which its children inherit
signal.signal(signal.SIGINT, signal.default_int_handler)

def image(x):
    return np.full((256, 256, 3), x, np.float32)  # (the issue's script: with small batches it did not hang)

ds = pf.Dataset.range(640 if ending == "epoch" else 10**7)
if mode == "threads":
    ds = ds.map(image, num_parallel_calls=2).batch(16)
elif mode == "processes":
    ds = ds.map(image, num_parallel_calls=2, executor="process").batch(16)
elif mode == "offload":
    ds = ds.map(image).batch(16).offload(executor="process", workers=2)
elif mode == "device feed":
    ds = ds.map(image, num_parallel_calls=2, executor="process").batch(16)
feed = ds.prefetch(2)
if mode == "device feed":
    feed = feed.to_torch(device="cpu")  # batches readied on the feed's thread
it = iter(feed)
for _ in range(5):
    next(it)
print("READY", flush=True)
if ending in ("exit", "epoch", "exception"):
    sys.stdin.readline()
    if ending == "exception":
        raise RuntimeError("the training loop failed")
    if ending == "epoch":
        for batch in it:  # to the end of the epoch (every worker idle, its segments kept for the next)
            pass
else:
    for batch in it:  # until the signal comes
        time.sleep(0.005)
"""

MODES = ["threads", "processes", "offload", "device feed"]
ENDINGS = {  # ending -> (return code, the last line of stderr's one traceback, or None for an empty stderr)
    "exit": (0, None),
    "epoch": (0, None),
    "exception": (1, "RuntimeError: the training loop failed"),
    "ctrl-c": (-signal.SIGINT, "KeyboardInterrupt"),
    "sigterm": (-signal.SIGTERM, None),
}


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except FileNotFoundError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except FileNotFoundError:
                continue
            found += children
            todo += children
    return found


def _segments(pids: list[int]) -> set[str]:
    """The shared-memory segments these processes map (not yet removed)."""
    names = set()
    for p in pids:
        try:
            with open(f"/proc/{p}/maps") as f:
                for line in f:
                    if "/dev/shm/" in line and not line.rstrip().endswith("(deleted)"):
                        names.add(line.split("/dev/shm/", 1)[1].strip())
        except FileNotFoundError:
            continue
    return names


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _start(mode: str, ending: str, tmp_path) -> subprocess.Popen:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    return subprocess.Popen(
        [sys.executable, str(script), mode, ending], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,  # its own process group, as a terminal's job
    )  # fmt: skip


def _end(child: subprocess.Popen, ending: str) -> None:
    if ending in ("exit", "epoch", "exception"):
        child.stdin.write("go\n")
        child.stdin.flush()
    elif ending == "ctrl-c":
        os.killpg(child.pid, signal.SIGINT)  # what a terminal sends the whole job
    else:
        os.kill(child.pid, signal.SIGTERM)  # what a scheduler or torchrun sends the trainer


@pytest.mark.parametrize("mode", MODES)
def test_every_ending_stops_the_feed_at_once_silently_leaving_nothing(mode, tmp_path):
    children = {}
    for ending in ENDINGS:  # the four endings of one mode side by side
        (tmp_path / ending).mkdir()
        children[ending] = _start(mode, ending, tmp_path / ending)
    try:
        held = {}
        for ending, child in children.items():
            assert child.stdout.readline().strip() == "READY", child.communicate(timeout=DEADLINE)
            pids = [child.pid, *_descendants(child.pid)]
            held[ending] = (pids, _segments(pids))
        if mode != "threads":
            assert all(segments for _, segments in held.values())  # (the check below has something to check)
        for ending, child in children.items():
            _end(child, ending)
            start = time.monotonic()
            _, stderr = child.communicate(timeout=DEADLINE)
            took = time.monotonic() - start
            code, last = ENDINGS[ending]
            assert child.returncode == code, (ending, child.returncode, stderr)
            if last is None:
                assert stderr == "", (ending, stderr)
            else:
                assert stderr.count("Traceback") == 1 and stderr.strip().splitlines()[-1] == last, (ending, stderr)
            assert took < DEADLINE, (ending, took)
            pids, segments = held[ending]
            deadline = time.monotonic() + 10.0  # the workers see their trainer go
            while any(_alive(p) for p in pids) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not [p for p in pids if _alive(p)], ending
            assert not [s for s in segments if os.path.exists(f"/dev/shm/{s}")], (ending, segments)
    finally:
        for child in children.values():
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()

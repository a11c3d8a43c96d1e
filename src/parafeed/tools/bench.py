"""``parafeed bench script.py``: run a pipeline for a while and show where its time goes.

The script defines ``dataset`` (a ``pf.Dataset``) or ``make_dataset()`` returning one. The pipeline runs with stats
on for ``seconds`` (or until it ends), with a live progress line, then prints per-stage throughput, busy time and
buffers, and names the bottleneck: the stage that was busy the most.
"""

from __future__ import annotations

import runpy
import sys
import time
from typing import TextIO

from parafeed.core.dataset import Dataset, iterate
from parafeed.core.options import Options
from parafeed.core.stats import StageStats, format_stats
from parafeed.errors import InvalidArgumentError


def load_pipeline(path: str) -> Dataset:
    """The dataset a bench script defines: its ``dataset`` variable or what ``make_dataset()`` returns."""
    namespace = runpy.run_path(path, run_name="__parafeed_bench__")
    if "make_dataset" in namespace:
        ds = namespace["make_dataset"]()
    elif "dataset" in namespace:
        ds = namespace["dataset"]
    else:
        raise InvalidArgumentError(f"bench: {path} must define `dataset` (a pf.Dataset) or `make_dataset()`")
    if not isinstance(ds, Dataset):
        raise InvalidArgumentError(f"bench: {path} defines {type(ds).__name__}, not a pf.Dataset")
    return ds


def run_bench(ds: Dataset, seconds: float, out: TextIO | None = None) -> tuple[list[StageStats], float, int]:
    """Iterate ``ds`` with stats for up to ``seconds``; returns (stages, wall seconds, elements)."""
    out = out or sys.stdout
    it = iterate(ds.with_options(Options(stats=True)))
    start = last = time.perf_counter()
    count = 0
    try:
        for _ in it:
            count += 1
            now = time.perf_counter()
            if now - last >= 0.5:
                last = now
                out.write(f"\r{count} elements, {count / (now - start):,.1f}/s, {now - start:.1f} s")
                out.flush()
            if now - start >= seconds:
                break
    finally:
        wall = time.perf_counter() - start
        stages = it.stats()
        it.close()
    out.write(f"\r{count} elements in {wall:.1f} s: {count / wall if wall else 0:,.1f}/s{' ' * 20}\n")
    return stages, wall, count


def main(path: str, seconds: float, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    stages, wall, _ = run_bench(load_pipeline(path), seconds, out)
    out.write(format_stats(stages, wall) + "\n")
    return 0

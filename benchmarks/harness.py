"""Side-by-side benchmark runs: every library measured in the same process, runs interleaved, medians and ratios.

A workload is a dict of ``name -> callable`` returning how many items it processed; :func:`run` times each callable
``runs`` times (interleaving the libraries so machine noise hits them alike), and :func:`report` prints a table of
medians with the ratio to the baseline (tf.data) and writes it into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def run(candidates: dict[str, Callable[[], int]], runs: int = 5, warmup: bool = True) -> dict[str, list[float]]:
    """Rates (items/s) of each candidate over ``runs`` interleaved runs."""
    if warmup:
        for fn in candidates.values():
            fn()
    rates: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(runs):
        for name, fn in candidates.items():
            start = time.perf_counter()
            n = fn()
            rates[name].append(n / (time.perf_counter() - start))
    return rates


def report(key: str, title: str, rates: dict[str, list[float]], unit: str, baseline: str = "tf.data",
           shares: dict[str, float] | None = None, note: str = "") -> str:  # fmt: skip
    """Print and save (in docs/benchmarks.md, section ``key``) a markdown table of medians and ratios; ``shares``
    adds a column per ``title: rate`` giving each median as a share of that rate (e.g. a limit measured in the run);
    ``note`` is printed under the table."""
    base = statistics.median(rates[baseline]) if baseline in rates else None
    shares = shares or {}
    lines = [
        f"### {title}",
        "",
        f"| library | median {unit} | min | max | vs {baseline} |" + "".join(f" of {s} |" for s in shares),
        "|---|---:|---:|---:|---:|" + "---:|" * len(shares),
    ]
    for name, values in rates.items():
        med = statistics.median(values)
        ratio = f"{med / base:.2f}x" if base else "n/a"
        cells = "".join(f" {med / limit:.0%} |" for limit in shares.values())
        lines.append(f"| {name} | {_fmt(med)} | {_fmt(min(values))} | {_fmt(max(values))} | {ratio} |{cells}")
    lines += ["", f"{len(next(iter(rates.values())))} runs each, interleaved; {_machine()}.", ""]
    if note:
        lines += [note, ""]
    table = "\n".join(lines)
    print(table)
    _save(key, table)
    return table


def _fmt(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e4:
        return f"{x / 1e3:.1f} k"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _machine() -> str:
    day = datetime.date.today().isoformat()
    return f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {day}"


def _save(key: str, table: str) -> None:
    begin, end = f"<!-- bench:{key} -->", f"<!-- /bench:{key} -->"
    text = DOC.read_text() if DOC.exists() else "# Benchmarks\n\nMeasured by the scripts in `benchmarks/`.\n"
    block = f"{begin}\n{table}{end}"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(text)

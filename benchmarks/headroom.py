"""Headroom: how far the trainer process of P5 and P6 could scale on a host with more cores, measured on this one.

For each workload (P5 images, P6 pure-Python function) and each way of running it (parafeed on threads with AUTOTUNE,
parafeed's ``map(..., executor="process")``, tf.data as the anchor), the script reports

* elements/s in steady state;
* the share of time a thread of the trainer process holds the GIL, and the GIL time per element;
* the trainer process's CPU per element (``resource.getrusage(RUSAGE_SELF)``: all its threads, no worker processes);
* the ceiling they imply: at most ``1 / (GIL time per element)`` elements/s on any number of cores (the GIL admits one
  thread at a time), which is ``cores used / GIL share`` cores of this work (the cores the run kept busy, scaled up
  until the GIL is held all the time).

Method (the same for every row, so anyone can rerun it; ``make bench`` does):

1. Each (workload, mode) runs alone in a child process (``--child``), so that it can be sampled and measured by
   itself: the child builds the pipeline with the builders in ``workloads.py`` (the very datasets ``images.py`` and
   ``python_fn.py`` time, taken from their runners' closures; P6 on threads is ``map(multiply_add, AUTOTUNE)``),
   iterates it epoch after epoch as those scripts do, and logs (time, elements so far, its own
   ``getrusage(RUSAGE_SELF)`` CPU) about every 20 ms.
2. After ``--warmup`` seconds (worker pools started, AUTOTUNE settled) it tells the parent, which samples it with
   ``py-spy record --gil --nonblocking --pid PID -d SECONDS -r RATE -f raw`` (only the thread holding the GIL is
   recorded, the process is not paused) and reads the CPU time of the child's whole process tree from ``/proc`` at
   the start and the end of that window; then the child stops and hands over its log.
3. Over the window: elements/s from the log; GIL share = GIL samples / (SECONDS x RATE less the samples py-spy
   could not read, which it counts as errors); GIL time per element =
   GIL share / elements/s (= GIL share x seconds / elements); trainer CPU per element = its CPU in the window /
   elements; cores used = the tree's CPU / wall time; ceiling = 1 / GIL time per element, in cores of this work =
   ceiling / (elements/s per core used) = cores used / GIL share.
4. ``--runs`` rounds, interleaving the rows so that machine noise hits them alike; each cell is the median (min-max).

Reading the numbers: the GIL counts as held while its holder is runnable but descheduled, so on a machine with
more runnable threads than cores (2 cores here, shared with whatever else runs) the GIL time per element can exceed
the trainer's CPU per element, and the ceiling is then pessimistic. The window includes epoch ends, as training
does. Sampling is statistical: at 100 Hz for 6 s a GIL share of 20 % is 120 +- 10 samples. Where py-spy is missing
or may not attach (it needs ptrace rights over the child; root has them), the script says so and reports throughput
and CPU only. The tables go into docs/benchmarks.md (section "headroom") unless ``--no-save``.
``--offload`` adds a row per workload with the threads pipeline (up to its final prefetch) run whole on local worker
processes, ``.offload(executor="process")``: the trainer then only receives finished batches.
Usage: python benchmarks/headroom.py [--runs 3] [--warmup 3] [--seconds 6] [--rate 100] [--no-tf] [--offload]
[--no-save]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness
import workloads

READY, TRACE = "HEADROOM-READY", "HEADROOM-TRACE "
LOG_EVERY = 0.02  # seconds between the child's log entries

TITLES = {
    "P5": ("P5 images: TFRecord -> parse -> JPEG decode -> resize 224 -> f32/255 -> batch 64", "image"),
    "P6": ("P6 CPU-bound pure-Python function (~1.6 ms per element), element by element", "element"),
}
OFFLOAD = 'parafeed (threads in offload(executor="process"))'
# (workload, row label): the labels of workloads.py's runners, but for P6 on threads and OFFLOAD (built in _build).
# OFFLOAD rows run only with --offload, tf.data's only where TensorFlow is installed and not --no-tf.
ROWS = [
    ("P5", "parafeed (threads, AUTOTUNE)"),
    ("P5", "parafeed (processes, AUTOTUNE)"),
    ("P5", OFFLOAD),
    ("P5", "tf.data (AUTOTUNE)"),
    ("P6", "parafeed (threads, AUTOTUNE)"),
    ("P6", "parafeed (processes, AUTOTUNE)"),
    ("P6", OFFLOAD),
    ("P6", "tf.data (py_function, AUTOTUNE)"),
]


# ---------------------------------------------------------------------------------------------- child: run a pipeline


def _pipeline(run: Callable[[], int]) -> Iterable[Any]:
    """The dataset a ``workloads.py`` runner iterates (its builders return ``{label: run}``, ``run`` a closure over
    the dataset built), so that the child runs the pipeline the other benchmarks time, not a copy of it."""
    for cell in run.__closure__ or ():
        value = cell.cell_contents
        if hasattr(value, "__iter__") and not isinstance(value, (str, bytes, list, tuple, dict)):
            return value
    raise RuntimeError(f"headroom: the runner {run!r} no longer closes over a dataset; update _pipeline()")


def _build(workload: str, label: str, data: str, n: int) -> Iterable[Any]:
    if label == OFFLOAD:  # the threads pipeline up to its last prefetch, all of it on local worker processes
        import parafeed as pf

        ds: Any = _build(workload, "parafeed (threads, AUTOTUNE)", data, n)
        if type(ds).__name__ == "PrefetchDataset":
            ds = ds.parents[0]
        return ds.offload(executor="process").prefetch(pf.AUTOTUNE)
    if workload == "P5":
        paths = workloads.make_photo_shards(os.path.join(data, "photos"))
        runners = workloads.tf_images(paths) if label.startswith("tf.data") else workloads.parafeed_images(paths)
    elif label == "parafeed (threads, AUTOTUNE)":  # P6 on threads: workloads.py times only processes and serial
        import parafeed as pf

        return pf.Dataset.range(n).map(workloads.multiply_add, num_parallel_calls=pf.AUTOTUNE)
    else:
        make = workloads.tf_python_fn if label.startswith("tf.data") else workloads.parafeed_python_fn
        runners = make(n, None)
    if label not in runners:
        raise SystemExit(f"headroom: {workload} has no row {label!r} (have {sorted(runners)})")
    return _pipeline(runners[label])


def _size(item: Any) -> int:
    """Elements in one item of a pipeline: a batch's rows (the labels of an (images, labels) pair), else 1."""
    if isinstance(item, tuple):
        item = item[-1]
    shape = getattr(item, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else 1


def _cpu_self() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(workload: str, label: str, data: str, n: int, warmup: float) -> None:
    """Run one pipeline epoch after epoch: say READY after ``warmup`` seconds, stop when stdin gives a line (or
    closes), then print the log of (monotonic time, elements so far, own CPU seconds)."""
    ds = _build(workload, label, data, n)
    stop = threading.Event()

    def wait_for_stop() -> None:
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=wait_for_stop, daemon=True).start()
    log: list[tuple[float, int, float]] = []
    count, last, ready, it = 0, 0.0, False, None
    ready_at = time.monotonic() + warmup
    give_up = ready_at + 900  # a parent that never says stop
    while not stop.is_set():
        it = iter(ds)
        for item in it:
            count += _size(item)
            now = time.monotonic()
            if now - last >= LOG_EVERY:
                log.append((now, count, _cpu_self()))
                last = now
                if not ready and now >= ready_at:
                    print(READY, flush=True)
                    ready = True
                if stop.is_set() or now > give_up:
                    stop.set()
                    break
    log.append((time.monotonic(), count, _cpu_self()))
    print(TRACE + json.dumps(log), flush=True)
    close = getattr(it, "close", None)
    if close is not None:
        close()


# ---------------------------------------------------------------------------------------------- parent: measure


def _tree_cpu(root: int) -> float | None:
    """CPU seconds of ``root`` and all its descendants (their own and their reaped children's), from /proc."""
    stats: dict[int, tuple[int, float]] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        stats[pid] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK"))
    if root not in stats:
        return None
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += stats[pid][1]
        todo += children.get(pid, [])
    return total


def _spy_command() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return shutil.which("py-spy") or (here if os.path.exists(here) else None)


def _sample_gil(spy: str, pid: int, seconds: int, rate: int, folder: str) -> tuple[float | None, str]:
    """The share of ``seconds`` in which a thread of ``pid`` holds the GIL (py-spy --gil), or None; and a note."""
    out = os.path.join(folder, "gil.txt")
    cmd = [spy, "record", "--gil", "--nonblocking", "--pid", str(pid), "-d", str(seconds), "-r", str(rate)]
    try:
        done = subprocess.run([*cmd, "-f", "raw", "-o", out], capture_output=True, text=True, timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        return None, "py-spy did not finish"
    said = done.stdout + done.stderr
    if done.returncode != 0 or not os.path.exists(out):
        reason = next((line for line in said.splitlines() if "rror" in line or "ermission" in line), said.strip())
        return None, f"py-spy failed (exit {done.returncode}): {reason[:200]}"
    with open(out) as f:
        samples = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
    found = re.search(r"Errors: (\d+)", said)
    errors = int(found.group(1)) if found else 0
    intervals = seconds * rate - errors  # a failed read (the process changed under it) says nothing either way
    notes = []
    if errors > 0.05 * seconds * rate:
        notes.append(f"py-spy could not read {errors / (seconds * rate):.0%} of its samples")
    if "behind in sampling" in said:
        notes.append("py-spy fell behind in sampling")
    return (samples / intervals if intervals > 0 else None), "; ".join(notes)


def _at(log: list[list[float]], t: float, column: int) -> float:
    """A column of the child's log (1: elements, 2: CPU seconds), linearly interpolated at time ``t``."""
    import numpy as np

    times = [entry[0] for entry in log]
    if not times[0] <= t <= times[-1]:
        raise ValueError(f"headroom: time {t:.3f} is outside the child's log ({times[0]:.3f} to {times[-1]:.3f})")
    return float(np.interp(t, times, [entry[column] for entry in log]))


def measure(workload: str, label: str, args: argparse.Namespace, spy: str | None) -> dict[str, Any]:
    """One run of one row: a child process, sampled and measured over ``args.seconds`` after its warm-up."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", workload, label, "--data", args.data, "--n",
           str(args.n), "--warmup", str(args.warmup)]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder, open(os.path.join(folder, "stderr"), "w+") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            for line in proc.stdout or ():
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()

        def expect(prefix: str, timeout: float) -> str:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                except queue.Empty:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        proc.kill()
                        err.seek(0)
                        raise RuntimeError(f"headroom: {workload} {label} gave no {prefix.strip()}:\n{err.read()}")
                    continue
                if line.startswith(prefix):
                    return line[len(prefix) :]

        try:
            expect(READY, args.warmup + 300)
            t0, cpu0 = time.monotonic(), _tree_cpu(proc.pid)
            share, note = None, "py-spy not found: GIL not sampled"
            if spy:
                share, note = _sample_gil(spy, proc.pid, args.seconds, args.rate, folder)
            time.sleep(max(0.0, t0 + args.seconds - time.monotonic()))  # the whole window, even where py-spy failed
            t1, cpu1 = time.monotonic(), _tree_cpu(proc.pid)
            assert proc.stdin is not None
            proc.stdin.write("stop\n")
            proc.stdin.flush()
            log = json.loads(expect(TRACE, 120))
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    elements = _at(log, t1, 1) - _at(log, t0, 1)
    rate = elements / (t1 - t0)
    row: dict[str, Any] = {
        "rate": rate,
        "cpu": (_at(log, t1, 2) - _at(log, t0, 2)) / elements,
        "cores": (cpu1 - cpu0) / (t1 - t0) if cpu0 is not None and cpu1 is not None else None,
        "note": note,
    }
    if share is not None:
        row["gil"] = share
        row["gil_per"] = row["gil"] / rate
    return row


# ---------------------------------------------------------------------------------------------- report


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def _cell(values: list[float], fmt: Callable[[float], str], unit: str = "") -> str:
    """The median, then (min-max) where they differ: ``1,235 µs (1,140-1,330)``."""
    med, low, high = fmt(statistics.median(values)), fmt(min(values)), fmt(max(values))
    return f"{med}{unit}" if low == high else f"{med}{unit} ({low}-{high})"


def _runs(rows: dict[str, list[dict[str, Any]]]) -> str:
    n = len(next(iter(rows.values())))
    return f"{n} run{'s' * (n != 1)}"


def table(workload: str, rows: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    title, unit = TITLES[workload]
    lines = [
        f"### Headroom of {title}",
        "",
        f"| mode | {unit}s/s | GIL held | GIL time per {unit} | trainer CPU per {unit} | CPU cores used | "
        "ceiling on any number of cores |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    notes: set[str] = set()
    for label, runs in rows.items():
        notes.update(f"{label}: {r['note']}" for r in runs if r["note"])
        rate = [r["rate"] for r in runs]
        cores = [r["cores"] for r in runs if r["cores"] is not None]
        cells = [_cell(rate, harness._fmt), "n/a", "n/a", _cell([r["cpu"] for r in runs], _us, " µs")]
        cells.append(_cell(cores, lambda c: f"{c:.2f}") if cores else "n/a")
        ceiling = "n/a"
        gil = [r["gil"] for r in runs if "gil" in r]
        if len(gil) == len(runs):
            cells[1] = _cell(gil, lambda g: f"{g * 100:.0f}", " %")
            gil_per = [r["gil_per"] for r in runs]
            cells[2] = _cell(gil_per, _us, " µs")
            if min(gil) == 0:
                ceiling = "not bounded by what was sampled (no GIL sample)"
            else:
                limit = 1 / statistics.median(gil_per)
                ceiling = f"~{harness._fmt(limit)} {unit}s/s"
                if cores:
                    per_core = statistics.median(rate) / statistics.median(cores)
                    many = round(limit / per_core)
                    ceiling += f" (about {many} core{'s' * (many != 1)} of this work)"
        lines.append(f"| {label} | " + " | ".join([*cells, ceiling]) + " |")
    lines += [
        "",
        f"Trainer process sampled by `py-spy record --gil --nonblocking` at {args.rate} Hz for {args.seconds} s after "
        f"{args.warmup:g} s of warm-up; medians (min-max) of {_runs(rows)}, interleaved; "
        f"{harness._machine()}. Method: `benchmarks/headroom.py`.",
        "",
    ]
    lines += [f"Note: {note}.\n" for note in sorted(notes)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before sampling (default 3)")
    parser.add_argument("--seconds", type=int, default=6, help="seconds sampled, whole (default 6)")
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples per second (default 100)")
    parser.add_argument("--data", default="bench-data")
    parser.add_argument("--n", type=int, default=2000, help="P6 elements per epoch (default 2000)")
    parser.add_argument("--workloads", nargs="+", default=["P5", "P6"], choices=sorted(TITLES))
    parser.add_argument("--no-tf", action="store_true", help="leave out the tf.data rows")
    parser.add_argument("--offload", action="store_true", help="add rows with the whole pipeline in offload()")
    parser.add_argument("--no-save", action="store_true", help="print only; do not write docs/benchmarks.md")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "LABEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.data, args.n, args.warmup)
        return
    if args.runs < 1 or args.seconds < 1 or args.rate < 1:
        parser.error(f"--runs, --seconds and --rate must be >= 1, got {args.runs}, {args.seconds}, {args.rate}")
    has_tf = not args.no_tf
    if has_tf:
        import importlib.util

        has_tf = importlib.util.find_spec("tensorflow") is not None
        if not has_tf:
            print("tensorflow not installed: tf.data rows skipped")
    plan = [(w, label) for w, label in ROWS if w in args.workloads and (args.offload or label != OFFLOAD)]
    plan = [(w, label) for w, label in plan if has_tf or not label.startswith("tf.data")]
    if "P5" in args.workloads:
        workloads.make_photo_shards(os.path.join(args.data, "photos"))
    spy = _spy_command()
    if spy is None:
        print("py-spy not found (pip install py-spy): reporting throughput and CPU only")
    results: dict[str, dict[str, list[dict[str, Any]]]] = {w: {} for w in args.workloads}
    for run in range(args.runs):
        for workload, label in plan:
            r = measure(workload, label, args, spy)
            results[workload].setdefault(label, []).append(r)
            gil = f", GIL {r['gil']:.0%}, {_us(r['gil_per'])} µs per element" if "gil" in r else ""
            print(f"run {run + 1}/{args.runs} {workload} {label}: {harness._fmt(r['rate'])}/s{gil}, trainer CPU "
                  f"{_us(r['cpu'])} µs per element{'; ' + r['note'] if r['note'] else ''}", flush=True)  # fmt: skip
    text = "\n".join(table(w, rows, args) for w, rows in results.items() if rows)
    print()
    print(text)
    if not args.no_save:
        harness._save("headroom", text)


if __name__ == "__main__":
    main()

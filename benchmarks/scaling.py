"""P5 on more cores: images/s of the P5 pipeline (TFRecord -> parse -> JPEG decode -> resize 224 -> f32/255 -> batch
64) given N cores, N = 2, 4, 8, ... up to the host's CPUs, parafeed against tf.data and PyTorch's DataLoader.

Each N runs in a child process that pins itself to N CPUs (``os.sched_setaffinity``) before it imports anything; its
threads and worker processes inherit that, and AUTOTUNE in parafeed and in tf.data sizes itself by the CPUs a process
may use, so every row gets the same N cores. Rows (the builders in ``workloads.py``, the pipelines ``images.py`` and
``headroom.py`` time):

* N bare threads: the per-image work alone (decode, resize, /255 of JPEG bytes parsed beforehand) on N threads, the
  limit of the machine; every row is also given as a share of it;
* parafeed on threads, with ``map(executor="process")``, and whole in ``offload(executor="process")``, all AUTOTUNE;
* tf.data with AUTOTUNE;
* PyTorch's DataLoader with N workers over the records in memory (it reads no TFRecord), the same decoding.

A run repeats epochs of the 2,000 photos for at least ``--seconds`` (epoch starts count, as in training); ``--runs``
runs interleaved, median. ``--gpu`` (where PyTorch sees a CUDA device) adds the rows again at the largest N with each
batch copied into the accelerator's memory (``torch`` ``.to("cuda")``; the DataLoader with ``pin_memory=True``, as its
users feed a GPU) before the next is taken: the images/s an accelerator can be fed.
The table goes into docs/benchmarks.md (section "scaling-<CPUs>-cpus", one per size of host) unless ``--no-save``.
Usage: python benchmarks/scaling.py [--cores 2,4,8,16] [--runs 3] [--seconds 2] [--gpu] [--data bench-data]
[--no-save]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

RESULT = "SCALING-RESULT "
LIMIT = "N bare threads"
BASELINE = "tf.data (AUTOTUNE)"


def child(cores: int, args: argparse.Namespace, gpu: bool) -> dict[str, list[float]]:
    """Rates of every row on the first ``cores`` CPUs this process may use."""
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])
    import harness
    import workloads

    paths = workloads.make_photo_shards(os.path.join(args.data, "photos"))
    take, finish = workloads.batch_size, lambda: None
    if gpu:
        import warnings

        import numpy as np
        import torch

        warnings.filterwarnings("ignore", "The given NumPy array is not writable")  # (read, never written)

        def take(images, labels) -> int:
            torch.as_tensor(np.asarray(images)).to("cuda", non_blocking=True)
            return len(labels)

        finish = torch.cuda.synchronize
    candidates = {} if gpu else {LIMIT: list(workloads.image_limits(paths, cores).values())[-1]}
    candidates.update(workloads.parafeed_images(paths, take, offload=True))
    candidates.update({k: v for k, v in workloads.tf_images(paths, take).items() if k == BASELINE})
    for label, run in workloads.torch_images(paths, take, workers=cores, pin_memory=gpu).items():
        candidates[label.replace(f"({cores} workers)", "(N workers)")] = run

    def long_enough(run):
        def repeat() -> int:
            count, start = 0, time.perf_counter()
            while time.perf_counter() - start < args.seconds:
                count += run()
            finish()
            return count

        return repeat

    for run in candidates.values():  # one epoch each: worker pools started, AUTOTUNE settling
        run()
    return harness.run({label: long_enough(run) for label, run in candidates.items()}, args.runs, warmup=False)


def _cell(rates: dict[str, list[float]], label: str, reference: str | None) -> str:
    if label not in rates:
        return "-"
    rate = statistics.median(rates[label])
    cell = f"{rate:,.0f}"
    if reference in rates and label != reference:
        cell += f" ({rate / statistics.median(rates[reference]):.2f}x)"
    return cell


def table(results: dict[int, dict[str, list[float]]], gpu: dict[str, list[float]] | None, runs: int) -> str:
    import harness

    cores = sorted(results)
    labels = list(dict.fromkeys(label for rates in results.values() for label in rates))
    head = "| images/s (vs tf.data) | " + " | ".join(f"{n} cores" for n in cores) + " |"
    lines = ["### P5 images on N cores: N bare threads, parafeed, tf.data, PyTorch", "", head,
             "|---|" + "---:|" * len(cores)]  # fmt: skip
    for label in labels:
        lines.append(f"| {label} | " + " | ".join(_cell(results[n], label, BASELINE) for n in cores) + " |")
    lines += ["", "| share of N bare threads | " + " | ".join(f"{n} cores" for n in cores) + " |",
              "|---|" + "---:|" * len(cores)]  # fmt: skip
    for label in labels[1:]:
        shares = []
        for n in cores:
            rates = results[n]
            ok = label in rates and LIMIT in rates
            shares.append(f"{statistics.median(rates[label]) / statistics.median(rates[LIMIT]):.0%}" if ok else "-")
        lines.append(f"| {label} | " + " | ".join(shares) + " |")
    if gpu:
        lines += ["", f"| into GPU memory at {cores[-1]} cores | images/s (vs tf.data) |", "|---|---:|"]
        lines += [f"| {label} | {_cell(gpu, label, BASELINE)} |" for label in gpu]
    lines += ["", f"Each N: a child process pinned to N CPUs, AUTOTUNE everywhere, DataLoader with N workers; {runs} "
              f"runs of at least the time given each, interleaved, median; {harness._machine()}; {_cpus()}.",
              ""]  # fmt: skip
    return "\n".join(lines)


def _cpus() -> str:
    """The processor's name and how many CPUs are hyper-threads of the same core, from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read().split("\n\n")[0]
    except OSError:
        return "processor unknown"
    pairs = (line.split(":", 1) for line in info.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in pairs}
    name, cpus, cores = (fields.get(k, "?") for k in ("model name", "siblings", "cpu cores"))
    return f"{name}, {cpus} CPUs on {cores} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cores", default="2,4,8,16")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--data", default="bench-data")
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(RESULT + json.dumps(child(args.child, args, args.gpu)), flush=True)
        return
    import harness
    import workloads

    workloads.make_photo_shards(os.path.join(args.data, "photos"))  # once, before the children time anything
    available = len(os.sched_getaffinity(0))
    cores = [n for n in map(int, args.cores.split(",")) if n <= available] or [available]
    results, gpu = {}, None
    common = [sys.executable, os.path.abspath(__file__), "--runs", str(args.runs), "--seconds", str(args.seconds),
              "--data", args.data]  # fmt: skip
    for n, on_gpu in [(n, False) for n in cores] + ([(cores[-1], True)] if args.gpu else []):
        began = time.perf_counter()
        out = subprocess.run(common + ["--child", str(n)] + (["--gpu"] if on_gpu else []), stdout=subprocess.PIPE,
                             text=True, check=True).stdout  # fmt: skip
        rates = json.loads(next(line for line in out.splitlines() if line.startswith(RESULT))[len(RESULT) :])
        print(f"{n} cores{' into the GPU' if on_gpu else ''}: {time.perf_counter() - began:.0f} s", flush=True)
        if on_gpu:
            gpu = rates
        else:
            results[n] = rates
    text = table(results, gpu, args.runs)
    print(text)
    if not args.no_save:
        harness._save(f"scaling-{available}-cpus", text)


if __name__ == "__main__":
    main()

"""P6: a CPU-bound pure-Python function (~1.6 ms: a loop of 20,000 multiply-adds) per element, elements/s.

Python code holds the GIL, so threads cannot scale it: parafeed runs it on worker processes (``executor="process"``),
tf.data on ``py_function`` (AUTOTUNE), PyTorch on a DataLoader with 2 workers, Grain on 2 multiprocessing workers.
Measured twice: element by element (the workload as specified) and batched by 16 (how a training input consumes
it, which lets PyTorch amortise its per-item transfer). Usage: python benchmarks/python_fn.py [--runs 5] [--n 2000]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness
import workloads

BASELINE = "tf.data (py_function, AUTOTUNE)"


def candidates(n: int, batch: int | None) -> dict:
    out = {}
    for make in (workloads.parafeed_python_fn, workloads.tf_python_fn, workloads.torch_python_fn,
                 workloads.grain_python_fn):  # fmt: skip
        out.update(make(n, batch))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    rates = harness.run(candidates(args.n, None), runs=args.runs)
    harness.report("python-fn", "P6 CPU-bound pure-Python function (~1.6 ms per element), element by element", rates,
                   "elements/s", baseline=BASELINE)  # fmt: skip
    rates = harness.run(candidates(args.n, 16), runs=args.runs)
    harness.report("python-fn-batched", "P6b the same, batched by 16", rates, "elements/s", baseline=BASELINE)


if __name__ == "__main__":
    main()

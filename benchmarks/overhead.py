"""P1, per-element engine overhead: range(1M) -> map(x + 1) -> batch(256), elements/s; and what iteration itself costs.

parafeed, tf.data and Grain (each if installed) run in the same process, interleaved; prints medians and the ratio to
tf.data and writes them to docs/benchmarks.md. parafeed runs twice: ``iter(ds)`` handing out Tensor views (what a
`for` loop gets, as TensorFlow's eager iteration gives EagerTensors) and ``as_numpy_iterator()`` (plain NumPy). A
second table iterates an unbatched stream of scalars (range(n / 10)) the same ways, where handing out a Tensor per
element costs most. Usage: python benchmarks/overhead.py [--runs 5] [--n 1000000]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness


def candidates(n: int) -> dict:
    import parafeed as pf

    out = {}

    def run_parafeed() -> int:
        return sum(len(b) for b in pf.Dataset.range(n).map(lambda x: x + 1).batch(256))

    def run_parafeed_numpy() -> int:
        return sum(len(b) for b in pf.Dataset.range(n).map(lambda x: x + 1).batch(256).as_numpy_iterator())

    out["parafeed"] = run_parafeed
    out["parafeed, as_numpy_iterator()"] = run_parafeed_numpy
    try:
        import tensorflow as tf

        def run_tf() -> int:
            ds = tf.data.Dataset.range(n).map(lambda x: x + 1).batch(256)
            return sum(len(b) for b in ds.as_numpy_iterator())

        out["tf.data"] = run_tf
    except ImportError:
        print("tensorflow not installed: no tf.data baseline")
    try:
        import grain

        def run_grain() -> int:
            ds = grain.MapDataset.range(n).map(lambda x: x + 1).batch(256)
            return sum(len(b) for b in ds.to_iter_dataset())

        out["grain"] = run_grain
    except ImportError:
        print("grain not installed: skipped")
    out["plain generators"] = lambda: _generators(n)
    return out


def scalars(n: int) -> dict:
    """An unbatched stream of n scalars, iterated as a loop would: parafeed's Tensors and NumPy, TensorFlow's
    EagerTensors and NumPy."""
    import parafeed as pf

    out = {
        "parafeed": lambda: sum(1 for _ in pf.Dataset.range(n)),
        "parafeed, as_numpy_iterator()": lambda: sum(1 for _ in pf.Dataset.range(n).as_numpy_iterator()),
    }
    try:
        import tensorflow as tf

        out["tf.data"] = lambda: sum(1 for _ in tf.data.Dataset.range(n))
        out["tf.data, as_numpy_iterator()"] = lambda: sum(1 for _ in tf.data.Dataset.range(n).as_numpy_iterator())
    except ImportError:
        pass
    return out


def _generators(n: int) -> int:
    import itertools

    import numpy as np

    def batches():
        it = (x + 1 for x in np.arange(n, dtype=np.int64))
        while chunk := list(itertools.islice(it, 256)):
            yield np.array(chunk)

    return sum(len(b) for b in batches())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args()
    rates = harness.run(candidates(args.n), runs=args.runs)
    harness.report("overhead", "P1 overhead: range(1M) -> map(x + 1) -> batch(256)", rates, "elements/s")
    n = args.n // 10
    rates = harness.run(scalars(n), runs=args.runs)
    harness.report("iteration", f"Iterating range({n:,}) unbatched: a Tensor per element or NumPy", rates, "elements/s")


if __name__ == "__main__":
    main()

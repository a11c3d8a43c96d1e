"""A first parafeed pipeline: the tf.data API on NumPy elements, no TensorFlow needed.

Run with `make demo` (or `python examples/quickstart.py`).
"""

import time

import numpy as np

import parafeed as pf


def main() -> None:
    rng = np.random.default_rng(0)
    features = rng.normal(size=(1000, 4)).astype(np.float32)
    labels = rng.integers(0, 3, size=1000)

    ds = (
        pf.Dataset.from_tensor_slices((features, labels))
        .map(lambda x, y: ((x - x.mean()) / (x.std() + 1e-6), y), num_parallel_calls=pf.AUTOTUNE)
        .shuffle(256, seed=42)
        .batch(4)
        .prefetch(pf.AUTOTUNE)
    )
    print("element_spec:", ds.element_spec)
    print("cardinality: ", int(ds.cardinality()), "batches")
    for x, y in ds.take(2):
        print("batch x:", np.round(x.astype(np.float64), 2).tolist())
        print("batch y:", y.tolist())

    n = 1_000_000
    bench = pf.Dataset.range(n).map(lambda x: x + 1).batch(256)
    start = time.perf_counter()
    count = sum(len(b) for b in bench)
    seconds = time.perf_counter() - start
    print(f"range({n:,}) -> map(x + 1) -> batch(256): {count / seconds / 1e6:.2f} M elements/s")


if __name__ == "__main__":
    main()

"""Training under MirroredStrategy, fed by Ray input workers: preprocessing offloaded to another pool of CPUs.

Every replica reads its own pipeline: its label-balanced share of the digits (``distribute(..., balance="labels")``),
a pure-Python augmentation (a random shift and noise, seeded per sample), batches, and ``.offload(workers=...)``:
everything before it runs on Ray actors, and the replica receives the same batches in the same order as if it had
run the pipeline itself. ``equal_steps()`` after it keeps the replicas in lockstep.

By default a local Ray is started with the CPUs it needs (``--address auto`` or ``RAY_ADDRESS`` joins a cluster
started with ``ray start``). Without a GPU, MirroredStrategy runs on two logical CPU devices.

Run:
    python examples/ray_offload.py           # about a minute on 2 CPU cores
    python examples/ray_offload.py --quick   # fewer epochs (used by the tests)
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any

import numpy as np

import parafeed as pf
from parafeed.tools.demo import mirrored_strategy

NUM_REPLICAS = 2


def load_digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits as float32 in [0, 1], split 80/20."""
    from sklearn.datasets import load_digits as sklearn_digits

    digits = sklearn_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    x, y = x[order], y[order]
    cut = int(0.8 * len(y))
    return x[:cut], y[:cut], x[cut:], y[cut:]


def augment(index: np.int64, image: np.ndarray, label: np.int64) -> tuple[np.ndarray, np.int64]:
    """A shift of up to one pixel and a little noise, in plain Python and NumPy (the expensive step to offload)."""
    rng = np.random.default_rng(int(index))  # seeded per sample: the same augmentation wherever it runs
    dy, dx = rng.integers(-1, 2, size=2)
    shifted = np.roll(np.roll(image, int(dy), axis=0), int(dx), axis=1)
    return (shifted + rng.normal(0, 0.05, shifted.shape)).astype(np.float32), label


def make_pipeline(x: np.ndarray, y: np.ndarray, workers: int) -> Any:
    data = pf.Dataset.from_tensor_slices((np.arange(len(y)), x, y))

    def make(num_replicas: int, replica_id: int, batch_size: int | None, offload: bool = True) -> pf.Dataset:
        ds = (
            data.distribute(num_replicas, replica_id, balance="labels", label=2)
            .shuffle(512, seed=1)
            .map(augment)
            .batch(batch_size or 32)
        )
        if offload:
            ds = ds.offload(workers=workers)  # everything above runs on Ray actors
        return ds.equal_steps(policy="drop")

    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", help="a Ray cluster to join (default: RAY_ADDRESS, else a local Ray)")
    parser.add_argument("--workers", type=int, default=1, help="input workers per replica (default 1)")
    parser.add_argument("--epochs", type=int, help="training epochs (default 20, --quick 10)")
    parser.add_argument("--quick", action="store_true", help="fewer epochs (used by the tests)")
    parser.add_argument("--workdir", help="unused; accepted like the other examples' --workdir")
    args = parser.parse_args()
    epochs = args.epochs or (10 if args.quick else 20)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

    import ray

    address = args.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=False)
    else:  # a new local Ray with a CPU for every input worker
        ray.init(address="local", num_cpus=NUM_REPLICAS * args.workers, include_dashboard=False, log_to_driver=False)
    alive = sum(1 for node in ray.nodes() if node["Alive"])  # (a cluster lists the nodes it lost too)
    print(f"Ray: {int(ray.cluster_resources()['CPU'])} CPUs on {alive} node(s)")
    try:
        train(epochs, args.workers)
    finally:
        ray.shutdown()


def train(epochs: int, workers: int) -> None:
    started = time.perf_counter()
    x_train, y_train, x_test, y_test = load_digits()
    make = make_pipeline(x_train, y_train, workers)

    # the offloaded pipeline gives exactly what the pipeline gives on this host
    on_host = [b[0] for b in make(NUM_REPLICAS, 0, 32, offload=False).take(3)]
    offloaded = [b[0] for b in make(NUM_REPLICAS, 0, 32).take(3)]
    same = all(np.array_equal(a, b) for a, b in zip(on_host, offloaded))
    print(f"replica 0, first 3 batches: offloaded == on this host: {same}")

    import keras
    import tensorflow as tf

    warnings.filterwarnings("ignore", message="`shuffle=True` was passed")
    strategy = mirrored_strategy(tf, NUM_REPLICAS)
    print(f"MirroredStrategy: {strategy.num_replicas_in_sync} replicas; {workers} Ray input worker(s) per replica")
    with strategy.scope():
        model = keras.Sequential(
            [
                keras.Input((8, 8, 1)),
                keras.layers.Flatten(),
                keras.layers.Dense(64, activation="relu"),
                keras.layers.Dense(10, activation="softmax"),
            ]
        )
        model.compile(
            optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"]
        )
    dataset = pf.adapters.tf.distribute(strategy, make, global_batch_size=64)
    history = model.fit(dataset, epochs=epochs, verbose=2)
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"train accuracy (last epoch): {history.history['accuracy'][-1]:.3f}")
    print(f"test accuracy: {accuracy:.3f} ({epochs} epochs, {time.perf_counter() - started:.0f} s)")
    if not same or accuracy < 0.8:
        raise SystemExit(f"failed: offloaded batches equal {same}, test accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()

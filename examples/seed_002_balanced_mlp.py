"""Seed article 002 ported to parafeed: debugging the balance of samples between data-parallel replicas.

The article ("tensorflow 数据并行调试 样本分布均衡") trains an MNIST MLP (Dense(128, relu) -> Dense(10, softmax) on 784
pixels) under ``tf.distribute.MirroredStrategy`` and names three strategies against unbalanced replicas:

1. shuffle the data so that every replica's share looks like the whole (here also: stratify by label, so every
   replica gets each class within one sample of its share, and *measure* it with ``pf.distribute.report``);
2. adjust the allocation to each device's performance (``pf.distribute.weighted_sizes`` / ``SpeedBalancer`` /
   ``weighted_batch``, with a per-row loss weight that keeps the averaged gradient exact);
3. augment the data (a random shift in a ``map``), for more varied samples.

MNIST would need a download, so the digits are scikit-learn's bundled 8x8 ones upscaled to 28x28 (784 features).
The training data is stored class by class, the worst case for a naive split. Without a GPU, MirroredStrategy runs
on two logical CPU devices; every replica reads its own parafeed pipeline through ``pf.adapters.tf.distribute``.

Run:
    python examples/seed_002_balanced_mlp.py            # under a minute on 2 CPU cores
    python examples/seed_002_balanced_mlp.py --quick    # fewer epochs
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from typing import Any

import numpy as np

import parafeed as pf

NUM_REPLICAS = 2
CLASS_NAMES = [str(d) for d in range(10)]


# ---------------------------------------------------------------------------------------------- the article's code


def create_model(keras: Any) -> Any:
    return keras.Sequential(
        [
            keras.Input(shape=(784,)),  # the article's input_shape=(784,), spelled the Keras 3 way
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )


def preprocess_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test): 28x28 uint8 digits, the training set sorted by class.

    The article loads MNIST with ``tf.keras.datasets.mnist.load_data()``; these are scikit-learn's digits, upscaled
    so the model is the article's 784-input MLP. Normalisation (``x / 255.0``) happens in the input pipeline.
    """
    import cv2
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    small = (digits.images * (255.0 / 16.0)).astype(np.uint8)
    images = np.stack([cv2.resize(im, (28, 28), interpolation=cv2.INTER_LINEAR) for im in small])
    x_train, x_test, y_train, y_test = train_test_split(
        images, digits.target.astype(np.int64), test_size=0.2, stratify=digits.target, random_state=seed
    )
    by_class = np.argsort(y_train, kind="stable")  # stored class by class, as many datasets are
    return x_train[by_class], y_train[by_class], x_test, y_test


def create_distribution_strategy(tf: Any) -> Any:
    """MirroredStrategy over the GPUs, or over two logical CPU devices when there is no GPU."""
    if tf.config.list_physical_devices("GPU"):
        return tf.distribute.MirroredStrategy()
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * NUM_REPLICAS)
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(NUM_REPLICAS)])


# ---------------------------------------------------------------------------------------------- pipeline functions


def make_augment_fn(seed: int) -> Any:
    """Strategy 3: a random shift of up to 2 pixels in each direction; every epoch sees new variants."""
    rng = np.random.default_rng(seed)

    def augment_fn(image: np.ndarray, label: np.int64) -> tuple[np.ndarray, np.int64]:
        dy, dx = rng.integers(-2, 3, size=2)
        shifted = np.zeros_like(image)
        shifted[max(dy, 0) : 28 + min(dy, 0), max(dx, 0) : 28 + min(dx, 0)] = image[
            max(-dy, 0) : 28 + min(-dy, 0), max(-dx, 0) : 28 + min(-dx, 0)
        ]
        return shifted, label

    return augment_fn


def normalize_fn(image: np.ndarray, label: np.int64) -> tuple[np.ndarray, np.int64]:
    return (image.astype(np.float32) / 255.0).reshape(784), label


# ---------------------------------------------------------------------------------------------- strategy 1


def replica_labels(make_replica: Any) -> list[np.ndarray]:
    """The labels each replica's pipeline yields in one epoch."""
    return [np.array([label for _, label in make_replica(r)]) for r in range(NUM_REPLICAS)]


def compare_splits(x_train: np.ndarray, y_train: np.ndarray, workdir: str) -> list[Any]:
    half = len(y_train) // NUM_REPLICAS
    arrays = pf.Dataset.from_tensor_slices((x_train, y_train))
    splits = {
        # what a hand-written split does: the first half of the (class-sorted) data to replica 0, the rest to 1
        "naive contiguous split": lambda r: arrays.skip(r * half).take(half if r < NUM_REPLICAS - 1 else -1),
        # strategy 1 as in the article: shuffle (seeded, so every replica shuffles alike), then every n-th element
        "shuffle, then distribute()": lambda r: arrays.shuffle(len(y_train), seed=0).distribute(NUM_REPLICAS, r),
        # stratified: each class dealt evenly between replicas (the labels are the y of the (x, y) elements)
        "distribute(balance='labels')": lambda r: arrays.distribute(NUM_REPLICAS, r, balance="labels"),
    }
    reports = []
    for number, (title, make_replica) in enumerate(splits.items()):
        report = pf.distribute.report(replica_labels(make_replica), CLASS_NAMES, title=title)
        reports.append(report)
        print(report.table())
        png = report.to_png(os.path.join(workdir, f"balance-{number}.png"))
        print(f"plot: {png}\n")
    return reports


# ---------------------------------------------------------------------------------------------- strategy 2


def allocate_by_speed(x_train: np.ndarray, y_train: np.ndarray, global_batch: int) -> None:
    """Strategy 2: per-replica batch sizes in proportion to device speed, with an exact averaged loss."""
    # Say replica 1 is a device three times as fast as replica 0. Equal halves of the global batch would make the
    # fast one wait for the slow one at every synchronous step; sizes in proportion to speed end both together.
    speeds = [1.0, 3.0]
    sizes = pf.distribute.weighted_sizes(global_batch, speeds)
    print(f"weighted_sizes({global_batch}, speeds={speeds}) -> per-replica batch sizes {sizes}")

    # Every replica reads the same seeded order and takes its rows of each global batch; each row carries the weight
    # n * b_r / G (pf.distribute.loss_scale), so that averaging the replicas' weighted mean losses, as
    # MirroredStrategy averages gradients, gives exactly the plain mean over the global batch.
    records = pf.Dataset.from_tensor_slices((x_train, y_train)).shuffle(4096, seed=1).map(normalize_fn)
    per_sample_loss: list[float] = []
    replica_means = []
    for r in range(NUM_REPLICAS):
        with iter(pf.distribute.weighted_batch(records, sizes, r)) as batches:
            images, _, weights = next(batches)  # this replica's rows of the first global batch
        loss = images.mean(axis=1)  # any per-sample quantity stands in for the loss here
        per_sample_loss += loss.tolist()
        replica_means.append(float((weights * loss).sum() / len(loss)))  # Keras' weighted "sum over batch size"
        print(
            f"  replica {r}: {len(images)} rows, weight {weights[0]:.2f} per row "
            f"(loss_scale = {pf.distribute.loss_scale(sizes, r):.2f})"
        )
    averaged, exact = float(np.mean(replica_means)), float(np.mean(per_sample_loss))
    print(f"  mean of the replicas' weighted losses {averaged:.6f} == global-batch mean {exact:.6f}")
    if not np.isclose(averaged, exact, rtol=1e-5):
        raise SystemExit("weighted_batch: the averaged loss is not the global-batch mean")

    # In training, each replica's pipeline would be weighted_batch(records, sizes, replica_id), and the weights go in
    # as Keras sample weights (or multiply the loss in a custom loop). Keras 3's model.fit cannot take batches of
    # different sizes per replica (it averages the replicas' first batches to build the model), so with unequal
    # sizes train with a custom loop (strategy.run) or PyTorch DDP (parafeed.adapters.torch).

    # When the speeds are not known in advance, SpeedBalancer measures them: every replica records every replica's
    # step time (all-gathered) and the sizes are re-decided every `every` steps, identically everywhere.
    balancer = pf.distribute.SpeedBalancer(global_batch, NUM_REPLICAS, every=5)
    rows_per_second = [1000.0, 3000.0]  # simulated devices
    sizes_by_step, step_ms = [], []
    for step in range(30):
        sizes_by_step.append(balancer.sizes_at(step))
        seconds = [sizes_by_step[-1][r] / rows_per_second[r] for r in range(NUM_REPLICAS)]
        balancer.record(step, seconds)
        step_ms.append(max(seconds) * 1000)  # a synchronous step lasts as long as its slowest replica
    print(
        f"SpeedBalancer (simulated speeds {rows_per_second} rows/s): sizes {sizes_by_step[0]} at step 0 -> "
        f"{sizes_by_step[-1]} at step 29; step time {step_ms[0]:.1f} ms -> {step_ms[-1]:.1f} ms"
    )
    if sizes_by_step[-1] != sizes:
        raise SystemExit(f"SpeedBalancer settled on {sizes_by_step[-1]}, expected {sizes}")


# ---------------------------------------------------------------------------------------------- training


def make_pipeline_factory(x_train: np.ndarray, y_train: np.ndarray) -> Any:
    def make_pipeline(num_replicas: int, replica_id: int, batch_size: int) -> pf.Dataset:
        return (
            pf.Dataset.from_tensor_slices((x_train, y_train))
            .distribute(num_replicas, replica_id, balance="labels")  # strategy 1: stratified shares
            .shuffle(2048, seed=replica_id)  # and a new order every epoch
            .map(make_augment_fn(seed=replica_id), num_parallel_calls=pf.AUTOTUNE)  # strategy 3
            .map(normalize_fn, num_parallel_calls=pf.AUTOTUNE)  # x / 255.0
            .batch(batch_size)
            .equal_steps()  # the same number of steps on every replica; padding rows have weight 0
            .prefetch(pf.AUTOTUNE)
        )

    return make_pipeline


def train_model(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, epochs: int, global_batch: int
) -> float:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    # With a dataset per replica, Keras learns an epoch's length by reaching its end and warns once about it; the
    # "shuffle" notice is about Keras' own shuffling, which does not apply to a dataset
    warnings.filterwarnings("ignore", message="Your input ran out of data")
    warnings.filterwarnings("ignore", message="`shuffle=True` was passed")
    strategy = create_distribution_strategy(tf)
    print(f"MirroredStrategy: {strategy.num_replicas_in_sync} replicas ({', '.join(strategy.extended.worker_devices)})")
    make_pipeline = make_pipeline_factory(x_train, y_train)
    steps = len(make_pipeline(strategy.num_replicas_in_sync, 0, global_batch // strategy.num_replicas_in_sync))
    print(f"{steps} steps per epoch on every replica (global batch {global_batch})")
    with strategy.scope():
        model = create_model(keras)
        # weighted_metrics: accuracy counts only real rows, not equal_steps' padding (weight 0)
        model.compile(
            optimizer="adam", loss="sparse_categorical_crossentropy", metrics=[], weighted_metrics=["accuracy"]
        )
    model.fit(pf.adapters.tf.distribute(strategy, make_pipeline, global_batch), epochs=epochs, verbose=2)

    test_dataset = pf.Dataset.from_tensor_slices((x_test, y_test)).map(normalize_fn).batch(256)
    _, test_accuracy = model.evaluate(test_dataset.to_tf(), verbose=0)
    return float(test_accuracy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="where to write the plots (default: a temporary directory)")
    parser.add_argument("--epochs", type=int, help="training epochs (default 10, --quick 4)")
    parser.add_argument("--global-batch", type=int, default=32, help="global batch size (default 32)")
    parser.add_argument("--quick", action="store_true", help="fewer epochs (used by the tests)")
    args = parser.parse_args()
    epochs = args.epochs or (4 if args.quick else 10)

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="seed002-") as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        x_train, y_train, x_test, y_test = preprocess_data()
        print(f"data: {len(y_train)} training digits (28x28, sorted by class), {len(y_test)} test digits\n")

        print("== strategy 1: shuffle / stratify, measured per replica ==")
        naive, shuffled, stratified = compare_splits(x_train, y_train, workdir)
        print(
            f"largest class deviation from the ideal share: naive {naive.class_deviation:.1f}, shuffled "
            f"{shuffled.class_deviation:.1f}, stratified {stratified.class_deviation:.1f} samples\n"
        )
        balanced = naive.class_deviation > shuffled.class_deviation > stratified.class_deviation
        if not balanced or stratified.class_deviation >= 1:
            raise SystemExit("unexpected balance: the stratified split should be within one sample of every class")

        print("== strategy 2: allocation by device speed ==")
        allocate_by_speed(x_train, y_train, global_batch=64)

        print("\n== training: MLP under MirroredStrategy, balanced shares, augmentation (strategy 3) ==")
        test_accuracy = train_model(x_train, y_train, x_test, y_test, epochs, args.global_batch)
    print(f"test accuracy: {test_accuracy:.3f} ({epochs} epochs, {time.perf_counter() - started:.0f} s in all)")
    if test_accuracy < 0.7:
        raise SystemExit(f"training failed: test accuracy {test_accuracy:.3f}")


if __name__ == "__main__":
    main()

"""``parafeed demo``: the seed articles' data-parallel flow, end to end, on data that ships with scikit-learn.

1. scikit-learn's 1,797 handwritten digits (8x8) are written as 32x32 PNG and JPEG files, one folder per class, and
   ``parafeed convert`` turns them into balanced, class-stratified TFRecord shards.
2. Every replica of a ``tf.distribute.MirroredStrategy`` (all GPUs, or two logical CPU devices without one) reads
   its own parafeed pipeline: label-balanced share -> shuffle -> batch -> parse tf.Examples -> decode -> augment
   (random shift and rotation) -> normalise -> equal steps -> prefetch, with AUTOTUNE parallelism.
3. A small CNN trains with a custom loop; ``pf.adapters.tf.FeedStats`` measures how long TensorFlow's input thread
   waited for parafeed's batches, as a share of training time (``benchmarks/distribution.py`` compares whole step
   times with tf.data's and with an input that costs nothing).
4. It prints test accuracy, samples/s, the input-wait share and the per-replica balance table of what each replica
   actually trained on, and writes the balance plot.

Needs the ``demo`` extra (TensorFlow, scikit-learn, matplotlib): ``pip install 'parafeed[demo]'`` or ``make demo``.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import numpy as np

import parafeed as pf

IMAGE_SIZE = 32


def write_digit_images(folder: str, seed: int = 0) -> tuple[str, str]:
    """scikit-learn's digits as PNG/JPEG files in ``folder/{train,test}/<digit>/``; 20 % held out for testing."""
    import cv2
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images * (255.0 / 16.0)).astype(np.uint8)
    train, test = train_test_split(np.arange(len(images)), test_size=0.2, stratify=digits.target, random_state=seed)
    for split, indices in (("train", train), ("test", test)):
        for i in indices:
            path = os.path.join(folder, split, str(digits.target[i]))
            os.makedirs(path, exist_ok=True)
            big = cv2.resize(images[i], (IMAGE_SIZE, IMAGE_SIZE), interpolation=cv2.INTER_CUBIC)
            if i % 2:  # both formats, decoded by the same pipeline
                cv2.imwrite(os.path.join(path, f"{i:04d}.png"), big)
            else:
                cv2.imwrite(os.path.join(path, f"{i:04d}.jpg"), big, [cv2.IMWRITE_JPEG_QUALITY, 95])
    return os.path.join(folder, "train"), os.path.join(folder, "test")


SPEC = {"image": pf.io.FixedLenFeature([], "string"), "label": pf.io.FixedLenFeature([], "int64")}
_rngs = threading.local()


def decode_batch(records: np.ndarray, augment: bool) -> tuple[np.ndarray, np.ndarray]:
    """A batch of tf.Examples -> (N x 32 x 32 x 1 float32 images in [-1, 1], labels); with ``augment`` every image is
    shifted by up to 2 pixels and rotated by up to 12 degrees at random. One call per batch: the Examples parse in C
    together and the per-call overhead is paid once per batch, not per image."""
    import cv2

    example = pf.io.parse_example(records, SPEC)
    images = np.empty((len(records), IMAGE_SIZE, IMAGE_SIZE, 1), np.float32)
    if not hasattr(_rngs, "rng"):  # one generator per thread: creating one costs more than decoding an image
        _rngs.rng = np.random.default_rng()
    rng = _rngs.rng
    center = (IMAGE_SIZE / 2, IMAGE_SIZE / 2)
    for i, data in enumerate(example["image"]):
        image = pf.image.decode_image(data, channels=1, expand_animations=False)[..., 0]
        if augment:
            matrix = cv2.getRotationMatrix2D(center, rng.uniform(-12, 12), 1.0)
            matrix[:, 2] += rng.integers(-2, 3, size=2)
            image = cv2.warpAffine(image, matrix, (IMAGE_SIZE, IMAGE_SIZE), borderValue=0)
        images[i, ..., 0] = image
    images *= 1 / 127.5
    images -= 1.0
    return images, example["label"]


def make_pipeline(files: list[str], epochs: int) -> Any:
    """The per-replica pipeline factory for ``pf.adapters.tf.distribute``: ``epochs`` epochs in one pipeline, so
    that the next epoch's first batches are prepared while the current one ends (a new order every epoch)."""

    def pipeline(num_replicas: int, replica_id: int, batch_size: int) -> pf.Dataset:
        return (
            pf.TFRecordDataset(files)
            .distribute(num_replicas, replica_id, balance="labels")
            .shuffle(512, seed=replica_id)
            .batch(batch_size)
            .map(lambda records: decode_batch(records, augment=True), num_parallel_calls=pf.AUTOTUNE)
            .equal_steps()
            .repeat(epochs)
            .prefetch(pf.AUTOTUNE)
        )

    return pipeline


def build_model(keras: Any) -> Any:
    return keras.Sequential([
        keras.Input((IMAGE_SIZE, IMAGE_SIZE, 1)),
        keras.layers.Conv2D(16, 3, activation="relu", padding="same"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu", padding="same"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ])  # fmt: skip


def mirrored_strategy(tf: Any, replicas: int) -> Any:
    """MirroredStrategy over all GPUs, or over ``replicas`` logical CPU devices when there is no GPU."""
    if tf.config.list_physical_devices("GPU"):
        return tf.distribute.MirroredStrategy()
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])


def build_training(tf: Any, keras: Any, strategy: Any, global_batch: int, learning_rate: float = 2e-3) -> Any:
    """(model, train_step): the CNN built under ``strategy`` and a step function that takes the next batch of a
    distributed iterator, trains every replica on its part and returns (summed loss, labels, weights)."""
    with strategy.scope():
        model = build_model(keras)
        optimizer = keras.optimizers.Adam(learning_rate)
        optimizer.build(model.trainable_variables)  # its slots exist before the step function is traced

    def replica_step(x: Any, y: Any, w: Any) -> Any:
        with tf.GradientTape() as tape:
            losses = keras.losses.sparse_categorical_crossentropy(y, model(x, training=True), from_logits=True)
            loss = tf.nn.compute_average_loss(losses, sample_weight=w, global_batch_size=global_batch)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    @tf.function
    def train_step(iterator: Any) -> Any:
        x, y, w = next(iterator)
        return strategy.reduce("SUM", strategy.run(replica_step, args=(x, y, w)), axis=None), y, w

    return model, train_step


def run(workdir: str = "parafeed-demo", epochs: int = 8, replicas: int = 2, global_batch: int = 64) -> dict:
    """The whole demo; returns its figures (accuracy, samples_per_second, input_wait, report, png)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    from tqdm import tqdm

    from parafeed.io.manifest import manifest_files
    from parafeed.tools.convert import convert

    started = time.perf_counter()
    print(f"1. data: scikit-learn digits -> PNG/JPEG files -> TFRecord shards in {workdir}/")
    train_dir, test_dir = write_digit_images(os.path.join(workdir, "images"))
    shards = os.path.join(workdir, "shards")
    train, test = (
        manifest_files(convert(folder, shards, n, name=name, overwrite=True).manifest)
        for folder, n, name in ((train_dir, 8, "digits-train"), (test_dir, 2, "digits-test"))
    )

    strategy = mirrored_strategy(tf, replicas)
    n = strategy.num_replicas_in_sync
    print(f"2. training: MirroredStrategy, {n} replicas ({', '.join(strategy.extended.worker_devices)})")
    model, train_step = build_training(tf, keras, strategy, global_batch)

    seen: list[list[np.ndarray]] = [[] for _ in range(n)]
    feed = pf.adapters.tf.FeedStats()
    steps = len(make_pipeline(train, 1)(n, 0, global_batch // n))
    it = iter(pf.adapters.tf.distribute(strategy, make_pipeline(train, epochs), global_batch, stats=feed))
    timed_from, waited_before = time.perf_counter(), 0.0
    for epoch in range(epochs):
        if epoch == 1:  # the first epoch traces the step function: measure from the second on
            timed_from, waited_before = time.perf_counter(), feed.waited
        with tqdm(total=steps, desc=f"epoch {epoch + 1}/{epochs}", unit="step", leave=False) as bar:
            for _ in range(steps):
                loss, labels, weights = train_step(it)
                if epoch == 0:
                    for r, (y, w) in enumerate(zip(*map(strategy.experimental_local_results, (labels, weights)))):
                        seen[r].append(y.numpy()[w.numpy() == 1.0])
                bar.set_postfix(loss=f"{float(loss):.3f}")
                bar.update()
    trained = time.perf_counter() - timed_from

    test_ds = pf.TFRecordDataset(test).batch(256).map(lambda records: decode_batch(records, augment=False))
    correct = total = 0
    for x, y in test_ds:
        correct += int((np.argmax(model(x, training=False), axis=1) == y).sum())
        total += len(y)
    title = f"digits: what each of {n} replicas trained on in epoch 1 (balance='labels')"
    result: dict[str, Any] = {
        "accuracy": correct / total,
        "samples_per_second": global_batch * steps * max(epochs - 1, 1) / trained,
        "input_wait": (feed.waited - waited_before) / trained,
        "seconds": time.perf_counter() - started,
        "report": pf.distribute.report([np.concatenate(s) for s in seen], [str(d) for d in range(10)], title),
    }
    result["png"] = result["report"].to_png(os.path.join(workdir, "balance.png"))
    return result


def main(workdir: str, epochs: int, replicas: int) -> int:
    result = run(workdir, epochs, replicas)
    print(f"3. results after {epochs} epochs ({result['seconds']:.0f} s in all)")
    print(f"   test accuracy:        {result['accuracy']:.1%}")
    print(f"   training samples/s:   {result['samples_per_second']:,.0f} (epochs 2+, all replicas)")
    print(f"   waiting for input:    {result['input_wait']:.2%} of training time (TensorFlow waiting for parafeed)")
    print(result["report"].table())
    print(f"   balance plot: {result['png']}")
    return 0

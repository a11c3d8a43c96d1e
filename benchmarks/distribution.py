"""D1: feeding MirroredStrategy (two replicas), and D2: how evenly replicas share classes under each split.

D1 trains the demo's CNN on the demo's data (scikit-learn digits as PNG/JPEG in TFRecord shards, decoded, randomly
rotated and shifted, normalised, 32 images per replica per step) with a custom loop in which the step function takes
its batch from the distributed iterator, fed three ways in the same process, runs interleaved:

* parafeed: one pipeline per replica (``pf.adapters.tf.distribute``), batch-level decoding with OpenCV on threads;
* tf.data: one pipeline per worker as ``distribute_datasets_from_function`` expects, the same work with TensorFlow
  ops (``parse_example``, ``decode_image``, Keras' RandomRotation and RandomTranslation), AUTOTUNE;
* free input: one batch per replica kept in memory by TensorFlow, the step time with an input that costs nothing.

The input-wait share is ``1 - free step / step``: the part of a step that the input costs, whether by making the
step wait or by taking CPU from it (on this CPU-only machine the model and the pipeline share two cores).

D2 writes the digits into 10 files, sorted by class or shuffled, and splits them between 2, 4 and 8 replicas with
tf.data's FILE and DATA auto-shard policies and parafeed's AUTO and ``balance="labels"``.
Usage: python benchmarks/distribution.py [--runs 3] [--epochs 3] [--data bench-data]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness
import numpy as np

import parafeed as pf
from parafeed.io.manifest import manifest_files, read_manifest
from parafeed.tools import demo
from parafeed.tools.convert import convert

GLOBAL_BATCH = 64


def digit_shards(folder: str) -> list[str]:
    manifest = os.path.join(folder, "shards", "digits-train.manifest.json")
    if not os.path.exists(manifest):
        train, _ = demo.write_digit_images(os.path.join(folder, "images"))
        convert(train, os.path.join(folder, "shards"), 8, name="digits-train", overwrite=True, progress=False)
    return manifest_files(read_manifest(manifest))


def tf_dataset_fn(files: list[str], tf: Any, keras: Any) -> Any:
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
    augment = keras.Sequential([keras.layers.RandomRotation(12 / 360), keras.layers.RandomTranslation(2 / 32, 2 / 32)])

    def decode(records):
        example = tf.io.parse_example(records, spec)

        def one(data):
            image = tf.io.decode_image(data, channels=1, expand_animations=False)
            image.set_shape((demo.IMAGE_SIZE, demo.IMAGE_SIZE, 1))
            return image

        images = tf.map_fn(one, example["image"], fn_output_signature=tf.uint8)
        images = augment(tf.cast(images, tf.float32), training=True) / 127.5 - 1.0
        return images, example["label"], tf.ones_like(example["label"], tf.float32)

    def fn(ctx):
        per_replica = ctx.get_per_replica_batch_size(GLOBAL_BATCH)
        ds = tf.data.TFRecordDataset(files).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        ds = ds.shuffle(1024).batch(per_replica, drop_remainder=True)
        return ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE).repeat().prefetch(tf.data.AUTOTUNE)

    return fn


def feeding(args: argparse.Namespace) -> None:
    import keras
    import tensorflow as tf

    files = digit_shards(args.data)
    strategy = demo.mirrored_strategy(tf, 2)
    n = strategy.num_replicas_in_sync
    _, train_step = demo.build_training(tf, keras, strategy, GLOBAL_BATCH, learning_rate=1e-3)

    steps = len(demo.make_pipeline(files, 1)(n, 0, GLOBAL_BATCH // n)) * args.epochs
    with iter(demo.make_pipeline(files, 1)(n, 0, GLOBAL_BATCH // n)) as first:
        one = next(first)
    inputs = {
        "parafeed": lambda: pf.adapters.tf.distribute(strategy, demo.make_pipeline(files, args.epochs), GLOBAL_BATCH),
        "tf.data (AUTOTUNE)": lambda: strategy.distribute_datasets_from_function(tf_dataset_fn(files, tf, keras)),
        "free input": lambda: strategy.distribute_datasets_from_function(
            lambda _: tf.data.Dataset.from_tensors(one).repeat()
        ),
    }
    step_ms: dict[str, list[float]] = {name: [] for name in inputs}
    for run in range(args.runs + 1):  # the first round warms up (traces the step for each input)
        for name, make in inputs.items():
            it = iter(make())
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                float(train_step(it)[0])
                times.append(time.perf_counter() - start)
            if run:
                step_ms[name].append(statistics.median(times[steps // 10 :]) * 1e3)
    rates = {name: [GLOBAL_BATCH / ms * 1e3 for ms in values] for name, values in step_ms.items()}
    harness.report(
        "distribution-feeding", "D1 feeding MirroredStrategy (2 replicas): training samples/s", rates, "samples/s",
        baseline="tf.data (AUTOTUNE)",
    )  # fmt: skip
    free = statistics.median(step_ms["free input"])
    lines = [
        "| input | median step (ms) | input-wait share (1 - free step / step) |",
        "|---|---:|---:|",
    ]
    for name, values in step_ms.items():
        step = statistics.median(values)
        lines.append(f"| {name} | {step:.1f} | {max(0.0, 1 - free / step):.1%} |")
    table = (
        "\n".join(lines)
        + f"\n\n{args.runs} runs of {steps} steps each, median step of each run; {harness._machine()}.\n"
    )
    print(table)
    harness._save("distribution-wait", "### D1 the share of a step that the input costs\n\n" + table)


def write_layout(folder: str, order: np.ndarray, pixels: np.ndarray, labels: np.ndarray) -> list[str]:
    """The records in ``order`` cut into 10 files of nearly equal size."""
    os.makedirs(folder, exist_ok=True)
    files = []
    for f, part in enumerate(np.array_split(order, 10)):
        path = os.path.join(folder, f"part-{f}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for i in part:
                w.write(pf.io.serialize_example({"pixels": pixels[i].astype(np.float32), "label": int(labels[i])}))
        files.append(path)
    return files


def balance(args: argparse.Namespace) -> None:
    from sklearn.datasets import load_digits

    digits = load_digits()
    layouts = {  # as many datasets are stored: sorted by class, or shuffled once
        "sorted by class": np.argsort(digits.target, kind="stable"),
        "shuffled": np.random.default_rng(0).permutation(len(digits.target)),
    }
    lines = [
        "| records | replicas | split | samples max/min | largest class deviation (samples) | max KL to all data |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for layout, order in layouts.items():
        files = write_layout(os.path.join(args.data, f"digits-{layout.replace(' ', '-')}"), order, digits.data,
                             digits.target)  # fmt: skip
        per_file = pf.distribute.record_labels(files)
        everything = np.concatenate(per_file)
        for n in (2, 4, 8):
            splits = {
                "tf.data FILE (files[i::n])": [np.concatenate(per_file[r::n]) for r in range(n)],
                "tf.data DATA (records[i::n])": [everything[r::n] for r in range(n)],
            }
            for name, kwargs in (("parafeed AUTO", {}), ('parafeed balance="labels"', {"balance": "labels"})):
                plan = pf.TFRecordDataset(files).distribute(n, 0, **kwargs).plan
                splits[f"{name} ({plan.policy})"] = pf.distribute.plan_labels(plan, files)
            for name, labels in splits.items():
                rep = pf.distribute.report(labels)
                lines.append(
                    f"| {layout} | {n} | {name} | {rep.max_min:.3f} | {rep.class_deviation:.1f} | {max(rep.kl):.4f} |"
                )
    table = "\n".join(lines) + f"\n\n1,797 digits in 10 files of 179 or 180 records; {harness._machine()}.\n"
    print(table)
    harness._save("distribution-balance", "### D2 class balance between replicas (digits, 10 files)\n\n" + table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3, help="epochs per run")
    parser.add_argument("--data", default="bench-data")
    args = parser.parse_args()
    balance(args)
    feeding(args)


if __name__ == "__main__":
    main()

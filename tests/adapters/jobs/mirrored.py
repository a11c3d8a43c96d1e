"""Keras fit under MirroredStrategy on two logical CPU devices, fed by parafeed (run by tests/adapters/test_tf.py).

Usage: python -m tests.adapters.jobs.mirrored OUT.json FILE...
Writes what the test checks: every replica's ids and weights for one epoch, steps and losses of fit.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np
import tensorflow as tf

import parafeed as pf
from tests.adapters.data import CLASSES, SPEC, parse, parse_with_id


def main(out: str, files: list[str]) -> None:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

    def make(fn):
        def pipeline(num_replicas, replica_id, batch_size):
            return (
                pf.TFRecordDataset(files)
                .distribute(num_replicas, replica_id, balance="labels", seed=1)
                .map(fn, num_parallel_calls=pf.AUTOTUNE)
                .shuffle(64, seed=replica_id)
                .batch(batch_size)
                .equal_steps()
                .prefetch(pf.AUTOTUNE)
            )

        return pipeline

    result: dict = {"replicas": strategy.num_replicas_in_sync, "ids": [[], []], "labels": [[], []], "padded": 0}
    # where each replica's batch arrives: its own device (fetched ahead), or host memory with ahead=0
    for ahead in (2, 0):
        ids, _, _ = next(iter(pf.adapters.tf.distribute(strategy, make(parse_with_id), 16, ahead=ahead)))
        result[f"devices_ahead_{ahead}"] = [t.device for t in strategy.experimental_local_results(ids)]
    for ids, labels, weights in pf.adapters.tf.distribute(strategy, make(parse_with_id), 16):
        for r, (i, y, w) in enumerate(
            zip(*(strategy.experimental_local_results(t) for t in (ids, labels, weights)), strict=True)
        ):
            real = w.numpy() == 1.0
            result["ids"][r] += i.numpy()[real].tolist()
            result["labels"][r] += y.numpy()[real].tolist()
            result["padded"] += int((~real).sum())
    result["steps"] = len(make(parse)(2, 0, 8))

    # a filter after the split: the counts are unknown, the replicas agree at every step whether one has a batch
    def filtered(with_ids):
        def pipeline(num_replicas, replica_id, batch_size):
            ds = pf.TFRecordDataset(files).distribute(num_replicas, replica_id, policy="FILE")
            ds = ds.map(lambda record: pf.io.parse_single_example(record, SPEC))
            ds = ds.filter(lambda e: e["id"] % 3 != 0 if replica_id else e["id"] % 5 == 0)  # replica 1 keeps more
            ds = ds.map(lambda e: (e["id"] if with_ids else e["x"], e["label"]))
            return ds.batch(batch_size).equal_steps()

        return pipeline

    result["agreed"] = []
    agreeing = pf.adapters.tf.distribute(strategy, filtered(True), 16)
    for _ in range(2):  # two epochs of one distributed dataset: each its own votes
        agreed: list = [[], [], 0]
        for ids, _, weights in agreeing:
            for r, (i, w) in enumerate(zip(*(strategy.experimental_local_results(t) for t in (ids, weights)))):
                agreed[r] += i.numpy()[w.numpy() == 1.0].tolist()
            agreed[2] += 1
        result["agreed"].append(agreed)

    with strategy.scope():
        model = keras.Sequential(
            [keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(CLASSES)]
        )
        model.compile(
            keras.optimizers.Adam(0.02),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            weighted_metrics=["accuracy"],
        )
    steps = []

    class CountSteps(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            steps.append(0)

        def on_train_batch_end(self, batch, logs=None):
            steps[-1] += 1

    history = model.fit(
        pf.adapters.tf.distribute(strategy, make(parse), 16), epochs=8, verbose=0, callbacks=[CountSteps()]
    )
    result["fit_steps"] = steps
    steps = []
    model.fit(pf.adapters.tf.distribute(strategy, filtered(False), 16), epochs=2, verbose=0, callbacks=[CountSteps()])
    result["agreed_fit_steps"] = steps
    result["loss"] = history.history["loss"]
    result["accuracy"] = history.history["accuracy"]

    # the seed articles' flow: one pipeline of global batches, split by TensorFlow
    plain = pf.TFRecordDataset(files).map(parse).shuffle(128, seed=0).batch(16).prefetch(pf.AUTOTUNE).to_tf()
    result["plain_loss"] = model.fit(plain, epochs=1, verbose=0).history["loss"]
    result["finite"] = bool(np.all(np.isfinite(result["loss"] + result["plain_loss"])))
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

"""Seed article 001 ported to parafeed: sharding, grouping and chained maps, trained under MultiWorkerMirroredStrategy.

The article ("TensorFlow中data_flow_ops模块的分布式数据处理与通信方式") shows three input-pipeline patterns:

(a) Sharding: ``Dataset.from_tensor_slices(filenames).shard(num_shards=2, index=0).map(read_fn,
    num_parallel_calls=AUTOTUNE).batch(batch_size)``.
(b) Grouping: ``TFRecordDataset(filenames).map(parse_fn)`` then ``tf.data.experimental.group_by_window(key_func,
    reduce_func, window_size)`` applied with ``.apply``: ported by renaming to ``pf.experimental.group_by_window``.
(c) Chaining: ``map(preprocess_fn).map(augment_fn).batch(batch_size)`` in an ``input_fn``, distributed and trained
    with ``MultiWorkerMirroredStrategy`` and ``model.fit``. The article's ``tf.distribute.InputDataset(input_fn)``
    does not exist; the real API is ``strategy.distribute_datasets_from_function``, which
    ``pf.adapters.tf.distribute(strategy, input_fn, global_batch_size)`` calls with one parafeed pipeline per replica.

Run without arguments, the script does (a) and (b), then starts two worker processes of itself on this machine
(``TF_CONFIG`` with two workers on 127.0.0.1) for (c). The training files are deliberately uneven and split by whole
files (``policy="FILE"``), so one worker has far more data than the other: ``.equal_steps()`` gives both the same
number of steps (padding the short one with rows of weight 0), so the epoch ends cleanly instead of hanging in a
collective, and every sample is still seen exactly once per epoch. Keras 3 cannot fit under
MultiWorkerMirroredStrategy (keras-team/keras#20585), so the workers use ``tf_keras`` (Keras 2), which needs
``steps_per_epoch`` and a repeated dataset (``repeat=True``). The data are scikit-learn's bundled digits.

Run:
    python examples/seed_001_shard_group_multiworker.py            # under a minute on 2 CPU cores
    python examples/seed_001_shard_group_multiworker.py --quick    # fewer epochs
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

import parafeed as pf

IMAGE_SIZE = 16  # the 8x8 digits, upscaled and stored as PNG
FILE_FRACTIONS = [0.36, 0.04, 0.27, 0.02]  # of the training set, the last file takes the rest: deliberately uneven
GLOBAL_BATCH = 64
NUM_WORKERS = 2
FEATURES = {
    "id": pf.io.FixedLenFeature([], "int64"),
    "image": pf.io.FixedLenFeature([], "string"),
    "label": pf.io.FixedLenFeature([], "int64"),
}


# ---------------------------------------------------------------------------------------------- data


def write_data(workdir: str, seed: int = 0) -> dict[str, Any]:
    """PNG files (for the sharding example) and uneven TFRecord files of the digits; returns what was written."""
    import cv2
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    small = (digits.images * (255.0 / 16.0)).astype(np.uint8)
    images = np.stack([cv2.resize(im, (IMAGE_SIZE, IMAGE_SIZE), interpolation=cv2.INTER_LINEAR) for im in small])
    labels = digits.target.astype(np.int64)
    train, test = train_test_split(np.arange(len(labels)), test_size=0.2, stratify=labels, random_state=seed)

    png_folder = os.path.join(workdir, "png")
    os.makedirs(png_folder, exist_ok=True)
    png_files = []
    for i, image in enumerate(images):
        png_files.append(os.path.join(png_folder, f"digit-{i:04d}-label-{labels[i]}.png"))
        cv2.imwrite(png_files[-1], image)

    sizes = [round(f * len(train)) for f in FILE_FRACTIONS]
    sizes.append(len(train) - sum(sizes))
    train_files, start = [], 0
    for number, size in enumerate(sizes):
        train_files.append(os.path.join(workdir, f"train-{number}.tfrecord"))
        with pf.io.TFRecordWriter(train_files[-1]) as writer:
            for sample_id, i in enumerate(train[start : start + size], start):
                ok, png = cv2.imencode(".png", images[i])
                if not ok:
                    raise RuntimeError(f"cv2.imencode failed for digit {i}")
                writer.write(pf.io.serialize_example({"id": sample_id, "image": png.tobytes(), "label": labels[i]}))
        start += size
    np.savez(os.path.join(workdir, "test.npz"), images=images[test], labels=labels[test])
    return {"png_files": png_files, "train_files": train_files, "file_sizes": sizes, "train_count": len(train)}


# ---------------------------------------------------------------------------------------------- the article's functions


def read_fn(filename: bytes) -> np.ndarray:
    """(a): read one image file and decode it."""
    with open(filename, "rb") as f:
        return pf.image.decode_png(f.read())


def parse_fn(record: bytes) -> tuple[np.ndarray, np.int64]:
    example = pf.io.parse_single_example(record, FEATURES)
    return pf.image.decode_png(example["image"], channels=1), example["label"]


def key_fn(image: np.ndarray, label: np.int64) -> np.int64:
    """(b): group the samples by digit."""
    return label


def make_group_fn(batch_size: int) -> Any:
    def group_fn(key: np.int64, data: pf.Dataset) -> pf.Dataset:
        """(b): what to do with each window of one key: here, batch it (a batch of one digit)."""
        return data.batch(batch_size)

    return group_fn


def preprocess_fn(image: np.ndarray, label: np.int64) -> tuple[np.ndarray, np.int64]:
    return image.astype(np.float32) / 255.0, label


def make_augment_fn(seed: int) -> Any:
    rng = np.random.default_rng(seed)

    def augment_fn(image: np.ndarray, label: np.int64) -> tuple[np.ndarray, np.int64]:
        """A random shift of up to one pixel and a little noise."""
        shift = rng.integers(-1, 2, size=2)
        image = np.roll(image, tuple(shift), axis=(0, 1))
        return np.clip(image + rng.normal(0.0, 0.03, image.shape).astype(np.float32), 0.0, 1.0), label

    return augment_fn


def replica_records(files: list[str], num_replicas: int, replica_id: int, policy: str) -> pf.Dataset:
    """The records of one replica: whole files with policy FILE, every n-th record with RECORD."""
    return pf.TFRecordDataset(files).distribute(num_replicas, replica_id, policy=policy)


def make_input_fn(files: list[str], policy: str) -> Any:
    """(c): the article's input_fn, one pipeline per replica (called by pf.adapters.tf.distribute)."""

    def input_fn(num_replicas: int, replica_id: int, batch_size: int) -> pf.Dataset:
        dataset = replica_records(files, num_replicas, replica_id, policy)
        dataset = dataset.map(parse_fn, num_parallel_calls=pf.AUTOTUNE)
        dataset = dataset.shuffle(1024, seed=replica_id)
        dataset = dataset.map(preprocess_fn)
        dataset = dataset.map(make_augment_fn(seed=replica_id))
        dataset = dataset.batch(batch_size)
        dataset = dataset.equal_steps()  # the same number of steps on every replica; padding rows have weight 0
        return dataset.prefetch(pf.AUTOTUNE)

    return input_fn


# ---------------------------------------------------------------------------------------------- (a) and (b)


def sharding_example(png_files: list[str], batch_size: int) -> None:
    filenames = sorted(png_files)
    seen: list[str] = []
    for index in range(2):
        dataset = pf.Dataset.from_tensor_slices(filenames)
        dataset = dataset.shard(num_shards=2, index=index)
        images = dataset.map(read_fn, num_parallel_calls=pf.AUTOTUNE).batch(batch_size)
        shapes = {batch.shape[1:] for batch in images}
        count = sum(len(batch) for batch in images)
        seen += [os.fsdecode(f) for f in dataset.as_numpy_iterator()]
        print(
            f"(a) shard(num_shards=2, index={index}) -> map(read_fn, AUTOTUNE) -> batch({batch_size}): {count} "
            f"images in {len(images)} batches, image shape {shapes.pop()}"
        )
    if sorted(seen) != filenames:
        raise SystemExit("(a) the two shards do not cover every file exactly once")
    print(f"    the 2 shards together: all {len(filenames)} files, none twice")


def grouping_example(train_files: list[str], total: int, batch_size: int) -> None:
    dataset = pf.TFRecordDataset(train_files)
    dataset = dataset.map(parse_fn)
    # the article's code, renamed: dataset.apply(tf.data.experimental.group_by_window(...))
    dataset = dataset.apply(
        pf.experimental.group_by_window(key_func=key_fn, reduce_func=make_group_fn(batch_size), window_size=batch_size)
    )
    dataset = dataset.prefetch(1)
    batches = [labels for _, labels in dataset]
    single_digit = all(len(set(labels.tolist())) == 1 for labels in batches)
    full = sum(len(labels) == batch_size for labels in batches)
    print(
        f"(b) TFRecordDataset -> map(parse_fn) -> group_by_window(key_fn, group_fn, window_size={batch_size}) -> "
        f"prefetch(1): {len(batches)} batches ({full} full), {sum(len(b) for b in batches)} samples; every batch "
        f"holds one digit: {single_digit}"
    )
    if not single_digit or sum(len(b) for b in batches) != total:
        raise SystemExit("(b) group_by_window lost samples or mixed keys")


def show_policies(train_files: list[str], batch_size: int) -> None:
    for policy in ("FILE", "AUTO"):
        counts = [len(replica_records(train_files, NUM_WORKERS, r, policy).batch(batch_size)) for r in (0, 1)]
        print(f"    policy {policy}: batches per worker before equal_steps(): {counts}")
    print("    (AUTO splits by record here, since whole files would be so uneven; this run uses FILE on purpose)")


# ---------------------------------------------------------------------------------------------- (c): launcher


def free_ports(n: int) -> list[int]:
    """Ports free on 127.0.0.1 now, from 20000-32767: not the kernel's ephemeral ports (what binding to port 0
    gives), which another process's outgoing connection may take before the workers bind them."""
    ports: list[int] = []
    while len(ports) < n:
        port = random.randrange(20000, 32768)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use
        if port not in ports:
            ports.append(port)
    return ports


def launch_workers(workdir: str, epochs: int, timeout: float) -> list[dict]:
    """Run two workers of this script; returns their results (exits with the logs if one fails or hangs)."""
    ports = free_ports(NUM_WORKERS)
    workers = [f"127.0.0.1:{p}" for p in ports]
    processes, logs = [], []
    for index in range(NUM_WORKERS):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = {**os.environ, "TF_CONFIG": json.dumps(tf_config), "TF_CPP_MIN_LOG_LEVEL": "3"}
        logs.append(os.path.join(workdir, f"worker-{index}.log"))
        with open(logs[-1], "w") as log:
            command = [sys.executable, os.path.abspath(__file__), "--worker", "--workdir", workdir]
            command += ["--epochs", str(epochs)]
            processes.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))
    # wait for both; if one fails, the other would wait for it in a collective forever: stop it too
    deadline = time.monotonic() + timeout
    timed_out = False
    while any(p.poll() is None for p in processes) and not any(p.poll() for p in processes) and not timed_out:
        timed_out = time.monotonic() > deadline
        time.sleep(0.2)
    failed = [f"worker {i} exited with status {p.returncode}" for i, p in enumerate(processes) if p.poll()]
    if timed_out:
        failed.append(f"the workers did not finish within {timeout:.0f} s")
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()
    if failed:
        for index, path in enumerate(logs):
            with open(path) as f:
                print(f"---- worker {index} log (last lines) ----\n" + "".join(f.readlines()[-40:]))
        raise SystemExit("; ".join(failed))
    with open(logs[0]) as f:
        keras_lines = [f"      {line.rstrip()}" for line in f if "Epoch" in line or "/step" in line]
    print("    worker 0's Keras log:\n" + "\n".join(keras_lines))
    results = []
    for index in range(NUM_WORKERS):
        with open(os.path.join(workdir, f"worker-{index}.json")) as f:
            results.append(json.load(f))
    return results


def check_results(results: list[dict], total: int) -> None:
    for r in results:
        print(
            f"    worker {r['worker']}: files {r['files']}, {r['records']} records -> {r['own_batches']} batches of "
            f"its own; trained {r['steps']} steps per epoch ({r['padded']} padding rows of weight 0), final loss "
            f"{r['loss'][-1]:.4f}, test accuracy {r['test_accuracy']:.3f}"
        )
    steps = [r["steps"] for r in results]
    ids = sorted(i for r in results for i in r["ids"])
    once = ids == list(range(total))
    same_model = all(np.allclose(r["loss"], results[0]["loss"]) for r in results)
    print(f"steps per epoch on each worker: {steps} (equal: {len(set(steps)) == 1})")
    print(f"every sample seen exactly once in an epoch: {once} ({len(ids)} of {total})")
    print(f"both workers trained the same model (identical losses): {same_model}")
    print(f"test accuracy: {results[0]['test_accuracy']:.3f}")
    if len(set(steps)) != 1 or not once or not same_model or results[0]["test_accuracy"] < 0.7:
        raise SystemExit("multi-worker training did not go as expected")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="where to write the data and the workers' logs (default: a temporary dir)")
    parser.add_argument("--epochs", type=int, help="training epochs (default 10, --quick 3)")
    parser.add_argument("--quick", action="store_true", help="fewer epochs (used by the tests)")
    parser.add_argument("--worker", action="store_true", help="(internal) run as one worker; TF_CONFIG says which")
    args = parser.parse_args()
    epochs = args.epochs or (3 if args.quick else 10)
    if args.worker:
        run_worker(args.workdir, epochs)
        return

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="seed001-") as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        data = write_data(workdir)
        print(
            f"data: {len(data['png_files'])} PNG digits; {data['train_count']} training records in TFRecord files "
            f"of {data['file_sizes']} records (deliberately uneven), under {workdir}"
        )
        sharding_example(data["png_files"], batch_size=32)
        grouping_example(data["train_files"], data["train_count"], batch_size=32)
        print(
            f"(c) input_fn: TFRecordDataset -> distribute(2, r, policy='FILE') -> map(parse_fn) -> shuffle -> "
            f"map(preprocess_fn) -> map(augment_fn) -> batch -> equal_steps(), on {NUM_WORKERS} workers"
        )
        show_policies(data["train_files"], GLOBAL_BATCH // NUM_WORKERS)
        results = launch_workers(workdir, epochs, timeout=400)
        check_results(results, data["train_count"])
    print(f"done in {time.perf_counter() - started:.0f} s")


# ---------------------------------------------------------------------------------------------- (c): one worker


def run_worker(workdir: str, epochs: int) -> None:
    import tensorflow as tf
    import tf_keras as keras

    index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    train_files = sorted(glob.glob(os.path.join(workdir, "train-*.tfrecord")))
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    num_replicas = strategy.num_replicas_in_sync
    per_replica_batch = GLOBAL_BATCH // num_replicas
    input_fn = make_input_fn(train_files, policy="FILE")

    # One epoch of this worker's share (its replicas' records: one replica per worker on CPUs), through the same split
    # as training, to check who sees what
    per_worker = num_replicas // NUM_WORKERS
    replica_ids = range(index * per_worker, (index + 1) * per_worker)
    ids, padded, own_batches = [], 0, 0
    for replica_id in replica_ids:
        mine = replica_records(train_files, num_replicas, replica_id, "FILE")
        own_batches += len(mine.batch(per_replica_batch))
        sample_ids = mine.map(lambda record: pf.io.parse_single_example(record, FEATURES)["id"])
        for batch_ids, weights in sample_ids.batch(per_replica_batch).equal_steps():
            ids += batch_ids[weights == 1.0].tolist()
            padded += int((weights == 0.0).sum())
    steps = len(input_fn(num_replicas, replica_ids[0], per_replica_batch))

    with strategy.scope():
        model = keras.Sequential(
            [
                keras.layers.Flatten(input_shape=(IMAGE_SIZE, IMAGE_SIZE, 1)),
                keras.layers.Dense(64, activation="relu"),
                keras.layers.Dense(10, activation="softmax"),
            ]
        )
        # weighted_metrics: accuracy over real rows only (equal_steps' padding rows have weight 0)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", weighted_metrics=["accuracy"])
    distributed_dataset = pf.adapters.tf.distribute(strategy, input_fn, GLOBAL_BATCH, repeat=True)
    history = model.fit(distributed_dataset, epochs=epochs, steps_per_epoch=steps, verbose=2)

    with np.load(os.path.join(workdir, "test.npz")) as test:
        x_test, y_test = test["images"][..., None].astype(np.float32) / 255.0, test["labels"]
    test_accuracy = float(np.mean(np.argmax(model(x_test, training=False).numpy(), axis=1) == y_test))
    result = {
        "worker": index,
        "files": [os.path.basename(f) for r in replica_ids for f in train_files[r::num_replicas]],
        "records": len(ids),
        "own_batches": own_batches,
        "steps": steps,
        "ids": ids,
        "padded": padded,
        "loss": history.history["loss"],
        "test_accuracy": test_accuracy,
    }
    with open(os.path.join(workdir, f"worker-{index}.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()

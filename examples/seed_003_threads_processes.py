"""Seed article 003 ported to parafeed: multi-thread and multi-process data loading, without TensorFlow.

The article ("Tensorflow 多线程与多进程数据加载实例") shows four input pipelines:

1. ``from_tensor_slices((images, labels)).map(preprocessing).shuffle(10000).batch(32).prefetch(1)``, read with
   ``make_initializable_iterator`` (TF1); here a plain Python ``for`` loop iterates the dataset.
2. The TF1 queue pipeline: ``match_filenames_once`` + ``string_input_producer(shuffle=True)`` + ``TFRecordReader`` +
   ``parse_single_example`` ({'image_raw', 'label'}) + ``decode_jpeg(channels=3)`` + resize + ``tf.cast(label,
   tf.int32)`` + ``tf.train.batch(num_threads=2)``. Its tf.data form, ported: ``Dataset.list_files(pattern,
   shuffle=True)`` -> ``TFRecordDataset`` -> ``map(parse_fn, num_parallel_calls=2)`` -> ``batch(32)``.
3. Several shards read at once: ``TFRecordDataset(filenames, num_parallel_reads=...)`` and its spelled-out form,
   ``apply(pf.experimental.parallel_interleave(lambda f: TFRecordDataset(f), cycle_length=...))`` then
   ``apply(pf.experimental.map_and_batch(parse_fn, batch_size, num_parallel_batches=...))``: the article's
   ``tf.data.experimental`` code, renamed.
4. Multi-process loading: a pure-Python preprocessing function (it holds the GIL, so threads cannot speed it up)
   run on worker processes with ``map(..., num_parallel_calls=n, executor="process")``.

It ends with a small timing table, serial vs threads vs processes, for a function that releases the GIL (JPEG
decoding and resizing) and one that does not (a pure-Python loop). The images are scikit-learn's bundled digits,
upscaled and saved as RGB JPEGs (no download).

Run:
    python examples/seed_003_threads_processes.py            # about 1 minute on 2 CPU cores
    python examples/seed_003_threads_processes.py --quick    # fewer images
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import parafeed as pf

JPEG_SIZE = 128  # the digits are stored as 128x128 RGB JPEGs
# The article resizes to 224x224. Its first pipeline maps *before* shuffle(10000), so the shuffle buffer holds every
# preprocessed image (0.6 MB each at 224x224x3 float32); 96x96 keeps this example's memory small (--image-size 224
# for the article's size).
IMAGE_SIZE = 96
TIMING_IMAGE_SIZE = 224  # the timing table batches right after the map, so it can use the article's size
NUM_SHARDS = 4


def load_digit_images(count: int | None) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits as (N, 128, 128, 3) uint8 RGB images and int64 labels (the first ``count``, or all)."""
    import cv2
    from sklearn.datasets import load_digits

    digits = load_digits()
    gray = (digits.images[:count] * (255.0 / 16.0)).astype(np.uint8)
    images = np.stack(
        [
            cv2.cvtColor(cv2.resize(g, (JPEG_SIZE, JPEG_SIZE), interpolation=cv2.INTER_CUBIC), cv2.COLOR_GRAY2RGB)
            for g in gray
        ]
    )
    return images, digits.target[:count].astype(np.int64)


def write_shards(folder: str, images: np.ndarray, labels: np.ndarray) -> list[str]:
    """The images as tf.Examples {'image_raw': JPEG bytes, 'label': int64} in NUM_SHARDS TFRecord files."""
    import cv2

    filenames = [os.path.join(folder, f"data_{i}.tfrecord") for i in range(NUM_SHARDS)]
    writers = [pf.io.TFRecordWriter(f) for f in filenames]
    for i, (image, label) in enumerate(zip(images, labels)):
        ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 90])
        if not ok:
            raise RuntimeError(f"cv2.imencode failed for image {i}")
        writers[i % NUM_SHARDS].write(pf.io.serialize_example({"image_raw": jpeg.tobytes(), "label": int(label)}))
    for writer in writers:
        writer.close()
    return filenames


# ---------------------------------------------------------------------------------------------- the article's functions

FEATURES = {
    "image_raw": pf.io.FixedLenFeature([], "string"),
    "label": pf.io.FixedLenFeature([], "int64"),
}


def make_preprocessing(image_size: int) -> Callable[[np.ndarray, np.int64], tuple[np.ndarray, np.int64]]:
    def preprocessing(image: np.ndarray, label: np.int64) -> tuple[np.ndarray, np.int64]:
        image = pf.image.resize(image, [image_size, image_size])  # tf.image.resize_images -> float32
        image = image / 255.0
        return image, label

    return preprocessing


def make_parse_fn(image_size: int) -> Callable[[bytes], tuple[np.ndarray, np.int32]]:
    def parse_fn(serialized_example: bytes) -> tuple[np.ndarray, np.int32]:
        features = pf.io.parse_single_example(serialized_example, FEATURES)
        image = pf.image.decode_jpeg(features["image_raw"], channels=3)
        image = pf.image.resize(image, [image_size, image_size])
        label = features["label"].astype(np.int32)  # tf.cast(features['label'], tf.int32)
        return image, label

    return parse_fn


def python_preprocessing_fn(serialized_example: bytes) -> tuple[np.ndarray, np.int32]:
    """Hand-written feature extraction in pure Python: ink, centre of mass and bounding box of the digit.

    Loops over pixels hold the GIL: threads take turns running it, worker processes run it side by side.
    """
    features = pf.io.parse_single_example(serialized_example, FEATURES)
    rows = pf.image.decode_jpeg(features["image_raw"], channels=1)[:, :, 0].tolist()
    ink = sum_y = sum_x = 0
    top, left, bottom, right = len(rows), len(rows[0]), -1, -1
    for y, row in enumerate(rows):
        for x, value in enumerate(row):
            if value > 96:
                ink += value
                sum_y += y * value
                sum_x += x * value
                top, bottom = min(top, y), max(bottom, y)
                left, right = min(left, x), max(right, x)
    centre = (sum_y / ink, sum_x / ink) if ink else (0.0, 0.0)
    values = [ink / 255.0, *centre, top, left, bottom, right]
    return np.array(values, np.float32), features["label"].astype(np.int32)


# ---------------------------------------------------------------------------------------------- the pipelines


def count_batches(dataset: pf.Dataset) -> tuple[int, int, Any]:
    """(batches, elements, first batch) of one pass with a plain for loop (the TF2 way to iterate a dataset)."""
    batches = elements = 0
    first = None
    for images, labels in dataset:
        if first is None:
            first = (images, labels)
        batches += 1
        elements += len(labels)
    return batches, elements, first


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"check failed: {message}")


def in_memory_pipeline(images: np.ndarray, labels: np.ndarray, image_size: int) -> None:
    preprocessing = make_preprocessing(image_size)
    dataset = pf.Dataset.from_tensor_slices((images, labels))
    dataset = dataset.map(preprocessing)
    dataset = dataset.shuffle(buffer_size=10000)
    dataset = dataset.batch(batch_size=32)
    dataset = dataset.prefetch(buffer_size=1)  # a background thread prepares the next batch
    batches, seen, (first_images, first_labels) = count_batches(dataset)
    print(
        f"1. from_tensor_slices -> map -> shuffle(10000) -> batch(32) -> prefetch(1): {batches} batches, "
        f"{seen} images; first batch {first_images.shape} {first_images.dtype}, labels {first_labels[:8]}..."
    )
    check(seen == len(images) and first_images.shape == (32, image_size, image_size, 3), "pipeline 1 counts")


def queue_style_pipeline(folder: str, total: int, image_size: int, num_threads: int) -> None:
    parse_fn = make_parse_fn(image_size)
    file_names = pf.Dataset.list_files(os.path.join(folder, "data_*.tfrecord"), shuffle=True)  # string_input_producer
    dataset = pf.TFRecordDataset(file_names)  # TFRecordReader + reader.read
    dataset = dataset.map(parse_fn, num_parallel_calls=num_threads)  # parse + decode_jpeg + resize + cast, 2 threads
    dataset = dataset.batch(32)  # tf.train.batch([image, label], batch_size=32, num_threads=2)
    batches, seen, (first_images, first_labels) = count_batches(dataset)
    print(
        f"2. list_files(shuffle=True) -> TFRecordDataset -> map(parse_fn, {num_threads} threads) -> batch(32): "
        f"{batches} batches, {seen} images; images {first_images.shape} {first_images.dtype}, labels "
        f"{first_labels.dtype}"
    )
    check(
        seen == total and first_labels.dtype == np.int32 and first_images.shape[1:] == (image_size, image_size, 3),
        "pipeline 2 counts and dtypes",
    )


def sharded_pipelines(filenames: list[str], total: int, image_size: int, num_workers: int) -> None:
    parse_fn = make_parse_fn(image_size)
    batch_size = 32

    # several shards at once: num_parallel_reads reads that many files on threads, one record from each in turn
    dataset = pf.TFRecordDataset(filenames, num_parallel_reads=num_workers)
    dataset = dataset.map(parse_fn, num_parallel_calls=num_workers)
    dataset = dataset.shuffle(buffer_size=10000)
    dataset = dataset.batch(batch_size)
    dataset = dataset.prefetch(1)
    batches, seen, _ = count_batches(dataset)
    print(
        f"3. TFRecordDataset({len(filenames)} shards, num_parallel_reads={num_workers}) -> map -> shuffle -> batch -> "
        f"prefetch: {batches} batches, {seen} images"
    )
    check(seen == total, "pipeline 3 counts")

    # the article's code, renamed: dataset.apply(tf.data.experimental.parallel_interleave(...))
    interleaved = pf.Dataset.from_tensor_slices(filenames).apply(
        pf.experimental.parallel_interleave(lambda filename: pf.TFRecordDataset(filename), cycle_length=num_workers)
    )
    same_order = list(interleaved) == list(pf.TFRecordDataset(filenames, num_parallel_reads=num_workers))
    print(
        f"   interleave(TFRecordDataset, cycle_length={num_workers}, num_parallel_calls={num_workers}) gives the "
        f"same records in the same order as num_parallel_reads={num_workers}: {same_order}"
    )
    check(same_order, "interleave and num_parallel_reads disagree")

    # the article's code, renamed: dataset.apply(tf.data.experimental.map_and_batch(...)), a parallel map then batch
    dataset = interleaved.apply(
        pf.experimental.map_and_batch(map_func=parse_fn, batch_size=batch_size, num_parallel_batches=num_workers)
    )
    dataset = dataset.prefetch(pf.experimental.AUTOTUNE)  # tf.contrib.data.AUTOTUNE
    batches, seen, _ = count_batches(dataset)
    print(
        f"   interleave -> map(parse_fn, num_parallel_calls={num_workers}) -> batch({batch_size}) (map_and_batch): "
        f"{batches} batches, {seen} images"
    )
    check(seen == total, "map_and_batch counts")

    # multi-process: the pure-Python preprocessing function on worker processes
    dataset = interleaved.map(python_preprocessing_fn, num_parallel_calls=num_workers, executor="process")
    dataset = dataset.batch(batch_size).prefetch(1)
    serial = interleaved.map(python_preprocessing_fn).batch(batch_size)
    by_processes = np.concatenate([features for features, _ in dataset])
    by_one_thread = np.concatenate([features for features, _ in serial])
    identical = np.array_equal(by_processes, by_one_thread)
    print(
        f"4. map(python_preprocessing_fn, num_parallel_calls={num_workers}, executor='process'): "
        f"{len(by_processes)} feature rows, identical to the serial map's: {identical}"
    )
    check(len(by_processes) == total and identical, "process map results")


# ---------------------------------------------------------------------------------------------- timing


def median_seconds(dataset: pf.Dataset, runs: int = 3) -> float:
    """Median wall time of ``runs`` full passes, after one pass that warms up (starts worker processes, fills
    caches)."""
    for _ in dataset:
        pass
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in dataset:
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timing_table(filenames: list[str], total: int, num_workers: int) -> dict[str, list[float]]:
    records = pf.TFRecordDataset(filenames).take(total).cache()  # read the files once: time the map, not the disk
    workloads = {
        f"decode JPEG + resize {TIMING_IMAGE_SIZE} (releases the GIL)": make_parse_fn(TIMING_IMAGE_SIZE),
        "pure-Python loop (holds the GIL)": python_preprocessing_fn,
    }
    ways = {
        "serial": {},
        f"{num_workers} threads": {"num_parallel_calls": num_workers},
        f"{num_workers} processes": {"num_parallel_calls": num_workers, "executor": "process"},
    }
    print(
        f"\nTiming ({total} images; median of 3 runs after a warm-up; an illustration on this machine, not a "
        "benchmark: see benchmarks/ for those)"
    )
    print(f"{'function':<44}" + "".join(f"{way:>22}" for way in ways))
    ratios: dict[str, list[float]] = {}
    for name, fn in workloads.items():
        seconds = [median_seconds(records.map(fn, **kwargs).batch(32)) for kwargs in ways.values()]
        ratios[name] = [seconds[0] / s for s in seconds]
        cells = [f"{total / s:,.0f}/s = {r:.2f}x" for s, r in zip(seconds, ratios[name])]
        print(f"{name:<44}" + "".join(f"{c:>22}" for c in cells))
    print("(images per second, and the speed relative to serial)")
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="where to write the TFRecord shards (default: a temporary directory)")
    parser.add_argument("--images", type=int, help="how many digits to use (default all 1797, --quick 600)")
    parser.add_argument("--image-size", type=int, default=IMAGE_SIZE, help=f"resize target (default {IMAGE_SIZE})")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="threads / processes (default: CPUs)")
    parser.add_argument("--timing-images", type=int, help="images in the timing table (default 500, --quick 200)")
    parser.add_argument("--quick", action="store_true", help="fewer images (used by the tests)")
    args = parser.parse_args()
    count = args.images or (600 if args.quick else None)
    timing_images = args.timing_images or (200 if args.quick else 500)

    started = time.perf_counter()
    images, labels = load_digit_images(count)
    with tempfile.TemporaryDirectory(prefix="seed003-") as tmp:
        folder = args.workdir or tmp
        os.makedirs(folder, exist_ok=True)
        filenames = write_shards(folder, images, labels)
        print(f"data: {len(images)} digits as {JPEG_SIZE}x{JPEG_SIZE} RGB JPEGs in {NUM_SHARDS} shards under {folder}")
        in_memory_pipeline(images, labels, args.image_size)
        queue_style_pipeline(folder, len(images), args.image_size, num_threads=2)
        sharded_pipelines(filenames, len(images), args.image_size, args.workers)
        timing_table(filenames, timing_images, args.workers)
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

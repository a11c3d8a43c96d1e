"""Formats: TFRecord reading (1 KB and 100 KB records, CRC checked) and parse_example, parafeed vs tf.data.

Same files, same process, interleaved runs; prints medians and ratios and writes them to docs/benchmarks.md.
tf.data is measured in-graph at its best: records are batched (1,024) and counted by ``Dataset.reduce`` inside the
graph, so no per-record Python crosses; parafeed is measured the way users consume it, a Python loop over records.

Usage: python benchmarks/formats.py [--runs 5] [--data bench-data]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness
import numpy as np

import parafeed as pf


def make_file(path: str, size: int, count: int) -> str:
    if not os.path.exists(path):
        rng = np.random.default_rng(0)
        with pf.io.TFRecordWriter(path + ".tmp") as w:
            for _ in range(count):
                w.write(rng.bytes(size))
        os.replace(path + ".tmp", path)
    return path


def tfrecord_candidates(path: str, unit_bytes: bool) -> dict:
    size = os.path.getsize(path)
    scale = size if unit_bytes else None

    def parafeed() -> float:
        n = 0
        for _ in pf.TFRecordDataset(path):
            n += 1
        return scale or n

    out = {"parafeed": parafeed}
    try:
        import tensorflow as tf

        @tf.function
        def count(ds):
            return ds.reduce(tf.constant(0, tf.int64), lambda c, b: c + tf.cast(tf.shape(b)[0], tf.int64))

        def tf_data() -> float:
            n = int(count(tf.data.TFRecordDataset(path).batch(1024)))
            return scale or n

        out["tf.data"] = tf_data
    except ImportError:
        print("tensorflow not installed: no tf.data baseline")
    return out


def parse_candidates(batches: list[list[bytes]]) -> dict:
    spec = {f"f{k}": pf.io.FixedLenFeature([], "float32") for k in range(16)}
    spec.update(label=pf.io.FixedLenFeature([], "int64"), id=pf.io.FixedLenFeature([], "string"))
    total = sum(len(b) for b in batches)

    def parafeed() -> int:
        for b in batches:
            pf.io.parse_example(b, spec)
        return total

    out = {"parafeed": parafeed}
    try:
        import tensorflow as tf

        tf_spec = {f"f{k}": tf.io.FixedLenFeature([], tf.float32) for k in range(16)}
        tf_spec.update(label=tf.io.FixedLenFeature([], tf.int64), id=tf.io.FixedLenFeature([], tf.string))
        tensors = tf.data.Dataset.from_tensor_slices(tf.constant([r for b in batches for r in b])).batch(256).cache()

        @tf.function
        def parse_all(ds):
            return ds.map(lambda b: tf.io.parse_example(b, tf_spec)["label"]).reduce(
                tf.constant(0, tf.int64), lambda c, y: c + tf.cast(tf.shape(y)[0], tf.int64)
            )

        parse_all(tensors)  # fill the cache: only parsing is timed

        def tf_data() -> int:
            return int(parse_all(tensors))

        out["tf.io.parse_example (in tf.data)"] = tf_data
    except ImportError:
        pass
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", default="bench-data")
    args = parser.parse_args()
    os.makedirs(args.data, exist_ok=True)

    small = make_file(os.path.join(args.data, "records-1k.tfrecord"), 1024, 200_000)
    rates = harness.run(tfrecord_candidates(small, unit_bytes=False), runs=args.runs)
    harness.report("tfrecord-1k", "TFRecord read, 1 KB records, CRC checked (200,000 records)", rates, "records/s")

    big = make_file(os.path.join(args.data, "records-100k.tfrecord"), 100 * 1024, 4_000)
    rates = harness.run(tfrecord_candidates(big, unit_bytes=True), runs=args.runs)
    rates = {k: [v / 1e6 for v in vs] for k, vs in rates.items()}
    harness.report("tfrecord-100k", "TFRecord read, 100 KB records, CRC checked (400 MB)", rates, "MB/s")

    rng = np.random.default_rng(0)
    records = [
        pf.io.serialize_example(
            {
                **{f"f{k}": np.float32(v) for k, v in enumerate(rng.normal(size=16))},
                "label": int(i % 10),
                "id": b"id-%08d" % i,
            }
        )
        for i in range(256 * 80)
    ]
    batches = [records[i : i + 256] for i in range(0, len(records), 256)]
    rates = harness.run(parse_candidates(batches), runs=args.runs)
    harness.report(
        "parse-example", "parse_example, batches of 256 (16 float32 + int64 label + bytes id)", rates, "examples/s",
        baseline="tf.io.parse_example (in tf.data)",
    )  # fmt: skip


if __name__ == "__main__":
    main()

"""Shared test data for the adapter tests: TFRecord files of tf.Examples with an id, 4 features and a label; free
ports on 127.0.0.1 for their multi-process jobs."""

from __future__ import annotations

import numpy as np

import parafeed as pf

SPEC = {
    "id": pf.io.FixedLenFeature([], "int64"),
    "x": pf.io.FixedLenFeature([4], "float32"),
    "label": pf.io.FixedLenFeature([], "int64"),
}
CLASSES = 3


def write_files(folder, sizes, seed=0):
    """Files of ``sizes`` records; the label is a linear function of x, so a small model learns it."""
    rng = np.random.default_rng(seed)
    files, next_id = [], 0
    for i, n in enumerate(sizes):
        path = str(folder / f"part-{i}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for _ in range(n):
                x = rng.normal(size=4).astype(np.float32)
                label = int(np.argmax([x[0] + x[1], x[2], x[3] - x[0]]))
                w.write(pf.io.serialize_example({"id": next_id, "x": x, "label": label}))
                next_id += 1
        files.append(path)
    return files


def parse(record):
    """(x, label) of a record."""
    e = pf.io.parse_single_example(record, SPEC)
    return e["x"], e["label"]


def parse_with_id(record):
    e = pf.io.parse_single_example(record, SPEC)
    return e["id"], e["label"]

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


ROW = 1 << 15  # int32 values in a row of worker_batches()


def worker_batches(mode, batches=24, rows=8):
    """Batches of ``rows`` rows of :data:`ROW` int32 (1 MiB: batches this large go to shared memory) that worker
    processes write into shared-memory segments, which their pool reuses once no array uses them; row ``i`` is all
    ``i``. ``mode`` (:data:`WORKER_MODES`): a process map, its input read in its workers or here, or an offload."""
    ds = pf.Dataset.range(rows * batches).map(lambda i: np.full((ROW,), i, np.int32), num_parallel_calls=2,
                                              executor=None if mode == "offload" else "process").batch(rows)  # fmt: skip
    if mode == "map, input read here":  # (the pool's own segments: parallel/shared_batches.py)
        options = pf.Options()
        options.experimental_optimization.map_input_in_workers = False
        ds = ds.with_options(options)
    return ds.offload(executor="process", workers=1) if mode == "offload" else ds


WORKER_MODES = ["map", "map, input read here", "offload"]


def worker_batch(k, rows=8):
    """What batch ``k`` of :func:`worker_batches` holds."""
    return np.repeat(np.arange(rows * k, rows * (k + 1), dtype=np.int32), ROW).reshape(rows, -1)

"""Formats: TFRecord reading (1 KB and 100 KB records, CRC checked) and parse_example, parafeed vs tf.data; Parquet
rows, parafeed vs pyarrow's own reader; WebDataset samples, parafeed vs the webdataset package; ArrayRecord records in
order and by position (a seeded global shuffle split by record), parafeed vs ``ArrayRecordReader`` and Grain's
``ArrayRecordDataSource``.

Same files, same process, interleaved runs; prints medians and ratios and writes them to docs/benchmarks.md.
tf.data is measured in-graph at its best: records are batched (1,024) and counted by ``Dataset.reduce`` inside the
graph, so no per-record Python crosses; parafeed is measured the way users consume it, a Python loop over records
(``for r in ds``: each a ScalarString, as TensorFlow's eager loop hands out tensors; and ``as_numpy_iterator()``:
plain bytes).

Hugging Face: the same rows as a ``datasets.Dataset`` and a stream of it, parafeed's ``from_huggingface`` against
iterating the dataset itself (Python values: row by row, and a batch of columns at a time made into rows).

Parquet: rows as Python dicts, parafeed's ``ParquetDataset`` (NumPy scalars, bytes, arrays: tf.data's types) against
pyarrow's ``ParquetFile.iter_batches()`` with ``RecordBatch.to_pylist()`` (Python values), the conversion a user writes
without parafeed, and the same batches converted to parafeed's types by hand.

Usage: python benchmarks/formats.py [--runs 5] [--data bench-data] [--only parquet,huggingface]
"""

from __future__ import annotations

import argparse
import itertools
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
        for _ in pf.TFRecordDataset(path):  # (each record a ScalarString, as TensorFlow's loop hands out tensors)
            n += 1
        return scale or n

    def parafeed_numpy() -> float:
        n = 0
        for _ in pf.TFRecordDataset(path).as_numpy_iterator():  # (plain bytes)
            n += 1
        return scale or n

    out = {"parafeed": parafeed, "parafeed, as_numpy_iterator()": parafeed_numpy}
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


def make_parquet(path: str, rows: int) -> str:
    """Rows of (id int64, x float32, label int64, text string of ~40 bytes, vector list<float32> of 8)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not os.path.exists(path):
        rng = np.random.default_rng(0)
        ids = np.arange(rows, dtype=np.int64)
        table = pa.table({
            "id": ids, "x": rng.normal(size=rows).astype(np.float32), "label": ids % 10,
            "text": pa.array([f"caption number {i:010d} of the set" for i in range(rows)]),
            "vector": pa.FixedSizeListArray.from_arrays(rng.normal(size=rows * 8).astype(np.float32), 8).cast(
                pa.list_(pa.float32())),
        })  # fmt: skip
        pq.write_table(table, path + ".tmp", row_group_size=16_384)
        os.replace(path + ".tmp", path)
    return path


def parquet_candidates(path: str) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def parafeed() -> int:
        return sum(1 for _ in pf.ParquetDataset(path).as_numpy_iterator())

    def parafeed_tensors() -> int:
        return sum(1 for _ in pf.ParquetDataset(path))

    def pyarrow_pylist() -> int:
        n = 0
        for batch in pq.ParquetFile(path).iter_batches(4096):
            for _ in batch.to_pylist():
                n += 1
        return n

    def pyarrow_same_types() -> int:  # numbers as NumPy scalars, strings as bytes, lists as arrays, by hand
        n = 0
        for batch in pq.ParquetFile(path).iter_batches(4096):
            names = batch.schema.names
            columns = []
            for column in batch.columns:
                if pa.types.is_string(column.type):
                    columns.append(column.cast(pa.binary()).to_pylist())
                elif pa.types.is_list(column.type):
                    values, offsets = column.flatten().to_numpy(), column.offsets.to_numpy()
                    columns.append([values[a:b] for a, b in itertools.pairwise(offsets.tolist())])
                else:
                    columns.append(column.to_numpy())
            for _ in (dict(zip(names, row)) for row in zip(*columns)):
                n += 1
        return n

    return {
        "pyarrow iter_batches + to_pylist()": pyarrow_pylist,
        "pyarrow iter_batches, same types by hand": pyarrow_same_types,
        "parafeed ParquetDataset (as_numpy_iterator)": parafeed,
        "parafeed ParquetDataset (for row in ds: Tensors)": parafeed_tensors,
    }


def huggingface_candidates(path: str) -> dict:
    """The Parquet table as a Hugging Face ``datasets.Dataset`` (in memory) and as a stream of it."""
    import datasets
    import pyarrow.parquet as pq

    hf = datasets.Dataset(pq.read_table(path))
    stream = hf.to_iterable_dataset(num_shards=4)

    def own_rows() -> int:  # Python values
        return sum(1 for _ in hf)

    def own_batches() -> int:  # Python values a batch of columns at a time, made into rows
        n = 0
        for batch in hf.iter(batch_size=1024):
            names = list(batch)
            for _ in (dict(zip(names, row)) for row in zip(*batch.values())):
                n += 1
        return n

    def own_stream() -> int:
        return sum(1 for _ in stream)

    def parafeed() -> int:
        return sum(1 for _ in pf.Dataset.from_huggingface(hf).as_numpy_iterator())

    def parafeed_stream() -> int:
        return sum(1 for _ in pf.Dataset.from_huggingface(stream).as_numpy_iterator())

    return {
        "datasets: for row in Dataset": own_rows,
        "datasets: Dataset.iter(batch_size=1024), rows by zip": own_batches,
        "datasets: for row in IterableDataset": own_stream,
        "parafeed from_huggingface(Dataset)": parafeed,
        "parafeed from_huggingface(IterableDataset)": parafeed_stream,
    }


def make_shards(folder: str, shards: int, samples: int) -> list[str]:
    """WebDataset shards of samples (jpg: 10 KB of random bytes, cls), written by the webdataset package."""
    import webdataset as wds

    paths = [os.path.join(folder, f"wds-{k}.tar") for k in range(shards)]
    rng = np.random.default_rng(0)
    for k, path in enumerate(paths):
        if not os.path.exists(path):
            with wds.TarWriter(path + ".tmp") as writer:
                for i in range(samples):
                    writer.write({"__key__": f"s{k:02d}{i:06d}", "jpg": rng.bytes(10_000), "cls": str(i % 10).encode()})
            os.replace(path + ".tmp", path)
    return paths


def webdataset_candidates(paths: list[str]) -> dict:
    def parafeed() -> int:
        return sum(1 for _ in pf.WebDataset(paths).as_numpy_iterator())

    out = {"parafeed WebDataset (as_numpy_iterator)": parafeed}
    try:
        import webdataset as wds

        def package() -> int:
            return sum(1 for _ in wds.WebDataset(paths, shardshuffle=False))

        out["webdataset package"] = package
    except ImportError:
        print("webdataset not installed: no baseline")
    return out


def make_array_record(path: str, count: int) -> str:
    """``count`` records of 1 KB random bytes, in groups of 64."""
    from array_record.python.array_record_module import ArrayRecordWriter

    if not os.path.exists(path):
        rng = np.random.default_rng(0)
        writer = ArrayRecordWriter(path + ".tmp", "group_size:64")
        for _ in range(count):
            writer.write(rng.bytes(1024))
        writer.close()
        os.replace(path + ".tmp", path)
    return path


def array_record_candidates(path: str) -> tuple[dict, dict]:
    """(in order, by position): the same records, counted."""
    from array_record.python.array_record_module import ArrayRecordReader

    count = ArrayRecordReader(path).num_records()
    order = np.random.default_rng(1).permutation(count)

    def parafeed() -> int:
        return sum(1 for _ in pf.ArrayRecordDataset(path).as_numpy_iterator())

    def read_all() -> int:
        reader = ArrayRecordReader(path)
        n = len(reader.read_all())
        reader.close()
        return n

    def parafeed_positions() -> int:  # a seeded global shuffle, split by record: every record read by its index
        ds = pf.ArrayRecordDataset(path).shuffle(count, seed=1).distribute(1, 0, policy="RECORD")
        return sum(1 for _ in ds.as_numpy_iterator())

    def reader_positions() -> int:
        reader = ArrayRecordReader(path, "readahead_buffer_size:0")
        n = sum(len(reader.read([int(i)])) for i in order)
        reader.close()
        return n

    in_order = {"ArrayRecordReader.read_all()": read_all, "parafeed ArrayRecordDataset": parafeed}
    positions = {
        "ArrayRecordReader.read([i])": reader_positions,
        "parafeed (shuffle, split by record)": parafeed_positions,
    }
    try:
        import grain

        source = grain.sources.ArrayRecordDataSource([path])

        def grain_positions() -> int:
            return sum(1 for i in order if source[int(i)] is not None)

        positions["grain ArrayRecordDataSource"] = grain_positions
    except (ImportError, AttributeError):
        print("grain not installed: no ArrayRecordDataSource baseline")
    return in_order, positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", default="bench-data")
    parser.add_argument("--only", help="run only these sections, comma-separated (e.g. parquet,huggingface)")
    args = parser.parse_args()
    os.makedirs(args.data, exist_ok=True)
    sections = [
        tfrecord_section, parquet_section, huggingface_section, webdataset_section, array_record_section,
        parse_section,
    ]  # fmt: skip
    for section in sections:
        if not args.only or section.__name__.removesuffix("_section").replace("_", "-") in args.only.split(","):
            section(args)


def tfrecord_section(args: argparse.Namespace) -> None:

    small = make_file(os.path.join(args.data, "records-1k.tfrecord"), 1024, 200_000)
    rates = harness.run(tfrecord_candidates(small, unit_bytes=False), runs=args.runs)
    harness.report("tfrecord-1k", "TFRecord read, 1 KB records, CRC checked (200,000 records)", rates, "records/s")

    big = make_file(os.path.join(args.data, "records-100k.tfrecord"), 100 * 1024, 4_000)
    rates = harness.run(tfrecord_candidates(big, unit_bytes=True), runs=args.runs)
    rates = {k: [v / 1e6 for v in vs] for k, vs in rates.items()}
    harness.report("tfrecord-100k", "TFRecord read, 100 KB records, CRC checked (400 MB)", rates, "MB/s")


def parquet_section(args: argparse.Namespace) -> None:
    table = make_parquet(os.path.join(args.data, "rows-200k.parquet"), 200_000)
    rates = harness.run(parquet_candidates(table), runs=args.runs)
    harness.report(
        "parquet", "Parquet rows as Python dicts (200,000 rows: int64, float32, int64, 40-byte string, 8 float32s)",
        rates, "rows/s", baseline="pyarrow iter_batches + to_pylist()",
    )  # fmt: skip


def huggingface_section(args: argparse.Namespace) -> None:
    table = make_parquet(os.path.join(args.data, "rows-200k.parquet"), 200_000)
    rates = harness.run(huggingface_candidates(table), runs=args.runs)
    harness.report(
        "huggingface", "Hugging Face datasets rows as dicts (the Parquet rows above, in memory; a stream of 4 shards)",
        rates, "rows/s", baseline="datasets: for row in Dataset",
    )  # fmt: skip


def webdataset_section(args: argparse.Namespace) -> None:
    shards = make_shards(args.data, 4, 5_000)
    rates = harness.run(webdataset_candidates(shards), runs=args.runs)
    harness.report(
        "webdataset", "WebDataset samples (4 shards of 5,000 samples: 10 KB jpg + cls)", rates, "samples/s",
        baseline="webdataset package",
    )  # fmt: skip


def array_record_section(args: argparse.Namespace) -> None:
    in_order, positions = array_record_candidates(
        make_array_record(os.path.join(args.data, "1k.array_record"), 100_000)
    )
    rates = harness.run(in_order, runs=args.runs)
    harness.report(
        "array-record", "ArrayRecord in order (100,000 records of 1 KB)", rates, "records/s",
        baseline="ArrayRecordReader.read_all()",
    )  # fmt: skip
    rates = harness.run(positions, runs=args.runs)
    harness.report(
        "array-record-random", "ArrayRecord by position, a random order (100,000 records of 1 KB)", rates,
        "records/s", baseline="grain ArrayRecordDataSource" if "grain ArrayRecordDataSource" in rates else
        "ArrayRecordReader.read([i])",
    )  # fmt: skip


def parse_section(args: argparse.Namespace) -> None:
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

"""Saved datasets, ported from tf.data's kernel tests: save / load (io_test.py) and snapshot."""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

from tests.differential.kernel.harness import kcase


def data(L):
    """tf.data or pf: where the readers live."""
    return L.tf.data if L.name == "tf" else L.pf


def io(L):
    return L.tf.io if L.name == "tf" else L.pf.io


def train(L):
    return L.tf.train if L.name == "tf" else L.pf.train


def write(tmp, name, content: bytes, compression=None) -> str:
    path = os.path.join(tmp, name)
    if compression == "GZIP":
        content = gzip.compress(content)
    elif compression == "ZLIB":
        content = zlib.compress(content)
    with open(path, "wb") as f:
        f.write(content)
    return path


# ---------------------------------------------------------------------------------------------- io_test.py


@kcase("io_test.py::testBasic", params={"none": None, "gzip": "GZIP"})
def save_load_basic(L, tmp, compression):
    ds = L.Dataset.range(42)
    ds.save(tmp + "/s", compression=compression)
    return L.Dataset.load(tmp + "/s", ds.element_spec, compression=compression)


@kcase("io_test.py::testCardinality")
def save_load_cardinality(L, tmp):
    L.Dataset.range(42).filter(lambda x: x % 2 == 0).save(tmp + "/s")
    return L.Dataset.load(tmp + "/s")


@kcase("io_test.py::testCustomShardFunction")
def save_custom_shard_func(L, tmp):
    L.Dataset.range(42).save(tmp + "/s", shard_func=lambda x: x // 21)
    return L.Dataset.load(tmp + "/s")


@kcase("io_test.py::testCustomReaderFunction")
def save_custom_reader_func(L, tmp):
    L.Dataset.range(42).save(tmp + "/s", shard_func=lambda x: x % 7)
    return L.Dataset.load(tmp + "/s", reader_func=lambda x: x.flat_map(lambda y: y))


@kcase("io_test.py::testCustomReaderFunction (shards shuffled by a seed)", ordered=False)
def save_reader_func_shuffles_shards(L, tmp):
    L.Dataset.range(42).save(tmp + "/s", shard_func=lambda x: x % 7)
    return L.Dataset.load(tmp + "/s", reader_func=lambda x: x.shuffle(7, seed=1).flat_map(lambda y: y))


@kcase("io_test.py::testElementSpecOptional")
def save_element_spec_optional(L, tmp):
    ds = L.Dataset.zip(
        (
            L.Dataset.range(42),
            L.Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]}),
            L.Dataset.from_tensor_slices(([1, 2], [3, 4])),
        )
    )
    ds.save(tmp + "/s")
    # (tf.data's load gives the dict keys in an arbitrary order: compare the values)
    return L.Dataset.load(tmp + "/s").map(lambda r, d, t: (r, d["a"], d["b"], t))


@kcase("io_test.py::testRepeatAndPrefetch", take=5)
def save_load_repeat_prefetch(L, tmp):
    L.Dataset.from_tensor_slices(np.random.default_rng(0).random((16, 32))).save(tmp + "/s")
    return L.Dataset.load(tmp + "/s").batch(16).repeat().prefetch(1)


@kcase("io_test.py::testWaitIsUnsupported")
def load_wait_unsupported(L, tmp):
    ds = L.Dataset.range(42)
    ds.save(tmp + "/s")
    return L.Dataset.load(tmp + "/s", element_spec=ds.element_spec, wait=True)


@kcase("io_test.py::LoadCheckpointTest")
def load_without_spec(L, tmp):
    L.Dataset.range(42).save(tmp + "/s")
    return L.Dataset.load(tmp + "/s")


@kcase("io_test.py::SaveCheckpointTest::testSaveCheckpointingAPI", differs="save-checkpoint-args")
def save_checkpoint_args(L, tmp):
    L.Dataset.range(40).save(tmp + "/s", checkpoint_args={"directory": tmp + "/ckpt", "max_to_keep": 50})
    return L.Dataset.load(tmp + "/s")


@kcase("io_test.py (a path with no saved dataset)")
def load_missing(L, tmp):
    return L.Dataset.load(tmp + "/nothing")


@kcase("io_test.py (strings and nested dicts)")
def save_strings_and_dicts(L, tmp):
    ds = L.Dataset.from_tensor_slices({"s": [b"a", b"bc", b""], "n": {"x": [[1.5, 2.0], [3.0, 4.0], [5.0, 6.0]]}})
    ds.save(tmp + "/s", compression="GZIP")
    # (tf.data's load gives the dict keys in an arbitrary order: compare the values)
    return L.Dataset.load(tmp + "/s", compression="GZIP").map(lambda d: (d["s"], d["n"]["x"]))


@kcase("io_test.py (an empty dataset)")
def save_empty(L, tmp):
    L.Dataset.range(0).save(tmp + "/s")
    return L.Dataset.load(tmp + "/s")


@kcase("io_test.py (shard_func returning int32)")
def save_shard_func_int32(L, tmp):
    L.Dataset.range(5).save(tmp + "/s", shard_func=lambda x: L.cast(x, L.int32))
    return L.Dataset.load(tmp + "/s")


@kcase("io_test.py (GZIP data loaded without compression)")
def load_wrong_compression(L, tmp):
    L.Dataset.range(5).save(tmp + "/s", compression="GZIP")
    return L.Dataset.load(tmp + "/s")


@kcase("io_test.py (reader_func that takes a prefix)")
def load_reader_func_take(L, tmp):
    L.Dataset.range(5).save(tmp + "/s")
    return L.Dataset.load(tmp + "/s", reader_func=lambda x: x.flat_map(lambda y: y).take(2))


@kcase("io_test.py (saved twice: the latest save is loaded)")
def save_twice(L, tmp):
    L.Dataset.range(5).save(tmp + "/s")
    L.Dataset.range(3).map(lambda x: x * 10).save(tmp + "/s")
    return L.Dataset.load(tmp + "/s")


# ---------------------------------------------------------------------------------------------- snapshot_test.py


@kcase("snapshot_test.py::testCreateSnapshotDataset")
def snapshot_create(L, tmp):
    return L.Dataset.from_tensors([1, 2, 3]).snapshot(path=tmp + "/snap")


def tfrecord_files(L, tmp, files=3, records=5):
    names = []
    for f in range(files):
        path = os.path.join(tmp, f"r{f}.tfrecord")
        with io(L).TFRecordWriter(path) as w:
            for r in range(records):
                w.write(b"Record %d of file %d" % (r, f))
        names.append(path)
    return names


@kcase("snapshot_test.py::testReadSnapshotDatasetDefault")
def snapshot_read_after_files_removed(L, tmp):
    names = tfrecord_files(L, tmp)
    list(data(L).TFRecordDataset(names).snapshot(path=tmp + "/snap"))
    for n in names:
        os.remove(n)
    return data(L).TFRecordDataset(names).snapshot(path=tmp + "/snap")


@kcase("snapshot_test.py::testReadSnapshotDatasetCustomShardFn")
def snapshot_custom_shard_fn(L, tmp):
    names = tfrecord_files(L, tmp)
    list(data(L).TFRecordDataset(names).snapshot(path=tmp + "/snap", shard_func=lambda _: np.int64(0)))
    for n in names:
        os.remove(n)
    return data(L).TFRecordDataset(names).snapshot(path=tmp + "/snap", shard_func=lambda _: 0)


@kcase("snapshot_test.py::testReadSnapshotDatasetCustomReaderFn", ordered=False)
def snapshot_custom_reader_fn(L, tmp):
    names = tfrecord_files(L, tmp)

    def reader(ds):
        return ds.interleave(lambda x: x, cycle_length=4, num_parallel_calls=4)

    list(data(L).TFRecordDataset(names).snapshot(path=tmp + "/snap", reader_func=reader))
    for n in names:
        os.remove(n)
    return data(L).TFRecordDataset(names).snapshot(tmp + "/snap", reader_func=reader)


@kcase("snapshot_test.py::testSnapshotDatasetInvalidShardFn")
def snapshot_invalid_shard_fn(L, tmp):
    return L.Dataset.range(1000).snapshot(path=tmp + "/snap", shard_func=lambda _: "invalid_fn")


@kcase("snapshot_test.py::testSnapshotDatasetInvalidReaderFn")
def snapshot_invalid_reader_fn(L, tmp):
    return L.Dataset.range(1000).snapshot(path=tmp + "/snap", reader_func=lambda x: x + 1)


@kcase("snapshot_test.py::testRoundtripEmptySnapshot")
def snapshot_empty(L, tmp):
    ds = L.Dataset.range(0).snapshot(path=tmp + "/snap")
    list(ds)
    return L.Dataset.range(0).snapshot(path=tmp + "/snap")


@kcase("snapshot_test.py::testWriteSnapshotDatasetMultipleFingerprints")
def snapshot_multiple_fingerprints(L, tmp):
    list(L.Dataset.range(100).snapshot(path=tmp + "/snap"))
    return L.Dataset.range(200).snapshot(path=tmp + "/snap")


@kcase("snapshot_test.py::testWriteSnapshotDatasetSameFingerprintIncompleteRunRestart")
def snapshot_incomplete_run_not_reused(L, tmp):
    it = iter(L.Dataset.range(100).snapshot(path=tmp + "/snap"))
    for _ in range(50):
        next(it)
    return L.Dataset.range(100).snapshot(path=tmp + "/snap")


@kcase("snapshot_test.py::testWriteSnapshotCustomShardFunction")
def snapshot_enumerate_shard_fn(L, tmp):
    ds = L.Dataset.range(100).enumerate().snapshot(path=tmp + "/snap", shard_func=lambda i, _: i % 2)
    return ds.map(lambda _, elem: elem)


@kcase("snapshot_test.py::testWriteSnapshotDatasetWithTuples")
def snapshot_tuples(L, tmp):
    ds = L.Dataset.zip(tuple(L.Dataset.range(k * 100, (k + 1) * 100) for k in range(4)))
    return ds.snapshot(path=tmp + "/snap")


@kcase("snapshot_test.py::testWriteSnapshotShuffleSameFingerprint", ordered=False)
def snapshot_shuffle_same_fingerprint(L, tmp):
    list(L.Dataset.range(100).shuffle(100).snapshot(path=tmp + "/snap"))
    return L.Dataset.range(100).shuffle(100).snapshot(path=tmp + "/snap")


@kcase("snapshot_test.py::testReadUsingFlatMap")
def snapshot_read_using_flat_map(L, tmp):
    ds = L.Dataset.range(100).snapshot(path=tmp + "/snap")
    list(ds)
    return L.Dataset.from_tensors(ds).flat_map(lambda x: x)


@kcase("snapshot_test.py::testRepeatAndPrefetch", take=12)
def snapshot_repeat_prefetch(L, tmp):
    ds = L.Dataset.from_tensor_slices(np.arange(32, dtype=np.float32).reshape(16, 2)).snapshot(path=tmp + "/snap")
    return ds.batch(16).repeat().prefetch(1)


@kcase("snapshot_test.py (compression GZIP, read twice)")
def snapshot_gzip(L, tmp):
    list(L.Dataset.range(10).map(lambda x: (x, L.cast(x, L.float32))).snapshot(tmp + "/snap", compression="GZIP"))
    return L.Dataset.range(10).map(lambda x: (x, L.cast(x, L.float32))).snapshot(tmp + "/snap", compression="GZIP")

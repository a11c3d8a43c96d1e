"""TFRecord files: TensorFlow reads what parafeed writes and parafeed reads what TensorFlow writes, every compression."""

import os

import numpy as np
import pytest

import parafeed as pf
from parafeed.io import TFRecordWriter

tf = pytest.importorskip("tensorflow", reason="interop tests need TensorFlow (make test installs it)")

RECORDS = [b"", b"\x00\xff" * 3, os.urandom(4096), b"z" * 300_000] + [os.urandom(i) for i in range(0, 200, 7)]
COMPRESSIONS = ["", "GZIP", "ZLIB"]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_parafeed_reads_tensorflow_files(tmp_path, compression):
    path = str(tmp_path / "tf.tfrecord")
    with tf.io.TFRecordWriter(path, options=tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in RECORDS:
            w.write(r)
    assert list(pf.TFRecordDataset(path, compression_type=compression)) == RECORDS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tensorflow_reads_parafeed_files(tmp_path, compression):
    path = str(tmp_path / "pf.tfrecord")
    with TFRecordWriter(path, compression) as w:
        for r in RECORDS:
            w.write(r)
    assert list(tf.data.TFRecordDataset(path, compression_type=compression).as_numpy_iterator()) == RECORDS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_an_empty_file_holds_no_records_as_in_tensorflow(tmp_path, compression):
    """A zero-byte file is no records for every compression, also in text lines. (A truncated compressed stream is
    a DataLossError in parafeed; TensorFlow returns the records decoded before the cut, or none, without an error.)"""
    empty = str(tmp_path / "empty")
    open(empty, "wb").close()
    expected = list(tf.data.TFRecordDataset(empty, compression_type=compression).as_numpy_iterator())
    assert list(pf.TFRecordDataset(empty, compression_type=compression)) == expected == []
    expected = list(tf.data.TextLineDataset(empty, compression_type=compression).as_numpy_iterator())
    assert list(pf.TextLineDataset(empty, compression_type=compression)) == expected == []


def test_files_are_byte_identical_without_compression(tmp_path):
    with tf.io.TFRecordWriter(str(tmp_path / "tf")) as w:
        for r in RECORDS:
            w.write(r)
    with TFRecordWriter(str(tmp_path / "pf")) as w:
        for r in RECORDS:
            w.write(r)
    assert (tmp_path / "tf").read_bytes() == (tmp_path / "pf").read_bytes()


def test_multi_file_parallel_reads_match_tf_data(tmp_path):
    paths = []
    for i in range(4):
        path = str(tmp_path / f"part-{i}")
        with TFRecordWriter(path) as w:
            for j in range(i * 3 + 1):
                w.write(b"%d-%d" % (i, j))
        paths.append(path)
    for reads in [None, 1, 2, 3]:
        expected = list(tf.data.TFRecordDataset(paths, num_parallel_reads=reads).as_numpy_iterator())
        assert list(pf.TFRecordDataset(paths, num_parallel_reads=reads)) == expected, reads


def test_tensorflow_reads_converted_image_shards(tmp_path):
    from parafeed.io.manifest import manifest_files
    from parafeed.tools.convert import convert
    from tests.tools.test_convert import make_images

    make_images(tmp_path / "src", [3, 4])
    m = convert(str(tmp_path / "src"), str(tmp_path / "out"), 2, workers=1).manifest
    m["_dir"] = str(tmp_path / "out")
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
    ds = tf.data.TFRecordDataset(manifest_files(m)).map(lambda r: tf.io.parse_single_example(r, spec))
    decoded = [(tf.io.decode_image(e["image"]).numpy(), int(e["label"])) for e in ds]
    pf_spec = {"image": pf.io.FixedLenFeature([], "string"), "label": pf.io.FixedLenFeature([], "int64")}
    ours = [(pf.image.decode_image(e["image"]), int(e["label"])) for e in pf.TFRecordDataset(manifest_files(m)).map(
        lambda r: pf.io.parse_single_example(r, pf_spec))]  # fmt: skip
    assert [label for _, label in decoded] == [label for _, label in ours]
    assert all(np.array_equal(a, b) for (a, _), (b, _) in zip(decoded, ours))

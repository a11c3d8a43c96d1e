"""read_file, decode_csv, make_csv_dataset, FixedLengthRecordDataset and pf.experimental.TFRecordWriter."""

from __future__ import annotations

import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import ArgumentTypeError, InvalidArgumentError, NotFoundError, ParseError


def test_read_file(tmp_path):
    (tmp_path / "a").write_bytes(b"\x00abc")
    assert pf.io.read_file(str(tmp_path / "a")) == b"\x00abc"
    with pytest.raises(NotFoundError):
        pf.io.read_file(str(tmp_path / "missing"))


def test_decode_csv_types_shapes_and_errors():
    cols = pf.io.decode_csv([[b"1,2.5,a"], [b'3,,"b,c"']], [[0], [0.0], [""]])
    assert [c.dtype for c in cols] == [np.int32, np.float32, object] and cols[0].shape == (2, 1)
    assert cols[2][1, 0] == b"b,c" and cols[1][1, 0] == 0.0
    assert pf.io.decode_csv(b"NA,7", [[5], [np.int64(0)]], na_value="NA") == [5, 7]
    assert pf.io.decode_csv([b"1,2,3,4"], [[0], [0]], select_cols=[1, 3])[1].tolist() == [4]
    for bad, defaults in [([b"1"], [[0], [0]]), ([b"x"], [[0]]), ([b'a"b'], [[""]]), ([b","], [[0], []])]:
        with pytest.raises(ParseError):
            pf.io.decode_csv(bad, defaults)
    with pytest.raises(InvalidArgumentError):
        pf.io.decode_csv([b"1"], [[0]], field_delim="ab")


def test_make_csv_dataset_infers_types_and_pops_the_label(tmp_path):
    (tmp_path / "a.csv").write_text("i,f,s,y\n1,1.5,x,0\n2,,y,1\n3,2.5,z,1\n")
    ds = pf.experimental.make_csv_dataset(str(tmp_path / "a.csv"), 2, label_name="y", num_epochs=1, shuffle=False)
    features, labels = next(iter(ds))
    assert list(features) == ["i", "f", "s"]
    assert features["i"].dtype == np.int32 and features["f"].dtype == np.float32 and labels.tolist() == [0, 1]
    assert [len(b[1]) for b in ds] == [2, 1]


def test_fixed_length_records_resume(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"HH" + bytes(range(12)) + b"F")
    ds = pf.FixedLengthRecordDataset(str(tmp_path / "a.bin"), 3, header_bytes=2, footer_bytes=1)
    assert [r for r in ds] == [bytes([0, 1, 2]), bytes([3, 4, 5]), bytes([6, 7, 8]), bytes([9, 10, 11])]
    assert check_restores(ds) > 4
    with pytest.raises(InvalidArgumentError, match="multiple"):
        list(pf.FixedLengthRecordDataset(str(tmp_path / "a.bin"), 5, header_bytes=2, footer_bytes=1))


def test_experimental_tfrecord_writer(tmp_path):
    path = str(tmp_path / "w.tfrecord")
    pf.experimental.TFRecordWriter(path, "GZIP").write(pf.Dataset.from_tensor_slices([b"a", b"bc"]))
    assert list(pf.TFRecordDataset(path, "GZIP")) == [b"a", b"bc"]
    with pytest.raises(ArgumentTypeError):
        pf.experimental.TFRecordWriter(path).write(pf.Dataset.range(2))
    assert pf.experimental.CsvDataset is pf.CsvDataset

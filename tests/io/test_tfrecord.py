import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import DataLossError, InvalidArgumentError
from parafeed.io import tfrecord, tfrecord_framing
from parafeed.io.tfrecord import TFRecordWriter, tf_record_iterator

RECORDS = [b"", b"a", os.urandom(1000), b"x" * 70_000, os.urandom(5)]


def write(path, records=RECORDS, compression=None):
    with TFRecordWriter(str(path), compression) as w:
        for r in records:
            w.write(r)
    return str(path)


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_roundtrip(tmp_path, compression):
    path = write(tmp_path / "f.tfrecord", compression=compression)
    assert list(tf_record_iterator(path, compression)) == RECORDS
    assert list(pf.TFRecordDataset(path, compression_type=compression, buffer_size=7)) == RECORDS


def test_multiple_files_in_order_and_interleaved(tmp_path):
    a = write(tmp_path / "a", [b"a0", b"a1", b"a2"])
    b = write(tmp_path / "b", [b"b0"])
    assert list(pf.TFRecordDataset([a, b])) == [b"a0", b"a1", b"a2", b"b0"]
    assert list(pf.TFRecordDataset([a, b], num_parallel_reads=2)) == [b"a0", b"b0", b"a1", b"a2"]
    files = pf.Dataset.from_tensor_slices([a, b])
    assert list(pf.TFRecordDataset(files)) == [b"a0", b"a1", b"a2", b"b0"]
    assert pf.TFRecordDataset(a).element_spec == pf.TensorSpec((), "string")


def test_missing_file_and_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot open .*missing"):
        list(pf.TFRecordDataset(str(tmp_path / "missing")))
    with pytest.raises(InvalidArgumentError, match="compression_type"):
        pf.TFRecordDataset("x", compression_type="LZ4")


def flip(path, offset, bit=0):
    data = bytearray(open(path, "rb").read())
    data[offset] ^= 1 << bit
    open(path, "wb").write(bytes(data))


def test_bad_data_crc_names_file_and_offset_and_skips_only_that_record(tmp_path):
    path = write(tmp_path / "f", [b"first", b"second", b"third"])
    flip(path, 21 + 12 + 2)  # inside "second" (record 0 takes 16 + 5 bytes)
    it = iter(pf.TFRecordDataset(path))
    assert next(it) == b"first"
    with pytest.raises(DataLossError, match=r"f: corrupted record at byte offset 21: the data CRC does not match"):
        next(it)
    assert next(it) == b"third"
    ds = pf.TFRecordDataset(path).ignore_errors()
    assert list(ds) == [b"first", b"third"]
    assert ds.ignored.count == 1 and ds.ignored.by_type["DataLossError"] == 1


def test_bad_length_resynchronises_on_the_next_record(tmp_path):
    path = write(tmp_path / "f", [b"first", b"second", b"third"])
    flip(path, 21 + 1)  # the length of "second"
    ds = pf.TFRecordDataset(path).ignore_errors()
    assert list(ds) == [b"first", b"third"]
    assert "length CRC does not match; skipped" in ds.ignored.messages[0]


def test_truncated_file(tmp_path):
    path = write(tmp_path / "f", [b"first", b"second"])
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-3])
    it = iter(pf.TFRecordDataset(path))
    assert next(it) == b"first"
    with pytest.raises(DataLossError, match="truncated record at byte offset 21"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_truncated_gzip_stream(tmp_path):
    path = write(tmp_path / "f", [os.urandom(3000) for _ in range(10)], "GZIP")
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    with pytest.raises(DataLossError, match="compressed stream ends early"):
        list(pf.TFRecordDataset(path, "GZIP"))
    open(path, "wb").write(data[:20] + b"\xff" * 50 + data[70:])
    with pytest.raises(DataLossError, match="corrupt compressed data"):
        list(pf.TFRecordDataset(path, "GZIP"))


def test_python_and_native_framing_agree(tmp_path):
    if tfrecord._native is None:
        pytest.fail("the C extension parafeed.io._native was not built")
    path = write(tmp_path / "f")
    data = open(path, "rb").read()
    crc = tfrecord_framing.crc32c_function()
    for cut in range(0, len(data), 997):
        assert tfrecord._frame_python(data[:cut], 0, crc, 10**9) == tfrecord._native.frame_records(
            data[:cut], 0, crc, 10**9
        )
    bad = bytearray(data)
    bad[30] ^= 4
    assert tfrecord._frame_python(bytes(bad), 0, crc, 99) == tfrecord._native.frame_records(bytes(bad), 0, crc, 99)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.binary(max_size=300), min_size=1, max_size=6), data=st.data())
def test_any_bit_flip_is_detected_and_no_record_is_altered(tmp_path, records, data):
    path = write(tmp_path / "h.tfrecord", records)
    size = os.path.getsize(path)
    flip(path, data.draw(st.integers(0, size - 1)), data.draw(st.integers(0, 7)))
    out, errors = [], 0
    it = iter(pf.TFRecordDataset(path))
    while True:
        try:
            out.append(next(it))
        except StopIteration:
            break
        except DataLossError:
            errors += 1
    assert errors >= 1
    assert all(r in records for r in out)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.binary(max_size=200), min_size=1, max_size=5), data=st.data())
def test_any_truncation_returns_the_complete_prefix_then_fails(tmp_path, records, data):
    path = write(tmp_path / "t.tfrecord", records)
    full = open(path, "rb").read()
    cut = data.draw(st.integers(0, len(full)))
    open(path, "wb").write(full[:cut])
    boundaries = [0]
    for r in records:
        boundaries.append(boundaries[-1] + 16 + len(r))
    complete = sum(1 for b in boundaries[1:] if b <= cut)
    it = iter(pf.TFRecordDataset(path))
    got = [next(it) for _ in range(complete)]
    assert got == records[:complete]
    if cut in boundaries:
        assert list(it) == []
    else:
        with pytest.raises(DataLossError, match="truncated"):
            next(it)


def test_index_gives_random_access_and_is_cached_beside_the_file(tmp_path):
    from parafeed.io.index import INDEX_SUFFIX, TFRecordIndex

    records = [os.urandom(i * 13 % 500) for i in range(200)]
    path = write(tmp_path / "f.tfrecord", records)
    index = TFRecordIndex(path)
    assert len(index) == 200
    assert [index.read(i) for i in (0, 57, 199)] == [records[0], records[57], records[199]]
    assert os.path.exists(path + INDEX_SUFFIX)
    write(tmp_path / "f.tfrecord", records[:10])  # the file changes: the index is rebuilt
    assert len(TFRecordIndex(path)) == 10


@pytest.mark.parametrize("num_shards", [1, 2, 3, 7, 250])
def test_sharding_by_seeking_equals_reading_everything(tmp_path, num_shards):
    sizes = [i * 37 % 3000 for i in range(300)]
    paths = [write(tmp_path / f"f{k}", [os.urandom(n) for n in sizes[k::3]]) for k in range(3)]
    everything = list(pf.TFRecordDataset(paths))
    for index in range(num_shards):
        shard = list(pf.TFRecordDataset(paths).shard(num_shards, index))
        assert shard == everything[index::num_shards]
        skipped = list(pf.TFRecordDataset(paths).map(len).skip(101))
        assert skipped == [len(r) for r in everything[101:]]


def test_skip_through_damage_still_reports_it(tmp_path):
    path = write(tmp_path / "f", [b"a" * 10, b"b" * 10, b"c" * 10, b"d" * 10])
    flip(path, 26 + 16 + 3)  # inside the data of the second record ("b")
    ds = pf.TFRecordDataset(path).shard(2, 1).ignore_errors()
    assert list(ds) == [b"d" * 10] and ds.ignored.count == 1

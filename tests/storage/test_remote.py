"""Files named by URL: read from a real S3-compatible endpoint (moto's server) and a plain HTTP server on 127.0.0.1,
through a proxy that injects faults; every record read exactly once, in order."""

from __future__ import annotations

import logging
import os
import time

import pytest

import parafeed as pf
from parafeed.errors import NotFoundError, UnavailableError
from parafeed.io.remote import Retrier

from .data import ONE_TRY, random_records, small_blocks, upload
from .servers import FAULTS, FaultProxy, FileServer, s3_options


def test_tfrecords_from_s3_with_list_files_and_interleave(s3, tmp_path):
    files = {f"train/part-{i}.tfrecord": random_records(40, seed=i) for i in range(3)}
    files["other/x.tfrecord"] = random_records(3)
    prefix, _ = upload(s3, tmp_path, files)
    opts = s3_options(s3.url)
    names = pf.Dataset.list_files(f"{prefix}/train/part-*.tfrecord", shuffle=False, storage_options=opts)
    assert [n.decode() for n in names] == [f"{prefix}/train/part-{i}.tfrecord" for i in range(3)]
    serial = pf.TFRecordDataset(names, storage_options=opts)
    assert list(small_blocks(serial)) == [r for i in range(3) for r in files[f"train/part-{i}.tfrecord"]]
    interleaved = pf.TFRecordDataset(names, num_parallel_reads=3, storage_options=opts)
    expected = [r for group in zip(*(files[f"train/part-{i}.tfrecord"] for i in range(3))) for r in group]
    assert list(small_blocks(interleaved)) == expected
    assert interleaved.record_counts() == [40, 40, 40]  # indexed by reading each file once


@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_kind_is_survived_with_every_record_once(s3, tmp_path, fault, one_try):
    records = random_records(60, seed=7)
    prefix, _ = upload(s3, tmp_path, {"d.tfrecord": records})
    proxy = FaultProxy(s3.url, fault=fault, every=3, stall=1.5)
    retried = Retrier.total_faults
    try:
        ds = pf.TFRecordDataset(f"{prefix}/d.tfrecord", storage_options=s3_options(proxy.url, **ONE_TRY))
        it = iter(small_blocks(ds))
        got = list(it)
        assert got == records  # nothing lost, nothing repeated, in order (and every record's CRC checked)
        assert proxy.faults >= 3
        assert Retrier.total_faults - retried == proxy.faults  # each fault reached parafeed and was retried once
    finally:
        proxy.stop()


def test_a_cut_response_resumes_at_the_byte_after_it(s3, tmp_path, one_try):
    """A well-formed short answer keeps its bytes: the next request starts where it ended (no byte read twice)."""
    from parafeed.io.remote import Retrier, Settings

    data = os.urandom(300_000)
    prefix, fs = upload(s3, tmp_path, {})
    fs.pipe(f"{prefix[5:]}/blob", data)
    proxy = FaultProxy(s3.url, fault="short", every=1)
    try:
        import s3fs

        remote = s3fs.S3FileSystem(**s3_options(proxy.url, **ONE_TRY))
        retrier = Retrier(f"{prefix}/blob", "test", Settings(retries=30, retry_delay=0.0))
        assert retrier.read_range(remote, f"{prefix[5:]}/blob", 1000, 201_000) == data[1000:201_000]
        # each answer holds half of what was asked, and the next request asks for the rest from the byte after it
        left, requests = 200_000, 0
        while left:
            left, requests = left - (left + 1) // 2, requests + 1
        assert proxy.ranged_gets == proxy.faults == requests and retrier.faults == requests - 1
    finally:
        proxy.stop()


def test_after_the_retry_budget_the_error_names_url_offset_and_cause(s3, tmp_path, one_try):
    prefix, _ = upload(s3, tmp_path, {"d.tfrecord": random_records(30)})
    proxy = FaultProxy(s3.url, fault="503", every=1)
    try:
        ds = pf.TFRecordDataset(f"{prefix}/d.tfrecord", storage_options=s3_options(proxy.url, **ONE_TRY))
        options = pf.Options()
        options.remote.retries = 2
        options.remote.retry_delay = 0.01
        with pytest.raises(UnavailableError) as caught:
            list(ds.with_options(options))
        message = str(caught.value)
        assert f"{prefix}/d.tfrecord" in message and "byte offset 0" in message and "after 2 retries" in message
        assert "SlowDown" in message or "503" in message or "reduce your request rate" in message
        assert proxy.faults >= 3  # the first try and 2 retries (each may be tried more than once below parafeed)
    finally:
        proxy.stop()


def test_an_endpoint_that_goes_away_is_reported_in_bounded_time_with_each_retry_logged(s3, tmp_path, caplog):
    """No test setting for the layers below: the S3 filesystem parafeed builds tries each request once by itself, so
    parafeed's time budget (options.remote.retry_seconds) bounds the outage report."""
    files = {f"part-{i}.tfrecord": random_records(200, seed=i) for i in range(4)}  # about 2 MB each
    prefix, _ = upload(s3, tmp_path, files)
    proxy = FaultProxy(s3.url)
    names = [f"{prefix}/part-{i}.tfrecord" for i in range(4)]
    ds = pf.TFRecordDataset(names, num_parallel_reads=4, storage_options=s3_options(proxy.url))
    options = pf.Options()
    options.remote.block_size = 256 << 10
    options.remote.read_ahead = 512 << 10
    options.remote.retries = 1000  # (the time budget, not the count, ends it)
    options.remote.retry_seconds = 8
    it = iter(ds.with_options(options))
    read = sum(len(next(it)) for _ in range(300))
    assert read > 1 << 20
    proxy.go_away()
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="parafeed.io.remote"), pytest.raises(UnavailableError) as caught:
        for _ in it:
            pass
    elapsed = time.monotonic() - started
    message = str(caught.value)
    assert any(name in message for name in names) and "byte offset" in message and "retries in" in message, message
    assert elapsed < 8 + 20, elapsed  # the budget, plus one request's connect timeout and the other files' reads
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert retries and all(prefix in m and "byte offset" in m for m in retries), retries[:3]
    it.close()


def test_the_s3_filesystem_parafeed_builds_tries_once_unless_told_otherwise(s3):
    from parafeed.io import storage

    fs, _ = storage.filesystem("s3://b/x", s3_options(s3.url), "test")
    assert fs.retries == 1 and fs.config_kwargs["retries"]["total_max_attempts"] == 1
    theirs = s3_options(s3.url, config_kwargs={"retries": {"max_attempts": 7}})
    fs, _ = storage.filesystem("s3://b/x", theirs, "test")
    assert fs.config_kwargs["retries"]["max_attempts"] == 7 and fs.retries == 5  # (s3fs's default: theirs)


def test_missing_objects_and_patterns(s3, tmp_path):
    prefix, _ = upload(s3, tmp_path, {"a.tfrecord": random_records(2)})
    opts = s3_options(s3.url)
    with pytest.raises(NotFoundError, match="missing.tfrecord"):
        list(pf.TFRecordDataset(f"{prefix}/missing.tfrecord", storage_options=opts))
    with pytest.raises(pf.errors.InvalidArgumentError, match="no files matched"):
        pf.Dataset.list_files(f"{prefix}/nothing-*.tfrecord", storage_options=opts)


def test_resume_mid_file_seeks_with_ranged_reads(s3, tmp_path):
    records = random_records(50, seed=3)
    prefix, _ = upload(s3, tmp_path, {"d.tfrecord": records})
    ds = small_blocks(pf.TFRecordDataset(f"{prefix}/d.tfrecord", storage_options=s3_options(s3.url)), block=16 << 10)
    it = iter(ds)
    first = [next(it) for _ in range(23)]
    state = it.get_state()
    it.close()
    resumed = iter(ds)
    resumed.set_state(state)
    assert first + list(resumed) == records


def test_text_csv_and_fixed_length_over_http(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "lines.txt").write_bytes(b"a\nbb\r\nccc")
    (root / "table.csv").write_text("x,y\n1,2.5\n3,4.5\n")
    (root / "fixed.bin").write_bytes(bytes(range(12)))
    server = FileServer(str(root))
    try:
        assert list(pf.TextLineDataset(f"{server.url}/lines.txt")) == [b"a", b"bb", b"ccc"]
        rows = [tuple(map(float, r)) for r in pf.CsvDataset(f"{server.url}/table.csv", [0, 0.0], header=True)]
        assert rows == [(1, 2.5), (3, 4.5)]
        fixed = pf.FixedLengthRecordDataset(f"{server.url}/fixed.bin", record_bytes=4, header_bytes=2, footer_bytes=2)
        assert list(fixed) == [bytes(range(2, 6)), bytes(range(6, 10))]
    finally:
        server.stop()


def test_read_ahead_grows_while_the_reader_waits(s3, tmp_path, monkeypatch):
    """With 30 ms added to every request, the reader waits on reads and the read-ahead grows, up to its bound."""
    from parafeed.io import remote
    from parafeed.io.remote import RemoteFile, Retrier, Settings, describe
    from parafeed.io.storage import filesystem

    monkeypatch.setattr(remote, "_learned", {})  # (what earlier reads of s3:// learned)

    data = os.urandom(2 << 20)
    prefix, fs = upload(s3, tmp_path, {})
    fs.pipe(f"{prefix[5:]}/blob", data)
    proxy = FaultProxy(s3.url, delay=0.03)
    try:
        remote_fs, path = filesystem(f"{prefix}/blob", s3_options(proxy.url), "test")
        retrier = Retrier(f"{prefix}/blob", "test", Settings(block_size=64 << 10, read_ahead=512 << 10))
        f = RemoteFile(f"{prefix}/blob", remote_fs, path, retrier, describe(remote_fs, path, retrier))
        assert f.window == 2
        assert f.read() == data
        assert f.window == 8 and f.waited > 0  # 512 KiB / 64 KiB blocks
        again = RemoteFile(f"{prefix}/blob", remote_fs, path, retrier, describe(remote_fs, path, retrier))
        assert again.window == 8  # the next file starts where the last one got to
        again.close()
        f.seek(123_456)
        assert f.read(1000) == data[123_456:124_456]
        f.close()
    finally:
        proxy.stop()


def test_one_file_at_a_time_opens_the_next_two_files_ahead(s3, tmp_path):
    """Reading one file, the serial reader has the next two files' first requests in flight (and not the files after
    them), so a remote file's latency is not paid between files; the records are the same, in order."""
    files = {f"part-{i}.tfrecord": random_records(5, seed=i) for i in range(5)}
    prefix, _ = upload(s3, tmp_path, files)
    proxy = FaultProxy(s3.url)
    try:
        ds = pf.TFRecordDataset([f"{prefix}/{name}" for name in files], storage_options=s3_options(proxy.url))
        it = iter(ds)
        got = [next(it)]
        deadline = time.monotonic() + 30
        while proxy.ranged_gets < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        assert proxy.ranged_gets == 3  # part-0 (being read), part-1 and part-2 (one block each); part-3 not yet
        got += list(it)
        assert got == [r for records in files.values() for r in records]
    finally:
        proxy.stop()

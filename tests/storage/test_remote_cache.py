"""The local remote cache (options.remote.cache_dir): filled while reading, read again with no ranged requests,
bounded with least-recently-used eviction, never serving a partial or damaged copy, shared by processes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import parafeed as pf
from parafeed.errors import DataLossError

from .data import random_records, upload
from .servers import FaultProxy, s3_options


def _cached(ds: pf.Dataset, cache_dir, cache_bytes: int | None = None, block: int = 64 << 10,
            read_ahead: int | None = None) -> pf.Dataset:  # fmt: skip
    options = pf.Options()
    options.remote.cache_dir = str(cache_dir)
    options.remote.block_size = block
    if cache_bytes is not None:
        options.remote.cache_bytes = cache_bytes
    if read_ahead is not None:
        options.remote.read_ahead = read_ahead
    return ds.with_options(options)


def _listing(cache_dir) -> tuple[list[str], list[str]]:
    """(entries, parts) in the cache directory."""
    names = sorted(n for n in os.listdir(cache_dir) if not n.startswith("."))
    return [n for n in names if ".part-" not in n], [n for n in names if ".part-" in n]


@pytest.fixture
def proxy(s3):
    server = FaultProxy(s3.url)
    yield server
    server.stop()


def test_the_second_epoch_reads_the_cache_with_no_ranged_requests(s3, proxy, tmp_path, monkeypatch):
    files = {f"p-{i}.tfrecord": random_records(30, seed=i) for i in range(3)}
    prefix, fs = upload(s3, tmp_path, files)
    urls = [f"{prefix}/{name}" for name in files]
    expected = [r for name in files for r in files[name]]
    ds = _cached(
        pf.TFRecordDataset(urls, num_parallel_reads=2, storage_options=s3_options(proxy.url)), tmp_path / "cache"
    )
    ds = ds.interleave(lambda r: pf.Dataset.from_tensors(r), cycle_length=1)  # (any pipeline on top)
    serial = _cached(pf.TFRecordDataset(urls, storage_options=s3_options(proxy.url)), tmp_path / "cache")
    assert list(serial) == expected
    fetched = proxy.ranged_gets
    assert fetched >= 3
    entries, parts = _listing(tmp_path / "cache")
    assert len(entries) == 3 and parts == []
    assert sorted(os.path.getsize(tmp_path / "cache" / e) for e in entries) == sorted(fs.size(u[5:]) for u in urls)
    assert list(serial) == expected
    assert sorted(list(ds)) == sorted(expected)
    assert proxy.ranged_gets == fetched  # the second and third pass: no bytes asked for
    requests = proxy.requests
    assert list(serial) == expected and proxy.requests == requests  # within a minute, not even their sizes

    changed = random_records(5, seed=99)  # a new object at the same URL is never served from the old copy
    upload_one(fs, tmp_path, urls[0], changed)
    monkeypatch.setattr(pf.io.remote, "RECHECK", 0.0)  # (a minute later)
    assert list(serial)[:6] == changed + files["p-1.tfrecord"][:1]
    assert proxy.ranged_gets > fetched


def upload_one(fs, tmp_path, url: str, records: list[bytes]) -> None:
    local = tmp_path / "one.tfrecord"
    with pf.io.TFRecordWriter(str(local)) as w:
        for r in records:
            w.write(r)
    fs.put_file(str(local), url[5:])


def test_a_reader_that_stops_early_keeps_nothing(s3, tmp_path):
    records = random_records(60, seed=1)
    prefix, _ = upload(s3, tmp_path, {"d.tfrecord": records})
    # at most 2 blocks of 64 KiB read ahead: the reader stops early in the ~600 KB file however long it waits between
    # records (a busy machine lets an unbounded read-ahead grow and fetch the whole file, which is then kept)
    source = pf.TFRecordDataset(f"{prefix}/d.tfrecord", storage_options=s3_options(s3.url))
    ds = _cached(source, tmp_path / "cache", read_ahead=2 * (64 << 10))
    it = iter(ds)
    assert [next(it) for _ in range(3)] == records[:3]
    it.close()
    assert _listing(tmp_path / "cache") == ([], [])
    assert list(ds) == records  # read whole, it is kept
    assert len(_listing(tmp_path / "cache")[0]) == 1


def test_the_cache_keeps_its_bound_evicting_the_least_recently_used(s3, proxy, tmp_path):
    files = {name: random_records(20, seed=i) for i, name in enumerate(["a", "b", "c", "big"])}
    files["big"] = files["big"] * 4
    prefix, fs = upload(s3, tmp_path, files)
    a, b, c = (fs.size(f"{prefix[5:]}/{n}") for n in "abc")
    bound = max(a + b, a + c)  # two of them fit, not three

    def read(name: str) -> list[bytes]:
        ds = pf.TFRecordDataset(f"{prefix}/{name}", storage_options=s3_options(proxy.url))
        return list(_cached(ds, tmp_path / "cache", cache_bytes=bound))

    def cached() -> set[str]:
        entries, parts = _listing(tmp_path / "cache")
        assert parts == []
        assert sum(os.path.getsize(tmp_path / "cache" / e) for e in entries) <= bound
        return {e.rsplit("-", 1)[1] for e in entries}

    for name in ["a", "b", "a", "c"]:  # a is used again after b: b is the least recently used when c comes
        assert read(name) == files[name]
    assert cached() == {"a", "c"}
    before = proxy.ranged_gets
    assert read("a") == files["a"] and proxy.ranged_gets == before  # still cached
    assert read("big") == files["big"]  # bigger than the whole cache: read without it
    assert cached() == {"a", "c"}


def test_a_damaged_copy_is_never_used(s3, proxy, tmp_path):
    records = random_records(40, seed=2)
    prefix, _ = upload(s3, tmp_path, {"d.tfrecord": records})
    ds = _cached(pf.TFRecordDataset(f"{prefix}/d.tfrecord", storage_options=s3_options(proxy.url)), tmp_path / "cache")
    assert list(ds) == records
    (entry,), _ = _listing(tmp_path / "cache")
    path = tmp_path / "cache" / entry

    with open(path, "r+b") as f:  # cut short: its size gives it away, and it is read again from the store
        f.truncate(os.path.getsize(path) - 100)
    before = proxy.ranged_gets
    assert list(ds) == records
    assert proxy.ranged_gets > before and os.path.getsize(path) == sum(16 + len(r) for r in records)

    with open(path, "r+b") as f:  # a flipped byte of the same size: the record's CRC finds it, the copy goes
        f.seek(5000)
        byte = f.read(1)
        f.seek(5000)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(DataLossError, match=r"corrupted record.*remote cache's copy .* now removed"):
        list(ds)
    assert not path.exists()
    assert list(ds) == records


_READER = textwrap.dedent(
    """
    import hashlib, json, sys
    import parafeed as pf
    storage_options, cache_dir, *urls = sys.argv[1:]
    options = pf.Options()
    options.remote.cache_dir = cache_dir
    options.remote.block_size = 64 << 10
    ds = pf.TFRecordDataset(urls, storage_options=json.loads(storage_options))
    digest = hashlib.sha256()
    for record in ds.with_options(options):
        digest.update(record)
    print(digest.hexdigest())
    """
)


def _reader(endpoint: str, cache_dir, urls: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _READER, json.dumps(s3_options(endpoint)), str(cache_dir), *urls],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_processes_share_one_cache_and_a_killed_one_leaves_no_entry(s3, tmp_path):
    files = {f"p-{i}.tfrecord": random_records(40, seed=10 + i) for i in range(2)}
    prefix, _ = upload(s3, tmp_path, files)
    urls = [f"{prefix}/{name}" for name in files]
    expected = hashlib.sha256(b"".join(r for name in files for r in files[name])).hexdigest()

    slow = FaultProxy(s3.url, delay=0.2)  # a reader killed mid-file leaves a part, never an entry
    try:
        victim = _reader(slow.url, tmp_path / "cache", urls)
        deadline = time.monotonic() + 60
        while not ((tmp_path / "cache").exists() and _listing(tmp_path / "cache")[1]):
            assert time.monotonic() < deadline and victim.poll() is None
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
    finally:
        slow.stop()
    entries, parts = _listing(tmp_path / "cache")
    assert entries == [] and 1 <= len(parts) <= 2  # (a part per file begun: the next file may be read ahead)

    readers = [_reader(s3.url, tmp_path / "cache", urls) for _ in range(3)]  # at once, into the same cache
    for reader in readers:
        out, _ = reader.communicate(timeout=120)
        assert reader.returncode == 0 and out.strip() == expected
    entries, parts = _listing(tmp_path / "cache")
    assert len(entries) == 2 and parts == []  # the dead reader's part removed when room was made
    assert _reader(s3.url, tmp_path / "cache", urls).communicate(timeout=120)[0].strip() == expected


def test_a_part_finished_while_room_is_made_for_another_is_not_an_error(tmp_path, monkeypatch):
    """Parts become entries outside the cache's lock: one renamed between the listing and its stat is skipped, not
    taken for a broken disk (which would read the new file without the cache)."""
    import contextlib

    from parafeed.io import remote_cache

    cache = remote_cache.RemoteCache(tmp_path, 1 << 20)
    finished = tmp_path / f"other{remote_cache._PART}{os.getpid()}-1"
    finished.write_bytes(b"0" * 10)
    listing = os.scandir

    def scandir(path):
        entries = list(listing(path))
        finished.rename(tmp_path / "other")  # (another thread finishes its part)
        return contextlib.nullcontext(entries)

    monkeypatch.setattr(remote_cache.os, "scandir", scandir)
    part = cache.reserve("s3://bucket/new", {"size": 5}, 4)
    assert part is not None
    part.abandon()

"""pf.io.gfile on s3:// URLs against the test S3 server (moto, 127.0.0.1): the same calls as on local paths, with
object-store answers (prefixes as directories), storage options per call or set once, and reads through faults."""

from __future__ import annotations

import pathlib

import pytest

import parafeed as pf
from parafeed.errors import FailedPreconditionError, NotFoundError
from parafeed.io.gfile import AlreadyExistsError

from .data import ONE_TRY, upload
from .servers import FaultProxy, s3_options

gfile = pf.io.gfile


@pytest.fixture
def bucket(s3, tmp_path):
    """A fresh bucket's s3:// prefix, its s3fs filesystem, and the options that reach it."""
    prefix, fs = upload(s3, tmp_path, {})
    return prefix, fs, s3_options(s3.url)


def test_write_list_read_and_stat(bucket):
    prefix, fs, opts = bucket
    with gfile.GFile(f"{prefix}/data/a.txt", "w", storage_options=opts) as f:
        f.write("one\ntwo\r\n")
        f.write(b"three")
        assert not fs.exists(f"{prefix[5:]}/data/a.txt")  # an object appears when the file is closed
    assert fs.cat_file(f"{prefix[5:]}/data/a.txt") == b"one\ntwo\r\nthree"
    with gfile.GFile(f"{prefix}/data/a.txt", "a", storage_options=opts) as f:
        f.write("\nfour")
    fs.pipe(f"{prefix[5:]}/data/sub/b.bin", b"\x00" * 10)
    fs.pipe(f"{prefix[5:]}/data/sub/deeper/c.bin", b"c")
    fs.invalidate_cache()

    with gfile.GFile(f"{prefix}/data/a.txt", storage_options=opts) as f:
        assert list(f) == ["one\n", "two\n", "three\n", "four"]
        f.seek(4)
        assert f.read(3) == "two" and f.tell() == 7 and f.size() == 19
    assert gfile.GFile(f"{prefix}/data/sub/b.bin", "rb", storage_options=opts).read() == b"\x00" * 10
    assert gfile.exists(f"{prefix}/data", storage_options=opts) and gfile.exists(
        f"{prefix}/data/a.txt", storage_options=opts
    )
    assert not gfile.exists(f"{prefix}/nope", storage_options=opts)
    assert gfile.isdir(f"{prefix}/data/sub", storage_options=opts)
    assert not gfile.isdir(f"{prefix}/data/a.txt", storage_options=opts) and not gfile.isdir(
        f"{prefix}/x", storage_options=opts
    )
    assert sorted(gfile.listdir(f"{prefix}/data", storage_options=opts)) == ["a.txt", "sub"]
    assert sorted(gfile.listdir(f"{prefix}/data/", storage_options=opts)) == ["a.txt", "sub"]
    assert gfile.glob(f"{prefix}/data/*", storage_options=opts) == [f"{prefix}/data/a.txt", f"{prefix}/data/sub"]
    assert gfile.glob(f"{prefix}/*/s?b/*.bin", storage_options=opts) == [f"{prefix}/data/sub/b.bin"]
    assert gfile.glob(f"{prefix}/data/a.txt", storage_options=opts) == [f"{prefix}/data/a.txt"]
    assert gfile.glob(f"{prefix}/nope/*", storage_options=opts) == []
    walked = [(d, sorted(s), sorted(f)) for d, s, f in gfile.walk(f"{prefix}/data", storage_options=opts)]
    assert walked == [
        (f"{prefix}/data", ["sub"], ["a.txt"]),
        (f"{prefix}/data/sub", ["deeper"], ["b.bin"]),
        (f"{prefix}/data/sub/deeper", [], ["c.bin"]),
    ]
    st = gfile.stat(f"{prefix}/data/sub/b.bin", storage_options=opts)
    assert st.length == 10 and not st.is_directory and st.mtime_nsec > 1.6e18
    assert gfile.stat(f"{prefix}/data/sub", storage_options=opts).is_directory
    for call in (gfile.stat, gfile.listdir, gfile.remove, gfile.rmtree):
        with pytest.raises(NotFoundError, match=f"{prefix}/nope"):
            call(f"{prefix}/nope", storage_options=opts)
    with pytest.raises(NotFoundError, match="check the path"):
        gfile.GFile(f"{prefix}/nope", storage_options=opts).read()


def test_copy_rename_remove(bucket, tmp_path):
    prefix, _, opts = bucket
    local = tmp_path / "f.bin"
    local.write_bytes(b"x" * 1000)
    gfile.copy(str(local), f"{prefix}/f.bin", storage_options=opts)  # local -> S3
    gfile.copy(f"{prefix}/f.bin", f"{prefix}/g.bin", storage_options=opts)  # S3 -> S3
    with pytest.raises(AlreadyExistsError):
        gfile.copy(f"{prefix}/f.bin", f"{prefix}/g.bin", storage_options=opts)
    gfile.copy(f"{prefix}/g.bin", str(tmp_path / "back.bin"), storage_options=opts)  # S3 -> local
    assert (tmp_path / "back.bin").read_bytes() == b"x" * 1000
    gfile.rename(f"{prefix}/g.bin", f"{prefix}/d/h.bin", storage_options=opts)
    assert not gfile.exists(f"{prefix}/g.bin", storage_options=opts)
    assert gfile.stat(f"{prefix}/d/h.bin", storage_options=opts).length == 1000
    with pytest.raises(FailedPreconditionError, match="rmtree"):
        gfile.remove(f"{prefix}/d", storage_options=opts)
    gfile.remove(f"{prefix}/f.bin", storage_options=opts)
    gfile.makedirs(f"{prefix}/e/f", storage_options=opts)  # (object stores: nothing to create)
    gfile.mkdir(f"{prefix}/e", storage_options=opts)
    gfile.rmtree(f"{prefix}/d", storage_options=opts)
    assert gfile.listdir(prefix, storage_options=opts) == []
    assert pathlib.Path(local).exists()


def test_storage_options_set_once(bucket):
    prefix, fs, opts = bucket
    fs.pipe(f"{prefix[5:]}/k", b"v")
    gfile.set_storage_options(opts, "s3")
    try:
        assert gfile.exists(f"{prefix}/k") and gfile.GFile(f"{prefix}/k", "rb").read() == b"v"
        assert pf.io.gfile.gfile_v1.ListDirectory(prefix) == ["k"]
    finally:
        gfile.set_storage_options(None, "s3")


def test_reads_are_retried_through_faults(s3, bucket, one_try):
    """Every second ranged GET answered 503: each read is retried, and the bytes come whole."""
    prefix, fs, _ = bucket
    data = bytes(range(256)) * 400
    fs.pipe(f"{prefix[5:]}/blob", data)
    proxy = FaultProxy(s3.url, fault="503", every=2)
    try:
        opts = s3_options(proxy.url, **ONE_TRY)
        for _ in range(3):
            with gfile.GFile(f"{prefix}/blob", "rb", storage_options=opts) as f:
                assert f.read() == data
        assert proxy.faults >= 1
    finally:
        proxy.stop()

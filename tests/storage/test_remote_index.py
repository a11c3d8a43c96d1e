"""Remote files by position: record indexes beside the shards (or built by reading once), seeking skips and
resumes, and distribute()'s FILE / RECORD / label policies on s3:// files giving what they give on local files."""

from __future__ import annotations

import os

import pytest

import parafeed as pf
from parafeed.errors import UnavailableError

from .data import small_blocks
from .servers import FaultProxy, FileServer, s3_options

SPEC = {"id": pf.io.FixedLenFeature([], "int64"), "label": pf.io.FixedLenFeature([], "int64")}
SIZES = [12, 9, 7, 15, 4]


def _shards(s3, tmp_path, indexes: bool) -> tuple[list[str], list[str]]:
    """The same tf.Example shards locally and in a new bucket (with their .pfindex beside them if ``indexes``)."""
    import s3fs

    from .data import _bucket_numbers

    fs = s3fs.S3FileSystem(**s3_options(s3.url))
    bucket = f"bucket-{next(_bucket_numbers)}"
    fs.call_s3("create_bucket", Bucket=bucket)
    local, urls = [], []
    for i, n in enumerate(SIZES):
        path = str(tmp_path / f"part-{i}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for j in range(n):
                w.write(pf.io.serialize_example({"id": i * 1000 + j, "label": (i + j) % 3, "pad": [b"x" * 3000]}))
        fs.put_file(path, f"{bucket}/part-{i}.tfrecord")
        if indexes:
            pf.io.TFRecordIndex(path)  # writes part-i.tfrecord.pfindex beside it
            fs.put_file(path + ".pfindex", f"{bucket}/part-{i}.tfrecord.pfindex")
        local.append(path)
        urls.append(f"s3://{bucket}/part-{i}.tfrecord")
    return local, urls


def _ids(ds: pf.Dataset) -> list[int]:
    return [int(pf.io.parse_single_example(r, SPEC)["id"]) for r in ds]


@pytest.mark.parametrize("indexes", [True, False], ids=["index-beside", "index-built"])
def test_distribute_policies_on_remote_files_match_local_files(s3, tmp_path, indexes):
    local, urls = _shards(s3, tmp_path, indexes)
    opts = s3_options(s3.url)
    pipelines = {
        "FILE": lambda files, **kw: pf.TFRecordDataset(files, **kw).distribute(3, r, policy="FILE"),
        "RECORD": lambda files, **kw: pf.TFRecordDataset(files, **kw).distribute(3, r, policy="RECORD"),
        "RECORD+shuffle": lambda files, **kw: (
            pf.TFRecordDataset(files, **kw).shuffle(20, seed=4).distribute(3, r, policy="RECORD")
        ),
        "labels": lambda files, **kw: pf.TFRecordDataset(files, **kw).distribute(3, r, balance="labels", seed=1),
    }
    for name, pipeline in pipelines.items():
        for r in range(3):
            expected = _ids(pipeline(local))
            remote = pipeline(urls, storage_options=opts)
            assert _ids(small_blocks(remote, block=16 << 10)) == expected, (name, r)
            assert remote._replica_counts() == pipeline(local)._replica_counts()


def test_an_index_beside_the_shard_counts_and_skips_without_reading(s3, tmp_path):
    local, urls = _shards(s3, tmp_path, indexes=True)
    proxy = FaultProxy(s3.url)
    try:
        ds = pf.TFRecordDataset(urls[3], storage_options=s3_options(proxy.url))
        assert ds.record_counts() == [15]
        assert proxy.ranged_gets == 0  # the index came whole; no byte of the shard was read
        expected = _ids(pf.TFRecordDataset(local[3]))
        assert _ids(small_blocks(ds.skip(12), block=4 << 10)) == expected[12:]
        offsets = pf.io.TFRecordIndex(local[3]).offsets
        blocks = -(-os.path.getsize(local[3]) // (4 << 10))
        assert proxy.ranged_gets == blocks - offsets[12] // (4 << 10)  # from record 12's block on, no earlier one
    finally:
        proxy.stop()


def test_a_stale_index_beside_the_shard_is_not_used(s3, tmp_path):
    local, urls = _shards(s3, tmp_path, indexes=False)
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options(s3.url))
    pf.io.TFRecordIndex(local[0])
    fs.put_file(local[0] + ".pfindex", urls[1][5:] + ".pfindex")  # part-0's index beside part-1
    assert pf.TFRecordDataset(urls[1], storage_options=s3_options(s3.url)).record_counts() == [9]
    assert len(pf.io.TFRecordIndex(urls[1], storage_options=s3_options(s3.url))) == 9


def test_positions_come_from_the_remote_cache_when_it_is_on(s3, tmp_path):
    local, urls = _shards(s3, tmp_path, indexes=False)
    options = pf.Options()
    options.remote.cache_dir = str(tmp_path / "cache")
    expected = _ids(pf.TFRecordDataset(local).shuffle(30, seed=2).distribute(2, 1, policy="RECORD"))
    remote = pf.TFRecordDataset(urls, storage_options=s3_options(s3.url)).with_options(options)
    assert _ids(remote.shuffle(30, seed=2).distribute(2, 1, policy="RECORD")) == expected
    cached = [n for n in os.listdir(tmp_path / "cache") if n.endswith(".tfrecord")]
    assert len(cached) == len(SIZES)


def test_a_server_that_gives_no_size_gets_a_clear_error(tmp_path):
    with pf.io.TFRecordWriter(str(tmp_path / "d.tfrecord")) as w:
        w.write(b"x")
    server = FileServer(str(tmp_path), sizes=False)
    try:
        with pytest.raises(UnavailableError, match=r"d\.tfrecord: the server does not say how big the file is"):
            list(pf.TFRecordDataset(f"{server.url}/d.tfrecord"))
    finally:
        server.stop()

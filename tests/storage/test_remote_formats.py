"""Parquet files and WebDataset shards on a real S3-compatible endpoint (moto's server on 127.0.0.1), read through
parafeed's storage layer (read ahead, retried): through a proxy that injects every kind of fault, every row or sample
once and in order, in turn and by position (a split by record over replicas)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import parafeed as pf

from .data import ONE_TRY, small_blocks, upload
from .servers import FAULTS, FaultProxy, s3_options

SIZES = [300, 120, 250]


def upload_parquet(s3, tmp_path):
    """Parquet files of rows (id, text, vector) uploaded to a new bucket; their URLs."""
    prefix, fs = upload(s3, tmp_path, {})
    urls, first = [], 0
    for k, n in enumerate(SIZES):
        ids = np.arange(first, first + n, dtype=np.int64)
        local = tmp_path / f"part-{k}.parquet"
        text = pa.array([f"row {i} " * 40 for i in ids.tolist()])  # (pages of several blocks)
        vectors = pa.array([[float(i)] * 8 for i in ids.tolist()], pa.list_(pa.float32()))
        pq.write_table(pa.table({"id": ids, "text": text, "vector": vectors}), str(local), row_group_size=64)
        fs.put_file(str(local), f"{prefix[5:]}/part-{k}.parquet")
        urls.append(f"{prefix}/part-{k}.parquet")
        first += n
    return urls


@pytest.mark.parametrize("fault", FAULTS)
def test_rows_read_through_every_fault_kind_once_in_order(s3, tmp_path, fault, one_try):
    urls = upload_parquet(s3, tmp_path)
    proxy = FaultProxy(s3.url, fault=fault, every=4, stall=1.5)
    try:
        opts = s3_options(proxy.url, **ONE_TRY)
        ds = small_blocks(pf.ParquetDataset(urls, columns=["id", "text"], storage_options=opts), block=16 << 10)
        rows = list(ds.as_numpy_iterator())
        assert [int(r["id"]) for r in rows] == list(range(sum(SIZES)))
        assert all(r["text"] == f"row {i} ".encode() * 40 for i, r in enumerate(rows))
        assert proxy.faults >= 1  # (faults were injected: a stalled block read ahead may be dropped by a seek)
    finally:
        proxy.stop()


def test_a_split_by_row_reads_each_replicas_rows_by_position(s3, tmp_path):
    urls = upload_parquet(s3, tmp_path)
    reader = pf.ParquetDataset(urls, storage_options=s3_options(s3.url))
    assert reader.record_counts() == SIZES  # from the footers
    ds = reader.shuffle(50, seed=4)
    seen = []
    for r in range(3):
        share = ds.distribute(3, r, policy="RECORD").map(lambda e: (e["id"], e["vector"]))
        for i, vector in share.as_numpy_iterator():
            assert vector.tolist() == [float(i)] * 8
            seen.append(int(i))
    assert sorted(seen) == list(range(sum(SIZES)))


def upload_shards(s3, tmp_path):
    """WebDataset shards of samples (cls, jpg of 3,000 bytes, id) uploaded to a new bucket; their URLs."""
    import webdataset as wds

    prefix, fs = upload(s3, tmp_path, {})
    urls, i = [], 0
    for k, n in enumerate([40, 15, 30]):
        local = tmp_path / f"shard-{k}.tar"
        with wds.TarWriter(str(local)) as writer:
            for _ in range(n):
                writer.write({"__key__": f"s{i:04d}", "cls": str(i % 3).encode(), "jpg": bytes([i % 256]) * 3000,
                              "id": str(i).encode()})  # fmt: skip
                i += 1
        fs.put_file(str(local), f"{prefix[5:]}/shard-{k}.tar")
        urls.append(f"{prefix}/shard-{k}.tar")
    return urls


@pytest.mark.parametrize("fault", FAULTS)
def test_shards_read_through_every_fault_kind_every_sample_once_in_order(s3, tmp_path, fault, one_try):
    urls = upload_shards(s3, tmp_path)
    proxy = FaultProxy(s3.url, fault=fault, every=4, stall=1.5)
    try:
        opts = s3_options(proxy.url, **ONE_TRY)
        samples = list(small_blocks(pf.WebDataset(urls, storage_options=opts), block=16 << 10).as_numpy_iterator())
        assert [int(s["id"]) for s in samples] == list(range(85))
        assert all(s["jpg"] == bytes([i % 256]) * 3000 for i, s in enumerate(samples))
        assert proxy.faults >= 1
    finally:
        proxy.stop()


def test_shards_split_by_sample_with_label_balance(s3, tmp_path):
    urls = upload_shards(s3, tmp_path)
    ds = pf.WebDataset(urls, keys=["cls", "id"], storage_options=s3_options(s3.url))
    seen = []
    for r in range(3):
        share = [(int(s["id"]), int(s["cls"])) for s in ds.distribute(3, r, balance="labels", label="cls")]
        assert all(label == i % 3 for i, label in share)
        seen += [i for i, _ in share]
    assert sorted(seen) == list(range(85))


def test_array_record_files_by_url_with_and_without_the_cache(s3, tmp_path, one_try):
    from array_record.python.array_record_module import ArrayRecordWriter

    prefix, fs = upload(s3, tmp_path, {})
    urls, want = [], []
    for k in range(2):
        local = tmp_path / f"part-{k}.array_record"
        writer = ArrayRecordWriter(str(local), "group_size:8")
        for i in range(50):
            record = np.random.default_rng([k, i]).bytes(2000)
            writer.write(record)
            want.append(record)
        writer.close()
        fs.put_file(str(local), f"{prefix[5:]}/part-{k}.array_record")
        urls.append(f"{prefix}/part-{k}.array_record")
    proxy = FaultProxy(s3.url, fault="503", every=4)
    try:
        ds = small_blocks(pf.ArrayRecordDataset(urls, storage_options=s3_options(proxy.url, **ONE_TRY)), 16 << 10)
        assert list(ds.as_numpy_iterator()) == want  # (read whole into a temporary file, faults retried)
        assert proxy.faults >= 1
        options = pf.Options()
        options.remote.cache_dir = str(tmp_path / "cache")
        cached = pf.ArrayRecordDataset(urls, storage_options=s3_options(s3.url)).with_options(options)
        shares = [
            list(cached.shuffle(20, seed=1).distribute(2, r, policy="RECORD").as_numpy_iterator()) for r in (0, 1)
        ]
        assert sorted(shares[0] + shares[1]) == sorted(want)  # by position, from the cache's copies
        assert len(list((tmp_path / "cache").rglob("*"))) >= 2
    finally:
        proxy.stop()

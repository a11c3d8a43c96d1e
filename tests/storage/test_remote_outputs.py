"""Writing to object storage: `parafeed convert` into s3://, `parafeed inspect` of s3:// shards, cache(filename)
on a URL; each through the real S3 endpoint, read back and compared."""

from __future__ import annotations

import json

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.tools.cli import main
from parafeed.tools.convert import convert

from .data import upload
from .servers import FaultProxy, s3_options


def _rows(tmp_path, n: int = 40) -> str:
    path = tmp_path / "rows.csv"
    rng = np.random.default_rng(0)
    lines = ["x,y,label"] + [f"{rng.normal():.6f},{rng.integers(0, 9)},{i % 3}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_convert_into_s3_then_read_inspect_and_distribute_from_it(s3, tmp_path, capsys):
    src = _rows(tmp_path)
    prefix, fs = upload(s3, tmp_path, {})
    opts = s3_options(s3.url)
    local = convert(src, str(tmp_path / "local"), 3, workers=1, progress=False)
    assert main(["convert", src, f"{prefix}/set", "--shards", "3", "--workers", "1",
                 "--storage-options", json.dumps(opts)]) == 0  # fmt: skip
    assert f"manifest {prefix}/set/rows.manifest.json" in capsys.readouterr().out
    listed = sorted(p.rsplit("/", 1)[1] for p in fs.ls(f"{prefix[5:]}/set"))
    assert listed == sorted(["rows.labels.npz", "rows.manifest.json"] + [
        f"{s['file']}{suffix}" for s in local.manifest["shards"] for suffix in ("", ".pfindex")
    ])  # fmt: skip
    urls = [f"{prefix}/set/{s['file']}" for s in local.manifest["shards"]]
    locals_ = [f"{tmp_path}/local/{s['file']}" for s in local.manifest["shards"]]
    assert list(pf.TFRecordDataset(urls, storage_options=opts)) == list(pf.TFRecordDataset(locals_))

    proxy = FaultProxy(s3.url)  # the indexes beside the shards: counts and shares without reading the shards first
    try:
        remote = pf.TFRecordDataset(urls, storage_options=s3_options(proxy.url))
        assert remote.record_counts() == [s["records"] for s in local.manifest["shards"]]
        assert proxy.ranged_gets == 0
        share = remote.shuffle(50, seed=3).distribute(2, 1, policy="RECORD")
        assert list(share) == list(pf.TFRecordDataset(locals_).shuffle(50, seed=3).distribute(2, 1, policy="RECORD"))
    finally:
        proxy.stop()

    with pytest.raises(InvalidArgumentError, match="already holds shards named rows-"):
        convert(src, f"{prefix}/set", 2, workers=1, progress=False, storage_options=opts)
    convert(src, f"{prefix}/set", 2, workers=1, progress=False, storage_options=opts, overwrite=True)
    assert len([p for p in fs.ls(f"{prefix[5:]}/set") if p.endswith(".tfrecord")]) == 2  # the old 3 are gone

    assert main(["inspect", f"{prefix}/set/*.tfrecord", "--json", "--storage-options", json.dumps(opts)]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["records"] for r in reports] == [20, 20]
    assert sum(r["bytes"] for r in reports) == sum(fs.size(u) for u in fs.glob(f"{prefix[5:]}/set/*.tfrecord"))
    assert reports[0]["labels"] and reports[0]["schema"]["x"]["kind"] == "float_list"


def test_cache_to_a_url_is_uploaded_whole_and_replayed(s3, tmp_path):
    prefix, fs = upload(s3, tmp_path, {})
    opts = s3_options(s3.url)
    calls = []

    def f(x):
        calls.append(int(x))
        return {"x": x * 2, "name": np.bytes_(b"n%d" % x)}

    ds = pf.Dataset.range(50).map(f).cache(f"{prefix}/c/train", storage_options=opts)
    it = iter(ds)
    assert [int(next(it)["x"]) for _ in range(10)] == list(range(0, 20, 2))
    it.close()
    assert not fs.exists(f"{prefix[5:]}/c/train.pfcache")  # an unfinished pass is never published
    first = [(int(e["x"]), bytes(e["name"])) for e in ds]
    assert fs.exists(f"{prefix[5:]}/c/train.pfcache")
    calls.clear()
    again = pf.Dataset.range(50).map(f).cache(f"{prefix}/c/train", storage_options=opts)
    assert [(int(e["x"]), bytes(e["name"])) for e in again] == first == [(2 * i, b"n%d" % i) for i in range(50)]
    assert calls == []  # replayed from the object, nothing computed

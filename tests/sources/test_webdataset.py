"""WebDataset against the webdataset package's own reader (generated shards: member sizes across tar blocks, long
names, empty shards, many small shards), its grouping rules, the guarantees of a file reader (exact shares, equal
steps, label balance, resume from JSON) and its errors. Elastic resume is in tests/distribute/test_elastic.py, object
storage in tests/storage/test_remote_formats.py."""

from __future__ import annotations

import io
import json
import tarfile

import numpy as np
import pytest
import webdataset as wds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import DataLossError, InvalidArgumentError

pytestmark = pytest.mark.timeout(120)


def write_shards(folder, sizes, extensions=("cls", "jpg", "seg.png"), name_length=8, data_size=lambda i: i):
    """Shards of ``sizes`` samples written by webdataset's TarWriter; sample ``i`` has key ``.../s{i}``, ``cls``
    ``i % 3`` and ``id`` ``i`` as text, and ``data_size(i)`` bytes in its other members."""
    paths, i = [], 0
    for k, n in enumerate(sizes):
        path = str(folder / f"shard-{k:03d}.tar")
        with wds.TarWriter(path) as writer:
            for _ in range(n):
                sample = {"__key__": f"{'d' * name_length}/s{i:05d}", "id": str(i).encode()}
                for ext in extensions:
                    sample[ext] = str(i % 3).encode() if ext == "cls" else bytes([i % 256]) * data_size(i)
                writer.write(sample)
                i += 1
        paths.append(path)
    return paths


def reference(paths):
    """The webdataset package's samples, as parafeed's elements: ``__key__`` as bytes, no ``__url__``."""
    out = []
    for sample in wds.WebDataset(paths, shardshuffle=False, empty_check=False):
        out.append({k: (v.encode() if k == "__key__" else v) for k, v in sample.items() if k in ("__key__",) or
                    not k.startswith("__")})  # fmt: skip
    return out


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 8), min_size=1, max_size=4),
    extensions=st.lists(st.sampled_from(["cls", "jpg", "txt", "seg.png", "json"]), min_size=1, max_size=3, unique=True),
    name_length=st.sampled_from([1, 8, 120]),  # (120: a long name, in a GNU or pax header)
    size_step=st.sampled_from([0, 1, 511, 513]),
)
def test_samples_equal_the_webdataset_packages_in_order(tmp_path_factory, sizes, extensions, name_length, size_step):
    paths = write_shards(tmp_path_factory.mktemp("wds"), sizes, extensions, name_length, lambda i: i * size_step)
    ds = pf.WebDataset(paths, keys=None if sum(sizes) else [*extensions, "id"])
    assert list(ds.as_numpy_iterator()) == reference(paths)
    assert ds.record_counts() == sizes


def test_grouping_follows_the_webdataset_package(tmp_path):
    path = tmp_path / "odd.tar"
    members = [
        ("a/x.cls", b"1"), ("a/x.JPG", b"j"), ("a/x.seg.png", b"p"),  # one sample; the extension lowercased
        ("noext", b"skipped"), ("__meta__", b"skipped"), ("__meta__/x.cls", b"skipped"),  # skipped by both
        ("b.cls", b"2"), ("b.jpg", b"k"), ("b.seg.png", b"q"),
        ("a/x.cls", b"3"), ("a/x.jpg", b"l"), ("a/x.seg.png", b"r"),  # the key again, not next to it: a new sample
    ]  # fmt: skip
    with tarfile.open(path, "w") as tar:
        tar.addfile(tarfile.TarInfo("a"), io.BytesIO())  # (not a regular file: skipped; it is a directory entry)
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    got = list(pf.WebDataset(str(path)).as_numpy_iterator())
    assert got == reference([str(path)])
    assert [(e["__key__"], e["cls"]) for e in got] == [(b"a/x", b"1"), (b"b", b"2"), (b"a/x", b"3")]


def test_keys_pick_extensions_and_defaults_fill_missing_members(tmp_path):
    paths = write_shards(tmp_path, [4], ("cls", "jpg"))
    with wds.TarWriter(str(tmp_path / "more.tar")) as writer:
        writer.write({"__key__": "m0", "cls": b"0", "jpg": b"x", "txt": b"extra"})
        writer.write({"__key__": "m1", "cls": b"1"})
    more = str(tmp_path / "more.tar")
    picked = pf.WebDataset([*paths, more], keys=["cls"])
    assert list(picked.element_spec) == ["__key__", "cls"] and len(list(picked)) == 6
    filled = pf.WebDataset([*paths, more], keys=["cls", "jpg"], defaults={"jpg": b""})
    assert [e["jpg"] for e in filled.as_numpy_iterator()][-2:] == [b"x", b""]
    with pytest.raises(InvalidArgumentError, match=r"more.tar: sample 'm0' has extension\(s\) \['txt'\].*keys="):
        list(pf.WebDataset([*paths, more]))
    with pytest.raises(InvalidArgumentError, match=r"more.tar: sample 'm1' has no 'jpg' member.*defaults="):
        list(pf.WebDataset([*paths, more], keys=["cls", "jpg"]))
    with pytest.raises(InvalidArgumentError, match=r"`defaults` names extension\(s\) \['png'\]"):
        _ = pf.WebDataset(paths, keys=["cls"], defaults={"png": b""}).element_spec
    with pytest.raises(InvalidArgumentError, match="must be a list of extensions"):
        pf.WebDataset(paths, keys="cls")


def test_damaged_shards_name_the_file_and_the_byte_offset(tmp_path):
    (path,) = write_shards(tmp_path, [6], ("cls", "jpg"), data_size=lambda i: 3000)
    data = open(path, "rb").read()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[:5000])  # in the middle of a member's data
    with pytest.raises(DataLossError, match=r"cut.tar: .*byte offset \d+"):
        list(pf.WebDataset(str(cut), keys=["cls", "jpg"]))
    header_cut = tmp_path / "header.tar"
    header_cut.write_bytes(data[: 512 * 9 + 100])  # in the middle of a header
    with pytest.raises(DataLossError, match=r"header.tar: damaged or cut short at byte offset"):
        list(pf.WebDataset(str(header_cut), keys=["cls", "jpg"]))
    twice = tmp_path / "twice.tar"
    with tarfile.open(twice, "w") as tar:
        for name in ("k.cls", "k.cls"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"1"))
    with pytest.raises(InvalidArgumentError, match=r"twice.tar: sample 'k' has the member k.cls twice"):
        list(pf.WebDataset(str(twice)))
    not_tar = tmp_path / "text.tar"
    not_tar.write_bytes(b"not a tar file at all" * 40)
    with pytest.raises(DataLossError, match=r"text.tar is not a readable tar file"):
        list(pf.WebDataset(str(not_tar)))


def test_state_saved_mid_epoch_as_json_resumes_exactly(tmp_path):
    paths = write_shards(tmp_path, [5, 0, 9, 3], ("cls", "jpg"), data_size=lambda i: 700)
    for reads in (None, 2):
        ds = pf.WebDataset(paths, num_parallel_reads=reads)
        whole = [e["__key__"] for e in ds.as_numpy_iterator()]
        assert len(whole) == 17
        for stop in (0, 1, 5, 6, 13, 17):
            it = iter(ds)
            head = [bytes(next(it)["__key__"]) for _ in range(stop)]
            state = json.loads(json.dumps(it.get_state()))
            again = iter(ds)
            again.set_state(state)
            assert head + [bytes(e["__key__"]) for e in again] == whole, (reads, stop)


@pytest.mark.parametrize("policy", ["FILE", "RECORD", "labels"])
def test_three_replicas_every_sample_once_equal_steps_labels_balanced(tmp_path, policy):
    paths = write_shards(tmp_path, [20, 3, 31, 9, 12], ("cls",))
    ds = pf.WebDataset(paths).shuffle(16, seed=2)
    shares = []
    for r in range(3):
        split = (
            ds.distribute(3, r, balance="labels", label="cls")
            if policy == "labels"
            else ds.distribute(3, r, policy=policy)
        )
        split = split.map(lambda e: (np.int64(int(e["id"])), np.int64(int(e["cls"]))))
        shares.append(list(split.batch(4).equal_steps().as_numpy_iterator()))
    assert len({len(s) for s in shares}) == 1  # equal steps
    ids = [int(i) for s in shares for ids, _, w in s for i, keep in zip(ids, w) if keep]
    assert sorted(ids) == list(range(75))  # every sample exactly once
    if policy == "labels":
        per = [np.bincount([int(y) for _, ys, w in s for y, keep in zip(ys, w) if keep], minlength=3) for s in shares]
        assert (np.max(per, axis=0) - np.min(per, axis=0)).max() <= 1


def test_ignore_errors_ends_a_damaged_shard_and_goes_on_to_the_next(tmp_path):
    first, second = write_shards(tmp_path, [6, 4], ("cls", "jpg"), data_size=lambda i: 3000)
    cut = tmp_path / "cut.tar"
    cut.write_bytes(open(first, "rb").read()[:20000])  # in a member of a later sample
    ds = pf.WebDataset([str(cut), second], keys=["cls", "jpg", "id"]).ignore_errors()
    keys = [e["__key__"][-6:] for e in ds.as_numpy_iterator()]
    assert keys[0] == b"s00000" and keys[-4:] == [b"s00006", b"s00007", b"s00008", b"s00009"] and len(keys) < 10
    assert ds.ignored.count == 1


def test_inspect_reports_samples_extensions_labels_and_damage(tmp_path, capsys):
    from parafeed.tools.cli import main

    paths = write_shards(tmp_path, [4, 3], ("cls", "jpg"), data_size=lambda i: 100 + i)
    assert main(["inspect", "--json", *paths]) == 0
    first, second = json.loads(capsys.readouterr().out)
    assert (first["records"], second["records"]) == (4, 3) and not first["errors"]
    assert first["labels"] == {"0": 2, "1": 1, "2": 1} and second["labels"] == {"1": 1, "2": 1, "0": 1}
    assert first["schema"]["jpg"] == {"kind": "bytes", "min_values": 100, "max_values": 103, "records": 4}
    assert set(first["schema"]) == {"cls", "jpg", "id"}
    cut = tmp_path / "cut.tar"
    with tarfile.open(paths[0]) as tar:
        last = tar.getmembers()[-1]  # (the last sample's last member)
    cut.write_bytes(open(paths[0], "rb").read()[: last.offset_data + 10])
    assert main(["inspect", str(cut)]) == 1
    out = capsys.readouterr().out
    assert "cut.tar: 3 records" in out and "1 CORRUPT" in out and "is cut short" in out

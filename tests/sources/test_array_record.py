"""ArrayRecordDataset against the array_record package's own reader (generated files: record sizes, group sizes,
empty files, many small files), resume from JSON without reading what came before, exact shares with equal steps and
label balance, and damaged files. Elastic resume is in tests/distribute/test_elastic.py, object storage in
tests/storage/test_remote_formats.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import DataLossError

pytestmark = pytest.mark.timeout(120)


def write(folder, sizes, group_size=4, record=lambda i: b"r%d" % i):
    paths, i = [], 0
    for k, n in enumerate(sizes):
        path = str(folder / f"part-{k}.array_record")
        writer = ArrayRecordWriter(path, f"group_size:{group_size}")
        for _ in range(n):
            writer.write(record(i))
            i += 1
        writer.close()
        paths.append(path)
    return paths


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=4),
    group_size=st.sampled_from([1, 3, 64]),
    record_size=st.sampled_from([0, 10, 5000]),
)
def test_records_equal_the_array_record_readers_in_order(tmp_path_factory, sizes, group_size, record_size):
    paths = write(tmp_path_factory.mktemp("ar"), sizes, group_size, lambda i: bytes([i % 256]) * (record_size + i))
    want = []
    for p in paths:
        reader = ArrayRecordReader(p)
        want += list(reader.read_all())
        reader.close()
    for reads in (None, 2):
        ds = pf.ArrayRecordDataset(paths, num_parallel_reads=reads)
        got = list(ds.as_numpy_iterator())
        assert sorted(got) == sorted(want) and (reads or got == want)
    assert pf.ArrayRecordDataset(paths).record_counts() == sizes


def test_state_as_json_resumes_exactly_and_skip_seeks(tmp_path):
    paths = write(tmp_path, [300, 0, 45])
    ds = pf.ArrayRecordDataset(paths)
    whole = list(ds.as_numpy_iterator())
    for stop in (0, 1, 255, 256, 257, 300, 344, 345):
        it = iter(ds)
        head = [bytes(next(it)) for _ in range(stop)]
        state = json.loads(json.dumps(it.get_state()))
        again = iter(ds)
        again.set_state(state)
        assert head + [bytes(r) for r in again] == whole, stop
    assert list(ds.skip(340).as_numpy_iterator()) == whole[340:]


@pytest.mark.parametrize("policy", ["FILE", "RECORD", "labels"])
def test_three_replicas_every_record_once_equal_steps_labels_balanced(tmp_path, policy):
    paths = write(tmp_path, [25, 3, 40, 12, 9], record=lambda i: pf.io.serialize_example({"id": i, "label": i % 4}))
    spec = {"id": pf.io.FixedLenFeature([], "int64"), "label": pf.io.FixedLenFeature([], "int64")}
    ds = pf.ArrayRecordDataset(paths).shuffle(16, seed=2)
    shares = []
    for r in range(3):
        split = ds.distribute(3, r, balance="labels") if policy == "labels" else ds.distribute(3, r, policy=policy)
        split = split.map(lambda x: pf.io.parse_single_example(x, spec)).map(lambda e: (e["id"], e["label"]))
        shares.append(list(split.batch(4).equal_steps().as_numpy_iterator()))
    assert len({len(s) for s in shares}) == 1
    ids = [int(i) for s in shares for ids, _, w in s for i, keep in zip(ids, w) if keep]
    assert sorted(ids) == list(range(89))
    if policy == "labels":
        per = [np.bincount([int(y) for _, ys, w in s for y, keep in zip(ys, w) if keep], minlength=4) for s in shares]
        assert (np.max(per, axis=0) - np.min(per, axis=0)).max() <= 1


def test_damaged_files_name_the_file_and_the_records(tmp_path):
    (path,) = write(tmp_path, [200], group_size=10, record=lambda i: np.random.default_rng(i).bytes(300))
    data = open(path, "rb").read()
    for at, what in ((5000, r"records 0 to 199 cannot be read: .*chunk"), (len(data) // 2, "not a readable")):
        damaged = tmp_path / "damaged.array_record"
        damaged.write_bytes(data[:at] + bytes(64) + data[at + 64 :])  # a chunk's data; the footer
        with pytest.raises(DataLossError, match=rf"damaged.array_record.*{what}"):
            list(pf.ArrayRecordDataset(str(damaged)))
    text = tmp_path / "text.array_record"
    text.write_bytes(b"not an array record file" * 50)
    with pytest.raises(DataLossError, match=r"text.array_record is not a readable ArrayRecord file"):
        list(pf.ArrayRecordDataset(str(text)))
    with pytest.raises(pf.errors.NotFoundError):
        list(pf.ArrayRecordDataset(str(tmp_path / "missing.array_record")))


def test_ignore_errors_passes_a_damaged_chunk_and_inspect_reports_it(tmp_path, capsys):
    from parafeed.tools.cli import main

    (path,) = write(tmp_path, [600], group_size=10, record=lambda i: pf.io.serialize_example({"label": i % 3}))
    assert main(["inspect", "--json", path]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["records"] == 600 and report["labels"] == {"0": 200, "1": 200, "2": 200}
    data = open(path, "rb").read()
    damaged = tmp_path / "damaged.array_record"
    damaged.write_bytes(data[:300] + bytes(64) + data[364:])  # the first chunk's data
    ds = pf.ArrayRecordDataset(str(damaged)).ignore_errors()
    kept = list(ds.as_numpy_iterator())  # (ends: the damaged run of records is passed, not read again)
    assert 0 < len(kept) < 600 and ds.ignored.count >= 1
    assert main(["inspect", str(damaged)]) == 1
    assert "cannot be read" in capsys.readouterr().out

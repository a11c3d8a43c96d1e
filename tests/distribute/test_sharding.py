import json
import logging

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parafeed as pf
import parafeed.io.manifest
import parafeed.tools.convert
from parafeed.errors import InvalidArgumentError

SPEC = {"id": pf.io.FixedLenFeature([], "int64"), "label": pf.io.FixedLenFeature([], "int64")}


def write_files(folder, sizes, classes=3):
    files = []
    for i, n in enumerate(sizes):
        path = str(folder / f"part-{i}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for j in range(n):
                w.write(pf.io.serialize_example({"id": i * 1000 + j, "label": (i + j) % classes}))
        files.append(path)
    return files


def ids(ds):
    return [int(pf.io.parse_single_example(r, SPEC)["id"]) for r in ds]


def all_ids(sizes):
    return sorted(i * 1000 + j for i, n in enumerate(sizes) for j in range(n))


@pytest.mark.parametrize("policy", ["FILE", "RECORD", "DATA", "AUTO"])
@pytest.mark.parametrize("replicas", [1, 2, 3, 5])
def test_every_policy_gives_disjoint_complete_shares(tmp_path, policy, replicas):
    sizes = [12, 9, 7, 15, 4]
    files = write_files(tmp_path, sizes)
    shares = [ids(pf.TFRecordDataset(files).distribute(replicas, r, policy=policy)) for r in range(replicas)]
    assert sorted(x for share in shares for x in share) == all_ids(sizes)
    counts = pf.TFRecordDataset(files).distribute(replicas, 0, policy=policy)._replica_counts()
    assert counts == [len(s) for s in shares]


def test_auto_prefers_files_when_they_split_evenly(tmp_path):
    files = write_files(tmp_path, [10, 10, 10, 10])
    assert pf.TFRecordDataset(files).distribute(2, 1).plan.policy == "FILE"
    (tmp_path / "uneven").mkdir()
    uneven = write_files(tmp_path / "uneven", [30, 2, 2, 2])
    plan = pf.TFRecordDataset(uneven).distribute(2, 1).plan
    assert plan.policy == "RECORD" and "whole files would give replicas [32, 4]" in plan.notes[0]


def test_file_policy_with_fewer_files_than_replicas_falls_back_with_a_warning(tmp_path, caplog):
    files = write_files(tmp_path, [9, 8])
    with caplog.at_level(logging.WARNING, logger="parafeed"):
        ds = pf.TFRecordDataset(files).distribute(3, 2, policy="FILE")
    assert ds.plan.policy == "RECORD" and "would starve replicas" in caplog.text
    assert len(ids(ds)) == 5


def test_file_shards_keep_a_seeded_file_shuffle_per_replica(tmp_path):
    write_files(tmp_path, [3, 3, 3, 3])
    listed = pf.Dataset.list_files(str(tmp_path / "*.tfrecord"), seed=5)
    shares = [ids(pf.TFRecordDataset(listed).distribute(2, r, policy="FILE")) for r in range(2)]
    assert sorted(shares[0] + shares[1]) == all_ids([3, 3, 3, 3])


def test_data_policy_shards_elements_and_runs_maps_once(tmp_path):
    files = write_files(tmp_path, [20, 11])
    calls = []

    def parse(r):
        calls.append(1)
        return pf.io.parse_single_example(r, SPEC)["id"]

    ds = pf.TFRecordDataset(files).map(parse).batch(4).distribute(2, 1, policy="DATA")
    got = [int(x) for b in ds for x in b]
    assert got == all_ids([20, 11])[1::2]  # every other element of the whole stream, batches rebuilt per replica
    assert (
        len(calls) <= 16 + 1
    )  # the shard moved below the map: only this replica's records were parsed (+1 spec probe)
    assert ds._replica_counts() == [4, 4]  # 16 and 15 elements in batches of 4


def test_data_policy_warns_about_unseeded_shuffles(tmp_path):
    files = write_files(tmp_path, [10])
    ds = pf.TFRecordDataset(files).shuffle(10).batch(2).distribute(2, 0, policy="DATA")
    assert "every replica shuffles differently" in ds.plan.notes[0]


def test_non_file_pipelines_shard_by_data():
    ds = pf.Dataset.range(10).map(lambda x: x * 2).distribute(3, 1)
    assert ds.plan.policy == "DATA" and [int(x) for x in ds] == [2, 8, 14]
    with pytest.raises(InvalidArgumentError, match="fixed list of files"):
        pf.Dataset.range(10).distribute(2, 0, policy="FILE")


def test_replicas_from_tf_config_and_argument_errors(monkeypatch):
    config = {
        "cluster": {"worker": ["localhost:1", "localhost:2", "localhost:3"]},
        "task": {"type": "worker", "index": 2},
    }
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    assert pf.distribute.replica_context() == (3, 2)
    with pytest.raises(InvalidArgumentError, match="both"):
        pf.distribute.replica_context(2, None)
    with pytest.raises(InvalidArgumentError, match=r"\[0, 1\]"):
        pf.distribute.replica_context(2, 2)
    with pytest.raises(InvalidArgumentError, match="policy"):
        pf.Dataset.range(4).distribute(2, 0, policy="HASH")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 25), min_size=1, max_size=4), replicas=st.integers(1, 4), seed=st.integers(0, 3))
def test_label_balance_puts_every_class_within_one_of_its_share(tmp_path_factory, sizes, replicas, seed):
    folder = tmp_path_factory.mktemp("labels")
    files = write_files(folder, sizes, classes=4)
    shares = []
    for r in range(replicas):
        ds = pf.TFRecordDataset(files).distribute(replicas, r, balance="labels", seed=seed)
        records = [pf.io.parse_single_example(x, SPEC) for x in ds]
        shares.append(records)
        assert [int(x["label"]) for x in records] == ds.plan.labels[r].tolist()
    assert sorted(int(x["id"]) for s in shares for x in s) == all_ids(sizes)
    everything = np.array([int(x["label"]) for s in shares for x in s], dtype=np.int64)
    for c in range(4):
        ideal = (everything == c).sum() / replicas
        for s in shares:
            assert abs(sum(int(x["label"]) == c for x in s) - ideal) < 1


def test_label_balance_uses_the_convert_manifest(tmp_path):
    from tests.tools.test_convert import make_images

    make_images(tmp_path / "src", [5, 9, 2])
    parafeed.tools.convert.convert(str(tmp_path / "src"), str(tmp_path / "out"), 3, workers=1)
    files = parafeed.io.manifest.manifest_files(parafeed.io.manifest.read_manifest(str(tmp_path / "out")))
    labels = pf.distribute.record_labels(files)
    assert sorted(np.concatenate(labels).tolist()) == [0] * 5 + [1] * 9 + [2] * 2
    ds = pf.TFRecordDataset(files).distribute(2, 0, balance="labels")
    assert [np.bincount(x, minlength=3).tolist() for x in ds.plan.labels] in (
        [[3, 5, 1], [2, 4, 1]],
        [[3, 4, 1], [2, 5, 1]],
        [[2, 5, 1], [3, 4, 1]],
        [[2, 4, 1], [3, 5, 1]],
    )


@pytest.mark.parametrize("replicas", [2, 3])
def test_label_balance_of_in_memory_arrays(replicas):
    labels = np.repeat(np.arange(4), [20, 7, 13, 1])  # sorted by class, as many arrays are
    x = np.arange(len(labels))
    pairs = [
        list(pf.Dataset.from_tensor_slices((x, labels)).distribute(replicas, r, balance="labels"))
        for r in range(replicas)
    ]
    dicts = [
        list(pf.Dataset.from_tensor_slices({"x": x, "y": labels}).distribute(replicas, r, balance="labels", label="y"))
        for r in range(replicas)
    ]
    assert [[int(a) for a, _ in p] for p in pairs] == [[int(d["x"]) for d in share] for share in dicts]
    assert sorted(int(a) for p in pairs for a, _ in p) == x.tolist()  # every element once, in order within a share
    for share in pairs:
        counts = np.bincount([int(y) for _, y in share], minlength=4)
        assert np.all(np.abs(counts - np.bincount(labels) / replicas) < 1)
    by_fn = pf.Dataset.from_tensor_slices((x, labels)).distribute(
        replicas, 0, balance="labels", label_fn=lambda a, y: y
    )
    assert [int(a) for a, _ in by_fn] == [int(a) for a, _ in pairs[0]]


def test_label_balance_errors_name_the_fix():
    with pytest.raises(InvalidArgumentError, match="label_fn"):
        pf.Dataset.from_tensor_slices((np.arange(4), np.arange(4), np.arange(4))).distribute(2, 0, balance="labels")
    with pytest.raises(InvalidArgumentError, match="one integer class id per element"):
        pf.Dataset.from_tensor_slices((np.arange(4), np.ones(4))).distribute(2, 0, balance="labels")
    with pytest.raises(InvalidArgumentError, match="in-memory arrays"):
        pf.Dataset.range(8).distribute(2, 0, balance="labels")

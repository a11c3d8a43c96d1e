"""Elastic resume for every split, of TFRecord, ArrayRecord, Parquet and WebDataset files and a Hugging Face dataset:
stopped on 4 replicas at a random step, resumed on 2 and 3 from every replica's state; every sample exactly once in the
resumed epoch and the two after it, equal steps, classes balanced.

Replicas run in one process, each on its own thread, and agree through ``replicas_in_process`` where a filter makes
the counts unknown (the DDP form of the same agreement is tested in test_agreed_steps.py).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import Epochs
from parafeed.errors import StateError

COUNTS = [17, 30, 9, 25, 21, 14]  # records per file (116)
TOTAL = sum(COUNTS)
CLASSES = 3
BATCH = 4
SPEC = {"id": pf.io.FixedLenFeature([], "int64"), "label": pf.io.FixedLenFeature([], "int64")}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("elastic")
    paths, i = [], 0
    for k, count in enumerate(COUNTS):
        path = str(folder / f"part-{k}.tfrecord")
        with pf.io.TFRecordWriter(path) as writer:
            for _ in range(count):
                writer.write(pf.io.serialize_example({"id": i, "label": (i * 7) % CLASSES}))
                i += 1
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def parquet_files(tmp_path_factory):
    """The same records as ``files``, as rows of Parquet files (row groups of 8 rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("elastic-parquet")
    paths, starts = [], np.cumsum([0, *COUNTS])
    for k, count in enumerate(COUNTS):
        ids = np.arange(starts[k], starts[k] + count, dtype=np.int64)
        path = str(folder / f"part-{k}.parquet")
        pq.write_table(pa.table({"id": ids, "label": (ids * 7) % CLASSES}), path, row_group_size=8)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def tar_files(tmp_path_factory):
    """The same records as ``files``, as samples of WebDataset shards (``id`` and ``label`` members, as text)."""
    import webdataset as wds

    folder = tmp_path_factory.mktemp("elastic-wds")
    paths, i = [], 0
    for k, count in enumerate(COUNTS):
        path = str(folder / f"part-{k}.tar")
        with wds.TarWriter(path) as writer:
            for _ in range(count):
                writer.write({"__key__": f"s{i:04d}", "id": str(i).encode(), "label": str((i * 7) % CLASSES).encode()})
                i += 1
        paths.append(path)
    return paths


def parse_example(record):
    e = pf.io.parse_single_example(record, SPEC)
    return e["id"], e["label"]


@pytest.fixture(scope="module")
def array_record_files(tmp_path_factory):
    """The same records as ``files`` (tf.train.Examples), in ArrayRecord files."""
    from array_record.python.array_record_module import ArrayRecordWriter

    folder = tmp_path_factory.mktemp("elastic-array-record")
    paths, i = [], 0
    for k, count in enumerate(COUNTS):
        path = str(folder / f"part-{k}.array_record")
        writer = ArrayRecordWriter(path, "group_size:4")
        for _ in range(count):
            writer.write(pf.io.serialize_example({"id": i, "label": (i * 7) % CLASSES}))
            i += 1
        writer.close()
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def hf_dataset():
    """The same records as ``files``, as a Hugging Face ``datasets.Dataset`` (columns ``id`` and ``label``)."""
    import datasets

    ids = np.arange(TOTAL, dtype=np.int64)
    return datasets.Dataset.from_dict({"id": ids, "label": (ids * 7) % CLASSES})


READERS = {  # a format's reader, and its element as (id, label)
    "tfrecord": (pf.TFRecordDataset, parse_example),
    "array_record": (pf.ArrayRecordDataset, parse_example),
    "parquet": (pf.ParquetDataset, lambda e: (e["id"], e["label"])),
    "webdataset": (pf.WebDataset, lambda e: (np.int64(int(e["id"])), np.int64(int(e["label"])))),
    "huggingface": (pf.Dataset.from_huggingface, lambda e: (e["id"], e["label"])),
}
SPLITS = ["DATA", "RECORD", "FILE", "labels"]
CASES = [(fmt, split) for fmt in READERS for split in SPLITS if fmt != "huggingface" or split in ("DATA", "labels")]


def pipeline(files, n, r, split, after, fmt="tfrecord"):
    reader, parse = READERS[fmt]
    ds = reader(files)
    if split == "RECORD":  # a seeded shuffle before the split: the global order is shuffled
        ds = ds.shuffle(40, seed=3)
    ds = ds.distribute(n, r, balance="labels", seed=1) if split == "labels" else ds.distribute(n, r, policy=split)
    ds = ds.map(parse)
    if after == "filter":
        ds = ds.filter(lambda i, label: i % 4 != 1)
    elif after == "shuffle":
        ds = ds.shuffle(9, seed=5)
    return ds.batch(BATCH).equal_steps().prefetch(2)


def wanted(after):
    return [i for i in range(TOTAL) if after != "filter" or i % 4 != 1]


def train(iterators, steps=None):
    """Every replica's batches (its real rows: ids and labels) on its own thread, ``steps`` of them or to the end."""

    def one(it):
        out = []
        while steps is None or len(out) < steps:
            try:
                ids, labels, weights = next(it)
            except StopIteration:
                break
            out.append((ids[weights > 0].tolist(), labels[weights > 0].tolist()))
        return out

    with ThreadPoolExecutor(len(iterators)) as pool:
        return list(pool.map(one, iterators))


def epoch(make, m, start):
    """One epoch on ``m`` replicas: each replica's iterator from ``start(replica)``, made in one agreement group."""
    with pf.distribute.replicas_in_process(m):
        iterators = [start(j) for j in range(m)]
    try:
        return train(iterators)
    finally:
        for it in iterators:
            it.close()


def ids_of(per_replica):
    return [i for steps in per_replica for ids, _ in steps for i in ids]


def stop_on_four(make, stop):
    """Train ``stop`` steps on 4 replicas; (ids trained, every replica's state)."""
    with pf.distribute.replicas_in_process(4):
        iterators = [iter(make(4, r)) for r in range(4)]
    trained = train(iterators, stop)
    states = [json.loads(json.dumps(pf.distribute.save_state(it, stop))) for it in iterators]
    for it in iterators:
        it.close()
    return ids_of(trained), states


@pytest.mark.timeout(240)
@pytest.mark.parametrize("after", ["nothing", "filter", "shuffle"])
@pytest.mark.parametrize(("fmt", "split"), CASES)  # (a Hugging Face dataset has no files to split by FILE or RECORD)
def test_resume_on_two_and_three_replicas_exactly_once(
    files, parquet_files, tar_files, array_record_files, hf_dataset, fmt, split, after
):
    def make(n, r):
        paths = {
            "tfrecord": files,
            "parquet": parquet_files,
            "webdataset": tar_files,
            "array_record": array_record_files,
            "huggingface": hf_dataset,
        }[fmt]
        return pipeline(paths, n, r, split, after, fmt)

    full = len(epoch(make, 4, lambda r: iter(make(4, r)))[0])  # steps of a whole epoch on 4
    stop = int(np.random.default_rng([len(split), len(after)]).integers(1, full))  # a random step inside the epoch
    before, states = stop_on_four(make, stop)
    assert len(before) > 0
    for m in (2, 3):
        epochs = [Epochs(make(m, j), states) for j in range(m)]
        rest = epoch(make, m, lambda j: epochs[j].next())
        assert len({len(steps) for steps in rest}) == 1, f"{split}/{after} on {m}: unequal steps"
        assert sorted(before + ids_of(rest)) == wanted(after), f"{split}/{after}: stopped at {stop}, resumed on {m}"
        if split == "labels" and after == "nothing":  # the rest dealt by class: within one per replica
            for c in range(CLASSES):
                per = [sum(label == c for _, labels in steps for label in labels) for steps in rest]
                assert max(per) - min(per) <= 1, (c, per)
        for _ in range(2):  # the next epochs are whole
            whole = epoch(make, m, lambda j: epochs[j].next())
            assert len({len(steps) for steps in whole}) == 1
            assert sorted(ids_of(whole)) == wanted(after)


@pytest.mark.timeout(120)
def test_a_resumed_epoch_resumes_again_on_another_count(files):
    """4 -> 2 -> 3 replicas within one epoch (a filter after the split): the second resume deals the first's rest."""

    def make(n, r):
        return pipeline(files, n, r, "FILE", "filter")

    before, states = stop_on_four(make, 3)
    with pf.distribute.replicas_in_process(2):
        iterators = [pf.distribute.resume(make(2, j), states) for j in range(2)]
    middle = train(iterators, 4)
    states = [json.loads(json.dumps(pf.distribute.save_state(it, 4))) for it in iterators]
    for it in iterators:
        it.close()
    assert states[0]["pass"]["rest"] and states[0]["steps"] == 7
    last = epoch(make, 3, lambda j: pf.distribute.resume(make(3, j), states))
    assert len({len(steps) for steps in last}) == 1
    assert sorted(before + ids_of(middle) + ids_of(last)) == wanted("filter")


@pytest.mark.timeout(60)
def test_the_same_replicas_restore_exactly_from_the_list(files):
    def make(n, r):
        return pipeline(files, n, r, "labels", "shuffle")

    _, states = stop_on_four(make, 2)
    with pf.distribute.replicas_in_process(4):
        resumed = [pf.distribute.resume(make(4, r), states) for r in range(4)]
        fresh = [iter(make(4, r)) for r in range(4)]
    after = train(resumed)
    whole = train(fresh)
    assert after == [steps[2:] for steps in whole]


@pytest.mark.timeout(60)
def test_elastic_resume_errors_name_the_fix(files):
    def make(n, r, after="nothing"):
        return pipeline(files, n, r, "FILE", after)

    _, states = stop_on_four(make, 1)
    with pytest.raises(StateError, match="every replica's state"):  # FILE from one replica's state
        pf.distribute.resume(make(2, 0), states[0])
    with pytest.raises(StateError, match="all 4 replicas"):
        pf.distribute.resume(make(2, 0), states[:3])
    skewed = [dict(s, steps=s["steps"] + (r == 1)) for r, s in enumerate(states)]
    with pytest.raises(StateError, match="same training step"):
        pf.distribute.resume(make(2, 0), skewed)

    def windowed(n, r):
        ds = pf.TFRecordDataset(files).distribute(n, r, policy="FILE").window(2).flat_map(lambda w: w)
        return ds.batch(BATCH).equal_steps(steps=4)

    its = [iter(windowed(4, r)) for r in range(4)]
    saved = [pf.distribute.save_state(it, 0) for it in its]
    with pytest.raises(StateError, match="move it before distribute"):
        pf.distribute.resume(windowed(2, 0), saved)

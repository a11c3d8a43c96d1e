"""Dataset.save / load and Dataset.snapshot: round trips, publication only when complete, pipeline keys, resume."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import DataLossError, ElementTypeError, InvalidArgumentError, NotFoundError


def test_round_trip_keeps_spec_cardinality_and_order(tmp_path):
    ds = pf.Dataset.from_tensor_slices({"x": np.arange(12).reshape(6, 2), "s": [b"a", b"b", b"", b"d", b"e", b"f"]})
    ds.save(str(tmp_path / "s"), compression="GZIP", shard_func=lambda e: e["x"][0] % 3)
    loaded = pf.Dataset.load(str(tmp_path / "s"), compression="GZIP", reader_func=lambda d: d.flat_map(lambda x: x))
    assert loaded.cardinality() == 6
    assert loaded.element_spec == ds.element_spec
    assert [int(e["x"][0]) for e in loaded] == [0, 6, 4, 10, 2, 8]  # shard 0, 1, 2 in turn
    assert [e["s"] for e in pf.Dataset.load(str(tmp_path / "s"), compression="GZIP")][:1] == [b"a"]
    with pytest.raises(DataLossError):  # read as uncompressed, as tf.data does when `compression` is left out
        list(pf.Dataset.load(str(tmp_path / "s")))


def test_a_failed_save_is_not_published_and_keeps_the_previous_one(tmp_path):
    path = str(tmp_path / "s")
    pf.Dataset.range(3).save(path)

    def boom(x):
        if x == 2:
            raise ValueError("boom")
        return x

    with pytest.raises(ValueError, match="boom"):
        pf.Dataset.range(5).map(boom).save(path)
    assert [int(x) for x in pf.Dataset.load(path)] == [0, 1, 2]
    assert len([d for d in os.listdir(path) if d.startswith("run-")]) == 1


def test_load_errors(tmp_path):
    with pytest.raises(NotFoundError):
        pf.Dataset.load(str(tmp_path / "missing"))
    path = str(tmp_path / "s")
    pf.Dataset.range(3).save(path)
    with pytest.raises(InvalidArgumentError, match="dtypes"):
        pf.Dataset.load(path, element_spec=pf.TensorSpec((), np.int32))
    with open(os.path.join(path, "pf_saved_dataset.json"), "w") as f:
        f.write("{not json")
    with pytest.raises(DataLossError):
        pf.Dataset.load(path)


def test_save_refuses_checkpoint_args_and_non_int64_shards(tmp_path):
    with pytest.raises(InvalidArgumentError, match="checkpoint_args"):
        pf.Dataset.range(3).save(str(tmp_path / "a"), checkpoint_args={"directory": str(tmp_path)})
    with pytest.raises(InvalidArgumentError, match="int64"):
        pf.Dataset.range(3).save(str(tmp_path / "b"), shard_func=lambda x: np.int32(0))
    with pytest.raises(InvalidArgumentError, match="compression"):
        pf.Dataset.range(3).save(str(tmp_path / "c"), compression="SNAPPY")


def test_load_resumes_from_every_position(tmp_path):
    pf.Dataset.range(20).save(str(tmp_path / "s"), shard_func=lambda x: x % 4)
    assert check_restores(pf.Dataset.load(str(tmp_path / "s"))) > 20


def test_snapshot_writes_once_then_reads_without_running_upstream(tmp_path):
    calls = []
    ds = pf.Dataset.range(6).map(lambda x: calls.append(1) or x * 2).snapshot(str(tmp_path / "snap"))
    assert [int(x) for x in ds] == [0, 2, 4, 6, 8, 10]
    assert len(calls) == 6  # one call per element (no sample to learn the spec)
    assert [int(x) for x in ds] == [0, 2, 4, 6, 8, 10]
    assert len(calls) == 6  # read from disk


def test_snapshot_calls_the_map_function_once_per_element_as_tf_data(tmp_path):
    """No extra call to learn the element spec (tf.data traces instead): 8 calls for 8 elements, then none; elements
    of varying shapes are read back as they were written."""
    import tensorflow as tf

    counts = {}

    def pipeline(lib, key, path):
        def f(x):
            counts[key] = counts.get(key, 0) + 1
            return np.arange(int(x) % 3, dtype=np.int64)

        fn = f if lib is pf else (lambda x: tf.py_function(f, [x], tf.int64))
        return lib.data.Dataset.range(8).map(fn).snapshot(str(path))

    for lib, key in ((pf, "pf"), (tf, "tf")):
        ds = pipeline(lib, key, tmp_path / key)
        first, second = ([np.asarray(x).tolist() for x in ds.as_numpy_iterator()] for _ in range(2))
        assert first == second == [list(range(i % 3)) for i in range(8)]
    assert counts == {"pf": 8, "tf": 8}


def test_an_unfinished_snapshot_is_not_reused(tmp_path):
    ds = pf.Dataset.range(6).snapshot(str(tmp_path / "snap"))
    it = iter(ds)
    next(it)
    it.close()
    (fingerprint,) = os.listdir(tmp_path / "snap")
    assert not os.path.exists(tmp_path / "snap" / fingerprint / "pf_saved_dataset.json")
    assert [int(x) for x in ds] == list(range(6))
    assert os.path.exists(tmp_path / "snap" / fingerprint / "pf_saved_dataset.json")


def test_a_changed_pipeline_gets_a_new_snapshot(tmp_path):
    path = str(tmp_path / "snap")
    list(pf.Dataset.range(4).map(lambda x: x + 1).snapshot(path))
    assert [int(x) for x in pf.Dataset.range(4).map(lambda x: x + 2).snapshot(path)] == [2, 3, 4, 5]
    offset = 10
    assert [int(x) for x in pf.Dataset.range(2).map(lambda x: x + offset).snapshot(path)] == [10, 11]
    offset = 20  # a captured value is part of the key
    assert [int(x) for x in pf.Dataset.range(2).map(lambda x: x + offset).snapshot(path)] == [20, 21]
    assert len(os.listdir(path)) == 4


def test_snapshot_checks_its_functions_when_built(tmp_path):
    with pytest.raises(TypeError):
        pf.Dataset.range(3).snapshot(str(tmp_path / "a"), reader_func=lambda d: d + 1)
    with pytest.raises(ElementTypeError):
        pf.Dataset.range(3).snapshot(str(tmp_path / "b"), shard_func=lambda x: "no")


def test_snapshot_resumes_while_writing_and_while_reading(tmp_path):
    ds = pf.Dataset.range(12).snapshot(str(tmp_path / "snap"), shard_func=lambda x: x % 3)
    assert check_restores(ds) > 12  # the first pass writes (a restored pass passes through)
    (fingerprint,) = os.listdir(tmp_path / "snap")
    assert os.path.exists(tmp_path / "snap" / fingerprint / "pf_saved_dataset.json")  # its reference pass wrote
    assert check_restores(ds) > 12  # reads


def test_metadata_names_the_run_and_the_count(tmp_path):
    pf.Dataset.range(5).save(str(tmp_path / "s"), shard_func=lambda x: x % 2)
    with open(tmp_path / "s" / "pf_saved_dataset.json") as f:
        meta = json.load(f)
    assert meta["num_elements"] == 5 and meta["shards"] == ["00000000.shard", "00000001.shard"]

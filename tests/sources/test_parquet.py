"""ParquetDataset against pyarrow's own reader (generated tables: column types, row-group sizes, empty files, many
small files), the guarantees of a file reader (exact shares, equal steps, label balance, resume from JSON) and its
errors. Elastic resume of Parquet files is in tests/distribute/test_elastic.py, object storage in
tests/storage/test_remote_formats.py."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import DataLossError, InvalidArgumentError
from tests.sources.arrow_values import TYPES, expected, plain, table

pytestmark = pytest.mark.timeout(120)


def write(folder, names, sizes, row_group_size):
    """Files of ``sizes`` rows of the columns ``names`` (row ``i`` of all of them has the values of ``i``)."""
    paths, first = [], 0
    for k, size in enumerate(sizes):
        path = str(folder / f"part-{k}.parquet")
        pq.write_table(table(names, first, size), path, row_group_size=row_group_size)
        paths.append(path)
        first += size
    return paths


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=5, unique=True),
    sizes=st.lists(st.integers(0, 30), min_size=1, max_size=4),
    row_group_size=st.integers(1, 12),
)
def test_rows_equal_pyarrows_in_order_with_tf_datas_types(tmp_path_factory, names, sizes, row_group_size):
    folder = tmp_path_factory.mktemp("pq")
    paths = write(folder, names, sizes, row_group_size)
    ds = pf.ParquetDataset(paths)
    want = [{n: expected(row[n], TYPES[n][0]) for n in names} for p in paths for row in pq.read_table(p).to_pylist()]
    got = list(ds.as_numpy_iterator())
    assert [plain(e) for e in got] == want
    spec = ds.element_spec
    for e in got:  # every element has the dataset's spec (dtypes as stored: int8 stays int8)
        for n in names:
            if isinstance(spec[n], pf.TensorSpec):
                assert np.asarray(e[n]).dtype == spec[n].dtype or spec[n].dtype == pf.string, (n, e[n], spec[n])
    assert ds.record_counts() == sizes  # from the footers


def test_types_and_spec(tmp_path):
    names = ["int8", "float32", "string", "list_int32", "fixed_list", "list_of_lists", "struct", "timestamp"]
    ds = pf.ParquetDataset(write(tmp_path, names, [5], 2))
    spec = ds.element_spec
    assert spec["int8"] == pf.TensorSpec((), pf.int8) and spec["float32"] == pf.TensorSpec((), pf.float32)
    assert spec["string"] == pf.TensorSpec((), pf.string) and spec["list_int32"] == pf.TensorSpec((None,), pf.int32)
    assert spec["fixed_list"] == pf.TensorSpec((2,), pf.float32) and spec["timestamp"] == pf.TensorSpec((), pf.int64)
    assert isinstance(spec["list_of_lists"], pf.RaggedTensorSpec)
    assert spec["struct"] == {"a": pf.TensorSpec((), pf.int64), "b": pf.TensorSpec((), pf.string)}
    first = next(iter(ds))  # a loop gets Tensors, as from tf.data
    assert first["int8"].numpy() == 0 - 50 and first["string"].numpy() == b""
    batch = next(iter(pf.ParquetDataset(write(tmp_path, ["int32", "string"], [5], 2)).batch(5)))
    assert batch["int32"].numpy().tolist() == [0, -1, -2, -3, -4] and batch["string"].shape == (5,)


def test_columns_picks_and_orders_and_nulls_take_defaults_or_fail_naming_file_row_column(tmp_path):
    path = str(tmp_path / "nulls.parquet")
    t = pa.table({"a": pa.array([1, None, 3], pa.int64()), "b": pa.array(["x", "y", None]), "c": [1.0, 2.0, 3.0],
                  "l": pa.array([[1], None, [2, 3]], pa.list_(pa.int64()))})  # fmt: skip
    pq.write_table(t, path, row_group_size=2)
    ds = pf.ParquetDataset(path, columns=["c", "a"], defaults={"a": -1})
    assert list(ds.element_spec) == ["c", "a"]
    assert [(float(e["c"]), int(e["a"])) for e in ds.as_numpy_iterator()] == [(1.0, 1), (2.0, -1), (3.0, 3)]
    filled = pf.ParquetDataset(path, defaults={"a": 0, "b": "none", "l": []})
    rows = list(filled.as_numpy_iterator())
    assert [e["b"] for e in rows] == [b"x", b"y", b"none"] and [e["l"].tolist() for e in rows] == [[1], [], [2, 3]]
    with pytest.raises(InvalidArgumentError, match=r"nulls.parquet, row 1: column 'a' is null.*defaults="):
        list(pf.ParquetDataset(path, columns=["a"]))
    with pytest.raises(InvalidArgumentError, match=r"row 2: column 'b' is null"):
        list(pf.ParquetDataset(path, columns=["b"]))
    items = str(tmp_path / "items.parquet")
    lists = pa.array([[1], [2, None]], pa.list_(pa.int64()))
    nested = pa.array([[[1]], [[2], [3, None]]], pa.list_(pa.list_(pa.int64())))
    pq.write_table(pa.table({"l": lists, "n": nested}), items)
    for column in ("l", "n"):
        with pytest.raises(InvalidArgumentError, match=rf"items.parquet, row 1: column '{column}' holds a null item"):
            list(pf.ParquetDataset(items, columns=[column], defaults={column: []}))
    with pytest.raises(InvalidArgumentError, match=r"has no column\(s\) \['zz'\]"):
        _ = pf.ParquetDataset(path, columns=["zz"]).element_spec
    with pytest.raises(InvalidArgumentError, match=r"`defaults` names column\(s\) \['b'\]"):
        _ = pf.ParquetDataset(path, columns=["a"], defaults={"b": ""}).element_spec
    with pytest.raises(InvalidArgumentError, match="must be a list of column names"):
        pf.ParquetDataset(path, columns="a")


def test_bad_files_name_the_file_and_the_fix(tmp_path):
    good = write(tmp_path, ["int32"], [40], 10)[0]
    data = open(good, "rb").read()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) - 20])  # the footer cut short
    with pytest.raises(DataLossError, match=r"cut.parquet is not a readable Parquet file"):
        list(pf.ParquetDataset(str(cut)))
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"int32": pa.array(["text"])}), str(other))
    with pytest.raises(InvalidArgumentError, match=r"column 'int32' is string in .*other.parquet but int32"):
        list(pf.ParquetDataset([good, str(other)]))
    mapped = tmp_path / "map.parquet"
    pq.write_table(pa.table({"m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64()))}), str(mapped))
    with pytest.raises(InvalidArgumentError, match=r"column 'm' has type map<string, int64.*columns="):
        _ = pf.ParquetDataset(str(mapped)).element_spec
    with pytest.raises(pf.errors.NotFoundError):
        list(pf.ParquetDataset(str(tmp_path / "missing.parquet")))


def test_state_saved_mid_epoch_as_json_resumes_exactly(tmp_path):
    paths = write(tmp_path, ["int64", "list_int32"], [13, 0, 20, 7], 4)
    for reads in (None, 2):
        ds = pf.ParquetDataset(paths, num_parallel_reads=reads)
        whole = [int(e["int64"]) for e in ds.as_numpy_iterator()]
        assert len(whole) == 40
        for stop in (0, 1, 4, 5, 17, 39, 40):
            it = iter(ds)
            head = [int(next(it)["int64"]) for _ in range(stop)]
            state = json.loads(json.dumps(it.get_state()))
            again = iter(ds)
            again.set_state(state)
            assert head + [int(e["int64"]) for e in again] == whole, (reads, stop)


@pytest.mark.parametrize("policy", ["FILE", "RECORD", "labels"])
def test_three_replicas_every_row_once_equal_steps_labels_balanced(tmp_path, policy):
    rows = [25, 3, 40, 12, 9]
    paths, first = [], 0
    for k, n in enumerate(rows):
        ids = np.arange(first, first + n, dtype=np.int64)
        path = str(tmp_path / f"p{k}.parquet")
        pq.write_table(pa.table({"id": ids, "label": (ids * 5) % 4}), path, row_group_size=7)
        paths.append(path)
        first += n
    ds = pf.ParquetDataset(paths).shuffle(16, seed=2)
    shares = []
    for r in range(3):
        split = ds.distribute(3, r, balance="labels") if policy == "labels" else ds.distribute(3, r, policy=policy)
        shares.append(list(split.map(lambda e: (e["id"], e["label"])).batch(4).equal_steps(steps=None)))
    assert len({len(s) for s in shares}) == 1  # equal steps
    ids = [int(i) for s in shares for ids, _, w in s for i, keep in zip(ids, w) if keep]
    assert sorted(ids) == list(range(sum(rows)))  # every row exactly once
    if policy == "labels":
        per = [np.bincount([int(y) for _, ys, w in s for y, keep in zip(ys, w) if keep], minlength=4) for s in shares]
        assert (np.max(per, axis=0) - np.min(per, axis=0)).max() <= 1


def test_worker_processes_read_the_same_rows(tmp_path):
    paths = write(tmp_path, ["int64", "string"], [30, 30], 8)
    ds = pf.ParquetDataset(paths).map(lambda e: (e["int64"], e["string"])).batch(4)
    on_host = [tuple(x.tolist() for x in b) for b in ds.as_numpy_iterator()]
    offloaded = ds.offload(executor="process", workers=2)
    assert [tuple(x.tolist() for x in b) for b in offloaded.as_numpy_iterator()] == on_host


def test_inspect_reports_rows_columns_labels_and_a_damaged_file(tmp_path, capsys):
    from parafeed.tools.cli import main

    path = str(tmp_path / "rows.parquet")
    t = pa.table(
        {"label": pa.array([0, 1, 1, 2, 1], pa.int64()), "tokens": pa.array([[1], [], [2, 3], [4], [5, 6, 7]])}
    )
    pq.write_table(t, path, row_group_size=2)
    assert main(["inspect", "--json", path]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["records"] == 5 and report["labels"] == {"0": 1, "1": 3, "2": 1} and not report["errors"]
    assert report["schema"]["tokens"]["min_values"] == 0 and report["schema"]["tokens"]["max_values"] == 3
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(open(path, "rb").read()[:-10])
    assert main(["inspect", str(bad)]) == 1
    assert "bad.parquet is not a readable Parquet file" in capsys.readouterr().out

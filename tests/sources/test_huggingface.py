"""Dataset.from_huggingface against Hugging Face ``datasets`` itself (generated tables of every column type; plain,
shuffled and streaming datasets; Parquet files loaded by ``load_dataset``), the guarantees of a source (exact shares,
equal steps, label balance, resume from JSON) and its errors. Elastic resume is in tests/distribute/test_elastic.py."""

from __future__ import annotations

import io
import json

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.sources import huggingface
from tests.sources.arrow_values import TYPES, expected, plain, table

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """Chunks of 4 rows, so that a few rows cross chunk boundaries."""
    monkeypatch.setattr(huggingface, "CHUNK", 4)


def hf_dataset(names, count, first=0):
    return datasets.Dataset(table(names, first, count))


def python_rows(rows, names):
    """Hugging Face's own rows as parafeed's values (tf.data's types)."""
    return [{n: expected(row[n], TYPES[n][0]) for n in names} for row in rows]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=5, unique=True),
    count=st.integers(0, 30),
    kind=st.sampled_from(["plain", "shuffled", "selected", "stream", "generator"]),
)
def test_rows_equal_the_datasets_own_in_order_with_tf_datas_types(names, count, kind):
    hf = hf_dataset(names, count)
    if kind == "shuffled":  # an indices mapping over the table
        hf = hf.shuffle(seed=count)
    elif kind == "selected":
        hf = hf.select(list(range(count))[::-2])
    elif kind == "stream":
        hf = hf.to_iterable_dataset(num_shards=max(1, min(3, count)))
    elif kind == "generator":
        rows = hf.to_list()
        hf = datasets.IterableDataset.from_generator(lambda: iter(rows), features=hf.features)
    ds = pf.Dataset.from_huggingface(hf)
    got = list(ds.as_numpy_iterator())
    assert [plain(e) for e in got] == python_rows(list(hf), names)
    spec = ds.element_spec
    for e in got:
        for n in names:
            if isinstance(spec[n], pf.TensorSpec) and spec[n].dtype != pf.string:
                assert np.asarray(e[n]).dtype == spec[n].dtype, (n, e[n], spec[n])
    streamed = kind in ("stream", "generator")
    assert ds.cardinality() == (pf.experimental.UNKNOWN_CARDINALITY if streamed else len(hf))


def test_columns_are_picked_and_ordered_and_spec_known_before_reading():
    hf = hf_dataset(["int32", "string", "list_of_lists", "struct"], 5)
    ds = pf.Dataset.from_huggingface(hf, columns=["string", "int32"])
    assert list(ds.element_spec) == ["string", "int32"]
    assert ds.element_spec["int32"] == pf.TensorSpec((), pf.int32)
    assert [(e["string"], int(e["int32"])) for e in ds.as_numpy_iterator()] == [
        (r["string"].encode(), r["int32"]) for r in hf
    ]
    full = pf.Dataset.from_huggingface(hf).element_spec
    assert full["list_of_lists"] == pf.RaggedTensorSpec((None, None), pf.int64, ragged_rank=1)
    assert full["struct"] == {"a": pf.TensorSpec((), pf.int64), "b": pf.TensorSpec((), pf.string)}


def test_parquet_files_loaded_by_load_dataset_give_what_parquetdataset_gives(tmp_path):
    """The Hub keeps datasets as Parquet: the same files through ``load_dataset`` and through ParquetDataset."""
    names = ["int64", "string", "list_int32", "float32"]
    paths = []
    for k, (first, count) in enumerate([(0, 9), (9, 14)]):
        paths.append(str(tmp_path / f"train-{k}.parquet"))
        pq.write_table(table(names, first, count), paths[-1], row_group_size=5)
    hf = datasets.load_dataset("parquet", data_files=paths, split="train", cache_dir=str(tmp_path / "cache"))
    via_hf = [plain(e) for e in pf.Dataset.from_huggingface(hf).as_numpy_iterator()]
    assert via_hf == [plain(e) for e in pf.ParquetDataset(paths).as_numpy_iterator()]
    assert len(via_hf) == 23


def png(seed):
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 255, (4, 5, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return pixels, out.getvalue()


def test_image_columns_give_the_encoded_file_stored_or_read_from_its_path(tmp_path):
    (first, stored), (second, on_disk) = png(1), png(2)
    path = tmp_path / "b.png"
    path.write_bytes(on_disk)
    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=["cat", "dog"])})
    hf = datasets.Dataset.from_dict(
        {"image": [{"bytes": stored, "path": None}, {"bytes": None, "path": str(path)}], "label": [0, 1]},
        features=features,
    )
    ds = pf.Dataset.from_huggingface(hf)
    assert ds.element_spec == {"image": pf.TensorSpec((), pf.string), "label": pf.TensorSpec((), pf.int64)}
    rows = list(ds.as_numpy_iterator())
    assert [r["image"] for r in rows] == [stored, on_disk]
    decoded = list(ds.map(lambda e: (pf.io.decode_png(e["image"]), e["label"])).as_numpy_iterator())
    assert np.array_equal(decoded[0][0], first) and np.array_equal(decoded[1][0], second)
    assert [int(y) for _, y in decoded] == [0, 1]


def nulls():
    return datasets.Dataset(pa.table({"id": pa.array(range(10), pa.int64()), "text": [f"t{i}" if i != 6 else None
                                                                                         for i in range(10)]}))  # fmt: skip


def test_a_null_names_the_row_and_column_or_takes_the_default():
    with pytest.raises(InvalidArgumentError, match=r"from_huggingface: .*row 6: column 'text' is null.*defaults="):
        list(pf.Dataset.from_huggingface(nulls()))
    with pytest.raises(InvalidArgumentError, match=r"the Hugging Face stream.*row 6: column 'text'"):
        list(pf.Dataset.from_huggingface(nulls().to_iterable_dataset()))
    filled = pf.Dataset.from_huggingface(nulls(), defaults={"text": "?"})
    assert [e["text"] for e in filled.as_numpy_iterator()][5:8] == [b"t5", b"?", b"t7"]
    # rows read by position (a replica's share under label balance): the row's own index
    labelled = pf.Dataset.from_huggingface(nulls()).distribute(2, 0, balance="labels", label="id")
    with pytest.raises(InvalidArgumentError, match="row 6: column 'text'"):
        list(labelled)


def test_bad_arguments_name_the_fix():
    hf = hf_dataset(["int32"], 3)
    with pytest.raises(InvalidArgumentError, match=r"has no column\(s\) \['nope'\]"):
        pf.Dataset.from_huggingface(hf, columns=["nope"])
    with pytest.raises(InvalidArgumentError, match="pass one split, e.g. dataset\\['train'\\]"):
        pf.Dataset.from_huggingface(datasets.DatasetDict({"train": hf}))
    with pytest.raises(ArgumentTypeError, match="from_tensor_slices"):
        pf.Dataset.from_huggingface({"a": [1]})
    with pytest.raises(InvalidArgumentError, match="list of column names"):
        pf.Dataset.from_huggingface(hf, columns="int32")
    with pytest.raises(InvalidArgumentError, match="no column 'label'.*label_fn"):
        pf.Dataset.from_huggingface(hf).distribute(2, 0, balance="labels")
    with pytest.raises(InvalidArgumentError, match="no tf.data counterpart"):
        pf.Dataset.from_huggingface(datasets.Dataset(pa.table({"n": pa.array([None], pa.null())})))


@pytest.mark.parametrize("kind", ["dataset", "stream", "generator"])
def test_state_saved_mid_epoch_as_json_resumes_exactly(kind):
    hf = hf_dataset(["int64", "string"], 19)
    source = {
        "dataset": hf.shuffle(seed=2),
        "stream": hf.to_iterable_dataset(num_shards=3),
        "generator": datasets.IterableDataset.from_generator(lambda: iter(hf.to_list()), features=hf.features),
    }[kind]
    ds = pf.Dataset.from_huggingface(source)
    whole = [int(e["int64"]) for e in ds.as_numpy_iterator()]
    assert sorted(whole) == [i * 10**10 for i in range(19)]
    for stop in (0, 1, 3, 4, 5, 11, 18, 19):
        it = iter(ds)
        head = [int(next(it)["int64"]) for _ in range(stop)]
        state = json.loads(json.dumps(it.get_state()))
        again = iter(ds)
        again.set_state(state)
        assert head + [int(e["int64"]) for e in again] == whole, (kind, stop)
        assert head + [int(e["int64"]) for e in it] == whole  # the saved iterator goes on too


@pytest.mark.parametrize("split", ["AUTO", "labels"])
def test_three_replicas_every_row_once_equal_steps_labels_balanced(split):
    ids = np.arange(50, dtype=np.int64)
    hf = datasets.Dataset.from_dict({"id": ids, "label": (ids * 5) % 4, "text": [f"r{i}" for i in ids]})
    ds = pf.Dataset.from_huggingface(hf, columns=["id", "label"])
    shares = []
    for r in range(3):
        part = ds.distribute(3, r, balance="labels") if split == "labels" else ds.distribute(3, r)
        shares.append(list(part.map(lambda e: (e["id"], e["label"])).batch(4).equal_steps(steps=None)))
    assert len({len(s) for s in shares}) == 1
    got = [int(i) for s in shares for i_, _, w in s for i, keep in zip(i_, w) if keep]
    assert sorted(got) == ids.tolist()
    if split == "labels":
        per = [np.bincount([int(y) for _, ys, w in s for y, keep in zip(ys, w) if keep], minlength=4) for s in shares]
        assert (np.max(per, axis=0) - np.min(per, axis=0)).max() <= 1


@pytest.mark.timeout(60)
def test_a_stream_on_three_replicas_agrees_on_equal_steps():
    from concurrent.futures import ThreadPoolExecutor

    hf = datasets.Dataset.from_dict({"id": np.arange(31, dtype=np.int64)}).to_iterable_dataset(num_shards=2)
    with pf.distribute.replicas_in_process(3):  # counts unknown: the replicas agree on the steps as they go
        iterators = [iter(pf.Dataset.from_huggingface(hf).distribute(3, r).batch(4).equal_steps()) for r in range(3)]
    with ThreadPoolExecutor(3) as pool:
        shares = list(pool.map(list, iterators))
    assert len({len(s) for s in shares}) == 1
    got = [int(i) for s in shares for b in s for i, w in zip(b["id"], b["sample_weight"]) if w]
    assert sorted(got) == list(range(31))


def test_worker_processes_read_the_same_rows():
    ds = pf.Dataset.from_huggingface(hf_dataset(["int64", "string"], 30)).map(lambda e: (e["int64"], e["string"]))
    on_host = [tuple(x.tolist() for x in b) for b in ds.batch(4).as_numpy_iterator()]
    offloaded = ds.batch(4).offload(executor="process", workers=2)
    assert [tuple(x.tolist() for x in b) for b in offloaded.as_numpy_iterator()] == on_host


def test_inspect_reports_a_saved_dataset_its_arrow_files_and_damage(tmp_path, capsys):
    from parafeed.tools.cli import main

    features = datasets.Features(
        {"label": datasets.ClassLabel(names=["a", "b", "c"]), "tokens": datasets.Sequence(datasets.Value("int64"))}
    )
    hf = datasets.Dataset.from_dict({"label": [0, 1, 1, 2, 1], "tokens": [[1], [], [2, 3], [4], [5, 6, 7]]}, features)
    folder = tmp_path / "saved"
    hf.save_to_disk(str(folder))
    (arrow,) = [str(p) for p in folder.glob("*.arrow")]
    assert main(["inspect", "--json", str(folder), arrow]) == 0
    saved, one_file = json.loads(capsys.readouterr().out)
    for report in (saved, one_file):
        assert report["records"] == 5 and report["labels"] == {"0": 1, "1": 3, "2": 1} and not report["errors"]
        assert (report["schema"]["tokens"]["min_values"], report["schema"]["tokens"]["max_values"]) == (0, 3)
    assert saved["bytes"] > one_file["bytes"] > 0
    splits = tmp_path / "splits"
    datasets.DatasetDict({"train": hf, "test": hf}).save_to_disk(str(splits))
    damaged = tmp_path / "damaged.arrow"
    damaged.write_bytes(open(arrow, "rb").read()[:300])
    assert main(["inspect", str(splits), str(damaged)]) == 1
    out = capsys.readouterr().out
    assert "holds a DatasetDict (splits ['test', 'train']); inspect one split's folder" in out
    assert "damaged.arrow is not a readable Hugging Face dataset" in out

"""Readers lend the rest of their chunk (DatasetIterator.lend): flat_map and the batch steps take from it at the speed
of a list. Whatever took the elements, positions, states, skips and errors are the same as one next() at a time."""

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from array_record.python.array_record_module import ArrayRecordWriter

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.core.iterator import take
from parafeed.io import array_record, parquet
from parafeed.sources import huggingface

pytestmark = pytest.mark.timeout(120)

ROWS = [11, 0, 23, 8]  # rows per file: chunks of 5 end inside files, an empty file between two


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(parquet, "BATCH_ROWS", 5)
    monkeypatch.setattr(array_record, "CHUNK", 5)
    monkeypatch.setattr(huggingface, "CHUNK", 5)


def _sources(tmp_path):
    """Each lending source over the same ids 0 .. 41, and a function from its element to the id."""
    paths, ids = {"parquet": [], "array_record": []}, np.arange(sum(ROWS))
    start = 0
    for k, n in enumerate(ROWS):
        part = ids[start : start + n]
        start += n
        path = str(tmp_path / f"part-{k}.parquet")
        pq.write_table(pa.table({"id": pa.array(part, pa.int64())}), path, row_group_size=7)
        paths["parquet"].append(path)
        path = str(tmp_path / f"part-{k}.array_record")
        writer = ArrayRecordWriter(path, "group_size:3")
        for i in part:
            writer.write(b"%d" % i)
        writer.close()
        paths["array_record"].append(path)
    return {
        "parquet": (pf.ParquetDataset(paths["parquet"]), lambda row: int(row["id"])),
        "array_record": (pf.ArrayRecordDataset(paths["array_record"]), int),
        "huggingface": (pf.Dataset.from_huggingface(datasets.Dataset.from_dict({"id": ids})), lambda r: int(r["id"])),
    }


PIPELINES = {
    "rows": lambda ds: ds,
    "batch": lambda ds: ds.batch(7),
    "skip, batch": lambda ds: ds.skip(3).batch(6, drop_remainder=True),
    "batch, unbatch, batch": lambda ds: ds.batch(4).unbatch().batch(9),
}


def _ids(element):
    """The ids in an element: a row or record, or a batch of them."""
    element = element["id"] if isinstance(element, dict) else element
    return [int(v) for v in np.asarray(element).reshape(-1)]


@pytest.mark.parametrize("source", ["parquet", "array_record", "huggingface"])
@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_lent_elements_keep_positions_and_states(tmp_path, small_chunks, source, pipeline):
    ds = PIPELINES[pipeline](_sources(tmp_path)[source][0])
    reference = PIPELINES[pipeline](pf.Dataset.range(sum(ROWS)))
    assert [_ids(e) for e in ds.as_numpy_iterator()] == [_ids(e) for e in reference.as_numpy_iterator()]
    assert check_restores(ds) == check_restores(reference) > 0


@pytest.mark.parametrize("source", ["parquet", "array_record", "huggingface"])
def test_what_was_lent_moves_the_lender_and_a_skip_ends_the_loan(tmp_path, small_chunks, source):
    ds, ident = _sources(tmp_path)[source]
    it = iter(ds)
    it = getattr(it, "_root", it)  # (the run's own iterator under iter()'s Tensor view)
    assert ident(next(it)) == 0
    assert it.lends
    lent = it.lend()
    assert [ident(e) for e in list(lent)] == [1, 2, 3, 4]  # the rest of the first chunk
    state = it.get_state()
    assert ident(next(it)) == 5  # the lender goes on after what was taken from it
    assert it.skip(3) == 3  # (within the first file: the flat map keeps its input)
    assert ident(next(it)) == 9  # a skip moved it past its earlier loans
    again = iter(ds)
    again.set_state(state)
    assert [ident(e) for e in again] == list(range(5, sum(ROWS)))


def test_take_gives_what_islice_gives_across_loans_and_non_lenders(tmp_path, small_chunks):
    ds, ident = _sources(tmp_path)["parquet"]
    it = ds.as_numpy_iterator()
    sizes, got = [3, 9, 1, 30, 8], []
    for n in sizes:
        got.append([ident(e) for e in take(it, n)])
    assert got == [[0, 1, 2], list(range(3, 12)), [12], list(range(13, 42)), []]
    plain = pf.Dataset.range(10).as_numpy_iterator()  # (does not lend)
    assert not plain.lends and take(plain, 4) == [0, 1, 2, 3]


def test_an_error_in_a_chunk_reaches_the_batch_and_ignore_errors_goes_on(tmp_path, small_chunks):
    path = str(tmp_path / "a.array_record")
    writer = ArrayRecordWriter(path, "group_size:10")
    for i in range(600):
        writer.write(b"record %06d" % i)
    writer.close()
    data = open(path, "rb").read()
    damaged = tmp_path / "damaged.array_record"
    damaged.write_bytes(data[:300] + bytes(64) + data[364:])  # (in the first group's data)
    with pytest.raises(pf.errors.DataLossError, match="damaged.array_record"):
        list(pf.ArrayRecordDataset(str(damaged)).batch(4))
    one_by_one = list(pf.ArrayRecordDataset(str(damaged)).ignore_errors().as_numpy_iterator())
    batched = pf.ArrayRecordDataset(str(damaged)).ignore_errors().batch(4).as_numpy_iterator()
    assert 0 < len(one_by_one) < 600 and [r for b in batched for r in b] == one_by_one


def test_an_ended_reader_is_not_asked_again(tmp_path):
    """After the last file, next() keeps raising StopIteration without reaching a closed reader (a WebDataset shard's
    tar file raises on a read once closed)."""
    import webdataset as wds

    paths = []
    for k in range(2):
        paths.append(str(tmp_path / f"shard-{k}.tar"))
        with wds.TarWriter(paths[-1]) as writer:
            for i in range(3):
                writer.write({"__key__": f"s{k}{i}", "cls": b"%d" % i})
    for ds in (pf.WebDataset(paths), _sources(tmp_path)["parquet"][0]):
        it = ds.as_numpy_iterator()
        assert len(list(it)) in (6, sum(ROWS))
        for _ in range(2):
            with pytest.raises(StopIteration):
                next(it)

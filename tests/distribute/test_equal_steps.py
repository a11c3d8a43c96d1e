import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from tests.distribute.test_sharding import SPEC, all_ids, write_files

SIZES = [40, 3, 17, 9, 1]  # uneven files: whole-file shares differ a lot


def parse(record):
    x = pf.io.parse_single_example(record, SPEC)
    return x["id"], x["label"]


def replica_batches(files, replicas, policy, batch=4, shard="FILE"):
    out = []
    for r in range(replicas):
        ds = pf.TFRecordDataset(files).distribute(replicas, r, policy=shard).map(parse).batch(batch)
        out.append(list(ds.equal_steps(policy)))
    return out


@pytest.mark.parametrize("replicas", [2, 3, 4])
@pytest.mark.parametrize("shard", ["FILE", "RECORD"])
def test_pad_gives_equal_steps_and_every_sample_once_with_weight_one(tmp_path, replicas, shard):
    files = write_files(tmp_path, SIZES)
    batches = replica_batches(files, replicas, "pad", shard=shard)
    assert len({len(b) for b in batches}) == 1  # the same number of steps everywhere
    assert {x[0].shape for b in batches for x in b} == {(4,)}  # every batch full: padded rows fill short ones
    real = [int(i) for b in batches for ids, _, w in b for i, wi in zip(ids, w) if wi == 1.0]
    padded = [int(i) for b in batches for ids, _, w in b for i, wi in zip(ids, w) if wi == 0.0]
    assert sorted(real) == all_ids(SIZES)
    assert set(padded) <= set(real) and all(wi in (0.0, 1.0) for b in batches for *_, w in b for wi in w)


def test_pad_fills_a_replica_that_runs_out_with_zero_weight_batches(tmp_path):
    files = write_files(tmp_path, [10, 2])  # FILE: replica 0 gets 10 records (3 batches), replica 1 gets 2 (1 batch)
    short = replica_batches(files, 2, "pad", shard="FILE")[1]
    assert len(short) == 3
    assert short[0][2].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert [b[2].tolist() for b in short[1:]] == [[0.0] * 4] * 2


def test_drop_stops_every_replica_at_the_shortest(tmp_path):
    files = write_files(tmp_path, SIZES)
    batches = replica_batches(files, 3, "drop")
    counts = pf.TFRecordDataset(files).distribute(3, 0, policy="FILE").map(parse).batch(4)._replica_counts()
    assert [len(b) for b in batches] == [min(counts)] * 3
    assert all(len(x) == 2 for b in batches for x in b)  # no weights added


def test_repeat_restarts_short_replicas(tmp_path):
    files = write_files(tmp_path, [10, 2])
    batches = replica_batches(files, 2, "repeat", shard="FILE")
    assert [len(b) for b in batches] == [3, 3]
    short_ids = [int(i) for ids, _ in batches[1] for i in ids]
    assert short_ids == [1000, 1001] * 3  # its two records, once per pass


def test_dict_elements_get_a_sample_weight_entry():
    ds = pf.Dataset.from_tensor_slices({"x": np.arange(7)}).distribute(2, 1).batch(2).equal_steps()
    out = list(ds)
    assert [set(b) for b in out] == [{"x", "sample_weight"}] * 2
    assert out[-1]["sample_weight"].tolist() == [1.0, 0.0] and out[-1]["x"].tolist() == [5, 5]
    assert ds.element_spec == {"x": pf.TensorSpec((2,), np.int64), "sample_weight": pf.TensorSpec((2,), np.float32)}
    assert len(ds) == 2


def test_unknown_counts_need_steps_and_count_batches_gives_them():
    def make(n, r):
        return pf.Dataset.range(30).distribute(n, r).filter(lambda x: x % 3 != 0 or x > 20).batch(4)

    with pytest.raises(InvalidArgumentError, match=r"torch.distributed.*steps=.*count_batches"):
        next(iter(make(2, 0).equal_steps()))  # (without a process group to agree through)
    counts = pf.distribute.count_batches(make, 2)
    assert counts == [sum(1 for _ in make(2, r)) for r in range(2)]
    steps = max(counts)
    assert [len(list(make(2, r).equal_steps(steps=steps))) for r in range(2)] == [steps, steps]
    with pytest.raises(InvalidArgumentError, match="infinite"):
        pf.distribute.count_batches(lambda n, r: pf.Dataset.range(4).repeat(), 2)


def test_equal_steps_errors():
    with pytest.raises(InvalidArgumentError, match="policy"):
        pf.Dataset.range(8).distribute(2, 0).batch(2).equal_steps("wrap")
    with pytest.raises(InvalidArgumentError, match="steps"):
        pf.Dataset.range(8).distribute(2, 0).batch(2).equal_steps(steps=-1)
    with pytest.raises(InvalidArgumentError, match="no data at all"):
        list(pf.Dataset.range(1).distribute(2, 1).batch(2).equal_steps(steps=1))
    with pytest.raises(InvalidArgumentError, match="ran out before"):
        list(pf.Dataset.range(8).distribute(2, 0).batch(2).equal_steps("drop", steps=3))
    with pytest.raises(InvalidArgumentError, match="batches"):
        list(pf.Dataset.range(8).distribute(2, 0).equal_steps())  # pad needs batches to add weights to

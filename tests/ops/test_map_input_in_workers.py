"""``map(executor="process")`` + ``batch`` with ``map_input_in_workers`` (the default): the workers read the input
themselves (an offload); the same batches, errors, random draws and checkpoints as the map fed by this process, which
reads no record."""

import json

import numpy as np
import pytest

import parafeed as pf
from parafeed.io.tfrecord import TFRecordFileReader

pytestmark = pytest.mark.timeout(180)

SPEC = {"id": pf.io.FixedLenFeature([], "int64")}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder, paths, i = tmp_path_factory.mktemp("records"), [], 0
    for k, count in enumerate([40, 13, 27, 31, 9]):
        paths.append(str(folder / f"part-{k}.tfrecord"))
        with pf.io.TFRecordWriter(paths[-1]) as writer:
            for _ in range(count):
                writer.write(pf.io.serialize_example({"id": i}))
                i += 1
    return paths


def decode(record):
    i = pf.io.parse_single_example(record, SPEC)["id"]
    if i == 57:
        raise ValueError("record 57 is bad")
    return {"image": np.full((8, 8), i, np.float32), "id": i}


def pipeline(files, in_workers, drop=False):
    ds = pf.TFRecordDataset(files, num_parallel_reads=3).repeat(2)
    ds = ds.map(decode, num_parallel_calls=2, executor="process").batch(10, drop_remainder=drop)
    options = pf.Options()
    options.experimental_optimization.map_input_in_workers = in_workers
    return ds.with_options(options)


def outcomes(it, limit=None):
    """The batches' ids, or the error's message in a failed batch's place."""
    out = []
    while limit is None or len(out) < limit:
        try:
            out.append(next(it)["id"].tolist())
        except StopIteration:
            break
        except ValueError as err:
            out.append(str(err))
    return out


@pytest.mark.parametrize("drop", [False, True])
def test_the_workers_read_the_input_and_give_the_same_batches_and_errors(files, drop, monkeypatch):
    fed = outcomes(iter(pipeline(files, False, drop)))
    read = []
    original = TFRecordFileReader.__next__

    def counting(self):
        read.append(1)
        return original(self)

    monkeypatch.setattr(TFRecordFileReader, "__next__", counting)  # (in this process only)
    assert outcomes(iter(pipeline(files, True, drop))) == fed
    assert read == []  # not one record read here
    assert sum(1 for o in fed if isinstance(o, str)) == 2 and "record 57 is bad" in fed  # (once per repeat)


@pytest.mark.parametrize(("saved", "restored"), [(True, True), (True, False), (False, True)])
def test_a_checkpoint_restores_into_the_pipeline_run_either_way(files, saved, restored):
    """The states are the pipeline's on one host: saved with the input in the workers or not, restored either way."""
    whole = outcomes(iter(pipeline(files, False)))
    for taken in (0, 7, 12):  # at the start, past the failed batch, into the second repeat
        it = iter(pipeline(files, saved))
        first = outcomes(it, taken)
        state = json.loads(json.dumps(it.get_state()))
        it.close()
        assert "block_shard" not in json.dumps(state)
        again = iter(pipeline(files, restored))
        again.set_state(state)
        assert first + outcomes(again) == whole


@pytest.fixture
def global_seed():
    yield
    pf.random.set_seed(None)


def test_random_draws_are_the_pipelines_on_one_host(files, global_seed):
    """A map's random operations draw per element from the run's seed and the element's index, which workers that
    skip each other's batches count as one host does (so do offload()'s workers)."""

    def noisy(record):
        i = pf.io.parse_single_example(record, SPEC)["id"]
        return pf.random.uniform([3], seed=7) + pf.cast(i, pf.float32)

    def run(in_workers=None, offload=None):
        pf.random.set_seed(11)  # (the map's seed: the same in every pipeline built here)
        ds = pf.TFRecordDataset(files, num_parallel_reads=3)
        if offload is None:
            ds = ds.map(noisy, num_parallel_calls=3, executor="process").batch(4)
        else:
            ds = ds.map(noisy).batch(4).offload(executor="process", workers=offload)
        if in_workers is not None:
            options = pf.Options()
            options.experimental_optimization.map_input_in_workers = in_workers
            ds = ds.with_options(options)
        return np.concatenate(list(ds.as_numpy_iterator()))

    one_host = run(in_workers=False)
    assert len(np.unique(np.round(one_host - np.floor(one_host), 6))) > 300  # (draws differ between elements)
    np.testing.assert_array_equal(run(), one_host)
    for workers in (2, 3):
        np.testing.assert_array_equal(run(offload=workers), one_host)


def test_an_elastic_resume_from_workers_states(files):
    """Every replica's state, saved with the input in the workers, resumes the epoch on another number of replicas:
    every record once."""

    def make(num_replicas, replica_id):
        ds = pf.TFRecordDataset(files).distribute(num_replicas, replica_id, policy="RECORD")
        return ds.map(decode_ok, num_parallel_calls=2, executor="process").batch(5)

    states, seen = [], []
    for r in range(3):
        it = iter(make(3, r))
        seen += [i for _ in range(2) for i in next(it)["id"].tolist()]
        states.append(pf.distribute.save_state(it, 2))
        it.close()
    states = json.loads(json.dumps(states))
    for r in range(2):
        seen += [i for batch in pf.distribute.resume(make(2, r), states) for i in batch["id"].tolist()]
    assert sorted(seen) == list(range(120))


def decode_ok(record):
    i = pf.io.parse_single_example(record, SPEC)["id"]
    return {"image": np.full((8, 8), i, np.float32), "id": i}


def test_a_generator_input_stays_here(files, monkeypatch):
    def records():
        yield from pf.TFRecordDataset(files).as_numpy_iterator()

    options = pf.Options()
    options.experimental_optimization.map_input_in_workers = True
    ds = pf.Dataset.from_generator(records, output_signature=pf.TensorSpec([], pf.string))
    ds = ds.map(decode, num_parallel_calls=2, executor="process").batch(10).with_options(options)
    plain = outcomes(iter(pf.TFRecordDataset(files).map(decode, num_parallel_calls=2, executor="process").batch(10)))
    read = []
    original = TFRecordFileReader.__next__
    monkeypatch.setattr(TFRecordFileReader, "__next__", lambda self: read.append(1) or original(self))
    assert outcomes(iter(ds)) == plain
    assert len(read) > 100  # the generator ran here (not again in every worker)

"""``map(executor="process")`` + ``batch`` with ``map_input_in_workers``: the workers read the input themselves (an
offload); the same batches, errors and checkpoints as the map fed by this process, which reads no record."""

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


def test_a_checkpoint_restores_into_the_same_pipeline(files):
    ds = pipeline(files, True)
    it = iter(ds)
    first = outcomes(it, 7)  # past the failed batch
    state = json.loads(json.dumps(it.get_state()))
    rest = outcomes(it)
    it.close()
    again = iter(ds)
    again.set_state(state)
    assert outcomes(again) == rest and first + rest == outcomes(iter(pipeline(files, False)))


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

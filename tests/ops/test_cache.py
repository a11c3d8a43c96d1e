import collections
import os

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import DataLossError, InvalidArgumentError
from tests.helpers import assert_elements_equal


def counting_source(calls):
    return pf.Dataset.range(5).map(lambda x: calls.append(int(x)) or (x, np.full(2, x * 0.5), b"s%d" % x))


def test_memory_cache_computes_once():
    calls = []
    ds = counting_source(calls).cache()
    first, second = list(ds), list(ds)
    assert_elements_equal(first, second)
    assert calls == [0, 1, 2, 3, 4]


def test_unfinished_memory_pass_is_discarded():
    calls = []
    ds = counting_source(calls).cache()
    it = iter(ds)
    next(it), next(it)
    it.close()
    assert len(list(ds)) == 5 and calls == [0, 1, 0, 1, 2, 3, 4]


def test_file_cache_roundtrip_and_reuse_across_dataset_objects(tmp_path):
    calls = []
    path = str(tmp_path / "c")
    first = list(counting_source(calls).cache(path))
    assert os.path.exists(path + ".pfcache")
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]
    again = list(counting_source(calls).cache(path))  # a new pipeline object reads the file
    assert_elements_equal(first, again)
    assert calls == [0, 1, 2, 3, 4]  # the file's header describes the elements: the function is not run again


def test_file_cache_keeps_every_dtype_and_shape(tmp_path):
    element = {
        "u8": np.arange(6, dtype=np.uint8).reshape(2, 3),
        "f16": np.float16(1.5),
        "c": np.complex64(1 + 2j),
        "b": np.array([True, False]),
        "s": np.array([[b"a", b""], [b"\x00\xff", b"longer"]], dtype=object),
        "empty": np.zeros((0, 4), np.float32),
    }
    ds = pf.Dataset.from_tensors(element).repeat(3)
    assert_elements_equal(list(ds), list(ds.cache(str(tmp_path / "c"))))
    assert_elements_equal(list(ds), list(ds.cache(str(tmp_path / "c"))))


def test_unfinished_file_pass_leaves_no_cache(tmp_path):
    path = str(tmp_path / "c")
    it = iter(pf.Dataset.range(10).cache(path))
    next(it)
    it.close()
    assert os.listdir(tmp_path) == []


def test_error_during_the_first_pass_leaves_no_cache(tmp_path):
    def fail_at_3(x):
        if x == 3:
            raise ValueError("bad element")
        return x

    path = str(tmp_path / "c")
    with pytest.raises(ValueError, match="bad element"):
        list(pf.Dataset.range(5).map(fail_at_3).cache(path))
    assert os.listdir(tmp_path) == []


def corrupt(path, offset_from_end=None, truncate=None):
    data = bytearray(open(path, "rb").read())
    if truncate is not None:
        data = data[:truncate]
    else:
        data[len(data) - offset_from_end] ^= 0x40
    open(path, "wb").write(bytes(data))


@pytest.mark.parametrize("damage", ["flip-record", "flip-header", "truncate-footer", "truncate-half", "bad-magic"])
def test_damaged_cache_files_are_detected(tmp_path, damage):
    path = str(tmp_path / "c")
    ds = pf.Dataset.range(50).map(lambda x: (x, np.full(4, x)))
    list(ds.cache(path))
    file = path + ".pfcache"
    size = os.path.getsize(file)
    if damage == "flip-record":
        corrupt(file, offset_from_end=40)
    elif damage == "flip-header":
        corrupt(file, offset_from_end=size - 30)
    elif damage == "truncate-footer":
        corrupt(file, truncate=size - 3)
    elif damage == "truncate-half":
        corrupt(file, truncate=size // 2)
    else:
        corrupt(file, offset_from_end=size)
    with pytest.raises(DataLossError, match="c.pfcache"):
        list(ds.cache(path))


def test_cache_written_by_another_pipeline_is_refused(tmp_path):
    """Checked when the input's spec is known without running a user function."""
    path = str(tmp_path / "c")
    list(pf.Dataset.range(3).cache(path))
    with pytest.raises(InvalidArgumentError, match="written by another pipeline"):
        list(pf.Dataset.from_tensor_slices(np.array([0.5, 1.0, 1.5])).cache(path))


Point = collections.namedtuple("Point", ["x", "y"])


def test_replay_rebuilds_nesting_from_the_header(tmp_path):
    """Tuples, dicts in their key order (int keys too), namedtuples of an imported module, nothing run upstream."""
    calls = []

    def make(i):
        calls.append(int(i))
        return {"z": Point(i, np.float32(i) / 2), "n": {3: (b"k%d" % i, ()), 1: i}, "a": np.full((2,), i, np.int16)}

    path = str(tmp_path / "c")
    first = list(pf.Dataset.range(4).map(make).cache(path))
    calls.clear()
    again = list(pf.Dataset.range(4).map(make).cache(path))
    assert calls == []
    assert_elements_equal(first, again)
    assert [(list(e), list(e["n"])) for e in again] == [(["z", "n", "a"], [3, 1])] * 4
    assert all(type(e["z"]) is Point for e in again)


def test_replay_asks_the_pipeline_when_the_header_cannot_name_the_class(tmp_path):
    Local = collections.namedtuple("Local", ["v"])  # defined in a function: no importable name
    calls = []

    def make(i):
        calls.append(int(i))
        return Local(i * 2)

    path = str(tmp_path / "c")
    list(pf.Dataset.range(3).map(make).cache(path))
    calls.clear()
    again = list(pf.Dataset.range(3).map(make).cache(path))
    assert [type(e) for e in again] == [Local] * 3 and [int(e.v) for e in again] == [0, 2, 4]
    assert calls == [0]  # the nesting came from the element spec, read off the first element


def test_an_empty_cache_file_replays_nothing(tmp_path):
    calls = []
    ds = pf.Dataset.range(3).filter(lambda x: calls.append(int(x)) or False).cache(str(tmp_path / "c"))
    assert list(ds) == [] and calls == [0, 1, 2]
    assert list(ds) == [] and calls == [0, 1, 2]


def test_cache_file_from_an_older_parafeed_is_named_so(tmp_path):
    path = str(tmp_path / "c")
    list(pf.Dataset.range(3).cache(path))
    data = open(path + ".pfcache", "rb").read()
    open(path + ".pfcache", "wb").write(b"PFCACHE1" + data[8:])
    with pytest.raises(DataLossError, match=r"written by an older parafeed\); delete it"):
        list(pf.Dataset.range(3).cache(path))


def test_cache_file_holds_no_pickle(tmp_path):
    path = str(tmp_path / "c")
    list(pf.Dataset.from_tensor_slices(["a", "b"]).cache(path))
    data = open(path + ".pfcache", "rb").read()
    assert data.startswith(b"PFCACHE2") and b"\x80\x04" not in data  # no pickle protocol header anywhere


def test_cache_into_a_missing_directory_fails_clearly(tmp_path):
    with pytest.raises(OSError, match="cannot create the cache file"):
        list(pf.Dataset.range(3).cache(str(tmp_path / "missing" / "c")))

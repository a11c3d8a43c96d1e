"""``Dataset.counter`` and ``Dataset.random``."""

import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import ElementTypeError


def test_counter_values_dtypes_and_cardinality():
    assert [int(x) for x in pf.Dataset.counter().take(3)] == [0, 1, 2]
    assert [int(x) for x in pf.Dataset.counter(10, -2).take(3)] == [10, 8, 6]
    ds = pf.Dataset.counter(2**31 - 2, dtype=np.int32)
    assert [int(x) for x in ds.take(3)] == [2**31 - 2, 2**31 - 1, -(2**31)]  # wraps around as tf.data's
    assert ds.element_spec == pf.TensorSpec((), np.int32) and ds.cardinality() == pf.INFINITE
    assert [int(x) for x in pf.Dataset.counter(254, dtype=np.uint8).take(3)] == [254, 255, 0]
    floats = list(pf.Dataset.counter(0, 0.1, dtype=np.float32).take(4).as_numpy_iterator())
    assert floats == [np.float32(0), np.float32(0.1), np.float32(0.1) + np.float32(0.1),
                      np.float32(0.1) + np.float32(0.1) + np.float32(0.1)]  # fmt: skip
    assert all(type(x) is np.float32 for x in floats)
    assert [int(x) for x in pf.experimental.Counter(5, 5).take(2)] == [5, 10]


def test_counter_refuses_what_tf_data_refuses():
    with pytest.raises(ElementTypeError, match="0.5"):
        pf.Dataset.counter(0.5)
    with pytest.raises(ElementTypeError, match="integer or float"):
        pf.Dataset.counter(dtype="string")


def test_counter_resumes():
    assert check_restores(pf.Dataset.counter(3, 7).take(20)) > 0
    assert check_restores(pf.Dataset.counter(0, 0.1, dtype=np.float64).take(20)) > 0
    it = iter(pf.Dataset.counter(1, 3))
    assert it.skip(1000) == 1000 and int(next(it)) == 3001


def _take(ds, n=8):
    return [int(x) for x in ds.take(n)]


def test_random_is_int64_forever_and_deterministic_per_seed():
    ds = pf.Dataset.random(seed=42)
    assert ds.element_spec == pf.TensorSpec((), np.int64) and ds.cardinality() == pf.INFINITE
    values = np.array(list(ds.take(3000)))
    assert values.dtype == np.int64 and values.min() >= 0 and values.max() < 2**32  # tf.data's range
    assert len(set(values.tolist())) > 2990
    assert _take(pf.Dataset.random(seed=42)) == _take(pf.Dataset.random(seed=42)) != _take(pf.Dataset.random(seed=43))
    unseeded = pf.Dataset.random()
    assert _take(unseeded) == _take(unseeded) != _take(pf.Dataset.random())  # a seed drawn per dataset


@pytest.mark.parametrize("rerandomize", [None, False, True])
def test_random_rerandomizes_each_iteration_only_when_asked(rerandomize):
    ds = pf.Dataset.random(seed=42, rerandomize_each_iteration=rerandomize).take(10)
    first, second = [int(x) for x in ds], [int(x) for x in ds]
    assert (first == second) == (not rerandomize)
    repeated = [int(x) for x in ds.repeat(2)]
    assert (repeated[:10] == repeated[10:]) == (not rerandomize)


def test_random_resumes():
    assert check_restores(pf.Dataset.random(seed=1).take(2100), stops=[0, 5, 1023, 1024, 2000]) > 0
    assert check_restores(pf.Dataset.random(seed=1, rerandomize_each_iteration=True).take(40).repeat(2)) > 0
    unseeded = pf.Dataset.random().take(30)
    it = iter(unseeded)
    next(it)
    state = it.get_state()
    rest = [int(x) for x in it]
    again = iter(unseeded)
    again.set_state(state)
    assert [int(x) for x in again] == rest

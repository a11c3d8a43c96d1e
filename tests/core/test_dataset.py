import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ElementTypeError

PIPELINES = {
    "range": lambda: pf.Dataset.range(5),
    "slices": lambda: pf.Dataset.from_tensor_slices({"a": [1, 2, 3]}),
    "tensors": lambda: pf.Dataset.from_tensors(1),
    "generator": lambda: pf.Dataset.from_generator(lambda: iter([1, 2]), output_signature=pf.TensorSpec((), "int64")),
    "map": lambda: pf.Dataset.range(5).map(lambda x: x * 2),
    "filter": lambda: pf.Dataset.range(5).filter(lambda x: x > 1),
    "batch": lambda: pf.Dataset.range(5).batch(2),
    "padded_batch": lambda: pf.Dataset.range(5).map(lambda x: np.zeros(x)).padded_batch(2),
    "unbatch": lambda: pf.Dataset.range(6).batch(4).unbatch(),
    "rebatch": lambda: pf.Dataset.range(6).batch(4).rebatch(3),
    "shuffle": lambda: pf.Dataset.range(5).shuffle(3),
    "repeat": lambda: pf.Dataset.range(2).repeat(2),
    "take": lambda: pf.Dataset.range(5).take(2),
    "skip": lambda: pf.Dataset.range(5).skip(2),
    "take_while": lambda: pf.Dataset.range(5).take_while(lambda x: x < 3),
    "concatenate": lambda: pf.Dataset.range(2).concatenate(pf.Dataset.range(2)),
    "enumerate": lambda: pf.Dataset.range(3).enumerate(),
    "zip": lambda: pf.Dataset.zip((pf.Dataset.range(2), pf.Dataset.range(3))),
    "window": lambda: pf.Dataset.range(5).window(2).flat_map(lambda w: w),
    "interleave": lambda: pf.Dataset.range(3).interleave(lambda x: pf.Dataset.range(x), cycle_length=2),
    "group_by_window": lambda: pf.Dataset.range(6).group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2),
    "shard": lambda: pf.Dataset.range(6).shard(2, 1),
    "cache": lambda: pf.Dataset.range(3).cache(),
    "prefetch": lambda: pf.Dataset.range(3).prefetch(1),
    "unique": lambda: pf.Dataset.from_tensor_slices([1, 1, 2]).unique(),
}


@pytest.mark.parametrize("name", PIPELINES)
def test_exhausted_iterators_keep_raising_stop_iteration(name):
    it = iter(PIPELINES[name]())
    list(it)
    for _ in range(3):
        with pytest.raises(StopIteration):
            next(it)
    it.close()
    it.close()  # close is idempotent


@pytest.mark.parametrize("name", PIPELINES)
def test_datasets_can_be_iterated_again(name):
    ds = PIPELINES[name]()
    first, second = list(ds), list(ds)
    assert len(first) == len(second) > 0


def test_len_and_cardinality():
    assert len(pf.Dataset.range(7).batch(2)) == 4
    assert int(pf.Dataset.range(7).filter(lambda x: True).cardinality()) == pf.UNKNOWN
    with pytest.raises(TypeError, match="unknown"):
        len(pf.Dataset.range(7).filter(lambda x: True))
    assert pf.INFINITE_CARDINALITY == pf.INFINITE == -1 and pf.UNKNOWN_CARDINALITY == pf.UNKNOWN == -2


def test_apply_and_reduce():
    assert [int(x) for x in pf.Dataset.range(3).apply(lambda ds: ds.map(lambda x: x + 1))] == [1, 2, 3]
    with pytest.raises(TypeError, match="must return a Dataset"):
        pf.Dataset.range(3).apply(lambda ds: 1)
    assert pf.Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x) == 10
    count = pf.Dataset.range(5).reduce(0, lambda s, _: s + 1)
    assert count == 5 and count.dtype == np.int32


def test_reduce_keeps_the_state_dtype_and_structure():
    with pytest.raises(ElementTypeError, match="changed component 0 of the state from int32 to int64"):
        pf.Dataset.range(3).reduce(0, lambda s, x: s + x)
    with pytest.raises(ElementTypeError, match="structure"):
        pf.Dataset.range(3).reduce((0, 0), lambda s, x: s[0])


def test_repr_does_not_compute_the_spec():
    calls = []
    ds = pf.Dataset.range(3).map(lambda x: calls.append(1) or x)
    assert repr(ds) == "<MapDataset>"
    assert calls == []


def test_as_numpy_iterator_and_context_manager():
    with pf.Dataset.range(3).as_numpy_iterator() as it:
        assert int(next(it)) == 0

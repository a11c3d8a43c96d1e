import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError


def order(ds):
    return [int(x) for x in ds]


def test_same_seed_same_order_and_a_permutation():
    a = order(pf.Dataset.range(100).shuffle(10, seed=3))
    b = order(pf.Dataset.range(100).shuffle(10, seed=3))
    assert a == b and sorted(a) == list(range(100)) and a != list(range(100))
    assert order(pf.Dataset.range(100).shuffle(10, seed=4)) != a


def test_reshuffle_each_iteration():
    ds = pf.Dataset.range(50).shuffle(50, seed=1)
    assert order(ds) != order(ds)
    fixed = pf.Dataset.range(50).shuffle(50, seed=1, reshuffle_each_iteration=False)
    assert order(fixed) == order(fixed)
    epochs = order(pf.Dataset.range(20).shuffle(20, seed=1).repeat(2))
    assert epochs[:20] != epochs[20:] and sorted(epochs[:20]) == sorted(epochs[20:])


def test_buffer_one_keeps_order_and_buffer_bounds_displacement():
    assert order(pf.Dataset.range(20).shuffle(1)) == list(range(20))
    out = order(pf.Dataset.range(1000).shuffle(8, seed=0))
    assert all(out[i] <= i + 7 for i in range(1000))  # element i + 8 cannot be out before position i


def test_full_buffer_shuffle_is_roughly_uniform():
    counts = np.zeros((5, 5))
    ds = pf.Dataset.range(5).shuffle(5, seed=123)
    for _ in range(2000):
        for pos, x in enumerate(ds):
            counts[pos, int(x)] += 1
    assert counts.min() > 300 and counts.max() < 500  # expected 400 each


def test_buffer_size_must_be_positive():
    with pytest.raises(InvalidArgumentError, match="buffer_size"):
        pf.Dataset.range(3).shuffle(0)

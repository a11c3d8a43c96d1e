"""Random operations inside map functions draw from the pipeline's seeds: the same seed gives the same elements on
every run and executor, a restored iterator goes on with the draws the uninterrupted run made, epochs differ."""

import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores


def jitter(x):
    noise = pf.random.uniform([3], -1.0, 1.0, seed=7)
    return pf.cast(x, pf.float32) + noise + pf.random.normal([], dtype=pf.float32)


def pipeline(executor=None):
    pf.random.set_seed(11)
    ds = pf.Dataset.range(40)
    return ds.map(jitter, num_parallel_calls=3, executor=executor) if executor else ds.map(jitter)


def values(ds):
    return [x.tolist() for x in ds]


@pytest.fixture(autouse=True)
def no_global_seed():
    yield
    pf.random.set_seed(None)


def test_same_seed_same_draws_on_every_executor_and_epochs_differ():
    serial = pipeline()
    first, second = values(serial), values(serial)
    assert first != second  # each epoch draws anew (the iteration is part of every element's key)
    for executor in ("thread", "process"):
        ds = pipeline(executor)
        assert values(ds) == first and values(ds) == second, executor
    assert len({tuple(v) for v in first}) == 40  # elements draw differently from each other


def test_a_restored_iterator_goes_on_with_the_same_draws():
    assert check_restores(pipeline(), stops=[0, 1, 17, 39]) > 0
    assert check_restores(pipeline("thread").batch(4), stops=[0, 3, 9]) > 0


def test_without_a_global_seed_every_dataset_draws_its_own():
    a = pf.Dataset.range(10).map(jitter)
    b = pf.Dataset.range(10).map(jitter)
    assert a.seed != b.seed and values(a) != values(b)
    assert pf.Dataset.range(3).map(lambda x: x + 1).seed is None  # no random operation: no seed, no keying


def test_stateless_draws_depend_on_their_seed_only():
    a = pf.random.stateless_uniform([4], seed=[1, 2])
    assert np.array_equal(a, pf.random.stateless_uniform([4], seed=[1, 2]))
    assert not np.array_equal(a, pf.random.stateless_uniform([4], seed=[1, 3]))
    with pytest.raises(pf.errors.InvalidArgumentError, match="shape \\[2\\]"):
        pf.random.stateless_uniform([4], seed=[1])


def test_tensorflow_rules_for_dtypes_and_ranges():
    ints = pf.random.uniform([1000], 3, 7, dtype=pf.int32)
    assert ints.dtype == np.int32 and ints.min() >= 3 and ints.max() <= 6
    with pytest.raises(pf.errors.InvalidArgumentError, match="maxval"):
        pf.random.uniform([2], dtype=pf.int64)
    floats = pf.random.uniform([1000])
    assert floats.dtype == np.float32 and floats.min() >= 0 and floats.max() < 1
    assert np.abs(pf.random.truncated_normal([1000])).max() <= 2
    assert pf.random.categorical([[0.0, 0.0, 50.0]], 5).tolist() == [[2] * 5]


def test_image_augmentation_draws_are_keyed_too():
    images = np.random.default_rng(0).random((12, 6, 5, 3)).astype(np.float32)

    def augment(image):
        image = pf.image.random_flip_left_right(image)
        image = pf.image.random_brightness(image, 0.3)
        return pf.image.random_crop(image, [4, 4, 3])

    def run(executor=None):
        pf.random.set_seed(5)
        ds = pf.Dataset.from_tensor_slices(images)
        ds = ds.map(augment, num_parallel_calls=2, executor=executor) if executor else ds.map(augment)
        return [x.tolist() for x in ds]

    assert run() == run("thread") == run("process")

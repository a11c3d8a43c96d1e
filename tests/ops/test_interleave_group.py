import os

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ElementTypeError, InvalidArgumentError


def test_interleave_order_and_default_cycle_length():
    ds = pf.Dataset.range(3).interleave(lambda n: pf.Dataset.range(n * 10, n * 10 + 3), cycle_length=2, block_length=2)
    assert [int(x) for x in ds] == [0, 1, 10, 11, 2, 12, 20, 21, 22]  # as tf.data gives
    default = pf.Dataset.range(2).interleave(lambda n: pf.Dataset.range(1))
    assert default._cycle_length == os.cpu_count()


def test_interleave_and_flat_map_need_datasets():
    with pytest.raises(ElementTypeError, match=r"flat_map\(\): `map_func` .* must return a Dataset"):
        list(pf.Dataset.range(2).flat_map(lambda x: [x]))
    with pytest.raises(InvalidArgumentError, match="block_length"):
        pf.Dataset.range(2).interleave(lambda x: pf.Dataset.range(1), block_length=0)


def test_interleave_closes_open_inputs_on_close():
    closed = []

    def gen():
        try:
            yield from range(100)
        finally:
            closed.append(1)

    ds = pf.Dataset.range(3).interleave(
        lambda _: pf.Dataset.from_generator(gen, output_signature=pf.TensorSpec((), "int64")), cycle_length=3
    )
    it = iter(ds)
    for _ in range(5):
        next(it)
    it.close()
    assert len(closed) == 3


def test_group_by_window_flushes_remaining_groups_in_key_order():
    ds = pf.Dataset.from_tensor_slices([5, 1, 3, 7, 2]).group_by_window(
        lambda x: -x % 3, lambda key, window: window.batch(10).map(lambda b: (key, b)), window_size=5
    )
    assert [(int(k), b.tolist()) for k, b in ds] == [(0, [3]), (1, [5, 2]), (2, [1, 7])]


def test_group_by_window_arguments_and_results():
    ds = pf.Dataset.range(4)
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        ds.group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        ds.group_by_window(lambda x: x, lambda k, w: w, window_size=2, window_size_func=lambda k: 2)
    with pytest.raises(ElementTypeError, match="int64 scalar"):
        list(ds.group_by_window(lambda x: 0.5, lambda k, w: w, window_size=2))
    with pytest.raises(ElementTypeError, match="must return a Dataset"):
        list(ds.group_by_window(lambda x: x % 2, lambda k, w: 1, window_size=2))
    with pytest.raises(InvalidArgumentError, match="window size must be > 0"):
        list(ds.group_by_window(lambda x: x % 2, lambda k, w: w, window_size_func=lambda k: 0))


def test_bucket_by_sequence_length_checks_its_arguments():
    ds = pf.Dataset.range(1, 5).map(lambda n: np.arange(n))
    with pytest.raises(InvalidArgumentError, match=r"len\(bucket_batch_sizes\) must equal"):
        ds.bucket_by_sequence_length(len, [2, 3], [1, 1])
    bounded = ds.bucket_by_sequence_length(len, [3], [2, 2], pad_to_bucket_boundary=True)
    with pytest.raises(InvalidArgumentError, match="pad_to_bucket_boundary"):
        list(bounded)

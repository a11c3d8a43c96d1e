"""A step whose input turns out empty still has a structure, as in tf.data: a pipeline built on it has an
element_spec and iterates (to nothing), where the spec of a user function's output is otherwise learned from a first
result (found by the property tests of tests/checkpoint/test_restores.py)."""

import numpy as np
import pytest
import tensorflow as tf

import parafeed as pf

pytestmark = pytest.mark.timeout(120)


def empty_windows(lib):
    ds = lib.data.Dataset.range(30).skip(40)
    return ds.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=2)


STEPS = {
    "map": lambda lib, ds: ds.map(lambda x: x + 1),
    "flat_map": lambda lib, ds: ds.flat_map(lambda x: lib.data.Dataset.from_tensors(x)),
    "choose_from_datasets": lambda lib, ds: lib.data.Dataset.choose_from_datasets(
        [ds.map(lambda x: x * 2), lib.data.Dataset.range(3).batch(2)], lib.data.Dataset.range(2).repeat(3)
    ),
    "reducer, skip, window, choose": lambda lib, ds: lib.data.Dataset.choose_from_datasets(
        [
            lib.data.Dataset.range(30)
            .apply(
                lib.data.experimental.group_by_reducer(
                    lambda x: x % 2,
                    lib.data.experimental.Reducer(
                        lambda k: lib.constant(0, lib.int64), lambda s, x: s + x, lambda s: s
                    ),
                )
            )
            .skip(5)
            .group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=2)
            .map(lambda x: x + 1),
            lib.data.Dataset.range(4).batch(2),
        ],
        lib.data.Dataset.range(2).repeat(2),
        stop_on_empty_dataset=False,
    ),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_pipeline_on_an_empty_window_step_is_built_and_iterates_as_tensorflow(step):
    got = STEPS[step](pf, empty_windows(pf))
    want = STEPS[step](tf, empty_windows(tf))
    assert got.element_spec.dtype == want.element_spec.dtype.as_numpy_dtype
    assert [np.asarray(x).tolist() for x in got.as_numpy_iterator()] == [x.tolist() for x in want.as_numpy_iterator()]


def test_the_spec_of_an_empty_step_comes_from_its_input_spec_not_its_first_element():
    ds = pf.Dataset.from_tensor_slices({"name": [b"a"], "x": np.zeros((1, 3), np.float32)}).skip(1)
    windows = ds.group_by_window(lambda e: np.int64(0), lambda k, w: w.batch(4), window_size=4)
    spec = windows.map(lambda e: {"name": e["name"], "x2": e["x"] * 2}).element_spec
    assert spec["name"].dtype == pf.string and spec["x2"].dtype == np.float32 and spec["x2"].shape[-1] == 3

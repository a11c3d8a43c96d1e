import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import ElementTypeError, InvalidArgumentError


def test_concatenate_rejects_incompatible_elements():
    with pytest.raises(ElementTypeError, match=r"concatenate\(\): incompatible dataset elements"):
        pf.Dataset.range(3).concatenate(pf.Dataset.from_tensor_slices([1.5]))
    with pytest.raises(ElementTypeError, match="incompatible"):
        pf.Dataset.range(3).concatenate(pf.Dataset.zip((pf.Dataset.range(1), pf.Dataset.range(1))))
    with pytest.raises(InvalidArgumentError, match="must be a Dataset"):
        pf.Dataset.range(3).concatenate([1, 2])


def test_concatenate_merges_shapes():
    ds = pf.Dataset.from_tensors(np.zeros(2)).concatenate(pf.Dataset.from_tensors(np.zeros(3)))
    assert ds.element_spec == pf.TensorSpec((None,), "float64")
    assert [x.shape for x in ds] == [(2,), (3,)]


def test_windows_are_datasets_with_the_input_structure():
    (first, *_rest) = list(pf.Dataset.zip((pf.Dataset.range(5), pf.Dataset.range(5))).window(2))
    assert isinstance(first, tuple) and all(isinstance(d, pf.Dataset) for d in first)
    assert [int(x) for x in first[1]] == [0, 1]
    assert first[0].element_spec == pf.TensorSpec((), "int64")


@pytest.mark.parametrize("kwargs", [{"size": 0}, {"size": 2, "shift": 0}, {"size": 2, "stride": -1}])
def test_window_arguments(kwargs):
    with pytest.raises(InvalidArgumentError, match=r"window\(\)"):
        pf.Dataset.range(4).window(**kwargs)


def test_window_cardinality_matches_output():
    for n in range(0, 12):
        for size, shift, stride, drop in [(3, 1, 1, True), (3, 2, 2, True), (2, 5, 1, False), (4, 1, 3, False)]:
            ds = pf.Dataset.range(n).window(size, shift, stride, drop)
            assert len(list(ds)) == len(ds), (n, size, shift, stride, drop)


def _fails_on_nan(x):
    if np.isnan(x):
        raise pf.errors.InvalidArgumentError(f"NaN at {x}")
    return x


def test_window_raises_only_the_errors_of_elements_it_uses():
    values = np.float32([1.0, np.nan, 2.0, np.nan, 3.0, np.nan])
    strided = pf.Dataset.from_tensor_slices(values).map(_fails_on_nan).window(2, 2, 2)
    assert [w.tolist() for w in strided.flat_map(lambda w: w.batch(2))] == [[1.0, 2.0], [2.0, 3.0], [3.0]]
    shifted = pf.Dataset.from_tensor_slices(np.float32([1, 2, np.nan, 4, 5, 6])).map(_fails_on_nan).window(2, 3)
    assert [w.tolist() for w in shifted.flat_map(lambda w: w.batch(2))] == [[1.0, 2.0], [4.0, 5.0]]
    used = pf.Dataset.from_tensor_slices(np.float32([1, np.nan, 2, 3])).map(_fails_on_nan).window(2, 1, 2)
    with pytest.raises(pf.errors.InvalidArgumentError, match="NaN"):
        list(used.flat_map(lambda w: w.batch(2)))
    check_restores(strided.flat_map(lambda w: w.batch(2)))

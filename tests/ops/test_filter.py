import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ElementTypeError


def test_filter_accepts_python_and_numpy_bools():
    assert [int(x) for x in pf.Dataset.range(6).filter(lambda x: bool(x % 2))] == [1, 3, 5]
    assert [int(x) for x in pf.Dataset.range(6).filter(lambda x: np.array(x > 3))] == [4, 5]


@pytest.mark.parametrize("predicate", [lambda x: 1, lambda x: np.array([True, False]), lambda x: "yes"])
def test_filter_rejects_non_boolean_scalars(predicate):
    with pytest.raises(ElementTypeError, match=r"filter\(\): `predicate` .* must return a boolean scalar"):
        list(pf.Dataset.range(3).filter(predicate))


def test_take_while_stops_for_good():
    ds = pf.Dataset.from_tensor_slices([1, 2, 5, 1, 2]).take_while(lambda x: x < 3)
    it = iter(ds)
    assert [int(x) for x in it] == [1, 2]
    with pytest.raises(StopIteration):
        next(it)
    with pytest.raises(ElementTypeError, match="take_while"):
        list(pf.Dataset.range(3).take_while(lambda x: x))


def test_unique_keeps_first_occurrences_and_checks_element_types():
    assert [int(x) for x in pf.Dataset.from_tensor_slices([3, 1, 3, 2, 1]).unique()] == [3, 1, 2]
    rows = pf.Dataset.from_tensor_slices([[1, 2], [1, 2], [3, 4], [1, 2]]).unique()  # any shape, as in tf.data
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    words = pf.Dataset.from_tensor_slices([["a", "b"], ["a", "b"], ["a", ""]]).unique()
    assert [w.tolist() for w in words] == [[b"a", b"b"], [b"a", b""]]
    with pytest.raises(ElementTypeError, match="unique"):
        pf.Dataset.from_tensor_slices(([1], [2])).unique()
    with pytest.raises(ElementTypeError, match="unique"):
        pf.Dataset.from_tensor_slices([1.5]).unique()


def test_predicate_result_is_checked_when_the_spec_is_asked():
    with pytest.raises(ElementTypeError, match="boolean scalar"):
        pf.Dataset.range(3).filter(lambda x: x).element_spec  # noqa: B018 - tf.data refuses it when building
    with pytest.raises(ElementTypeError, match="boolean scalar"):
        pf.Dataset.range(3).take_while(lambda x: x * 2).element_spec  # noqa: B018
    empty = pf.Dataset.from_generator(lambda: iter([]), output_signature=pf.TensorSpec((), "int64"))
    with pytest.raises(ElementTypeError, match="boolean scalar"):  # (as tf.data: checked on the input's spec)
        empty.filter(lambda x: x).element_spec  # noqa: B018
    assert empty.filter(lambda x: x > 0).element_spec.dtype == np.int64


def test_unique_of_arrays_and_strings_resumes():
    from parafeed.checkpoint import check_restores

    rows = [[1, 2], [1, 2], [3, 4], [1, 2], [0, 0], [3, 4]]
    assert check_restores(pf.Dataset.from_tensor_slices(rows).unique()) > 0
    assert check_restores(pf.Dataset.from_tensor_slices(["a", "b", "a", "c"]).unique()) > 0

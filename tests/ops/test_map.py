import collections

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ElementTypeError, InvalidArgumentError

Point = collections.namedtuple("Point", ["x", "y"])


def test_tuple_elements_are_spread_into_arguments_others_passed_whole():
    seen = []
    pf.Dataset.from_tensors((1, 2)).map(lambda a, b: seen.append(("tuple", a, b)) or 0).reduce(0, lambda s, x: s)
    list(pf.Dataset.from_tensors({"k": 1}).map(lambda d: seen.append(("dict", sorted(d))) or 0))
    list(pf.Dataset.from_tensors(Point(1, 2)).map(lambda p: seen.append(("namedtuple", type(p))) or 0))
    assert seen == [("tuple", 1, 2), ("dict", ["k"]), ("namedtuple", Point)]


def test_results_are_converted_with_tf_dtypes():
    (out,) = list(pf.Dataset.range(1).map(lambda x: [x, 1, 0.5, "s"]).as_numpy_iterator())
    assert type(out) is tuple
    assert [type(v) for v in out] == [np.int64, np.int32, np.float32, bytes]


def test_user_exception_keeps_its_type_and_names_the_step_and_element():
    def bad(x):
        if x == 3:
            raise KeyError("boom")
        return x

    it = iter(pf.Dataset.range(5).map(bad))
    assert [int(next(it)) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(KeyError, match="boom") as info:
        next(it)
    assert "map() function `test_user_exception_keeps_its_type_and_names_the_step_and_element.<locals>.bad`" in str(
        info.value.__notes__
    )
    assert "input element 3" in info.value.__notes__[0]
    assert int(next(it)) == 4  # like tf.data, the iterator goes on after an error in the function


def test_stop_iteration_in_a_function_does_not_end_the_pipeline_silently():
    def stop(x):
        raise StopIteration

    with pytest.raises(RuntimeError, match="raised StopIteration"):
        list(pf.Dataset.range(3).map(stop))


def test_bad_results_and_arguments():
    with pytest.raises(ElementTypeError, match="None is not a valid value"):
        list(pf.Dataset.range(2).map(lambda x: None))
    with pytest.raises(InvalidArgumentError, match="callable"):
        pf.Dataset.range(2).map(5)
    with pytest.raises(InvalidArgumentError, match="num_parallel_calls"):
        pf.Dataset.range(2).map(lambda x: x, num_parallel_calls=0)
    with pytest.raises(InvalidArgumentError, match="deterministic"):
        pf.Dataset.range(2).map(lambda x: x, deterministic="yes")


def test_spec_of_a_map_comes_from_its_first_result_without_running_upstream_buffers():
    calls = []
    ds = pf.Dataset.range(10**9).shuffle(10**6).map(lambda x: calls.append(1) or (x, x * 0.5))
    assert ds.element_spec == (pf.TensorSpec((), "int64"), pf.TensorSpec((), "float64"))
    assert len(calls) == 1
    assert int(ds.cardinality()) == 10**9


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_parallel_maps_apply_the_function_as_the_serial_map_does(executor):
    """The serial map writes the rule out for speed; threads and processes run functions.element_fn: the same rule."""
    from tests.helpers import assert_elements_equal

    ds = pf.Dataset.range(12).map(lambda x: (x, {"k": x % 3}, Point(x, -x)))
    fns = [
        lambda a, d, p: [a, d["k"], 0.5, "s"],  # a tuple is spread; a returned list is a tuple, in tf.data's dtypes
        lambda a, d, p: {"sum": p.x + p.y, "names": ["a", "b"]},
        lambda a, d, p: a * 2,  # a NumPy scalar comes back as it is
    ]
    for fn in fns:
        serial = list(ds.map(fn))
        assert_elements_equal(serial, list(ds.map(fn, num_parallel_calls=2, executor=executor)), executor)

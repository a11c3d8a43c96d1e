"""Which user functions get Tensors: the scan of their code (and the user code they reach), and ``@pf.function``."""

import functools

import numpy as np
import pytest

import parafeed as pf
from parafeed.core.tensor_functions import TensorFunction, names_used, with_tensor_arguments


def shape_of(x):
    return x.get_shape().as_list()


def reaches_a_helper(x):
    return len(shape_of(x)) + x


class Augment:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return self.resize(x) * self.scale

    def resize(self, x):
        x.set_shape([None])
        return x


class Plain:
    def __call__(self, x):
        return x + 1


def test_functions_that_call_tensor_methods_are_found_through_what_they_reach():
    assert isinstance(with_tensor_arguments(lambda x: x.numpy() + 1), TensorFunction)
    assert isinstance(with_tensor_arguments(reaches_a_helper), TensorFunction)  # through a global function
    assert isinstance(with_tensor_arguments(Augment(2)), TensorFunction)  # a method called on self
    assert isinstance(with_tensor_arguments(functools.partial(lambda x, k: x.shape.as_list(), k=1)), TensorFunction)
    inner = Augment(3)
    assert isinstance(with_tensor_arguments(lambda x: inner(x)), TensorFunction)  # an object in a closure
    assert "set_shape" in names_used(lambda x: inner(x))


def test_functions_that_do_not_are_left_as_they_are():
    fn = lambda x: x * 2 + np.sum(x)  # noqa: E731
    assert with_tensor_arguments(fn) is fn
    assert with_tensor_arguments(Plain()).__class__ is Plain
    assert with_tensor_arguments(print) is print


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_tensor_functions_run_on_every_executor(executor):
    ds = pf.Dataset.from_tensor_slices(np.arange(12).reshape(6, 2)).map(Augment(2), num_parallel_calls=2,
                                                                       executor=executor)  # fmt: skip
    assert [x.tolist() for x in ds] == [[2 * i, 2 * i + 2] for i in range(0, 12, 2)]


def test_pf_function_gives_tensors_where_the_scan_cannot_see():
    table = {"f": lambda x: x.numpy() * 10}
    ds = pf.Dataset.range(3).map(pf.function(lambda x: table["f"](x)))
    assert [int(x) for x in ds] == [0, 10, 20]

    @pf.function(input_signature=None, jit_compile=False)
    def direct(x):
        return x.shape.as_list()

    assert direct(np.zeros((2, 3))) == [2, 3]  # called directly, as a tf.function is
    assert pf.function(direct) is direct


def test_the_scan_reads_a_module_namespace_without_touching_its_removed_names():
    """``np.array(..., dtype=object)`` names ``object`` and ``str`` on NumPy's module: the scan looks them up in the
    module's namespace, not through NumPy's ``__getattr__``, which warns (FutureWarning) of its removed aliases."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = pf.Dataset.range(2).map(lambda x: np.array([str(x)], dtype=object))
        assert [v.tolist() for v in ds.as_numpy_iterator()] == [[b"0"], [b"1"]]

"""Nested datasets, ported from tf.data's kernel tests: interleave (orders, errors, default cycle length) and
flat_map."""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.harness import kcase


def failing(L, values):
    """int64 elements from float32 ``values``; a NaN fails in the input pipeline (check_numerics), as in the tests."""
    ds = L.Dataset.from_tensor_slices(np.array(values, np.float32)).map(L.check_numerics)
    return ds.map(lambda x: L.cast(x, L.int64))


def repeat_self(L):
    """interleave_test.py's map_func: each element ``x`` as a dataset of ``x`` copies of it."""
    return lambda x: L.Dataset.from_tensors(x).repeat(x)


# ---------------------------------------------------------------------------------------------- interleave_test.py

_SHAPES = [
    (1, 1, [None]),
    (2, 1, [None, 1, 2]),
    (2, 3, [None, 2]),
    (3, 2, [None, 1, 3]),
    (4, 5, [None, 4]),
    (7, 2, [None, 3]),
    (3, 7, [None, 2]),
]  # (cycle_length, block_length, num_parallel_calls values)
_INTERLEAVE = {f"c{c}_b{b}_p{p}": (c, b, p) for c, b, ps in _SHAPES for p in ps}


@kcase("interleave_test.py::testPythonImplementation", params=_INTERLEAVE)
def interleave_orders(L, tmp, args):
    c, b, p = args
    ds = L.Dataset.from_tensor_slices(np.array([4, 5, 6], np.int64)).repeat(2)
    return ds.interleave(repeat_self(L), cycle_length=c, block_length=b, num_parallel_calls=p)


@kcase("interleave_test.py::testPythonImplementation", params={"serial": None, "parallel": 2})
def interleave_empty_input(L, tmp, p):
    return L.Dataset.range(0).interleave(lambda x: L.Dataset.range(x), cycle_length=2, num_parallel_calls=p)


@kcase("interleave_test.py::testPythonImplementation", params={"serial": None, "parallel": 2})
def interleave_empty_inputs_inside(L, tmp, p):
    ds = L.Dataset.from_tensor_slices(np.array([0, 3, 0, 0, 2, 0], np.int64))
    return ds.interleave(lambda x: L.Dataset.range(x), cycle_length=2, block_length=2, num_parallel_calls=p)


_ERRORS = {
    f"{where}_{kind}": (values, kw)
    for where, values in [("second", [1, np.nan, 2, 3]), ("third", [1, 2, np.nan, 3]), ("fifth", [1, 2, 3, 4, np.nan])]
    for kind, kw in [("serial", {"cycle_length": 2}), ("parallel", {"cycle_length": 2, "num_parallel_calls": 2}),
                     ("parallel3", {"cycle_length": 3, "block_length": 2, "num_parallel_calls": 1}),
                     ("parallel_deterministic", {"cycle_length": 3, "num_parallel_calls": 3, "deterministic": True})]
}  # fmt: skip


@kcase("interleave_test.py::testError", params=_ERRORS)
def interleave_input_error_position(L, tmp, args):
    """An error of the interleave's input surfaces where tf.data has it, in the serial and the parallel paths."""
    values, kw = args
    return failing(L, values).interleave(lambda x: L.Dataset.from_tensors(x).repeat(3), **kw)


@kcase("interleave_test.py::testError", params={"serial": None, "parallel": 2})
def interleave_map_func_error(L, tmp, p):
    """An error raised while ``map_func`` makes an input's dataset surfaces at that input's turn."""
    ds = L.Dataset.from_tensor_slices(np.array([1.0, 2.0, np.nan, 3.0], np.float32))
    return ds.interleave(lambda x: L.Dataset.from_tensors(L.check_numerics(x)).repeat(2), 2, num_parallel_calls=p)


@kcase("interleave_test.py::testError", params={"serial": None, "parallel": 2})
def interleave_error_inside_input(L, tmp, p):
    ds = L.Dataset.range(3)
    return ds.interleave(lambda x: failing(L, [1.0, np.nan]).map(lambda y: y + x), cycle_length=2, num_parallel_calls=p)


_DEFAULT_CYCLE = {"serial": None, "autotune": -1, "calls1": 1, "calls2": 2}


@kcase("interleave_test.py::testDefaultCycleLength", params=_DEFAULT_CYCLE)
def interleave_default_cycle_length(L, tmp, p):
    """Without cycle_length, tf.data takes it from num_parallel_calls and the schedulable cores."""
    ds = L.Dataset.range(1, 6)
    return ds.interleave(lambda x: L.Dataset.from_tensors(x).repeat(3), num_parallel_calls=p)


@kcase("interleave_test.py::testDefaultCycleLength", params={"autotune": -1, "serial": None})
def interleave_cycle_length_autotune_given(L, tmp, p):
    ds = L.Dataset.range(1, 6)
    return ds.interleave(lambda x: L.Dataset.from_tensors(x).repeat(2), cycle_length=-1, num_parallel_calls=p)


@kcase("interleave_test.py::testInvalidArguments", params={"calls_over_cycle": (2, 1, 3), "cycle0": (0, 1, None),
                                                            "block0": (2, 0, None), "cycle0_parallel": (0, 1, 2)})  # fmt: skip
def interleave_invalid_arguments(L, tmp, args):
    c, b, p = args
    return L.Dataset.range(4).interleave(lambda x: L.Dataset.range(2), c, b, num_parallel_calls=p)


@kcase("interleave_test.py::testNestedStructures", params={"serial": None, "parallel": 2})
def interleave_tuple_elements(L, tmp, p):
    ds = L.Dataset.range(1, 4)
    return ds.interleave(lambda x: L.Dataset.range(x).map(lambda y: (y, x * 10)), 2, 1, num_parallel_calls=p)


@kcase("interleave_test.py::testInterleaveMap", params={"serial": None, "parallel": 2})
def interleave_then_map(L, tmp, p):
    ds = L.Dataset.range(5).interleave(lambda x: L.Dataset.range(x, x + 3), 3, 2, num_parallel_calls=p)
    return ds.map(lambda x: x * 2)


@kcase("interleave_test.py::testShortCircuit")
def interleave_identity_of_zipped(L, tmp):
    ds = L.Dataset.zip((L.Dataset.range(3), L.Dataset.range(3)))
    return ds.interleave(lambda a, b: L.Dataset.from_tensors(a + b), cycle_length=2)


@kcase("interleave_test.py::testInfiniteInput", take=12, params={"serial": None, "parallel": 2})
def interleave_infinite_input(L, tmp, p):
    ds = L.Dataset.range(3).repeat()
    return ds.interleave(lambda x: L.Dataset.range(x + 1), cycle_length=2, num_parallel_calls=p)


@kcase("interleave_test.py::testName")
def interleave_name(L, tmp):
    return L.Dataset.from_tensors(42).interleave(lambda x: L.Dataset.from_tensors(x), cycle_length=1, name="interleave")


@kcase("interleave_test.py::testParallelInterleaveSloppy", ordered=False)
def interleave_nondeterministic(L, tmp):
    ds = L.Dataset.range(1, 5)
    return ds.interleave(repeat_self(L), cycle_length=2, num_parallel_calls=2, deterministic=False)


# ---------------------------------------------------------------------------------------------- flat_map_test.py


@kcase("flat_map_test.py::testFlatMapDataset")
def flat_map_basic(L, tmp):
    repeats = np.array([1, 2, 3, 4, 5, 0, 1], np.int64)
    return L.Dataset.from_tensor_slices(repeats).flat_map(lambda x: L.Dataset.from_tensors([x]).repeat(x))


@kcase("flat_map_test.py::testNestedFlatMapDataset")
def flat_map_nested(L, tmp):
    repeats = [[1, 2], [3, 4], [5, 0], [1, 7]]
    ds = L.Dataset.from_tensor_slices(np.array(repeats, np.int64))
    return ds.flat_map(
        lambda row: L.Dataset.from_tensor_slices(row).flat_map(lambda x: L.Dataset.from_tensors(x).repeat(x))
    )


@kcase("flat_map_test.py::testMapDict")
def flat_map_dict(L, tmp):
    ds = L.Dataset.range(10).map(lambda x: {"foo": x * 2, "bar": x**2})
    return ds.flat_map(lambda d: L.Dataset.from_tensors(d["foo"]).repeat(d["bar"]))


@kcase("flat_map_test.py::testFlatMapError", params={"input": "input", "map_func": "fn"})
def flat_map_error_position(L, tmp, where):
    if where == "input":
        return failing(L, [1, 2, np.nan, 3]).flat_map(lambda x: L.Dataset.from_tensors(x).repeat(2))
    ds = L.Dataset.from_tensor_slices(np.array([1.0, np.nan, 3.0], np.float32))
    return ds.flat_map(lambda x: L.Dataset.from_tensors(L.check_numerics(x)).repeat(2))


@kcase("flat_map_test.py::testEmpty")
def flat_map_empty(L, tmp):
    return L.Dataset.range(0).flat_map(lambda x: L.Dataset.range(x))


@kcase("flat_map_test.py::testName")
def flat_map_name(L, tmp):
    return L.Dataset.from_tensors(42).flat_map(lambda x: L.Dataset.from_tensors(x), name="flat_map")


@kcase("flat_map_test.py::testInfinite", take=9)
def flat_map_infinite(L, tmp):
    return L.Dataset.range(3).repeat().flat_map(lambda x: L.Dataset.range(x))

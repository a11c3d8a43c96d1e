"""The tensor operations of ``pf`` against TensorFlow's: each case is one function of the module ``tf`` run twice, with
TensorFlow and with parafeed in its place (the rename the porting guide promises), on inputs hypothesis makes (empty
and scalar shapes, NaN and infinities, integer extremes). Same values, dtypes and shapes, or the same kind of error.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import parafeed as pf

tf = pytest.importorskip("tensorflow")

DTYPES = [np.int32, np.int64, np.float32, np.float64, np.uint8, np.bool_]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def arrays(dtypes=DTYPES, min_dims=0, max_dims=3, shape=None):
    dtype = st.sampled_from(dtypes)
    shapes = st.just(shape) if shape is not None else hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0,
                                                                          max_side=4)  # fmt: skip
    return st.tuples(dtype, shapes).flatmap(lambda ds: hnp.arrays(ds[0], ds[1], elements=_elements(ds[0])))


def _elements(dtype):
    """Floats without subnormals: TensorFlow's CPU kernels flush them to zero, NumPy keeps them."""
    if np.dtype(dtype).kind == "f":
        finite = st.floats(-1e6, 1e6, width=np.dtype(dtype).itemsize * 8, allow_subnormal=False)
        return finite | st.sampled_from([np.nan, np.inf, -np.inf, 0.5, -2.5])
    return None


def outcome(fn, module, *args):
    """``("ok", [(value, dtype name), ...])`` or ``("error", kind)``; kind: "value" (ValueError, TensorFlow's
    InvalidArgumentError) or "type"."""
    try:
        result = fn(module, *args)
    except TypeError:
        return "error", "type"
    except (ValueError, tf.errors.InvalidArgumentError, tf.errors.UnimplementedError):
        return "error", "value"
    results = result if isinstance(result, (list, tuple)) else [result]
    return "ok", [(np.asarray(r.numpy() if hasattr(r, "numpy") else r), np.asarray(r).dtype.name) for r in results]


ULPS = 4  # transcendental functions: NumPy's SIMD and Eigen's polynomials differ in the last bits (docs/formats.md)


def within_ulps(got, want, ulps=ULPS):
    """``got`` equals ``want`` up to ``ulps`` units in the last place (NaNs where ``want`` has them)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all(), (got, want)
    spacing = np.abs(np.spacing(want.astype(got.dtype)))
    assert (np.abs(got - want)[~nan] <= ulps * spacing[~nan]).all(), (got, want, (got - want) / spacing)


def check(fn, *args, close=False):
    want = outcome(fn, tf, *[tf.constant(a) if isinstance(a, np.ndarray) else a for a in args])
    got = outcome(fn, pf, *args)
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got[1] == want[1], (got, want)
        return
    assert len(got[1]) == len(want[1])
    for (g, gd), (w, wd) in zip(got[1], want[1]):
        assert gd == wd and g.shape == w.shape, (g, gd, w, wd)
        if close and g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-30, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


UNARY = {
    "cast int32": lambda tf, x: tf.cast(x, tf.int32),
    "cast float32": lambda tf, x: tf.cast(x, tf.float32),
    "cast bool": lambda tf, x: tf.cast(x, tf.bool),
    "cast uint8": lambda tf, x: tf.cast(x, tf.uint8),
    "cast float16": lambda tf, x: tf.cast(x, tf.float16),
    "shape": lambda tf, x: tf.shape(x),
    "shape int64": lambda tf, x: tf.shape(x, out_type=tf.int64),
    "size": lambda tf, x: tf.size(x),
    "rank": lambda tf, x: tf.rank(x),
    "reshape flat": lambda tf, x: tf.reshape(x, [-1]),
    "reshape wrong": lambda tf, x: tf.reshape(x, [3, -1]),
    "reshape scalar": lambda tf, x: tf.reshape(x, []),
    "expand_dims 0": lambda tf, x: tf.expand_dims(x, 0),
    "expand_dims -1": lambda tf, x: tf.expand_dims(x, -1),
    "squeeze": lambda tf, x: tf.squeeze(x),
    "squeeze 0": lambda tf, x: tf.squeeze(x, [0]),
    "transpose": lambda tf, x: tf.transpose(x),
    "reverse 0": lambda tf, x: tf.reverse(x, [0]),
    "zeros_like": lambda tf, x: tf.zeros_like(x),
    "ones_like": lambda tf, x: tf.ones_like(x),
    "identity": lambda tf, x: tf.identity(x),
    "reduce_sum": lambda tf, x: tf.reduce_sum(x),
    "reduce_sum 0 keepdims": lambda tf, x: tf.reduce_sum(x, axis=0, keepdims=True),
    "reduce_mean": lambda tf, x: tf.reduce_mean(x),
    "reduce_mean -1": lambda tf, x: tf.reduce_mean(x, axis=-1),
    "reduce_max": lambda tf, x: tf.reduce_max(x),
    "reduce_min 0": lambda tf, x: tf.reduce_min(x, 0),
    "reduce_prod": lambda tf, x: tf.reduce_prod(x),
    "reduce_any": lambda tf, x: tf.reduce_any(x),
    "reduce_all 0": lambda tf, x: tf.reduce_all(x, 0),
    "argmax": lambda tf, x: tf.argmax(x),
    "argmin -1 int32": lambda tf, x: tf.argmin(x, axis=-1, output_type=tf.int32),
    "cumsum": lambda tf, x: tf.cumsum(x),
    "cumsum exclusive reverse": lambda tf, x: tf.cumsum(x, exclusive=True, reverse=True),
    "abs": lambda tf, x: tf.abs(x),
    "negative": lambda tf, x: tf.negative(x),
    "sign": lambda tf, x: tf.sign(x),
    "square": lambda tf, x: tf.square(x),
    "sqrt": lambda tf, x: tf.sqrt(x),
    "floor": lambda tf, x: tf.floor(x),
    "ceil": lambda tf, x: tf.math.ceil(x),
    "round": lambda tf, x: tf.round(x),
    "logical_not": lambda tf, x: tf.logical_not(x),
    "where 1 argument": lambda tf, x: tf.where(x),
    "boolean_mask": lambda tf, x: tf.boolean_mask(x, tf.not_equal(x, tf.zeros_like(x))),
    "tile": lambda tf, x: tf.tile(x, [2] * len(x.shape)),
    "pad": lambda tf, x: tf.pad(x, [[1, 0]] * len(x.shape)),
    "pad reflect": lambda tf, x: tf.pad(x, [[1, 1]] * len(x.shape), mode="REFLECT"),
    "clip_by_value": lambda tf, x: tf.clip_by_value(x, 0, 5),
    "maximum python": lambda tf, x: tf.maximum(x, 1),
    "add python": lambda tf, x: tf.add(x, 2),
    "equal python": lambda tf, x: tf.equal(x, 0),
    "concat self": lambda tf, x: tf.concat([x, x], axis=0),
    "stack self": lambda tf, x: tf.stack([x, x], axis=-1),
    "unstack": lambda tf, x: tf.unstack(x),
    "split 2": lambda tf, x: tf.split(x, 2),
    "slice": lambda tf, x: tf.slice(x, [0] * len(x.shape), [-1] * len(x.shape)) if len(x.shape) else x,
    "gather 0": lambda tf, x: tf.gather(x, [0, 0]),
    "gather out of range": lambda tf, x: tf.gather(x, [5]),
    "repeat": lambda tf, x: tf.repeat(x, 2),
    "repeat axis 0": lambda tf, x: tf.repeat(x, [1, 0, 2, 1][: x.shape[0]] if len(x.shape) else 2, axis=0),
    "real": lambda tf, x: tf.math.real(x),
    "imag": lambda tf, x: tf.math.imag(x),
    "ensure_shape": lambda tf, x: tf.ensure_shape(x, [None] * len(x.shape)),
    "ensure_shape wrong": lambda tf, x: tf.ensure_shape(x, [7]),
}

CLOSE = {"sqrt", "reduce_mean", "reduce_mean -1"}  # (Eigen and NumPy may differ in the last bit)

BINARY = {
    "add": lambda tf, x, y: tf.add(x, y),
    "subtract": lambda tf, x, y: tf.subtract(x, y),
    "multiply": lambda tf, x, y: tf.multiply(x, y),
    "maximum": lambda tf, x, y: tf.maximum(x, y),
    "minimum": lambda tf, x, y: tf.minimum(x, y),
    "equal": lambda tf, x, y: tf.equal(x, y),
    "not_equal": lambda tf, x, y: tf.not_equal(x, y),
    "less": lambda tf, x, y: tf.less(x, y),
    "greater_equal": lambda tf, x, y: tf.greater_equal(x, y),
    "logical_and": lambda tf, x, y: tf.logical_and(x, y),
    "logical_or": lambda tf, x, y: tf.logical_or(x, y),
    "floordiv": lambda tf, x, y: tf.math.floordiv(x, y),
    "floormod": lambda tf, x, y: tf.math.floormod(x, y),
    "truediv": lambda tf, x, y: tf.truediv(x, y),
    "concat": lambda tf, x, y: tf.concat([x, y], 0),
    "stack": lambda tf, x, y: tf.stack([x, y]),
    "where 3 arguments": lambda tf, x, y: tf.where(tf.greater(x, y), x, y),
}


@pytest.mark.parametrize("case", sorted(UNARY))
@SETTINGS
@given(x=arrays())
def test_unary_op_matches_tensorflow(case, x):
    check(UNARY[case], x, close=case in CLOSE)


@pytest.mark.parametrize("case", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_op_matches_tensorflow(case, data):
    x = data.draw(arrays(max_dims=2))
    same_dtype = data.draw(st.booleans())
    y = data.draw(arrays(dtypes=[x.dtype.type] if same_dtype else DTYPES, shape=data.draw(st.sampled_from(
        [x.shape, x.shape[1:], ()]))))  # fmt: skip
    check(BINARY[case], x, y, close=case == "truediv")


@pytest.mark.parametrize(
    "case",
    [
        lambda tf: tf.constant([1, 2, 3]),
        lambda tf: tf.constant(1.5),
        lambda tf: tf.constant([1.0, 2.5], dtype=tf.float64),
        lambda tf: tf.constant(7, shape=[2, 3]),
        lambda tf: tf.constant([1, 2, 3, 4], shape=[2, 2]),
        lambda tf: tf.constant("text"),
        lambda tf: tf.constant(1.5, dtype=tf.int32),
        lambda tf: tf.convert_to_tensor([[1, 2], [3, 4]]),
        lambda tf: tf.convert_to_tensor(3, dtype_hint=tf.float32),
        lambda tf: tf.convert_to_tensor(np.int64(3), dtype=tf.int32),
        lambda tf: tf.zeros([2, 3]),
        lambda tf: tf.ones([2], tf.int64),
        lambda tf: tf.fill([2, 2], 9),
        lambda tf: tf.range(5),
        lambda tf: tf.range(1, 4, 0.5),
        lambda tf: tf.range(10, 0, -3, dtype=tf.int64),
        lambda tf: tf.one_hot([0, 2, 5, -1], 3),
        lambda tf: tf.one_hot([[1], [0]], 2, on_value=5, off_value=-1, axis=0),
        lambda tf: tf.sequence_mask([1, 3, 0], 4),
        lambda tf: tf.to_float(tf.constant([1, 2])) if hasattr(tf, "to_float") else tf.compat.v1.to_float([1, 2]),
        lambda tf: tf.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]]),
        lambda tf: tf.gather([[1, 2], [3, 4]], [1], axis=1),
        lambda tf: tf.unique([3, 1, 3, 2, 1]),
        lambda tf: tf.split(tf.range(6), [1, -1, 2]),
        lambda tf: tf.transpose(tf.reshape(tf.range(24), [2, 3, 4]), [2, 0, 1]),
        lambda tf: tf.math.top_k([3, 1, 4, 1, 5], 3),
        lambda tf: tf.matmul([[1.0, 2.0]], [[3.0], [4.0]]),
        lambda tf: tf.reduce_mean([1, 2, 4]),
        lambda tf: tf.divide(7, 2),
        lambda tf: tf.math.count_nonzero([0, 1, 2, 0]),
        lambda tf: tf.squeeze(tf.zeros([1, 2, 1]), [0, 2]),
        lambda tf: tf.squeeze(tf.zeros([1, 2]), [1]),
        lambda tf: tf.add(tf.constant(1, tf.int32), tf.constant(1, tf.int64)),
        lambda tf: tf.concat([tf.zeros([2]), tf.zeros([2, 2])], 0),
        lambda tf: tf.equal(tf.constant(["a", "b"]), "a"),
        lambda tf: tf.add(tf.constant(["a"]), tf.constant(["b"])),
        lambda tf: tf.py_function(lambda a: a.numpy() * 2, [tf.constant([1, 2])], tf.int32),
        lambda tf: tf.numpy_function(lambda a: a + 1, [tf.constant([1, 2])], tf.int64),
        lambda tf: tf.cond(tf.constant(1) > 0, lambda: tf.constant(1), lambda: tf.constant(2)),
        lambda tf: tf.cond(tf.constant([True]), lambda: 1, lambda: 2),
        lambda tf: tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [tf.constant(0), tf.constant(0)]),
        lambda tf: tf.while_loop(lambda i: i < 100, lambda i: [i * 2], [tf.constant(1)], maximum_iterations=3),
        lambda tf: tf.while_loop(lambda i: i < 100, lambda i: i * 2, [tf.constant(1)]),
        lambda tf: tf.map_fn(lambda x: x * 2, tf.constant([[1, 2], [3, 4]])),
        lambda tf: tf.map_fn(lambda x: tf.reduce_sum(x), tf.constant([[1, 2], [3, 4]])),
        lambda tf: tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(1, 2.5).stack(),
        lambda tf: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), -1).lookup(
            tf.constant(["b", "z", "a"])
        ),
        lambda tf: tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([0, 1], tf.int64)), 3
        ).lookup(tf.constant([["a", "q"], ["zz", "b"]])),
        lambda tf: tf.expand_dims(tf.constant([1, 2]), 0)[:, tf.newaxis],
        lambda tf: tf.concat([tf.constant([1], tf.int64), [2, 3]], 0),
        lambda tf: tf.stack([tf.constant(1.5), 2]),
        lambda tf: tf.py_function(Tout=tf.float32)(lambda a: a * 2.0)(tf.constant(1.5)),
        lambda tf: tf.py_function(lambda: None, [], ()),  # no outputs (the performance guide's sleep): []
        lambda tf: tf.py_function(lambda: None, [], []),
        lambda tf: tf.math.rint([0.5, 1.5, -2.5]),
        lambda tf: tf.math.segment_sum([1, 2, 3, 4], [0, 0, 1, 3]),
        lambda tf: tf.math.unsorted_segment_sum([[1, 2], [3, 4], [5, 6]], [1, 0, 1], 3),
        lambda tf: tf.math.segment_sum([1, 2], [1, 0]),
        lambda tf: tf.complex([1.5, -2.0], [0.5, 3.0]),
        lambda tf: tf.complex(tf.constant([1.0], tf.float64), tf.constant([[2.0], [3.0]], tf.float64)),
        lambda tf: tf.complex(tf.constant([1.0]), tf.constant([2.0], tf.float64)),
        lambda tf: tf.complex([1, 2], [3, 4]),
        lambda tf: tf.math.conj(tf.complex([1.5, -2.0], [0.5, 3.0])),
        lambda tf: tf.math.real(tf.complex([1.5], [0.5])),
        lambda tf: tf.abs(tf.complex([3.0], [4.0])),
        lambda tf: tf.repeat([[1, 2], [3, 4]], [1, 2], axis=1),
        lambda tf: tf.repeat([1, 2], [1, 2, 3]),
        lambda tf: tf.repeat([1, 2], -1),
        lambda tf: tf.constant([[1.0, 2.0, 3.0]]) - (0.485 * 255, 0.456 * 255, 0.406 * 255),
        lambda tf: (1, 2) * tf.constant([3, 4]),
        lambda tf: tf.constant([1.0, 5.0]) < [2, 2],
        lambda tf: tf.constant([1, 2]) + [1.5, 2],  # noqa: RUF005 (a tensor plus a Python list)
        lambda tf: tf.constant([1, 2], tf.uint8) + [300, -1],  # noqa: RUF005 (a tensor plus a Python list)
        lambda tf: tf.constant([1, 2]) * [1.0, 2],
        lambda tf: tf.constant([True]) & [1, 0],
        lambda tf: tf.constant([1, 2]) + [[1], [2]],  # noqa: RUF005 (a tensor plus a Python list)
        lambda tf: [tf.uint8.max, tf.int64.min, tf.float16.max, tf.bfloat16.min, tf.float32.is_floating],
        lambda tf: [tf.as_dtype("int8").max, tf.TensorSpec([2], tf.int16).dtype.min, tf.bool.is_integer],
        lambda tf: tf.string.max,
    ],
)
def test_construction_and_fixed_cases_match_tensorflow(case):
    check(case)


TRANSCENDENTAL = {
    "angle complex64": lambda tf, y, x: tf.math.angle(tf.complex(x, y)),
    "angle complex128": lambda tf, y, x: tf.math.angle(tf.complex(tf.cast(x, tf.float64), tf.cast(y, tf.float64))),
    "atan2": lambda tf, y, x: tf.math.atan2(y, x),
    "atan2 float64": lambda tf, y, x: tf.math.atan2(tf.cast(y, tf.float64), tf.cast(x, tf.float64)),
}


def test_a_py_function_without_outputs_runs_once_per_element_in_a_map():
    """tf.data's performance guide: ``py_function(lambda: time.sleep(...), [], ())`` in a map, for its effect only."""
    calls = {"pf": 0, "tf": 0}

    def pipeline(lib, key):
        def effect():
            calls[key] += 1

        return lib.data.Dataset.range(5).map(lambda x: (lib.py_function(effect, [], ()), x)[1])

    assert [int(x) for x in pipeline(pf, "pf")] == [int(x) for x in pipeline(tf, "tf")] == list(range(5))
    assert calls == {"pf": 5, "tf": 5}


@pytest.mark.parametrize("case", sorted(TRANSCENDENTAL))
def test_transcendental_ops_match_tensorflow_within_a_few_ulps(case):
    """Within ULPS on every CPU: the last bit of NumPy's float32 ``arctan2`` depends on the CPU (SVML on AVX-512, the
    C library's elsewhere), and TensorFlow's ``atan2`` is Eigen's own polynomial, not the C library's."""
    rng = np.random.default_rng(0)
    y = (rng.standard_normal(2000) * rng.choice([1e-3, 1.0, 1e3], 2000)).astype(np.float32)
    x = rng.standard_normal(2000).astype(np.float32)
    y[:4], x[:4] = [0.5, 3.0, -1.0, 0.0], [1.5, -2.0, 0.0, -0.0]
    got = np.asarray(TRANSCENDENTAL[case](pf, y, x))
    want = TRANSCENDENTAL[case](tf, tf.constant(y), tf.constant(x)).numpy()
    within_ulps(got, want)

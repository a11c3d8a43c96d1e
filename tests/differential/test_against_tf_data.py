"""The differential suite: every pipeline in pipelines.py through tf.data and through parafeed, compared exactly.

Compared per pipeline: the elements (structure, leaf type, dtype, shape, value), ``cardinality()`` and
``element_spec`` (same structure and dtypes; parafeed's shapes must be compatible with tf.data's and equal wherever
tf.data knows a dimension statically, except after user functions, where parafeed knows more, see Dataset.element_spec).
"""

from __future__ import annotations

import pytest

from parafeed.values import structure
from tests.differential.libs import pf_lib, tf_lib
from tests.differential.pipelines import CASES
from tests.helpers import assert_elements_equal, describe

tf = pytest.importorskip("tensorflow", reason="the differential suite needs TensorFlow (make test installs it)")

TF, PF = tf_lib(), pf_lib()


def _sorted(elements: list) -> list:
    return sorted(elements, key=lambda e: repr(describe(e)))


def _tf_spec_leaves(spec):
    return tf.nest.flatten(spec)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pipeline_matches_tf_data(case, tmp_path):
    tf_ds = case.build(TF, str(tmp_path))
    pf_ds = case.build(PF, str(tmp_path))
    expected = list(tf_ds.as_numpy_iterator())
    actual = list(pf_ds)
    if not case.ordered:
        expected, actual = _sorted(expected), _sorted(actual)
    assert_elements_equal(expected, actual, case.name)
    assert int(pf_ds.cardinality()) == int(tf_ds.cardinality()), "cardinality differs"
    _assert_specs_agree(tf_ds.element_spec, pf_ds.element_spec)


def _assert_specs_agree(tf_spec, pf_spec) -> None:

    tf_leaves = tf.nest.flatten(tf_spec)
    pf_leaves = structure.flatten(pf_spec)
    assert len(tf_leaves) == len(pf_leaves), f"element_spec structure differs: {tf_spec} vs {pf_spec}"
    assert tf.nest.map_structure(lambda _: 0, tf_spec) == structure.map_structure(lambda _: 0, pf_spec)
    for t, p in zip(tf_leaves, pf_leaves):
        assert structure.dtype_name(p.dtype) == t.dtype.name, f"dtype differs: {t} vs {p}"
        t_shape = None if t.shape.rank is None else tuple(t.shape.as_list())
        assert structure.shape_compatible(t_shape, p.shape), f"shape incompatible: {t} vs {p}"


def test_the_suite_is_big_enough():
    assert len(CASES) >= 40


def test_reduce_matches_tf_data():
    def build(L):
        return L.Dataset.range(1, 11).map(lambda x: (x, L.cast(x, L.float32) * 0.5))

    def fold(state, element):
        x, y = element
        return state[0] + x, state[1] + y

    initial = (TF.cast(0, TF.int64), 0.0)
    expected = build(TF).reduce(initial, fold)
    actual = build(PF).reduce((PF.cast(0, PF.int64), 0.0), fold)
    assert_elements_equal([tuple(t.numpy() for t in expected)], [tuple(t.numpy() for t in actual)], "reduce")

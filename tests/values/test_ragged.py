"""RaggedTensor leaves: the class, ragged_batch, batch/unbatch/from_tensor_slices of them, resume, and to_tf."""

from __future__ import annotations

import json

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.values import structure


def test_constructors_agree():
    values = np.array([1, 2, 3, 4, 5], np.int64)
    want = [[1, 2], [], [3, 4, 5]]
    built = [
        pf.RaggedTensor.from_row_splits(values, [0, 2, 2, 5]),
        pf.RaggedTensor.from_row_lengths(values, [2, 0, 3]),
        pf.RaggedTensor.from_value_rowids(values, [0, 0, 2, 2, 2]),
        pf.RaggedTensor.from_value_rowids(values, [0, 0, 2, 2, 2], nrows=3),
        pf.RaggedTensor.from_row_starts(values, [0, 2, 2]),
        pf.RaggedTensor.from_row_limits(values, [2, 2, 5]),
    ]
    for rt in built:
        assert rt.to_list() == want and rt == built[0]
    rt = built[0]
    assert rt.shape == (3, None) and rt.dtype == np.int64 and rt.ragged_rank == 1 and len(rt) == 3
    assert rt.row_lengths().tolist() == [2, 0, 3] and rt.value_rowids().tolist() == [0, 0, 2, 2, 2]
    assert rt.to_tensor(-1).tolist() == [[1, 2, -1], [-1, -1, -1], [3, 4, 5]]
    assert rt.to_tensor(shape=[2, 4]).tolist() == [[1, 2, 0, 0], [0, 0, 0, 0]]
    assert rt[2].tolist() == [3, 4, 5] and rt[-1].tolist() == [3, 4, 5] and rt[1:].to_list() == [[], [3, 4, 5]]
    assert rt != pf.RaggedTensor.from_row_splits(values, np.array([0, 2, 2, 5], np.int32))  # splits dtype counts


def test_nested_constant_and_dense():
    rt = pf.ragged.constant([[[1, 2], [3]], [], [[4]]])
    assert rt.ragged_rank == 2 and rt.shape == (3, None, None) and rt.dtype == np.int32
    assert [s.tolist() for s in rt.nested_row_splits] == [[0, 2, 2, 3], [0, 2, 3, 4]]
    assert rt.flat_values.tolist() == [1, 2, 3, 4] and rt[0].to_list() == [[1, 2], [3]]
    assert rt.to_tensor().tolist() == [[[1, 2], [3, 0]], [[0, 0], [0, 0]], [[4, 0], [0, 0]]]
    assert pf.RaggedTensor.from_nested_row_splits(rt.flat_values, rt.nested_row_splits) == rt
    uniform = pf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert uniform.flat_values.shape == (3, 2) and uniform.shape == (2, None, 2)
    assert pf.ragged.constant([["a"], []]).flat_values.tolist() == [b"a"]
    dense = pf.RaggedTensor.from_tensor(np.arange(6).reshape(2, 3), lengths=[1, 3])
    assert dense.to_list() == [[0], [3, 4, 5]]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: pf.RaggedTensor.from_row_splits([1, 2], [0, 3]), "last row split"),
        (lambda: pf.RaggedTensor.from_row_splits([1, 2], [1, 2]), "start with 0"),
        (lambda: pf.RaggedTensor.from_row_lengths([1, 2], [3, -1]), ">= 0"),
        (lambda: pf.RaggedTensor.from_value_rowids([1, 2], [1, 0]), "sorted"),
        (lambda: pf.RaggedTensor.from_row_splits(3, [0, 1]), "rank >= 1"),
        (lambda: pf.RaggedTensorSpec([None, None], "int32", row_splits_dtype="int16"), "int32 or int64"),
    ],
)
def test_bad_values_are_refused(make, message):
    with pytest.raises(InvalidArgumentError, match=message):
        make()


def test_ragged_batch_of_a_static_spec_and_after_a_function():
    ds = pf.Dataset.range(5).map(lambda x: (x, np.arange(x), np.full([2, 3], x))).ragged_batch(2)
    scalar, varying, fixed = next(iter(ds))
    assert scalar.tolist() == [0, 1] and varying.to_list() == [[], [0]] and fixed.shape == (2, 2, 3)
    spec = ds.element_spec
    assert isinstance(spec[1], pf.RaggedTensorSpec) and spec[1].ragged_rank == 1 and spec[1].shape == (None, None)
    assert isinstance(spec[2], pf.TensorSpec) and ds.cardinality() == 3

    gen = pf.Dataset.from_generator(lambda: iter([np.zeros([2, 1])] * 3), output_signature=pf.TensorSpec([2, None]))
    batch = next(iter(gen.ragged_batch(2, drop_remainder=True, row_splits_dtype="int32")))
    assert batch.ragged_rank == 2 and batch.row_splits.dtype == np.int32 and batch.to_list() == [[[0.0]] * 2] * 2
    assert gen.ragged_batch(2, drop_remainder=True).element_spec == pf.RaggedTensorSpec((2, 2, None), "float32", 2)


def test_a_component_uniform_in_the_first_batch_that_varies_later_is_an_error():
    ds = pf.Dataset.from_tensor_slices([1, 1, 2, 3]).map(lambda n: np.zeros(n)).ragged_batch(2)
    it = iter(ds)
    assert next(it).shape == (2, 1)
    with pytest.raises(InvalidArgumentError, match="first batch"):
        next(it)


def _check_restores(ds):
    """Every state, sent through JSON and restored, gives the rest of the uninterrupted pass (``check_restores``
    compares leaves with ``np.asarray``, which ragged leaves do not support)."""
    it, states, expected = iter(ds), [], []
    while True:
        states.append(json.loads(json.dumps(it.get_state())))
        try:
            expected.append(next(it))
        except StopIteration:
            break
    for stop, state in enumerate(states):
        resumed = iter(ds)
        resumed.set_state(state)
        rest = list(resumed)
        assert len(rest) == len(expected) - stop
        for a, b in zip(rest, expected[stop:]):
            assert all(type(x) is type(y) and _equal(x, y) for x, y in zip(structure.flatten(a),
                                                                            structure.flatten(b)))  # fmt: skip
    return len(expected)


def _equal(x, y):
    return x == y if isinstance(x, pf.RaggedTensor) else np.array_equal(x, y)


def test_ragged_batch_and_batch_resume_exactly():
    ds = pf.Dataset.range(11).map(lambda x: {"v": np.arange(x % 4), "k": x}).ragged_batch(3)
    assert _check_restores(ds) == 4
    later_uniform = pf.Dataset.range(6).map(lambda x: np.arange(min(x, 2))).ragged_batch(3)  # layout is kept
    assert _check_restores(later_uniform) == 2 and isinstance(list(later_uniform)[1], pf.RaggedTensor)
    rt = pf.ragged.constant([[i] * (i % 3) for i in range(9)])
    slices = pf.Dataset.from_tensor_slices(rt).shuffle(4, seed=1).batch(2)
    assert _check_restores(slices) == 5
    assert _check_restores(slices.unbatch().batch(3)) == 3
    assert _check_restores(pf.Dataset.from_tensors(rt).repeat(2).unbatch().skip(3)) == 15


def test_batch_and_unbatch_of_ragged_elements():
    rt = pf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    ds = pf.Dataset.from_tensor_slices({"r": rt, "i": np.arange(4)})
    assert ds.element_spec["r"] == pf.RaggedTensorSpec((None,), "int32", 0)
    batches = list(ds.batch(3))
    assert batches[0]["r"].to_list() == [[1, 2], [3], []] and batches[1]["i"].tolist() == [3]
    rows = list(ds.batch(3).unbatch())
    assert [r["r"].tolist() for r in rows] == rt.to_list()
    twice = list(pf.Dataset.from_tensors(rt).repeat(3).batch(2))
    assert twice[0].ragged_rank == 2 and twice[1].to_list() == [rt.to_list()]
    assert pf.Dataset.from_tensors(rt).unbatch().cardinality() == 4
    with pytest.raises(InvalidArgumentError, match="same size"):
        pf.Dataset.from_tensor_slices((rt, np.arange(3)))


def test_batching_ragged_values_of_different_inner_shapes_is_refused():
    ds = pf.Dataset.range(2).map(lambda i: pf.RaggedTensor.from_row_lengths(np.zeros((2, i + 1)), [2]))
    with pytest.raises(InvalidArgumentError, match="inner shape"):
        next(iter(ds.batch(2)))


def test_numpy_is_what_tensorflow_gives():
    tf = pytest.importorskip("tensorflow")
    for rows in ([[1, 2], [3]], [[1, 2], [3, 4]], [[[1], [2, 3]], [], [[4]]], [["a"], ["b", "c"]]):
        want = tf.ragged.constant(rows).numpy()
        got = pf.ragged.constant(rows).numpy()
        assert repr(got) == repr(want)


def test_to_tf_gives_ragged_tensors():
    tf = pytest.importorskip("tensorflow")
    ds = pf.Dataset.range(5).map(lambda x: (np.arange(x), pf.ragged.constant([["a"], ["b", "c"]]))).ragged_batch(2)
    out = ds.to_tf()
    assert isinstance(out.element_spec[0], tf.RaggedTensorSpec) and out.element_spec[1].ragged_rank == 2
    first = next(iter(out))
    assert first[0].to_list() == [[], [0]] and first[1].to_list() == [[[b"a"], [b"b", b"c"]]] * 2
    assert [b[0].to_list() for b in out] == [b[0].to_list() for b in ds]

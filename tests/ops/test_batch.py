import numpy as np
import pytest

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import ElementTypeError, InvalidArgumentError


def test_batch_shapes_and_spec():
    ds = pf.Dataset.range(10).map(lambda x: (np.full(3, x), b"id")).batch(4)
    batches = list(ds)
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert batches[0][1].dtype == object and batches[0][1].tolist() == [b"id"] * 4
    assert ds.element_spec == (pf.TensorSpec((None, 3), "int64"), pf.TensorSpec((None,), "string"))
    dropped = pf.Dataset.range(10).batch(4, drop_remainder=True)
    assert dropped.element_spec == pf.TensorSpec((4,), "int64")
    assert len(dropped) == 2 and len(list(dropped)) == 2


def test_batching_different_shapes_names_the_element_and_the_fix():
    ds = pf.Dataset.range(1, 4).map(lambda n: np.zeros(n)).batch(3)
    with pytest.raises(InvalidArgumentError) as info:
        list(ds)
    message = str(info.value)
    assert "batch(): cannot batch elements with different shapes in component 0" in message
    assert "element 1 had shape (2,)" in message and "padded_batch()" in message


def test_batching_scalars_with_arrays_or_strings_with_numbers_fails_clearly():
    with pytest.raises(InvalidArgumentError, match="different shapes"):
        list(
            pf.Dataset.from_generator(lambda: iter([1, [1, 2]]), output_signature=pf.TensorSpec(None, "int64")).batch(2)
        )
    mixed = pf.Dataset.range(2).map(lambda x: b"a" if x == 0 else x)
    with pytest.raises(ElementTypeError):
        list(mixed.batch(2))


@pytest.mark.parametrize("size", [0, -1])
def test_batch_size_must_be_positive(size):
    with pytest.raises(InvalidArgumentError, match=r"batch\(\): `batch_size` must be > 0"):
        pf.Dataset.range(3).batch(size)


def test_unbatch_errors():
    with pytest.raises(InvalidArgumentError, match="scalar components"):  # when built, as tf.data
        pf.Dataset.range(3).unbatch()
    with pytest.raises(InvalidArgumentError, match="same first"):
        pf.Dataset.from_tensors((np.zeros(2), np.zeros(3))).unbatch()
    uneven = pf.Dataset.range(1).map(lambda _: (np.zeros(2), np.zeros(3)))
    with pytest.raises(InvalidArgumentError, match="same batch size"):
        list(uneven.unbatch())
    scalars = pf.Dataset.range(2).map(lambda x: x)
    with pytest.raises(InvalidArgumentError, match="rank >= 1"):
        list(scalars.unbatch())


def test_rebatch_slices_across_input_batches():
    out = list(pf.Dataset.range(10).batch(4).rebatch(3))
    assert [b.tolist() for b in out] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    out = list(pf.Dataset.range(10).batch(4).rebatch([1, 4], drop_remainder=True))
    assert [b.tolist() for b in out] == [[0], [1, 2, 3, 4], [5], [6, 7, 8, 9]]
    with pytest.raises(InvalidArgumentError):
        pf.Dataset.range(3).batch(2).rebatch(0)


def test_rebatch_empty_splits_as_tf_data():
    out = list(pf.Dataset.range(4).batch(2, drop_remainder=True).rebatch([1, 0]))
    assert [b.tolist() for b in out] == [[0], [], [1], [], [2], [], [3], []]
    assert all(b.dtype == np.int64 for b in out)
    check_restores(pf.Dataset.range(4).batch(2, drop_remainder=True).rebatch([0, 1]))


def test_a_function_after_an_empty_batch_step_learns_its_spec_without_an_element():
    """An empty input still has a structure (tf.data traces it): unbatch, ragged_batch and sparse_batch build a
    sample from their input's, so a map after them needs no element (a resample of a class that is never there)."""
    empty = pf.Dataset.range(10).filter(lambda x: x > 100)
    unbatched = empty.batch(4).unbatch().map(lambda x: x * 2)
    assert unbatched.element_spec == pf.TensorSpec((), np.int64) and list(unbatched) == []
    ragged = empty.map(lambda x: np.full(x % 3, x)).ragged_batch(2).map(lambda r: r.flat_values.sum())
    assert ragged.element_spec == pf.TensorSpec((), np.int64) and list(ragged) == []
    sparse = empty.map(lambda x: np.full(x % 3, x)).sparse_batch(2, [3]).map(lambda s: s.values.sum())
    assert sparse.element_spec == pf.TensorSpec((), np.int64) and list(sparse) == []


def test_an_attribute_error_of_a_function_learning_its_spec_names_the_step():
    ds = pf.Dataset.range(3).map(lambda x: x.no_such_method())
    with pytest.raises(ElementTypeError, match="element_spec of MapDataset: AttributeError: .*no_such_method"):
        ds.element_spec  # noqa: B018

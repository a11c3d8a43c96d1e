import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ArgumentTypeError, DataLossError, ElementTypeError, InvalidArgumentError


def sequences():
    return pf.Dataset.range(1, 6).map(lambda n: (np.arange(n), n))


def test_pads_to_the_longest_in_each_batch():
    batches = list(sequences().padded_batch(2))
    assert [b[0].shape for b in batches] == [(2, 2), (2, 4), (1, 5)]
    assert batches[1][0].tolist() == [[0, 1, 2, 0], [0, 1, 2, 3]]


def test_padded_shapes_and_values():
    ds = sequences().padded_batch(5, padded_shapes=([6], []), padding_values=(-1, None))
    ((seqs, lengths),) = list(ds)
    assert seqs.shape == (5, 6) and seqs[0].tolist() == [0, -1, -1, -1, -1, -1]
    assert lengths.tolist() == [1, 2, 3, 4, 5]
    assert ds.element_spec[0] == pf.TensorSpec((None, 6), "int64")


def test_strings_pad_with_empty_bytes():
    ds = pf.Dataset.from_generator(
        lambda: iter([[b"a"], [b"b", b"c"]]), output_signature=pf.TensorSpec((None,), "string")
    )
    (batch,) = list(ds.padded_batch(2))
    assert batch.tolist() == [[b"a", b""], [b"b", b"c"]]


def test_element_larger_than_padded_shape_is_data_loss_as_in_tf_data():
    with pytest.raises(DataLossError) as info:
        list(sequences().padded_batch(5, padded_shapes=([3], [])))
    assert "component 0 of element 3 has shape (4,), larger than padded_shapes (3,)" in str(info.value)


def test_rank_and_structure_mismatches():
    with pytest.raises(InvalidArgumentError, match=r"padded shape \(3, 3\) is not compatible with the shape \(1,\)"):
        list(sequences().padded_batch(2, padded_shapes=([3, 3], [])))
    with pytest.raises(InvalidArgumentError, match="structure of the elements"):
        list(sequences().padded_batch(2, padded_shapes=([3],)))
    mixed = pf.Dataset.range(2).map(lambda n: np.zeros((1,) * int(n + 1)))
    with pytest.raises(InvalidArgumentError, match="padding can change sizes, not ranks"):
        list(mixed.padded_batch(2))


def test_padding_value_dtype_must_match():
    with pytest.raises(ElementTypeError, match="has dtype int32"):
        list(sequences().padded_batch(2, padding_values=(np.int32(-1), None)))
    with pytest.raises(ElementTypeError, match="does not match the component's dtype"):
        list(sequences().padded_batch(2, padding_values=("x", None)))
    with pytest.raises(InvalidArgumentError, match="must be scalars"):
        list(sequences().padded_batch(2, padding_values=(np.array([1, 2]), None)))


def test_none_padding_value_for_a_component_and_one_value_for_all():
    ds = pf.Dataset.range(1, 3).map(lambda n: (np.arange(n), np.full(n, b"a")))
    (batch,) = list(ds.padded_batch(2, padding_values=(None, "z")))
    assert batch[0].tolist() == [[0, 0], [0, 1]] and batch[1].tolist() == [[b"a", b"z"], [b"a", b"a"]]
    pairs = pf.Dataset.range(1, 3).map(lambda n: (np.arange(n), np.arange(n) + 1))
    (batch,) = list(pairs.padded_batch(2, padding_values=np.int64(7)))
    assert batch[0].tolist() == [[0, 7], [0, 1]] and batch[1].tolist() == [[1, 7], [1, 2]]


def test_argument_errors_come_when_the_dataset_is_built_from_static_specs():
    with pytest.raises(InvalidArgumentError, match=r"padded shape \(1,\) is not compatible with the shape \(\)"):
        pf.Dataset.range(10).padded_batch(5, padded_shapes=[1])
    with pytest.raises(InvalidArgumentError, match="not compatible"):
        pf.Dataset.from_tensors([1, 2, 3]).padded_batch(5, padded_shapes=[1])
    with pytest.raises(ArgumentTypeError, match="structure of the elements"):
        pf.Dataset.from_tensors(([1, 2, 3], [1])).padded_batch(5, padded_shapes=[4])
    unknown_rank = pf.Dataset.from_generator(lambda: iter([1, 2]), output_types=np.int32)
    with pytest.raises(InvalidArgumentError, match="unknown rank"):
        unknown_rank.padded_batch(2)
    sparse = pf.Dataset.from_tensors(pf.SparseTensor([[0, 0]], [42], [1, 1]))
    with pytest.raises(ElementTypeError, match="only tensor components can be padded"):
        sparse.padded_batch(2)
    with pytest.raises(ElementTypeError, match="datasets of datasets"):
        pf.Dataset.range(3).window(2).padded_batch(2)


def test_sparse_elements_after_a_map_are_refused_on_the_first_batch():
    ds = pf.Dataset.range(3).map(lambda i: pf.SparseTensor([[0]], [i], [1])).padded_batch(2)
    with pytest.raises(ElementTypeError, match="only tensor components can be padded"):
        list(ds)

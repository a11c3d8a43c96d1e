import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ElementTypeError, InvalidArgumentError


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


def test_element_larger_than_padded_shape():
    with pytest.raises(InvalidArgumentError) as info:
        list(sequences().padded_batch(5, padded_shapes=([3], [])))
    assert "component 0 of element 3 has shape (4,), larger than padded_shapes (3,)" in str(info.value)


def test_rank_and_structure_mismatches():
    with pytest.raises(InvalidArgumentError, match="elements have rank 1"):
        list(sequences().padded_batch(2, padded_shapes=([3, 3], [])))
    with pytest.raises(InvalidArgumentError, match="structure of the elements"):
        list(sequences().padded_batch(2, padded_shapes=([3],)))
    mixed = pf.Dataset.range(2).map(lambda n: np.zeros((1,) * int(n + 1)))
    with pytest.raises(InvalidArgumentError, match="padding can change sizes, not ranks"):
        list(mixed.padded_batch(2))


def test_padding_value_dtype_must_match():
    with pytest.raises(ElementTypeError, match="has dtype int32"):
        list(sequences().padded_batch(2, padding_values=(np.int32(-1), None)))
    with pytest.raises(ElementTypeError, match="must be a scalar"):
        list(sequences().padded_batch(2, padding_values=("x", None)))

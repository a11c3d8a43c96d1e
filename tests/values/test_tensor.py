"""pf.Tensor, pf.TensorShape and pf.Dimension: the methods TensorFlow code calls on tensors, checked against
TensorFlow's own TensorShape where it has an answer."""

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError

tf = pytest.importorskip("tensorflow")

SHAPES = [[], [2], [2, None, 3], [0, 4], None]


def both(shape):
    return tf.TensorShape(shape), pf.TensorShape(shape)


@pytest.mark.parametrize("shape", SHAPES)
def test_tensor_shape_answers_as_tensorflows(shape):
    t, p = both(shape)
    assert p.rank == t.rank and p.ndims == t.ndims
    assert p.is_fully_defined() == t.is_fully_defined() and p.num_elements() == t.num_elements()
    assert str(p) == str(t) and repr(p) == repr(t) and bool(p) == bool(t)
    if shape is None:
        with pytest.raises(ValueError):
            p.as_list()
        with pytest.raises(ValueError):
            len(p)
        return
    assert p.as_list() == t.as_list() and list(p) == list(t) and len(p) == len(t)
    assert p == t.as_list() and p == tuple(shape) and p == pf.TensorShape(shape)
    assert [d.value for d in p.dims] == [d.value for d in t.dims]
    assert p[1:].as_list() == t[1:].as_list()
    for other in ([2, 5, 3], [None] * len(shape), [1], None):
        assert p.is_compatible_with(other) == t.is_compatible_with(other), other
        assert p.most_specific_compatible_shape(other) == pf.TensorShape(
            t.most_specific_compatible_shape(tf.TensorShape(other)).as_list()
            if t.most_specific_compatible_shape(tf.TensorShape(other)).rank is not None
            else None
        )
    assert p.concatenate([7]).as_list() == t.concatenate([7]).as_list()


def test_merge_with_and_rank_checks():
    assert pf.TensorShape([2, None]).merge_with([None, 3]) == [2, 3]
    with pytest.raises(InvalidArgumentError, match="incompatible"):
        pf.TensorShape([2]).merge_with([3])
    with pytest.raises(InvalidArgumentError, match="rank"):
        pf.TensorShape([2]).with_rank_at_least(2)
    assert pf.TensorShape([2, 3]).with_rank(2) == [2, 3]
    assert pf.Dimension(3).value == 3 and pf.Dimension(None).value is None and int(pf.Dimension(4)) == 4


def test_tensor_has_tensor_methods_and_stays_numpy():
    t = pf.constant([[1, 2, 3]])
    assert isinstance(t, np.ndarray) and isinstance(t, pf.Tensor)
    assert t.shape.as_list() == [1, 3] and t.get_shape().ndims == 2 and t.shape == (1, 3)
    t.set_shape([None, 3])
    with pytest.raises(ValueError, match="not compatible"):
        t.set_shape([None, 4])
    assert type(t.numpy()) is np.ndarray and t.numpy().tolist() == [[1, 2, 3]]
    s = pf.reduce_sum(t)
    assert isinstance(s, pf.Tensor) and s.numpy() == 6 and type(s.numpy()) is np.int32
    assert isinstance(s + 1, pf.Tensor) and (s + 1).numpy() == 7  # 0-d results stay Tensors, as TensorFlow's
    assert pf.constant("text").numpy() == b"text"
    with pytest.raises(TypeError, match="unhashable"):
        {t: 1}  # noqa: B018


def test_a_function_calling_tensor_methods_gets_tensors_and_returns_numpy_elements():
    def parse(image):
        image.set_shape([None, None, 3])
        return pf.cast(image, pf.float32) / 255.0

    images = np.full((4, 2, 2, 3), 255, np.uint8)
    ds = pf.Dataset.from_tensor_slices(images).map(parse).batch(2)
    batches = list(ds.as_numpy_iterator())
    assert [type(b) for b in batches] == [np.ndarray, np.ndarray]  # elements are plain NumPy between steps
    assert batches[0].dtype == np.float32 and batches[0].max() == 1.0
    assert ds.element_spec == pf.TensorSpec((None, 2, 2, 3), pf.float32)
    gray = pf.Dataset.from_tensor_slices(np.zeros((1, 2, 2, 1), np.uint8)).map(parse)
    with pytest.raises(ValueError, match=r"not compatible with supplied shape \(None, None, 3\)") as info:
        list(gray)
    assert "map() function `test_a_function_calling_tensor_methods" in "".join(info.value.__notes__)

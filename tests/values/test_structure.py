import collections

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.values import structure as st

Pair = collections.namedtuple("Pair", ["b", "a"])


def test_flatten_sorts_dict_keys_and_pack_keeps_their_order():
    element = {"b": 1, "a": (2, {"z": 3, "y": 4})}
    assert st.flatten(element) == [2, 4, 3, 1]
    packed = st.pack_as(element, [20, 40, 30, 10])
    assert packed == {"b": 10, "a": (20, {"z": 30, "y": 40})}
    assert list(packed) == ["b", "a"]


def test_namedtuples_flatten_in_field_order_and_pack_back_to_their_type():
    value = Pair(b=1, a=2)
    assert st.flatten(value) == [1, 2]
    packed = st.pack_as(value, [5, 6])
    assert type(packed) is Pair and packed == Pair(5, 6)


def test_lists_are_leaves():
    assert st.flatten(([1, 2], 3)) == [[1, 2], 3]


def test_pack_as_checks_the_leaf_count():
    with pytest.raises(ValueError, match="too few"):
        st.pack_as((1, 2), [1])
    with pytest.raises(ValueError, match="too many"):
        st.pack_as((1, 2), [1, 2, 3])


def test_same_structure():
    assert st.same_structure((1, {"a": 2}), (3, {"a": 4}))
    assert not st.same_structure((1, 2), (1, 2, 3))
    assert not st.same_structure({"a": 1}, {"b": 1})
    assert not st.same_structure(Pair(1, 2), (1, 2))
    assert st.same_structure(Pair(1, 2), (1, 2), check_types=False)


def test_map_structure_rejects_different_structures():
    assert st.map_structure(lambda a, b: a + b, (1, 2), (10, 20)) == (11, 22)
    with pytest.raises(ValueError):
        st.map_structure(lambda a, b: a, (1, 2), (1,))


@pytest.mark.parametrize(
    "given, expected",
    [
        ("float32", np.float32),
        ("string", object),
        (bytes, object),
        (np.int64, np.int64),
        (np.dtype("uint8"), np.uint8),
        (float, np.float32),
        (bool, np.bool_),
    ],
)
def test_as_dtype(given, expected):
    assert st.as_dtype(given) == np.dtype(expected)


def test_as_dtype_refuses_ambiguous_and_unknown():
    with pytest.raises(InvalidArgumentError, match="ambiguous"):
        st.as_dtype(int)
    with pytest.raises(InvalidArgumentError):
        st.as_dtype("not-a-dtype")
    with pytest.raises(InvalidArgumentError):
        st.as_dtype("datetime64[s]")


def test_shapes():
    assert st.as_shape([None, -1, 3]) == (None, None, 3)
    assert st.as_shape(None) is None
    assert st.as_shape(4) == (4,)
    with pytest.raises(InvalidArgumentError):
        st.as_shape([1.5])
    assert st.shape_compatible((None, 3), (5, 3))
    assert not st.shape_compatible((None, 3), (5, 4))
    assert not st.shape_compatible((3,), (3, 1))
    assert st.shape_compatible(None, (1, 2))
    assert st.most_specific_compatible_shape((2, 3), (4, 3)) == (None, 3)
    assert st.most_specific_compatible_shape((2,), (2, 3)) is None


def test_tensor_spec():
    spec = pf.TensorSpec((None, 3), "float32")
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=float32)"
    assert spec.is_compatible_with(np.zeros((7, 3), np.float32))
    assert not spec.is_compatible_with(np.zeros((7, 3), np.float64))
    assert not spec.is_compatible_with(np.zeros((7, 2), np.float32))
    assert pf.TensorSpec((), "string").is_compatible_with(b"abc")
    assert spec == pf.TensorSpec([None, 3], np.float32)
    assert repr(pf.TensorSpec((2,), "string")) == "TensorSpec(shape=(2,), dtype=string)"


def test_tensor_spec_accepts_tensorflow_dtypes_and_shapes_by_duck_typing():
    class FakeDType:
        as_numpy_dtype = np.int16

    class FakeShape:
        rank = 2

        def as_list(self):
            return [None, 4]

    spec = pf.TensorSpec(FakeShape(), FakeDType())
    assert spec == pf.TensorSpec((None, 4), np.int16)


def test_spec_of_nested_element():
    element = {"x": np.zeros((2, 3), np.float32), "id": b"a", "n": np.int64(1)}
    spec = st.spec_of(element)
    assert spec == {"x": pf.TensorSpec((2, 3), "float32"), "id": pf.TensorSpec((), "string"),
                    "n": pf.TensorSpec((), "int64")}  # fmt: skip

import collections

import numpy as np
import pytest

from parafeed.errors import ElementTypeError
from parafeed.values.elements import to_element
from tests.helpers import describe

Point = collections.namedtuple("Point", ["x", "y"])


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, np.int32(1)),
        (2**40, np.int64(2**40)),
        (1.5, np.float32(1.5)),
        (True, np.True_),
        ("héllo", "héllo".encode()),
        (b"raw", b"raw"),
        (np.float64(2.5), np.float64(2.5)),
        (np.array(3, np.uint8), np.uint8(3)),
        (np.str_("s"), b"s"),
        ([1, 2], np.array([1, 2], np.int32)),
        ([1, 2.5], np.array([1, 2.5], np.float32)),
        ([np.float64(1), 2], np.array([1, 2], np.float64)),
        ([1, 2**40], np.array([1, 2**40], np.int64)),
        (["a", "bc"], np.array([b"a", b"bc"], dtype=object)),
        (np.array(["a", "b"]), np.array([b"a", b"b"], dtype=object)),
        ([], np.zeros(0, np.float32)),
        ([[True], [False]], np.array([[True], [False]])),
    ],
)
def test_tf_dtype_rules(value, expected):
    assert describe(to_element(value)) == describe(expected)


def test_structures_are_converted_leaf_by_leaf():
    out = to_element({"b": (1, "x"), "a": Point(2.0, [3])})
    assert list(out) == ["b", "a"]
    assert type(out["a"]) is Point
    assert describe(out) == describe({"b": (np.int32(1), b"x"), "a": Point(np.float32(2), np.array([3], np.int32))})


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "None is not a valid value"),
        ([[1], [1, 2]], "ragged or mixed list"),
        ([1, "a"], "mixed"),
        (2**70, "does not fit in int64"),
        (object(), "cannot convert object"),
        (np.array([1, None], dtype=object), "object array may only hold bytes or str"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "not supported"),
    ],
)
def test_unconvertible_values_raise_clear_errors(value, message):
    with pytest.raises(ElementTypeError, match=message):
        to_element(value, "test")

"""tf.train.Example parsing: parafeed.io against tf.io on the same serialized bytes, values and errors.

Messages are built both by TensorFlow's own protobuf classes and by parafeed's serializer, and each side parses
the other's. Errors must happen in the same cases (parafeed raises its ParseError).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import InvalidArgumentError, ParseError
from tests.helpers import assert_elements_equal

tf = pytest.importorskip("tensorflow", reason="parsing is compared with tf.io (make test installs TensorFlow)")
from tensorflow.core.example import example_pb2, feature_pb2  # noqa: E402

F = feature_pb2.Feature


def floats(*v):
    return F(float_list=feature_pb2.FloatList(value=v))


def ints(*v):
    return F(int64_list=feature_pb2.Int64List(value=v))


def strs(*v):
    return F(bytes_list=feature_pb2.BytesList(value=v))


def example(**features):
    e = example_pb2.Example()
    for key, feature in features.items():
        e.features.feature[key].CopyFrom(feature)
    return e.SerializeToString()


def both(serialized, tf_features, pf_features, single=False):
    """(tf result or exception type, pf result or exception type), results as plain dicts of numpy."""

    def convert(value):
        if hasattr(value, "dense_shape"):
            return ("sparse", value.indices.numpy(), value.values.numpy(), value.dense_shape.numpy())
        return value.numpy()

    try:
        fn = tf.io.parse_single_example if single else tf.io.parse_example
        batch = serialized if single else np.array(serialized, dtype=object)  # tf cannot type an empty list
        expected = {k: convert(v) for k, v in fn(batch, tf_features).items()}
    except (tf.errors.InvalidArgumentError, ValueError) as err:
        expected = type(err)
    fn = pf.io.parse_single_example if single else pf.io.parse_example
    try:
        actual = fn(serialized, pf_features)
        actual = {k: ("sparse", v.indices, v.values, v.dense_shape) if isinstance(v, pf.SparseTensor) else v
                  for k, v in actual.items()}  # fmt: skip
    except InvalidArgumentError as err:
        actual = type(err)
    return expected, actual


def specs(lib, dtype_map):
    io = lib.io
    out = {}
    for key, (kind, args) in dtype_map.items():
        dtype = (
            {"f": tf.float32, "i": tf.int64, "s": tf.string}[args[0]]
            if lib is tf
            else {"f": "float32", "i": "int64", "s": "string"}[args[0]]
        )
        if kind == "fixed":
            out[key] = io.FixedLenFeature(args[1], dtype, *args[2:])
        elif kind == "var":
            out[key] = io.VarLenFeature(dtype)
        else:
            out[key] = io.FixedLenSequenceFeature(
                args[1], dtype, allow_missing=True, default_value=args[2] if len(args) > 2 else None
            )
    return out


def check(serialized, spec_map, single=False):
    expected, actual = both(serialized, specs(tf, spec_map), specs(pf, spec_map), single)
    if isinstance(expected, type):
        assert actual is ParseError or actual is InvalidArgumentError, (expected, actual)
        return
    assert isinstance(actual, dict), actual
    assert list(actual) == list(expected)
    for key in expected:
        e, a = expected[key], actual[key]
        if isinstance(e, tuple):
            assert_elements_equal([e[1:]], [a[1:]], key)
        else:
            assert_elements_equal([e], [a], key)


CASES = {
    "fixed scalars": (
        [example(a=floats(1.5), b=ints(-3), s=strs(b"x"))],
        {"a": ("fixed", ("f", [])), "b": ("fixed", ("i", [])), "s": ("fixed", ("s", []))},
    ),
    "fixed shapes": ([example(a=floats(*range(6))), example(a=floats(*range(6, 12)))], {"a": ("fixed", ("f", [2, 3]))}),
    "defaults": ([example(), example(a=ints(7, 8))], {"a": ("fixed", ("i", [2], [1, 2]))}),
    "string default": ([example(), example(s=strs(b"q"))], {"s": ("fixed", ("s", [], "none"))}),
    "missing required": ([example(b=ints(1))], {"a": ("fixed", ("i", []))}),
    "wrong count": ([example(a=floats(1, 2, 3))], {"a": ("fixed", ("f", [2]))}),
    "wrong type": ([example(a=floats(1))], {"a": ("fixed", ("i", []))}),
    "empty feature is missing": ([example(a=F())], {"a": ("fixed", ("f", [], 5.0))}),
    "empty feature varlen": ([example(a=F()), example(a=ints(1))], {"a": ("var", ("i",))}),
    "varlen": ([example(a=ints(1, 2, 3)), example(), example(a=ints(4))], {"a": ("var", ("i",))}),
    "varlen strings": ([example(s=strs(b"a", b"")), example(s=strs())], {"s": ("var", ("s",))}),
    "sequence": ([example(a=ints(1, 2, 3, 4)), example(), example(a=ints(4, 5))], {"a": ("seq", ("i", [2], -1))}),
    "sequence not a multiple": ([example(a=ints(1, 2, 3))], {"a": ("seq", ("i", [2]))}),
    "garbage bytes": ([b"\x0a\x05\x0a\x03"], {"a": ("fixed", ("f", []))}),
    "empty batch": (np.array([], dtype=object), {"a": ("var", ("f",)), "b": ("fixed", ("i", [2]))}),
    "extreme ints": ([example(a=ints(-(2**63), 2**63 - 1, 0))], {"a": ("fixed", ("i", [3]))}),
    "special floats": ([example(a=floats(float("inf"), float("-inf"), -0.0))], {"a": ("fixed", ("f", [3]))}),
}


@pytest.mark.parametrize("name", CASES)
def test_parse_example_matches_tf(name):
    serialized, spec_map = CASES[name]
    for key, (kind, args) in spec_map.items():
        if args[-1] == "none":
            spec_map = dict(spec_map)
            spec_map[key] = (kind, (*args[:-1], b"none"))
    check(serialized, spec_map)


def test_parse_single_example_matches_tf():
    data = example(a=ints(1, 2, 3), s=strs(b"jpeg-bytes"), f=floats(0.25, 0.5))
    check(data, {"a": ("var", ("i",)), "s": ("fixed", ("s", [])), "f": ("fixed", ("f", [2]))}, single=True)


def test_tensorflow_parses_parafeed_serialized_examples():
    data = pf.io.serialize_example(
        {"img": b"\xff\xd8", "label": 3, "box": np.array([0.1, 0.2], np.float32), "tags": ["a", "b"]}
    )
    parsed = tf.io.parse_single_example(data, {
        "img": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64),
        "box": tf.io.FixedLenFeature([2], tf.float32), "tags": tf.io.VarLenFeature(tf.string),
    })  # fmt: skip
    assert parsed["img"].numpy() == b"\xff\xd8" and parsed["label"].numpy() == 3
    np.testing.assert_array_equal(parsed["box"].numpy(), np.array([0.1, 0.2], np.float32))
    assert parsed["tags"].values.numpy().tolist() == [b"a", b"b"]


values = st.one_of(
    st.lists(st.floats(width=32, allow_nan=False), max_size=4).map(lambda v: ("f", floats(*v))),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4).map(lambda v: ("i", ints(*v))),
    st.lists(st.binary(max_size=5), max_size=4).map(lambda v: ("s", strs(*v))),
    st.just(("none", F())),
)


@settings(max_examples=200, deadline=None)
@given(batch=st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3), max_size=5),
       wanted=st.dictionaries(st.sampled_from(["a", "b", "c"]),
                              st.tuples(st.sampled_from(["fixed", "var", "seq"]), st.sampled_from(["f", "i", "s"]), st.integers(0, 3)),
                              min_size=1))  # fmt: skip
def test_random_examples_parse_like_tf(batch, wanted):
    serialized = [example(**{k: f for k, (_, f) in features.items()}) for features in batch]
    spec_map = {}
    for key, (kind, dtype, n) in wanted.items():
        if kind == "fixed":
            spec_map[key] = ("fixed", (dtype, [n]))
        elif kind == "var":
            spec_map[key] = ("var", (dtype,))
        else:
            spec_map[key] = ("seq", (dtype, [max(n, 1)]))
    check(serialized, spec_map)

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import InvalidArgumentError, ParseError
from parafeed.io import example, example_columns

SPEC = {
    "x": pf.io.FixedLenFeature([4], "float32"),
    "label": pf.io.FixedLenFeature([], "int64", default_value=-1),
    "id": pf.io.FixedLenFeature([], "string", default_value=b""),
    "tags": pf.io.VarLenFeature("string"),
    "seq": pf.io.FixedLenSequenceFeature([2], "int64", allow_missing=True),
}


def record(i):
    features = {
        "x": np.arange(4, dtype=np.float32) + i,
        "id": b"id-%d" % i,
        "tags": np.array([b"t"] * (i % 3), dtype=object),
    }
    if i % 4:
        features["label"] = i
    if i % 2:
        features["seq"] = np.arange(2 * (i % 3), dtype=np.int64)
    return pf.io.serialize_example(features)


def test_batch_results():
    batch = [record(i) for i in range(6)]
    out = pf.io.parse_example(batch, SPEC)
    assert list(out) == ["tags", "id", "label", "seq", "x"]
    assert out["x"].shape == (6, 4) and out["x"].dtype == np.float32 and out["x"][5, 0] == 5
    assert out["label"].tolist() == [-1, 1, 2, 3, -1, 5]
    assert out["id"].tolist() == [b"id-%d" % i for i in range(6)]
    assert out["tags"].dense_shape.tolist() == [6, 2] and len(out["tags"].values) == 6
    assert out["seq"].shape == (6, 2, 2) and out["seq"][0].tolist() == [[0, 0], [0, 0]]


def test_native_and_protobuf_decoders_agree():
    if example_columns._native is None:
        pytest.fail("the C extension parafeed.io._native was not built")
    batch = [record(i) for i in range(20)] + [b"", pf.io.serialize_example({"x": [1, 2]})]
    keys, dtypes = list(SPEC), [s.dtype for s in SPEC.values()]
    native = example_columns._columns_native(batch, keys, dtypes)
    assert native is not None  # canonical messages take the fast path
    python = example_columns._columns_protobuf(batch, keys, dtypes)
    for a, b in zip(native, python):
        assert a.counts.tolist() == b.counts.tolist()
        assert a.values.dtype == b.values.dtype
        # equal values, NaN where NaN: a flipped bit can make a signalling NaN, which the protobuf path quiets on
        # its way through a Python float (the C path keeps the bits, as TensorFlow does)
        np.testing.assert_array_equal(a.values, b.values)


FIXED = {
    "x": pf.io.FixedLenFeature([4], "float32"),
    "label": pf.io.FixedLenFeature([], "int64", default_value=-1),
    "id": pf.io.FixedLenFeature([], "string", default_value=b""),
    "pair": pf.io.FixedLenFeature([2], "string", default_value=[b"a", b"b"]),  # unhashable: no fast path
}


def plain(value):
    """pf.io's parsers return Tensors, as TensorFlow's; ``.numpy()`` gives what a dataset element holds."""
    return value.numpy() if isinstance(value, pf.Tensor) else value


def assert_same_element(a, b):
    assert list(a) == list(b)
    a, b = {k: plain(v) for k, v in a.items()}, {k: plain(v) for k, v in b.items()}
    for key in a:
        assert type(a[key]) is type(b[key]), key
        if isinstance(a[key], np.ndarray):
            assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
            assert a[key].flags.writeable == b[key].flags.writeable, key
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("keys", [["x", "label", "id"], ["x", "label", "id", "pair"], ["id"], ["label"]])
def test_single_example_is_the_batch_of_one(keys):
    """parse_single_example's fast path (all FixedLenFeature) gives what parse_example gives for a batch of one,
    for records where a feature is missing (defaults), has another size (an error) or all is there."""
    features = {k: FIXED[k] for k in keys}
    assert (example._single_plan(features) is None) == ("pair" in keys)  # the fast path is what is tested
    records = [record(i) for i in range(6)] + [pf.io.serialize_example({"pair": [b"p", b"q"], "x": [1.0] * 4,
                                                                        "id": b"z", "label": 3})]  # fmt: skip
    for r in records:
        try:
            want = {k: v[0] for k, v in pf.io.parse_example([r], features).items()}
        except InvalidArgumentError as err:
            with pytest.raises(InvalidArgumentError, match=str(err).split(":")[0]):
                pf.io.parse_single_example(r, features)
            continue
        assert_same_element(pf.io.parse_single_example(r, dict(features)), want)  # an equal dict: the same plan
        assert_same_element(pf.io.parse_single_example(r, features), want)


def test_single_example_and_sequence_example():
    out = pf.io.parse_single_example(record(5), SPEC)
    assert out["label"] == 5 and type(plain(out["label"])) is np.int64
    assert out["id"] == b"id-5"
    assert out["tags"].dense_shape.tolist() == [2]
    data = pf.io.serialize_sequence_example(
        {"len": 3},
        {"frames": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "words": [[b"a"], np.array([], object), [b"b", b"c"]]},
    )
    context, seqs = pf.io.parse_single_sequence_example(
        data, {"len": pf.io.FixedLenFeature([], "int64")},
        {"frames": pf.io.FixedLenSequenceFeature([2], "float32"), "words": pf.io.VarLenFeature("string")},
    )  # fmt: skip
    assert context["len"] == 3
    assert seqs["frames"].tolist() == [[1, 2], [3, 4], [5, 6]]
    assert seqs["words"].indices.tolist() == [[0, 0], [2, 0], [2, 1]] and seqs["words"].dense_shape.tolist() == [3, 2]


@pytest.mark.parametrize(
    "spec, message",
    [
        (lambda: {"x": pf.io.FixedLenFeature([], "float64")}, "float32, int64 or string"),
        (lambda: {"x": pf.io.FixedLenFeature([None], "int64")}, "fully defined"),
        (lambda: {"x": pf.io.FixedLenSequenceFeature([], "int64")}, "allow_missing to be True"),
        (lambda: {}, "non-empty dict"),
        (lambda: {"x": "float32"}, "unsupported spec"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(InvalidArgumentError, match=message):
        pf.io.parse_example([record(0)], spec())


def test_parse_errors_name_the_feature_and_example():
    with pytest.raises(ParseError, match=r"Key: x, Index: 1.  Number of float values != expected.  Values size: 2"):
        pf.io.parse_example([record(0), pf.io.serialize_example({"x": [1.0, 2.0]})], {"x": SPEC["x"]})
    with pytest.raises(ParseError, match="Feature: x .* is required but could not be found"):
        pf.io.parse_example([b""], {"x": SPEC["x"]})
    with pytest.raises(ParseError, match="Data type: int64 but expected type: float"):
        pf.io.parse_example([pf.io.serialize_example({"x": [1, 2, 3, 4]})], {"x": SPEC["x"]})
    with pytest.raises(ParseError, match=r"serialized\[0\] is not a valid Example"):
        pf.io.parse_example([b"\xff\xff"], {"x": SPEC["x"]})
    with pytest.raises(ParseError, match="must be bytes"):
        pf.io.parse_single_example("text", {"x": SPEC["x"]})


def test_serialize_example_arguments():
    with pytest.raises(InvalidArgumentError, match="empty list"):
        pf.io.serialize_example({"x": []})
    assert (
        pf.io.parse_single_example(
            pf.io.serialize_example({"x": np.array([], np.int64)}), {"x": pf.io.VarLenFeature("int64")}
        )["x"].values.dtype
        == np.int64
    )


@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=80))
def test_fuzzed_bytes_give_a_result_or_a_parse_error(data):
    try:
        out = pf.io.parse_example([data], SPEC)
    except ParseError:
        return
    assert set(out) == set(SPEC)


@settings(max_examples=300, deadline=None)
@given(
    i=st.integers(0, 30), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), min_size=1, max_size=3)
)
def test_mutated_examples_give_a_result_or_a_parse_error(i, flips):
    data = bytearray(record(i))
    for pos, bit in flips:
        data[pos % len(data)] ^= 1 << bit
    try:
        pf.io.parse_example([bytes(data)], SPEC)
        pf.io.parse_single_example(bytes(data), SPEC)
    except ParseError:
        pass


@settings(max_examples=1000, deadline=None)
@given(i=st.integers(0, 30), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), min_size=1, max_size=4),
       cut=st.integers(0, 200))  # fmt: skip
def test_native_decoder_accepts_only_what_protobuf_accepts_and_agrees(i, flips, cut):
    data = bytearray(record(i))
    for pos, bit in flips:
        data[pos % len(data)] ^= 1 << bit
    batch = [bytes(data), bytes(data[: max(cut, 0)])]
    keys, dtypes = list(SPEC), [s.dtype for s in SPEC.values()]
    native = example_columns._columns_native(batch, keys, dtypes)
    if native is None:
        return
    # must not raise: the C path took these bytes as valid
    python = example_columns._columns_protobuf(batch, keys, dtypes)
    for a, b in zip(native, python):
        assert a.counts.tolist() == b.counts.tolist()
        assert a.values.dtype == b.values.dtype
        # equal values, NaN where NaN: a flipped bit can make a signalling NaN, which the protobuf path quiets on
        # its way through a Python float (the C path keeps the bits, as TensorFlow does)
        np.testing.assert_array_equal(a.values, b.values)


# ---------------------------------------------------------------------------------------------- RaggedFeature


def ragged_record(i):
    n = i % 4
    return pf.io.serialize_example({
        "v": np.arange(2 * n, dtype=np.float32) + i,
        "lengths": np.array([2 * n], np.int64) if n else np.zeros(0, np.int64),
        "ids": np.repeat(np.arange(n, dtype=np.int64), 2),
        "words": np.array([b"w%d" % k for k in range(n)], dtype=object),
    })  # fmt: skip


def ragged_specs(io, float32, int64, string):
    R = io.RaggedFeature
    return {
        "words": R(string, row_splits_dtype=int64),
        "v": R(float32),
        "by_length": R(float32, value_key="v", partitions=[R.RowLengths("lengths")]),
        "by_row_id": R(float32, value_key="v", partitions=[R.ValueRowIds("ids")]),
        "pairs": R(float32, value_key="v", partitions=[R.UniformRowLength(2)]),
        "label": io.FixedLenFeature([], int64, default_value=-1),
    }


def _as_lists(value):
    if hasattr(value, "to_list"):
        splits = [np.asarray(s).dtype.name for s in value.nested_row_splits]
        return value.to_list(), splits, np.asarray(value.flat_values).shape
    return np.asarray(value).tolist()


def test_ragged_features_parse_like_tf():
    tf = pytest.importorskip("tensorflow")
    batch = [ragged_record(i) for i in range(7)]
    want = tf.io.parse_example(batch, ragged_specs(tf.io, tf.float32, tf.int64, tf.string))
    got = pf.io.parse_example(batch, ragged_specs(pf.io, "float32", "int64", "string"))
    assert list(got) == list(want)  # tf.io's key order
    for key in want:
        assert _as_lists(got[key]) == _as_lists(want[key]), key
    for record in batch[:4]:
        want = tf.io.parse_single_example(record, ragged_specs(tf.io, tf.float32, tf.int64, tf.string))
        got = pf.io.parse_single_example(record, ragged_specs(pf.io, "float32", "int64", "string"))
        assert {k: _as_lists(v) for k, v in got.items()} == {k: _as_lists(v) for k, v in want.items()}


def test_ragged_feature_errors():
    with pytest.raises(InvalidArgumentError, match="partition"):
        pf.io.RaggedFeature("float32", partitions=["lengths"])
    with pytest.raises(InvalidArgumentError, match="row_splits_dtype"):
        pf.io.RaggedFeature("float32", row_splits_dtype="int16")
    with pytest.raises(InvalidArgumentError, match="Conflicting partition type int32 vs int64 for feature v"):
        pf.io.parse_example([ragged_record(1)], {"a": pf.io.RaggedFeature("float32", value_key="v"),
                                                 "b": pf.io.RaggedFeature("float32", value_key="v",
                                                                          row_splits_dtype="int64")})  # fmt: skip
    with pytest.raises(InvalidArgumentError, match="Conflicting type"):
        pf.io.parse_example([ragged_record(1)], {"a": pf.io.RaggedFeature("float32", value_key="ids"),
                                                 "b": pf.io.RaggedFeature("int64", value_key="ids")})  # fmt: skip
    bad = pf.io.serialize_example({"v": np.zeros(3, np.float32), "lengths": np.array([2], np.int64)})
    R = pf.io.RaggedFeature
    with pytest.raises(InvalidArgumentError, match="Feature r: example 0"):
        pf.io.parse_example([bad], {"r": R("float32", value_key="v", partitions=[R.RowLengths("lengths")])})
    with pytest.raises(ParseError, match="Key: lengths, Index: 0.  Data types don't match"):
        pf.io.parse_example([bad], {"r": R("float32", value_key="lengths")})

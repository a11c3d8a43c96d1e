"""Tensors in bytes (decode_raw, base64, decode_compressed, serialize_tensor / parse_tensor) and scalar strings given as
0-d arrays wherever TensorFlow takes a scalar string. TensorFlow's own answers are in tests/differential/test_io_ops.py."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import DataLossError, ElementTypeError, InvalidArgumentError, ParseError
from parafeed.values.byte_strings import bytes_array, scalar_bytes


def zero_d(value: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


# ---------------------------------------------------------------------------------------------- scalar strings


def test_scalar_bytes_takes_what_tensorflow_takes_as_a_scalar_string():
    for value in (b"ab", np.bytes_(b"ab"), bytearray(b"ab"), memoryview(b"ab"), "ab", zero_d(b"ab"),
                  np.reshape(b"ab", []), np.reshape("ab", [])):  # fmt: skip
        assert scalar_bytes("op", value) == b"ab"
    assert type(scalar_bytes("op", np.bytes_(b"x"))) is bytes
    for bad in (np.array([b"ab"]), 5, None, np.array(1)):
        with pytest.raises(InvalidArgumentError, match="op: `input` must be bytes"):
            scalar_bytes("op", bad)
    with pytest.raises(ParseError, match="must be bytes"):
        scalar_bytes("op", "text", error=ParseError, text=False)


def test_bytes_array_of_any_shape():
    assert bytes_array("op", b"a").shape == () and bytes_array("op", b"a")[()] == b"a"
    got = bytes_array("op", [["a", b"b"], [np.bytes_(b"c"), bytearray(b"d")]])
    assert got.dtype == object and got.tolist() == [[b"a", b"b"], [b"c", b"d"]]
    assert bytes_array("op", np.array([b"x", b"yz"])).tolist() == [b"x", b"yz"]
    assert bytes_array("op", np.array(["é"])).tolist() == ["é".encode()]
    assert bytes_array("op", []).shape == (0,)
    with pytest.raises(InvalidArgumentError, match="item 1"):
        bytes_array("op", [b"a", 3])
    with pytest.raises(InvalidArgumentError, match="string tensor"):
        bytes_array("op", np.arange(3))


def test_example_parsers_take_zero_d_arrays():
    record = pf.io.serialize_example({"x": [1.0, 2.0], "label": 3, "name": b"n"})
    spec = {"x": pf.io.FixedLenFeature([2], "float32"), "label": pf.io.FixedLenFeature([], "int64"),
            "name": pf.io.FixedLenFeature([], "string"), "v": pf.io.VarLenFeature("int64")}  # fmt: skip
    want = pf.io.parse_single_example(record, spec)
    for scalar in (zero_d(record), np.bytes_(record), np.reshape(np.array([record], dtype=object), [])):
        for got in (pf.io.parse_single_example(scalar, spec), pf.io.parse_example(scalar, spec)):
            assert set(got) == set(want)
            np.testing.assert_array_equal(got["x"], want["x"])
            assert got["label"] == 3 and got["name"] == b"n"
            assert got["v"].dense_shape.tolist() == [0] and got["v"].indices.shape == (0, 1)
    batch = pf.io.parse_example(np.array([record, record], dtype=object), spec)
    assert batch["x"].shape == (2, 2)
    with pytest.raises(InvalidArgumentError, match="scalar or a 1-D batch"):
        pf.io.parse_example(np.array([[record]], dtype=object), spec)
    with pytest.raises(ParseError, match="must be bytes"):
        pf.io.parse_single_example(np.array([record], dtype=object), spec)
    seq = pf.io.serialize_sequence_example({"c": 1}, {"f": [[1], [2]]})
    specs = ({"c": pf.io.FixedLenFeature([], "int64")}, {"f": pf.io.FixedLenSequenceFeature([1], "int64")})
    context, frames = pf.io.parse_single_sequence_example(zero_d(seq), *specs)
    assert context["c"] == 1 and frames["f"].tolist() == [[1], [2]]


def test_decode_csv_takes_a_zero_d_record_as_a_scalar():
    for record in (b"1,2.5", zero_d(b"1,2.5"), np.reshape(b"1,2.5", []), "1,2.5"):
        a, b = pf.io.decode_csv(record, [[0], [0.0]])
        assert np.shape(a) == () and a == 1 and b == np.float32(2.5)
    a, _ = pf.io.decode_csv(np.array([[b"1,2"]], dtype=object), [[0], [0.0]])
    assert a.shape == (1, 1)


# ---------------------------------------------------------------------------------------------- decode_raw


def test_decode_raw():
    assert pf.io.decode_raw(b"\x01\x00\x02\x00", pf.int16).tolist() == [1, 2]
    assert pf.io.decode_raw(zero_d(b"\x01\x00\x02\x00"), "int16", little_endian=False).tolist() == [256, 512]
    assert pf.io.decode_raw([b"\x01\x00", b"\x02\x00"], pf.int16).tolist() == [[1], [2]]
    assert pf.io.decode_raw(b"", pf.int16).shape == (0,)
    assert pf.io.decode_raw([b"", b""], pf.int32).shape == (2, 0)
    assert pf.io.decode_raw(np.zeros((0, 2), object), pf.int32).shape == (0, 2, 0)
    assert pf.io.decode_raw([[b"\x01"], [b"\x02"]], pf.uint8, fixed_length=3).tolist() == [[[1, 0, 0]], [[2, 0, 0]]]
    assert pf.io.decode_raw([b"\x01\x00\x02", b"\x03"], pf.int16, fixed_length=4).tolist() == [[1, 2], [3, 0]]
    assert pf.io.decode_raw(b"\x00\x01\x02", pf.bool).tolist() == [False, True, True]
    c = np.array([1 + 2j, -3.5j], np.complex64)
    np.testing.assert_array_equal(pf.io.decode_raw(c.astype(">c8").tobytes(), pf.complex64, little_endian=False), c)
    out = pf.io.decode_raw(np.arange(4, dtype=">f8").tobytes(), pf.float64, little_endian=False)
    assert out.dtype == np.float64 and out.dtype.isnative and out.tolist() == [0, 1, 2, 3]
    out[0] = 9  # writable


def test_decode_raw_errors_name_the_element():
    with pytest.raises(InvalidArgumentError, match="3 bytes, not a multiple of 2, the size of int16"):
        pf.io.decode_raw(b"\x01\x00\x02", pf.int16)
    with pytest.raises(InvalidArgumentError, match="element 1 has 4 bytes and element 0 has 2"):
        pf.io.decode_raw([b"\x01\x00", b"\x02\x00\x03\x00"], pf.int16)
    with pytest.raises(InvalidArgumentError, match=r"fixed_length \(3\) must be a multiple"):
        pf.io.decode_raw([b"\x01"], pf.int16, fixed_length=3)
    with pytest.raises(InvalidArgumentError, match="greater than zero"):
        pf.io.decode_raw([b"\x01"], pf.int16, fixed_length=0)
    for dtype in (pf.uint32, pf.uint64, pf.string):
        with pytest.raises(InvalidArgumentError, match="not supported"):
            pf.io.decode_raw(b"\0" * 8, dtype)


# ---------------------------------------------------------------------------------------------- base64


def test_base64():
    assert pf.io.encode_base64(b"\xfb\xff\x00ab") == b"-_8AYWI"
    assert pf.io.encode_base64(b"\xfb\xff\x00ab", pad=True) == b"-_8AYWI="
    assert pf.io.encode_base64([b"a", b"ab", b""]).tolist() == [b"YQ", b"YWI", b""]
    for text in (b"-_8AYWI", b"-_8AYWI=", zero_d(b"-_8AYWI"), "-_8AYWI"):
        assert pf.io.decode_base64(text) == b"\xfb\xff\x00ab"
    assert pf.io.decode_base64(b"YQ==") == pf.io.decode_base64(b"YR") == b"a"  # unused bits ignored
    assert pf.io.decode_base64([[b"YQ"], [b"YWI"]]).tolist() == [[b"a"], [b"ab"]]
    for bad, message in [(b"+/8AYWI=", "Invalid character"), (b"ab d", "Invalid character"), (b"YQ=", "Invalid"),
                         (b"YQ===", "Invalid"), (b"====", "Invalid"), (b"abcde", "1 modulo 4"), (b"=", "1 modulo 4"),
                         (b"YQ==YQ", "Invalid")]:  # fmt: skip
        with pytest.raises(InvalidArgumentError, match=message):
            pf.io.decode_base64(bad)
    with pytest.raises(InvalidArgumentError, match="element 1"):
        pf.io.decode_base64([b"YQ", b"Y"])


# ---------------------------------------------------------------------------------------------- decode_compressed


def test_decode_compressed():
    assert pf.io.decode_compressed(zlib.compress(b"hello"), "ZLIB") == b"hello"
    assert pf.io.decode_compressed(gzip.compress(b"hello"), "GZIP") == b"hello"
    assert pf.io.decode_compressed(b"hello") == b"hello"
    assert pf.io.decode_compressed(gzip.compress(b"a") + gzip.compress(b"b"), "GZIP") == b"ab"
    assert pf.io.decode_compressed(zlib.compress(b"a") + b"xx", "ZLIB") == b"a"
    assert pf.io.decode_compressed([zlib.compress(b"a"), b""], "ZLIB").tolist() == [b"a", b""]
    assert pf.io.decode_compressed(zero_d(zlib.compress(b"a")), "ZLIB") == b"a"
    for data, kind in [(b"hello", "ZLIB"), (gzip.compress(b"a"), "ZLIB"), (zlib.compress(b"a"), "GZIP"),
                       (gzip.compress(b"a") + b"xyz", "GZIP"), (zlib.compress(b"hello" * 100)[:-3], "ZLIB")]:  # fmt: skip
        with pytest.raises(DataLossError):
            pf.io.decode_compressed(data, kind)
    for kind in ("zlib", "NONE", "BZ2", "ZSTD"):
        with pytest.raises(InvalidArgumentError):
            pf.io.decode_compressed(b"", kind)


# ---------------------------------------------------------------------------------------------- TensorProto


ROUND_TRIP = [
    np.float32(1.5), np.arange(6, dtype=np.int64).reshape(2, 3), np.zeros((0, 3), np.float16), np.array(True),
    np.array([b"ab", b""], object), np.array([[1 + 2j]], np.complex128), np.array(7, np.uint64),
    np.zeros((2, 0, 1), object), np.array([-1, 2], np.int8), np.array([65535], np.uint16),
]  # fmt: skip


@pytest.mark.parametrize("value", ROUND_TRIP)
def test_tensor_round_trip(value):
    blob = pf.io.serialize_tensor(value)
    got = pf.io.parse_tensor(blob, value.dtype)
    assert np.shape(got) == np.shape(value) and np.asarray(got).dtype == np.asarray(value).dtype
    assert np.array_equal(np.asarray(got), np.asarray(value))
    assert np.array_equal(np.asarray(pf.io.parse_tensor(zero_d(blob), value.dtype)), np.asarray(value))


def test_tensor_python_values_take_tensorflows_dtypes():
    assert pf.io.parse_tensor(pf.io.serialize_tensor(1.5), pf.float32) == np.float32(1.5)
    assert pf.io.parse_tensor(pf.io.serialize_tensor([1, 2]), pf.int32).tolist() == [1, 2]
    assert pf.io.parse_tensor(pf.io.serialize_tensor("héllo"), pf.string) == "héllo".encode()
    assert pf.io.serialize_tensor(b"x").hex() == "08071200420178"  # what TensorFlow writes


def test_parse_tensor_errors():
    blob = pf.io.serialize_tensor(np.float32(1))
    with pytest.raises(InvalidArgumentError, match=r"Type mismatch.*\(float32\) and dtype \(int32\)"):
        pf.io.parse_tensor(blob, pf.int32)
    with pytest.raises(InvalidArgumentError, match="Could not parse"):
        pf.io.parse_tensor(b"\xff\xff", pf.int32)
    with pytest.raises(InvalidArgumentError, match="not a valid DataType"):
        pf.io.parse_tensor(b"", pf.float32)
    with pytest.raises(InvalidArgumentError, match="scalar"):
        pf.io.parse_tensor(np.array([blob], object), pf.float32)
    with pytest.raises(ElementTypeError, match="a SparseTensor cannot be serialized as one tensor"):
        pf.io.serialize_tensor(pf.SparseTensor([[0]], [1], [2]))
    with pytest.raises(ElementTypeError, match="a RaggedTensor cannot be serialized as one tensor"):
        pf.io.serialize_tensor(pf.ragged.constant([[1], [2, 3]]))  # (TensorFlow refuses it too)

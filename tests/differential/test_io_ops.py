"""pf.io against tf.io on the same inputs: gfile on one temporary tree (listings, glob, walk, stat, GFile reads and
the errors), serialize_tensor byte for byte and parse_tensor of TensorFlow's bytes, decode_raw, base64 and
decode_compressed on hypothesis inputs (the same result, or both fail: TensorFlow's InvalidArgumentError is
parafeed's, a ValueError), and the parsers given 0-d string arrays."""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import parafeed as pf
from parafeed.errors import DataLossError, InvalidArgumentError, ParafeedError

tf = pytest.importorskip("tensorflow", reason="compared with TensorFlow (make test installs TensorFlow)")

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def outcome(fn):
    """``("ok", value)`` or ``("error", the error's class name)``."""
    try:
        return "ok", fn()
    except (tf.errors.OpError, ParafeedError) as err:
        return "error", type(err).__name__


def same_outcome(tf_fn, pf_fn):
    """Both give equal values, or both fail with the same kind of error (TensorFlow's InvalidArgumentError is
    parafeed's InvalidArgumentError, also a ValueError)."""
    want, got = outcome(tf_fn), outcome(pf_fn)
    assert want[0] == got[0], (want, got)
    if want[0] == "error":
        assert want[1] == got[1], (want, got)
    return want[1], got[1]


def as_numpy(value):
    return value.numpy() if hasattr(value, "numpy") else value


def assert_same_array(want, got):
    """Equal shape, dtype and values (bit for bit for numbers: NaNs and -0.0 included)."""
    want = np.asarray(as_numpy(want))
    got = np.asarray(got)
    assert want.shape == got.shape and want.dtype == got.dtype, (want, got)
    if want.dtype in (object, bool):  # (TensorFlow's bools may hold any nonzero byte)
        assert want.tolist() == got.tolist(), (want, got)
    else:
        assert want.tobytes() == got.tobytes(), (want, got)


def zero_d(value: bytes) -> np.ndarray:
    """A 0-d object array: every byte kept (a 0-d ``S`` array drops trailing NULs, in TensorFlow too)."""
    out = np.empty((), dtype=object)
    out[()] = value
    return out


# ---------------------------------------------------------------------------------------------- gfile


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("gfile")
    for d in ("a/b/c", "a/e", "d", "sp ace/[x]"):
        (root / d).mkdir(parents=True)
    for name, data in {"a/x.txt": b"hi\n", "a/b/y.txt": b"yo", "a/b/c/.z": b"", ".hidden": b"h", "top.bin": b"z" * 9,
                       "sp ace/[x]/f?.txt": b"q", "d/1.tfrecord": b"1", "d/2.tfrecord": b"22",
                       "d/10.tfrecord": b"333"}.items():  # fmt: skip
        (root / name).write_bytes(data)
    return str(root)


PATTERNS = ["*", "**", "*/*", "*/*/*", "a/*/*.txt", "[!a]*", "[^a]*", "[a-d]", "?", "d/*.tfrecord", "d/?.tfrecord",
            "d/[0-9][0-9].tfrecord", "a/b", "nope", "nope/*", "top.bin/*", "sp ace/\\[x\\]/*", "sp ace/*/f\\?.txt",
            "*/b/c/*", "a/", ".*", "d/[!1]*"]  # fmt: skip


def test_listings_glob_walk_and_stat_match(tree):
    for d in ("", "a", "a/b", "a/b/c", "d", "sp ace", "a/"):
        assert sorted(tf.io.gfile.listdir(f"{tree}/{d}")) == sorted(pf.io.gfile.listdir(f"{tree}/{d}"))
    for d in ("nope", "top.bin"):
        same_outcome(lambda d=d: tf.io.gfile.listdir(f"{tree}/{d}"), lambda d=d: pf.io.gfile.listdir(f"{tree}/{d}"))
    for pattern in PATTERNS:
        assert sorted(tf.io.gfile.glob(f"{tree}/{pattern}")) == pf.io.gfile.glob(f"{tree}/{pattern}"), pattern
    assert sorted(tf.io.gfile.glob([f"{tree}/d/*", f"{tree}/a"])) == sorted(
        pf.io.gfile.glob([f"{tree}/d/*", f"{tree}/a"])
    )
    for top in (tree, f"{tree}/", f"{tree}/a", f"{tree}/nope", f"{tree}/top.bin"):
        for topdown in (True, False):

            def walked(lib, top=top, topdown=topdown):
                return [(d, sorted(s), sorted(f)) for d, s, f in lib.io.gfile.walk(top, topdown=topdown)]

            want, got = walked(tf), walked(pf)
            assert sorted(want) == sorted(got)
            if want:  # parents first, or last
                assert want[0 if topdown else -1] == got[0 if topdown else -1]
    for name in ("", "a", "a/x.txt", "top.bin", "a/b/c/.z", "sp ace/[x]/f?.txt"):
        want, got = tf.io.gfile.stat(f"{tree}/{name}"), pf.io.gfile.stat(f"{tree}/{name}")
        assert (want.length, want.mtime_nsec, want.is_directory) == (got.length, got.mtime_nsec, got.is_directory)
    for name in ("", "a", "a/x.txt", "nope", "a/nope", "top.bin/x"):
        path = f"{tree}/{name}"
        assert tf.io.gfile.exists(path) == pf.io.gfile.exists(path)
        assert tf.io.gfile.isdir(path) == pf.io.gfile.isdir(path)
    same_outcome(lambda: tf.io.gfile.stat(f"{tree}/nope"), lambda: pf.io.gfile.stat(f"{tree}/nope"))


def test_relative_glob_and_tf1_names(tree, monkeypatch):
    monkeypatch.chdir(tree)
    for pattern in ("*", "d/*", "./d/1*", "*/b"):
        assert sorted(tf.io.gfile.glob(pattern)) == pf.io.gfile.glob(pattern)
    v1 = tf.compat.v1.gfile
    assert sorted(v1.Glob("d/*")) == pf.io.gfile.gfile_v1.Glob("d/*")
    assert sorted(v1.ListDirectory("a")) == sorted(pf.io.gfile.gfile_v1.ListDirectory("a"))
    assert [w[0] for w in v1.Walk("a", in_order=False)][-1] == [w[0] for w in pf.io.gfile.gfile_v1.Walk("a", False)][-1]
    public = {n for n in dir(v1) if not n.startswith("_")}
    assert public <= set(dir(pf.io.gfile.gfile_v1))
    assert {n for n in dir(tf.io.gfile) if not n.startswith("_")} <= set(dir(pf.io.gfile))


def test_changes_and_their_errors_match(tmp_path):
    """The same operations on two copies of a tree: the same outcome each time and the same tree after."""
    roots = {}
    for lib in ("tf", "pf"):
        root = tmp_path / lib
        (root / "a" / "b").mkdir(parents=True)
        (root / "c").mkdir()
        (root / "f1").write_bytes(b"1")
        (root / "f2").write_bytes(b"22")
        roots[lib] = str(root)
    steps = [
        ("mkdir", ("a",)), ("mkdir", ("q/r",)), ("makedirs", ("m/n",)), ("makedirs", ("f1/x",)), ("makedirs", ("f1",)),
        ("remove", ("nope",)), ("remove", ("c",)), ("rmtree", ("nope",)), ("rename", ("f1", "f2")),
        ("rename", ("nope", "f3")), ("copy", ("f1", "f2")), ("copy", ("f1", "f3")), ("copy", ("a", "a9")),
        ("copy", ("nope", "f9")), ("copy", ("f1", "zz/f1")), ("rename", ("f3", "f2", True)),
        ("rename", ("c", "c2")), ("copy", ("f1", "c2", True)), ("rename", ("f2", "a", True)), ("remove", ("f1",)),
        ("rmtree", ("m",)), ("rmtree", ("f2",)),
    ]  # fmt: skip
    for op, args in steps:
        *paths, overwrite = (*args, None) if not isinstance(args[-1], bool) else args
        kwargs = {} if overwrite is None else {"overwrite": overwrite}

        def run(lib, root, op=op, paths=paths, kwargs=kwargs):
            return getattr(lib.io.gfile, op)(*(f"{root}/{p}" for p in paths), **kwargs)

        same_outcome(lambda: run(tf, roots["tf"]), lambda: run(pf, roots["pf"]))

    def listing(root):
        return sorted((os.path.relpath(d, root), sorted(s), sorted(f)) for d, s, f in os.walk(root))

    os.remove(
        f"{roots['tf']}/a9"
    )  # TensorFlow's failed copy of a directory leaves an empty file behind; parafeed's not
    assert listing(roots["tf"]) == listing(roots["pf"])


@SETTINGS
@given(
    data=st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")) | st.text(max_size=100).map(str.encode),
    reads=st.lists(st.integers(0, 40), max_size=6),
)
def test_gfile_reads_match(tmp_path, data, reads):
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    for mode in ("rb", "r"):
        want, got = tf.io.gfile.GFile(str(path), mode), pf.io.gfile.GFile(str(path), mode)
        if mode == "r":
            try:
                data.decode()
            except UnicodeDecodeError:
                continue
            assert list(want) == list(got)
            continue
        assert list(want) == list(got)  # lines: \n kept, \r dropped
        want.seek(0)
        got.seek(0)
        for n in reads:
            assert want.read(n) == got.read(n) and want.tell() == got.tell()
        assert want.readline() == got.readline() and want.read() == got.read()
        for offset in (0, len(data), len(data) + 1):
            a, b = outcome(lambda offset=offset: want.seek(offset)), outcome(lambda offset=offset: got.seek(offset))
            assert a[0] == b[0] and want.tell() == got.tell()
        assert want.size() == got.size() == len(data)


def test_gfile_writes_match(tmp_path):
    for lib in (tf, pf):
        path = str(tmp_path / f"{lib.__name__}.txt")
        with lib.io.gfile.GFile(path, "w") as f:
            f.write("héllo\n")
            f.write(b"raw\r\n")
            assert f.tell() == 12
        with lib.io.gfile.GFile(path, "a") as f:
            f.write("more")
            assert f.tell() == 16
        with lib.io.gfile.GFile(str(tmp_path / f"{lib.__name__}.empty"), "w"):
            pass
    assert (tmp_path / "tensorflow.txt").read_bytes() == (tmp_path / "parafeed.txt").read_bytes()
    assert not (tmp_path / "tensorflow.empty").exists() and not (tmp_path / "parafeed.empty").exists()
    for mode, op in (("w", "read"), ("r", "write"), ("w", "seek")):
        args = ("x",) if op == "write" else (0,) if op == "seek" else ()
        path = str(tmp_path / "parafeed.txt")
        same_outcome(lambda: getattr(tf.io.gfile.GFile(path, mode), op)(*args),
                     lambda: getattr(pf.io.gfile.GFile(path, mode), op)(*args))  # fmt: skip
    same_outcome(lambda: tf.io.gfile.GFile(str(tmp_path / "nope")).read(),
                 lambda: pf.io.gfile.GFile(str(tmp_path / "nope")).read())  # fmt: skip
    with pytest.raises(FileNotFoundError):  # (parafeed's NotFoundError is one)
        pf.io.gfile.GFile(str(tmp_path / "nope")).read()


# ---------------------------------------------------------------------------------------------- TensorProto

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
          np.float32, np.float64, np.complex64, np.complex128]  # fmt: skip
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@st.composite
def tensors(draw):
    if draw(st.integers(0, 4)) == 0:  # strings
        shape = draw(SHAPES)
        items = draw(st.lists(st.binary(max_size=12), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
        out = np.empty(int(np.prod(shape)), dtype=object)
        out[:] = items
        return out.reshape(shape)
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    return draw(hnp.arrays(dtype, SHAPES))


@SETTINGS
@given(value=tensors())
def test_serialize_tensor_is_byte_identical_and_parses_tensorflows_bytes(value):
    dtype = tf.as_dtype(value.dtype) if value.dtype != object else tf.string
    theirs = tf.io.serialize_tensor(tf.constant(value, dtype=dtype)).numpy()
    assert pf.io.serialize_tensor(value) == theirs
    assert_same_array(tf.io.parse_tensor(theirs, dtype), pf.io.parse_tensor(theirs, value.dtype))
    assert_same_array(tf.io.parse_tensor(theirs, dtype), pf.io.parse_tensor(zero_d(theirs), dtype))


def test_scalar_bfloat16_and_python_values():
    for value in (1.5, 7, True, "héllo", b"", [1, 2], [[1.0], [2.0]], [b"a", b"bc"], []):
        assert pf.io.serialize_tensor(value) == tf.io.serialize_tensor(value).numpy(), value
    bf = tf.constant([1.0, -2.5, 3.0], tf.bfloat16)
    theirs = tf.io.serialize_tensor(bf).numpy()
    assert pf.io.serialize_tensor(bf.numpy()) == theirs
    assert_same_array(bf, pf.io.parse_tensor(theirs, tf.bfloat16))


FIELDS = {  # dtype -> the typed field TensorFlow's make_tensor_proto and older writers use, and its values
    tf.float32: ("float_val", st.floats(width=32, allow_nan=False)),
    tf.float64: ("double_val", st.floats(allow_nan=False)),
    tf.int32: ("int_val", st.integers(-(2**31), 2**31 - 1)),
    tf.uint8: ("int_val", st.integers(-(2**31), 2**31 - 1)),
    tf.int16: ("int_val", st.integers(-(2**15), 2**15 - 1)),
    tf.int8: ("int_val", st.integers(-128, 127)),
    tf.uint16: ("int_val", st.integers(0, 2**16 - 1)),
    tf.int64: ("int64_val", st.integers(-(2**63), 2**63 - 1)),
    tf.uint32: ("uint32_val", st.integers(0, 2**32 - 1)),
    tf.uint64: ("uint64_val", st.integers(0, 2**64 - 1)),
    tf.bool: ("bool_val", st.booleans()),
    tf.string: ("string_val", st.binary(max_size=5)),
    tf.float16: ("half_val", st.integers(0, 2**16 - 1)),
    tf.bfloat16: ("half_val", st.integers(0, 2**16 - 1)),
    tf.complex64: ("scomplex_val", st.floats(width=32, allow_nan=False)),
    tf.complex128: ("dcomplex_val", st.floats(allow_nan=False)),
}


@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(sorted(FIELDS, key=lambda d: d.name)), shape=SHAPES)
def test_parse_tensor_reads_every_typed_field(data, dtype, shape):
    """Protos written with the typed value fields: fewer values than the shape repeat the last one, none give zeros,
    more are cut, as TensorFlow reads them."""
    from tensorflow.core.framework import tensor_pb2

    field, values = FIELDS[dtype]
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum, tensor_shape={"dim": [{"size": d} for d in shape]})
    getattr(proto, field).extend(data.draw(st.lists(values, max_size=2 * int(np.prod(shape)) + 2)))
    blob = proto.SerializeToString()
    want, got = outcome(lambda: tf.io.parse_tensor(blob, dtype)), outcome(lambda: pf.io.parse_tensor(blob, dtype))
    assert want[0] == got[0], (want, got)
    if want[0] == "ok":
        assert_same_array(want[1], got[1])
    else:
        assert want[1] == got[1]


def test_parse_tensor_errors_match():
    from tensorflow.core.framework import tensor_pb2

    blob = tf.io.serialize_tensor(np.float32(1)).numpy()
    bad = [
        (blob, tf.int32),
        (b"\xff\xff", tf.int32),
        (b"", tf.float32),
        (tensor_pb2.TensorProto(dtype=1, tensor_shape={"dim": [{"size": 2}]}, tensor_content=b"\0" * 7), tf.float32),
        (tensor_pb2.TensorProto(dtype=1, tensor_shape={"dim": [{"size": -1}]}), tf.float32),
        (tensor_pb2.TensorProto(dtype=7, tensor_shape={"dim": [{"size": 2}]}, tensor_content=b"abc"), tf.string),
    ]
    for data, dtype in bad:
        data = data if isinstance(data, bytes) else data.SerializeToString()
        same_outcome(lambda data=data, dtype=dtype: tf.io.parse_tensor(data, dtype),
                     lambda data=data, dtype=dtype: pf.io.parse_tensor(data, dtype))  # fmt: skip
    for proto in (
        tensor_pb2.TensorProto(dtype=1, tensor_shape={"unknown_rank": True}),
        tensor_pb2.TensorProto(dtype=1),
    ):
        data = proto.SerializeToString()
        assert_same_array(tf.io.parse_tensor(data, tf.float32), pf.io.parse_tensor(data, tf.float32))


# ---------------------------------------------------------------------------------------------- decode_raw, base64

RAW_TYPES = [tf.float16, tf.float32, tf.float64, tf.int32, tf.uint16, tf.uint8, tf.int16, tf.int8, tf.int64, tf.complex64,
             tf.complex128, tf.bool, tf.bfloat16]  # fmt: skip


NO_PADDED_KERNEL = {tf.float16, tf.bool, tf.complex64, tf.complex128}


@SETTINGS
@given(
    strings=st.lists(st.binary(max_size=24), max_size=4) | st.binary(max_size=24) | st.just([[b"ab"], [b"cd"]]),
    equal=st.booleans(),
    dtype=st.sampled_from(RAW_TYPES),
    little_endian=st.booleans(),
    fixed_length=st.none() | st.integers(-2, 24),
)
def test_decode_raw_matches(strings, equal, dtype, little_endian, fixed_length):
    if equal and isinstance(strings, list) and strings and isinstance(strings[0], bytes):
        strings = [s[: min(map(len, strings))] for s in strings]  # (mostly valid inputs, sometimes not)
    kwargs = {"little_endian": little_endian, "fixed_length": fixed_length}
    tensor = tf.constant(strings, dtype=tf.string)
    if fixed_length is not None and dtype in NO_PADDED_KERNEL:
        # TensorFlow has no DecodePaddedRaw kernel for these (NotFoundError); parafeed has: compare with TensorFlow's
        # decoding of the strings padded by hand
        if fixed_length <= 0 or fixed_length % dtype.size:
            with pytest.raises(InvalidArgumentError):
                pf.io.decode_raw(strings, dtype, **kwargs)
            return
        if np.size(np.asarray(strings, dtype=object)) == 0:  # (no string to pad: the shape says the width)
            assert pf.io.decode_raw(strings, dtype, **kwargs).shape == (0, fixed_length // dtype.size)
            return
        pad = np.frompyfunc(lambda s: s[:fixed_length].ljust(fixed_length, b"\0"), 1, 1)
        tensor = tf.constant(pad(np.asarray(strings, dtype=object)), dtype=tf.string)
    tf_kwargs = {**kwargs, "fixed_length": None} if dtype in NO_PADDED_KERNEL else kwargs
    want = outcome(lambda: tf.io.decode_raw(tensor, dtype, **tf_kwargs))
    got = outcome(lambda: pf.io.decode_raw(strings, dtype, **kwargs))
    assert want[0] == got[0], (want, got)
    if want[0] == "ok":
        assert_same_array(want[1], got[1])
    else:
        assert want[1] == got[1] == "InvalidArgumentError" and issubclass(InvalidArgumentError, ValueError)


B64 = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", max_size=14)


@SETTINGS
@given(
    text=st.one_of(
        B64,
        st.tuples(B64, st.sampled_from(["", "=", "==", "===", "+", "/", " ", "\n", "é"]), B64).map("".join),
        st.binary(max_size=8).map(lambda b: b.decode("latin-1")),
    ),
    raw=st.binary(max_size=20),
    pad=st.booleans(),
)
def test_base64_matches(text, raw, pad):
    data = text.encode("utf-8")
    want, got = outcome(lambda: tf.io.decode_base64(data)), outcome(lambda: pf.io.decode_base64(data))
    assert want[0] == got[0], (data, want, got)
    if want[0] == "ok":
        assert as_numpy(want[1]) == got[1]
    else:
        assert want[1] == got[1] == "InvalidArgumentError"
    assert tf.io.encode_base64(raw, pad=pad).numpy() == pf.io.encode_base64(raw, pad=pad)
    arr = np.array([[raw, raw[:3]]], dtype=object)
    assert_same_array(tf.io.encode_base64(arr, pad=pad), pf.io.encode_base64(arr, pad=pad))
    encoded = pf.io.encode_base64(arr, pad=pad)
    assert_same_array(tf.io.decode_base64(encoded), pf.io.decode_base64(encoded))


def test_decode_compressed_matches():
    cases = [(zlib.compress(b"hello"), "ZLIB"), (gzip.compress(b"hello"), "GZIP"), (b"hello", ""),
             (gzip.compress(b"a") + gzip.compress(b"b"), "GZIP"), (zlib.compress(b"a") + b"xx", "ZLIB"), (b"", "ZLIB"),
             (b"hello", "ZLIB"), (gzip.compress(b"a") + b"xyz", "GZIP"), (b"x", "zlib"), (b"x", "BZ2")]  # fmt: skip
    for data, kind in cases:
        want, got = same_outcome(lambda data=data, kind=kind: as_numpy(tf.io.decode_compressed(data, kind)),
                                 lambda data=data, kind=kind: pf.io.decode_compressed(data, kind))  # fmt: skip
        assert want == got
    batch = [zlib.compress(b"a"), zlib.compress(b"")]
    assert_same_array(tf.io.decode_compressed(batch, "ZLIB"), pf.io.decode_compressed(batch, "ZLIB"))
    truncated = zlib.compress(b"hello" * 100)[:-3]  # TensorFlow returns what it decoded; parafeed says it is cut
    assert tf.io.decode_compressed(truncated, "ZLIB").numpy().startswith(b"hello")
    with pytest.raises(DataLossError, match="truncated"):
        pf.io.decode_compressed(truncated, "ZLIB")


# ---------------------------------------------------------------------------------------------- 0-d string inputs


def test_parsers_take_zero_d_strings_as_tensorflow():
    features = {"x": [1.0, 2.0], "label": 3, "name": b"n"}
    record = pf.io.serialize_example(features)
    tf_spec = {"x": tf.io.FixedLenFeature([2], tf.float32), "label": tf.io.FixedLenFeature([], tf.int64),
               "name": tf.io.FixedLenFeature([], tf.string), "v": tf.io.VarLenFeature(tf.int64)}  # fmt: skip
    pf_spec = {"x": pf.io.FixedLenFeature([2], "float32"), "label": pf.io.FixedLenFeature([], "int64"),
               "name": pf.io.FixedLenFeature([], "string"), "v": pf.io.VarLenFeature("int64")}  # fmt: skip
    scalar = zero_d(record)
    for parse in ("parse_single_example", "parse_example"):
        want = getattr(tf.io, parse)(tf.constant(record), tf_spec)
        got = getattr(pf.io, parse)(scalar, pf_spec)
        for key in ("x", "label", "name"):
            assert_same_array(want[key], got[key])
        assert_same_array(want["v"].dense_shape, got["v"].dense_shape)
        assert_same_array(want["v"].indices, got["v"].indices)
    for records in (zero_d(b"1,2.5"), np.array([b"1,2", b"3,4"], dtype=object)):
        want, got = tf.io.decode_csv(records, [[0], [0.0]]), pf.io.decode_csv(records, [[0], [0.0]])
        for a, b in zip(want, got):
            assert_same_array(a, b)
    raw = zero_d(b"\x01\x00\x02\x00")
    assert_same_array(tf.io.decode_raw(raw, tf.int16), pf.io.decode_raw(raw, pf.int16))
    b64 = zero_d(b"YWI")
    assert tf.io.decode_base64(b64).numpy() == pf.io.decode_base64(b64)
    blob = zero_d(pf.io.serialize_tensor(np.arange(3)))
    assert_same_array(tf.io.parse_tensor(blob, tf.int64), pf.io.parse_tensor(blob, pf.int64))

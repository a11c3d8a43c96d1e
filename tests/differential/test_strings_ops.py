"""pf.strings against tf.strings (and TF1's string_split) on the same inputs, made by hypothesis: empty and scalar
shapes, RaggedTensors, unicode and bytes that are not UTF-8, separators at the edges, negative positions. Same values,
dtypes and shapes (ragged row partitions included), or the same kind of error (its Python base: ValueError /
TensorFlow's InvalidArgumentError, or TypeError)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from parafeed.errors import ParafeedError
from parafeed.tensor_ops import strings as pfs
from parafeed.values.ragged_build import constant as pf_ragged
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor
from parafeed.values.tensor import Tensor

tf = pytest.importorskip("tensorflow", reason="compared with tf.strings (make test installs TensorFlow)")

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
TF = SimpleNamespace(strings=tf.strings, string_split=tf.compat.v1.string_split, ragged=tf.ragged.constant)
PF = SimpleNamespace(strings=pfs, string_split=pfs.string_split, ragged=pf_ragged)

# ------------------------------------------------------------------------------------------------ comparing


def canon(x):
    """A result as plain Python for comparison: kind, values (NaN as "nan"), dtype, shape / row partition."""
    if isinstance(x, tuple):
        return tuple(canon(v) for v in x)
    if isinstance(x, tf.RaggedTensor):
        return ("ragged", _plain(x.flat_values.numpy()), x.flat_values.dtype.name,
                [s.numpy().tolist() for s in x.nested_row_splits], [s.dtype.name for s in x.nested_row_splits])  # fmt: skip
    if isinstance(x, RaggedTensor):
        return ("ragged", _plain(x.flat_values), _dtype(x.flat_values.dtype), [s.tolist() for s in x.nested_row_splits],
                [s.dtype.name for s in x.nested_row_splits])  # fmt: skip
    if isinstance(x, tf.SparseTensor):
        return ("sparse", x.indices.numpy().tolist(), _plain(x.values.numpy()), x.values.dtype.name,
                x.dense_shape.numpy().tolist())  # fmt: skip
    if isinstance(x, SparseTensor):
        return ("sparse", x.indices.tolist(), _plain(x.values), _dtype(x.values.dtype), x.dense_shape.tolist())
    if isinstance(x, tf.Tensor):
        value = x.numpy()  # (a 0-d string is bytes: through NumPy, its trailing NUL bytes would be lost)
        return ("dense", [value] if isinstance(value, bytes) else _plain(value), x.dtype.name, tuple(x.shape))
    if isinstance(x, Tensor):  # (pf's operations return Tensors, 0-d ones included, as TensorFlow's do)
        x = x.numpy()
    assert not isinstance(x, np.ndarray) or x.ndim > 0, "0-d string results are bytes, as .numpy() gives"
    if isinstance(x, bytes):
        return ("dense", [x], "string", ())
    arr = np.asarray(x)
    assert arr.dtype.kind in "biufcO", arr.dtype
    return ("dense", _plain(arr), _dtype(arr.dtype), arr.shape)


def _dtype(dtype):
    return "string" if np.dtype(dtype).kind == "O" else np.dtype(dtype).name


def _plain(arr):
    arr = np.asarray(arr)
    if arr.dtype.kind in "fc":
        return [("nan" if isinstance(v, float) and math.isnan(v) else v) for v in arr.reshape(-1).tolist()]
    return arr.reshape(-1).tolist()


def outcome(fn, lib):
    try:
        return "ok", canon(fn(lib))
    except TypeError as err:
        return "error", "type", err
    except (ValueError, tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError) as err:
        # (TensorFlow's OutOfRangeError for an axis out of range: parafeed raises InvalidArgumentError)
        return "error", "value", err
    except tf.errors.UnimplementedError as err:
        return "error", "unimplemented", err


def check(fn):
    want, got = outcome(fn, TF), outcome(fn, PF)
    if want[0] == "error" and want[1] == "unimplemented":
        return  # (Substr's broadcasting over more than 2 dimensions: parafeed computes it)
    assert got[:2] == want[:2], (got, want)
    if got[0] == "error":
        assert isinstance(got[2], ParafeedError), got
        assert str(got[2]).split(":")[0].endswith("()"), f"the message names the op: {got[2]}"


# ------------------------------------------------------------------------------------------------ inputs


def joined(pieces, max_size):
    """Text made of ``pieces`` (single characters or longer)."""
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


TEXT = joined([*"ab ,;\t\n\x0b\x0c\x1f-.<>éÉ€😀İß", "ab", "  "], 8)
BYTES = st.binary(max_size=6) | TEXT.map(str.encode)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


def string_arrays(strings=BYTES, shapes=SHAPES):
    def build(shape):
        return st.lists(strings, min_size=math.prod(shape), max_size=math.prod(shape)).map(
            lambda items: _object_array(items, shape)
        )

    return shapes.flatmap(build)


def _object_array(items, shape):
    arr = np.empty(len(items), object)
    arr[:] = items
    return arr.reshape(shape)


def ragged_lists(strings=BYTES):
    return st.lists(st.lists(strings, max_size=4), min_size=1, max_size=4)


def as_input(arr, lib, form):
    """The same strings in the form the test draws: an array, a Python list (or bytes / str), or a RaggedTensor."""
    if isinstance(arr, list):  # (rows of a RaggedTensor)
        return lib.ragged(arr, dtype=tf.string) if lib is TF else lib.ragged(arr, dtype="string")
    if form == "list":
        return arr.tolist()
    if form == "str":
        return np.vectorize(lambda b: b.decode("utf-8", "replace"), otypes=[object])(arr).tolist() if arr.ndim else \
            arr[()].decode("utf-8", "replace")  # fmt: skip
    return tf.constant(arr, dtype=tf.string) if lib is TF else arr


INPUTS = st.one_of(string_arrays(), ragged_lists())
FORMS = st.sampled_from(["array", "list", "str"])

# ------------------------------------------------------------------------------------------------ splitting


@SETTINGS
@given(INPUTS, FORMS, st.sampled_from([None, "", " ", ",", "<>", "é", ["x"]]), st.sampled_from([-1, 0, 1, 2, -3]))
def test_split(strings, form, sep, maxsplit):
    check(lambda L: L.strings.split(as_input(strings, L, form), sep=sep, maxsplit=maxsplit))


@SETTINGS
@given(string_arrays(shapes=st.sampled_from([(), (0,), (1,), (3,), (4,), (2, 1)])), FORMS,
       st.sampled_from([None, "", " ", ",;", "é", "  "]), st.booleans(),
       st.sampled_from(["SparseTensor", "RaggedTensor", "Other"]))  # fmt: skip
def test_tf1_string_split(strings, form, sep, skip_empty, result_type):
    check(lambda L: L.string_split(as_input(strings, L, form), sep=sep, skip_empty=skip_empty, result_type=result_type))


@SETTINGS
@given(INPUTS, FORMS)
def test_bytes_split(strings, form):
    check(lambda L: L.strings.bytes_split(as_input(strings, L, form)))


@SETTINGS
@given(st.one_of(string_arrays(TEXT), ragged_lists(TEXT)), st.sampled_from([1, 2, 3, [1, 3], (2,), 0]),
       st.sampled_from([None, "P", ("L", "R"), 1]), st.sampled_from([None, 1, 2, 0]), st.booleans(),
       st.sampled_from([" ", "", "--"]))  # fmt: skip
def test_ngrams(data, width, pad_values, padding_width, preserve, separator):
    check(lambda L: L.strings.ngrams(as_input(data, L, "array"), width, separator=separator, pad_values=pad_values,
                                     padding_width=padding_width, preserve_short_sequences=preserve))  # fmt: skip


# ------------------------------------------------------------------------------------------------ element-wise


@SETTINGS
@given(INPUTS, FORMS, st.sampled_from(["BYTE", "UTF8_CHAR", "CHAR"]))
def test_length(strings, form, unit):
    check(lambda L: L.strings.length(as_input(strings, L, form), unit=unit))


POSITIONS = st.integers(-7, 7)


@SETTINGS
@given(string_arrays(shapes=hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)), st.data(),
       st.sampled_from(["BYTE", "UTF8_CHAR"]), st.sampled_from([np.int32, np.int64]))  # fmt: skip
def test_substr(strings, data, unit, dtype):
    how = data.draw(st.sampled_from(["scalar", "same", "broadcast", "mismatch"]))
    if how == "scalar":
        shape = ()
    elif how == "same":
        shape = strings.shape
    elif how == "broadcast":
        shape = data.draw(hnp.broadcastable_shapes(strings.shape, min_dims=0, max_dims=2, min_side=1, max_side=3))
    else:
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=3))
    pos = data.draw(hnp.arrays(dtype, shape, elements=POSITIONS))
    count = data.draw(hnp.arrays(dtype, shape, elements=POSITIONS))
    check(lambda L: L.strings.substr(as_input(strings, L, "array"), pos, count, unit=unit))


@SETTINGS
@given(ragged_lists(), st.integers(-3, 3), st.integers(-1, 3), st.sampled_from(["BYTE", "UTF8_CHAR"]))
def test_substr_of_ragged_rows(rows, pos, count, unit):
    check(lambda L: L.strings.substr(as_input(rows, L, "array"), pos, count, unit=unit))


@SETTINGS
@given(st.lists(st.sampled_from(["scalar", "shape", "other"]), max_size=3), st.data(),
       st.sampled_from(["", "-", "é"]))  # fmt: skip
def test_join(kinds, data, separator):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=3))
    inputs = []
    for kind in kinds:
        s = () if kind == "scalar" else shape if kind == "shape" else (shape[0] + 1,)
        inputs.append(data.draw(string_arrays(shapes=st.just(s))))
    check(lambda L: L.strings.join([as_input(x, L, "array") for x in inputs], separator=separator))


@SETTINGS
@given(ragged_lists(), st.sampled_from(["", "+"]))
def test_join_ragged_with_a_scalar(rows, separator):
    check(lambda L: L.strings.join([as_input(rows, L, "array"), b"!", as_input(rows, L, "array")], separator=separator))


@SETTINGS
@given(string_arrays(), st.sampled_from([None, 0, 1, -1, 2, 3, [0, 1], [1, 0], [-1, 0], [1, 1], [], (0, 2, 1)]),
       st.booleans(), st.sampled_from(["", "-"]))  # fmt: skip
def test_reduce_join(strings, axis, keepdims, separator):
    check(lambda L: L.strings.reduce_join(as_input(strings, L, "array"), axis=axis, keepdims=keepdims,
                                          separator=separator))  # fmt: skip


@SETTINGS
@given(ragged_lists(), st.sampled_from([None, 0, 1, -1]), st.sampled_from(["", ","]))
def test_reduce_join_ragged(rows, axis, separator):
    check(lambda L: L.strings.reduce_join(as_input(rows, L, "array"), axis=axis, separator=separator))


@SETTINGS
@given(INPUTS, FORMS, st.sampled_from(["strip", "lower", "upper"]), st.sampled_from(["", "utf-8", "latin1"]))
def test_strip_lower_upper(strings, form, op, encoding):
    if op == "strip":
        check(lambda L: L.strings.strip(as_input(strings, L, form)))
    else:
        check(lambda L: getattr(L.strings, op)(as_input(strings, L, form), encoding=encoding))


# ------------------------------------------------------------------------------------------------ numbers

NUMBER_TEXT = joined([*"0123456789+-.eExXpP \t\v_af", "inf", "INFINITY", "nan", "0x", "1e5", "(12)", "3.4028236e38"], 6)


@SETTINGS
@given(string_arrays(NUMBER_TEXT.map(str.encode), hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)),
       st.sampled_from(["float32", "float64", "int32", "int64", "uint32", "uint64", "uint8"]))  # fmt: skip
def test_to_number(strings, out_type):
    for s in strings.reshape(-1):  # one by one: a batch fails as a whole
        check(lambda L, s=s: L.strings.to_number(s, out_type=getattr(tf, out_type) if L is TF else out_type))
    check(lambda L: L.strings.to_number(as_input(strings, L, "array"),
                                        out_type=getattr(tf, out_type) if L is TF else out_type))  # fmt: skip


@pytest.mark.parametrize("text", ["1e39", "3.40282357e38", "-3.4028235e38", "1e-46", "7.006492e-46", "0x1.fffffep127",
                                  "0x1.ffffffp127", "16777217", "1.00000005960464477539062500001", " 0x1P-149 ",
                                  "2.2250738585072011e-308", "nan(abc_1)", "-0", "00012"])  # fmt: skip
@pytest.mark.parametrize("out_type", ["float32", "float64"])
def test_to_number_rounds_as_tensorflow(text, out_type):
    check(lambda L: L.strings.to_number(text, out_type=getattr(tf, out_type) if L is TF else out_type))


NUMERIC = st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64, np.bool_,
                           np.complex64])  # fmt: skip


def numbers(dtype):
    if np.dtype(dtype).kind in "fc":
        elements = st.floats(-1e9, 1e9, width=32) | st.sampled_from([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0])
        return hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), elements=elements)
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))


@SETTINGS
@given(NUMERIC.flatmap(numbers), st.sampled_from([-1, 0, 3]), st.booleans(), st.booleans(),
       st.sampled_from([-1, 0, 5, 14]), st.sampled_from(["", " ", "0", "-", "+", "#", "x", "00"]))  # fmt: skip
def test_as_string(values, precision, scientific, shortest, width, fill):
    check(lambda L: L.strings.as_string(tf.constant(values) if L is TF else values, precision=precision,
                                        scientific=scientific, shortest=shortest, width=width, fill=fill))  # fmt: skip


@SETTINGS
@given(st.one_of(string_arrays(), ragged_lists()), st.sampled_from([1, 2, 10, 2**31 - 1, 2**62]))
def test_to_hash_bucket_fast(strings, buckets):
    pytest.importorskip("farmhash", reason="FarmHash comes from the pyfarmhash package")
    check(lambda L: L.strings.to_hash_bucket_fast(as_input(strings, L, "array"), buckets))


def test_to_hash_bucket_fast_needs_buckets():
    check(lambda L: L.strings.to_hash_bucket_fast(["a"], 0))


# ------------------------------------------------------------------------------------------------ regular expressions

PATTERNS = [
    "a", "x*", "a|ab", "(a)(b)?", r"\d+", r"\w+", r"\s", r"\S+", r"\b", r"\B", ".", "(?s).", "^a", "(?m)^a", "a$",
    "(?m)b$", r"\z", r"\Aa", r"[[:alpha:]]+", r"[[:^space:]]", r"[^a\d]", r"[\D]", r"[a\S]", "[]a]", "[^]]", "[a-]",
    r"\Q.*\E", r"\x{e9}|\x41", r"\101", "é+", "(?i)é", "(?i)A(?-i)b", "a(?i)b|c", "(?U)a+", "(?U)a+?", "a{,2}",
    "a{2}", "a{1,}b?", "(?P<n>a)", "(?<n>b)", "[^a]", r"\pL", r"(a)\1", "a(?=b)", "(?<!a)b", "a++", r"\Z", "(a",
    "a{1001}", "(?x)a", "[z-a]", r"\8", "[", "*a", "(?#c)a", r"\C",
]  # fmt: skip
REGEX_TEXT = joined([*"aAbB1 \n_.é€É{}[]", "ab", "aa"], 8).map(str.encode) | st.binary(max_size=4)


@settings(SETTINGS, max_examples=120)
@given(string_arrays(REGEX_TEXT, hnp.array_shapes(min_dims=0, max_dims=1, max_side=3)), st.sampled_from(PATTERNS),
       st.sampled_from(["-", r"<\0>", r"\1", r"[\2]", r"\\", r"\x", "x\\", r"\9"]), st.booleans())  # fmt: skip
def test_regex_replace(strings, pattern, rewrite, replace_global):
    if pattern in (r"\pL", r"\C"):  # not supported by parafeed: a clear error, where TensorFlow matches
        with pytest.raises(ValueError, match="not supported by parafeed"):
            pfs.regex_replace(strings, pattern, rewrite)
        return
    check(lambda L: L.strings.regex_replace(as_input(strings, L, "array"), pattern, rewrite,
                                            replace_global=replace_global))  # fmt: skip


@settings(SETTINGS, max_examples=80)
@given(string_arrays(REGEX_TEXT, hnp.array_shapes(min_dims=0, max_dims=1, max_side=3)), st.sampled_from(PATTERNS))
def test_regex_full_match(strings, pattern):
    if pattern in (r"\pL", r"\C"):
        return
    check(lambda L: L.strings.regex_full_match(as_input(strings, L, "array"), pattern))


def test_regex_arguments_must_be_scalars():
    check(lambda L: L.strings.regex_replace(["ab"], ["a"], "x"))
    check(lambda L: L.strings.regex_full_match(["ab"], ["a", "b"]))


# ------------------------------------------------------------------------------------------------ unicode

ENCODED = st.one_of(
    st.binary(max_size=7).map(lambda b: (b, "UTF-8")),
    TEXT.map(lambda t: (t.encode(), "UTF-8")),
    st.binary(max_size=7).map(lambda b: (b, "UTF-16-BE")),
    TEXT.map(lambda t: (t.encode("utf-16-be"), "UTF-16-BE")),
    TEXT.map(lambda t: (t.encode("utf-32-be"), "UTF-32-BE")),
    st.binary(max_size=8).map(lambda b: (b, "UTF-32-BE")),
    st.binary(max_size=4).map(lambda b: (b, "ISO-8859-1")),
)
ERRORS = st.sampled_from(["replace", "ignore", "strict", "other"])
REPLACEMENTS = st.sampled_from([0xFFFD, 63, 0x1F600, 0])


@SETTINGS
@given(st.lists(ENCODED, max_size=4), st.sampled_from([0, 1, 2]), ERRORS, REPLACEMENTS, st.booleans())
def test_unicode_decode(encoded, rank, errors, replacement, control):
    encoding = encoded[0][1] if encoded else "UTF-8"
    items = [b for b, e in encoded if e == encoding]
    if rank == 0:
        strings = _object_array(items[:1] or [b""], ())
    else:
        strings = _object_array(items, (len(items), 1) if rank == 2 else (len(items),))
    check(lambda L: L.strings.unicode_decode(as_input(strings, L, "array"), encoding, errors=errors,
                                             replacement_char=replacement, replace_control_characters=control))  # fmt: skip


@SETTINGS
@given(ragged_lists(BYTES), st.sampled_from(["UTF-8", "utf-8", "UTF-16-BE"]), ERRORS, REPLACEMENTS)
def test_unicode_split(rows, encoding, errors, replacement):
    check(lambda L: L.strings.unicode_split(as_input(rows, L, "array"), encoding, errors=errors,
                                            replacement_char=replacement))  # fmt: skip


@SETTINGS
@given(string_arrays(), st.sampled_from(["UTF-8", "UTF-16-BE", "ISO-8859-1"]),
       st.sampled_from(["UTF-8", "UTF-16-BE", "UTF-32-BE", "ISO-8859-1"]), ERRORS, REPLACEMENTS, st.booleans())  # fmt: skip
def test_unicode_transcode(strings, source, target, errors, replacement, control):
    check(lambda L: L.strings.unicode_transcode(as_input(strings, L, "array"), source, target, errors=errors,
                                                replacement_char=replacement, replace_control_characters=control))  # fmt: skip


CODE_POINTS = st.integers(0, 0x10FFFF) | st.sampled_from([-1, 0xD800, 0xDFFF, 0x110000, 65, 233, 0])


@SETTINGS
@given(st.lists(st.lists(CODE_POINTS, max_size=4), min_size=1, max_size=3), st.sampled_from(["ragged", "dense", "1d"]),
       st.sampled_from(["UTF-8", "UTF-16-BE", "UTF-32-BE", "ISO-8859-1"]), ERRORS, REPLACEMENTS)  # fmt: skip
def test_unicode_encode(rows, form, encoding, errors, replacement):
    if form == "ragged":
        make = lambda L: L.ragged(rows, dtype=tf.int32) if L is TF else L.ragged(rows, dtype=np.int32)  # noqa: E731
    elif form == "dense":
        width = min(len(r) for r in rows)
        make = lambda L: np.array([r[:width] for r in rows], np.int32).reshape(len(rows), 1, width)  # noqa: E731
    else:
        make = lambda L: rows[0]  # noqa: E731
    check(lambda L: L.strings.unicode_encode(make(L), encoding, errors=errors, replacement_char=replacement))


# ------------------------------------------------------------------------------------------------ what comes in


VALUES = [
    b"a b", "é b", np.array("x y"), np.array(["a b", "c"]), np.array([b"a b", b""]), ["a", b"b c"], [["a b"], ["c"]],
    [], [[], []], np.array(["a b"], dtype=object), 5, [1, 2], [["a"], ["b", "c"]],
]  # fmt: skip


@pytest.mark.parametrize("value", VALUES)
def test_inputs_convert_as_tensorflow_converts_them(value):
    check(lambda L: L.strings.split(value))
    check(lambda L: L.strings.length(value))


def test_zero_d_results_are_bytes_and_zero_d_tensors():
    assert pfs.upper("ab") == b"AB" and type(pfs.upper("ab")) is bytes
    assert pfs.length("ab").shape == () and type(pfs.length("ab").numpy()) is np.int32
    assert pfs.split("a b").tolist() == [b"a", b"b"]
    assert isinstance(pfs.split(["a b"]), RaggedTensor)
    assert pfs.string_split_v2 is pfs.split


@SETTINGS
@given(st.lists(st.one_of(NUMERIC.flatmap(numbers), string_arrays()), max_size=3), st.integers(0, 3),
       st.sampled_from([-1, 0, 1, 2, 3]), st.sampled_from(["{}", "%s"]))  # fmt: skip
def test_format(inputs, placeholders, summarize, placeholder):
    template = "<" + "|".join([placeholder] * placeholders) + ">"
    check(lambda L: L.strings.format(template, [tf.constant(v) if L is TF else v for v in inputs],
                                     placeholder=placeholder, summarize=summarize))  # fmt: skip


def test_format_writes_what_tensorflow_prints():
    for value in ([1.5, 1e10, 1e-7, 0.1], np.float64(1 / 3), np.float32(1 / 3), [[1, 2, 3, 4, 5]] * 5,
                  np.zeros((2, 0, 2)), np.arange(96).reshape(8, 3, 4), b"a\n\"\\\x01\x7f\xff'", np.float16(1 / 3),
                  [np.nan, -np.inf], np.uint64(2**64 - 1), np.complex64(1j)):  # fmt: skip
        check(lambda L: L.strings.format("{}", tf.constant(value) if L is TF else tf.constant(value).numpy()))

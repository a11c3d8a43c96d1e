"""TextLineDataset and CsvDataset against tf.data on the same files: values, dtypes, and the same failing cases."""

import gzip
import zlib

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ParseError
from tests.helpers import assert_elements_equal

tf = pytest.importorskip("tensorflow", reason="compared with tf.data (make test installs TensorFlow)")

CSV = 'a,b,c,d\n1,2.5,x,10\n"3","4","y,z",11\n,,,\n7,8.0,"he said ""hi""",12\r\n9,1e3,"multi\nline",13\n-4,-0.5,,14\n'


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in {
        "t.csv": CSV,
        "short.csv": "1,2\n3\n",
        "long.csv": "1,2,3\n",
        "badint.csv": "1.5,2\n",
        "lines.txt": "x\ny\r\n\nlast",
        "lines2.txt": "only\n",
        "empty.txt": "",
    }.items():
        (tmp_path / name).write_text(text, newline="")
        paths[name] = str(tmp_path / name)
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(CSV.encode()))
    (tmp_path / "t.csv.z").write_bytes(zlib.compress(CSV.encode()))
    paths["gz"], paths["z"] = str(tmp_path / "t.csv.gz"), str(tmp_path / "t.csv.z")
    return paths


def tf_csv(*args, **kwargs):
    return list(tf.data.experimental.CsvDataset(*args, **kwargs).as_numpy_iterator())


def typed(L, value, dtype):
    """A typed default: a tf.constant for TensorFlow (which reads NumPy scalars such as np.int64(9) as dtypes)."""
    return tf.constant(value, dtype) if L is tf else np.dtype(dtype.as_numpy_dtype).type(value)


CSV_CASES = {
    "defaults": (["t.csv"], lambda L: [0, 0.0, "d", typed(L, 0, tf.int64)], {"header": True}),
    "wide types": (["t.csv"], lambda L: [typed(L, -1, tf.int64), typed(L, 0, tf.float64), "", 0], {"header": True}),
    "select": (["t.csv"], lambda L: [0, "s"], {"header": True, "select_cols": [0, 2]}),
    "exclude": (["t.csv"], lambda L: [0, "s", 0], {"header": True, "exclude_cols": [1]}),
    "na value": (["t.csv"], lambda L: [-1, 0.0, "d", 0], {"header": True, "na_value": "3"}),
    "two files": (["t.csv", "t.csv"], lambda L: [0, 0.0, "d", 0], {"header": True}),
    "gzip": (["gz"], lambda L: [0, 0.0, "d", 0], {"header": True, "compression_type": "GZIP"}),
    "zlib": (["z"], lambda L: [0, 0.0, "d", 0], {"header": True, "compression_type": "ZLIB"}),
}


@pytest.mark.parametrize("name", CSV_CASES)
def test_csv_matches_tf(files, name):
    names, defaults, kwargs = CSV_CASES[name]
    paths = [files[n] for n in names]
    expected = tf_csv(paths, defaults(tf), **kwargs)
    assert_elements_equal(expected, list(pf.CsvDataset(paths, defaults(pf), **kwargs)), name)


@pytest.mark.parametrize(
    "name, defaults, kwargs, message",
    [
        (
            "t.csv",
            lambda lib: [np.int32, np.float32, bytes, np.int64],
            {"header": True},
            "field 0 is required but missing",
        ),
        ("short.csv", lambda lib: [0, 0], {}, "expected 2 fields but found 1"),
        ("long.csv", lambda lib: [0, 0], {}, "expected 2 fields but found 3"),
        ("badint.csv", lambda lib: [0, 0], {}, "field 0 is not a valid int32: '1.5'"),
    ],
)
def test_csv_errors_where_tf_errors(files, name, defaults, kwargs, message):
    tf_defaults = [
        {np.int32: tf.int32, np.float32: tf.float32, bytes: tf.string, np.int64: tf.int64}.get(d, d)
        for d in defaults(tf)
    ]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf_csv(files[name], tf_defaults, **kwargs)
    with pytest.raises(ParseError, match=message) as info:
        list(pf.CsvDataset(files[name], defaults(pf), **kwargs))
    assert files[name] + ":" in str(info.value)  # names the file and the line


@pytest.mark.parametrize("names", [["lines.txt"], ["lines.txt", "empty.txt", "lines2.txt"]])
def test_text_lines_match_tf(files, names):
    paths = [files[n] for n in names]
    expected = list(tf.data.TextLineDataset(paths).as_numpy_iterator())
    assert list(pf.TextLineDataset(paths)) == expected
    expected = list(tf.data.TextLineDataset(paths, num_parallel_reads=2).as_numpy_iterator())
    assert list(pf.TextLineDataset(paths, num_parallel_reads=2)) == expected


def test_text_lines_compressed(files):
    assert list(pf.TextLineDataset(files["gz"], "GZIP")) == list(
        tf.data.TextLineDataset(files["gz"], "GZIP").as_numpy_iterator()
    )

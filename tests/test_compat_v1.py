"""pf.compat.v1 against tf.compat.v1: TF1's operation names (parafeed.compat_v1_ops) give TensorFlow's values and
dtypes for the same call, and pf.compat.v1.data's datasets and iterators give TF1's sequences."""

import gzip
import pickle

import numpy as np
import pytest

import parafeed as pf
from parafeed import compat_v1_ops

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.timeout(120)

X = [[1, 2], [3, 4]]
F = [[0.5, -1.25], [3.0, 2.0]]
IMAGE = np.arange(2 * 3 * 4 * 3, dtype=np.float32).reshape(2, 3, 4, 3)


def _sparse(v1, indices=((0, 1), (1, 0), (2, 2)), values=(5, 6, 7), shape=(3, 3)):
    return v1.SparseTensor(list(indices), list(values), list(shape))


def _example():
    features = {"a": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 4])),
                "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"x"]))}  # fmt: skip
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def _features(v1):
    return {"a": v1.FixedLenFeature([2], v1.int64), "s": v1.VarLenFeature(v1.string)}


def _sequence_example():
    lists = {"t": tf.train.FeatureList(feature=[tf.train.Feature(int64_list=tf.train.Int64List(value=[i, i + 1]))
                                                for i in range(3)])}  # fmt: skip
    context = {"c": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5]))}
    return tf.train.SequenceExample(
        context=tf.train.Features(feature=context), feature_lists=tf.train.FeatureLists(feature_list=lists)
    ).SerializeToString()


# (name in pf.compat.v1 / tf.compat.v1 (dots for namespaces), args made from the module, kwargs (or made from it))
CASES = [
    ("to_float", lambda v1: ([1, -2],), {}),
    ("to_double", lambda v1: ([1, -2],), {}),
    ("to_int32", lambda v1: ([1.7, -2.5],), {}),
    ("to_int64", lambda v1: ([1.7, -2.5],), {}),
    ("to_bfloat16", lambda v1: ([1.5, -2.25],), {}),
    ("to_complex64", lambda v1: ([1.5, -2.25],), {}),
    ("to_complex128", lambda v1: ([1, 2],), {}),
    ("reduce_sum", lambda v1: (X,), {"reduction_indices": 1, "keep_dims": True}),
    ("reduce_sum", lambda v1: (X, 0), {}),
    ("reduce_mean", lambda v1: (F,), {"axis": 0, "keep_dims": True}),
    ("reduce_max", lambda v1: (X, [0, 1], True), {}),
    ("reduce_min", lambda v1: (F,), {"reduction_indices": [1]}),
    ("reduce_prod", lambda v1: (X,), {"keep_dims": True}),
    ("reduce_all", lambda v1: ([[True, False], [True, True]],), {"reduction_indices": 1}),
    ("reduce_any", lambda v1: ([[True, False], [False, False]],), {"reduction_indices": 1, "keep_dims": True}),
    ("reduce_logsumexp", lambda v1: (F,), {"reduction_indices": 1}),
    ("count_nonzero", lambda v1: ([[0, 1], [2, 0], [3, 3]],), {"reduction_indices": 1, "keep_dims": True}),
    ("count_nonzero", lambda v1: (), lambda v1: {"input": [[0, 1], [2, 0]], "dtype": v1.int32}),
    ("math.reduce_sum", lambda v1: (X,), {"reduction_indices": 0, "keep_dims": True}),
    ("math.count_nonzero", lambda v1: ([0, 5, 0],), {}),
    ("argmax", lambda v1: ([[1, 3], [2, 0]],), {"dimension": 1}),
    ("argmin", lambda v1: ([[1, 3], [2, 0]], 0), lambda v1: {"output_type": v1.int32}),
    ("math.argmax", lambda v1: ([[1, 3], [2, 0]],), {"dimension": 0}),
    ("arg_max", lambda v1: ([[1, 3], [2, 0]], 1), {}),
    ("arg_min", lambda v1: ([[1, 3], [2, 0]], 0), lambda v1: {"output_type": v1.int32}),
    ("expand_dims", lambda v1: (X,), {"dim": 1}),
    ("expand_dims", lambda v1: (X, -1), {}),
    ("squeeze", lambda v1: ([[[1], [2]]],), {"squeeze_dims": [2]}),
    ("squeeze", lambda v1: ([[[1], [2]]],), {}),
    ("where", lambda v1: ([True, False], X, [[5, 6], [7, 8]]), {}),
    ("where", lambda v1: ([[True, False], [False, True]], F, [[0.0, 0.0], [1.0, 1.0]]), {}),
    ("where", lambda v1: ([[True, False], [False, True]],), {}),
    ("where_v2", lambda v1: ([True, False], X, 0), {}),
    ("reverse_v2", lambda v1: (X, [1]), {}),
    ("sparse_tensor_to_dense", lambda v1: (_sparse(v1),), {"default_value": -1}),
    ("sparse_to_dense", lambda v1: ([[0, 1], [2, 0]], [3, 3], [5, 6]), {}),
    ("sparse_to_dense", lambda v1: ([1, 3], [5], 7), {"default_value": -1}),
    ("sparse_to_dense", lambda v1: (2, [4], 1.5), {}),
    ("sparse_to_dense", lambda v1: ([[0], [2]], [3], [b"a", b"b"], b"-"), {}),
    ("sparse_reshape", lambda v1: (_sparse(v1), [9, 1]), {}),
    ("sparse_concat", lambda v1: (1, [_sparse(v1), _sparse(v1, shape=(3, 4))]), {}),
    (
        "sparse_concat",
        lambda v1: (None, [_sparse(v1), _sparse(v1, shape=(3, 4))]),
        {"concat_dim": 0, "expand_nonconcat_dim": True},
    ),
    ("sparse.concat", lambda v1: (None, [_sparse(v1), _sparse(v1)]), {"concat_dim": 1}),
    ("sparse_add", lambda v1: (_sparse(v1), _sparse(v1, ((0, 1), (1, 1)), (-5, 2))), {}),
    ("sparse_add", lambda v1: (_sparse(v1), _sparse(v1, ((0, 1), (1, 1)), (-4, 2))), {"thresh": 2}),
    ("sparse.add", lambda v1: (_sparse(v1), [[1, 1, 1], [0, 0, 0], [2, 2, 2]]), {}),
    ("sparse_reorder", lambda v1: (_sparse(v1, ((2, 2), (0, 1), (1, 0))),), {}),
    ("sparse_retain", lambda v1: (_sparse(v1), [True, False, True]), {}),
    ("sparse_slice", lambda v1: (_sparse(v1), [1, 0], [2, 2]), {}),
    ("sparse_transpose", lambda v1: (_sparse(v1),), {}),
    ("sparse_fill_empty_rows", lambda v1: (_sparse(v1, ((0, 1), (2, 0)), (5, 6)), 9), {}),
    ("sparse_to_indicator", lambda v1: (_sparse(v1), 8), {}),
    ("sparse_reduce_sum", lambda v1: (_sparse(v1),), {"reduction_axes": 1, "keep_dims": True}),
    ("sparse_reduce_sum", lambda v1: (_sparse(v1),), {}),
    ("sparse_reduce_sum_sparse", lambda v1: (_sparse(v1),), {"reduction_axes": [0]}),
    ("sparse.reduce_sum", lambda v1: (_sparse(v1), 0), {"keep_dims": True}),
    ("sparse.reduce_sum_sparse", lambda v1: (_sparse(v1),), {"axis": 1}),
    ("string_join", lambda v1: ([[b"a", b"b"], b"c"],), {"separator": b"-"}),
    ("string_strip", lambda v1: ([b" a ", b"\tb\n"],), {}),
    ("string_to_hash_bucket_fast", lambda v1: ([b"a", b"hello"], 7), {}),
    ("string_to_number", lambda v1: (), {"input": [b"1.5", b"-2"]}),
    ("string_to_number", lambda v1: ([b"12", b"-3"], v1.int64), {}),
    ("strings.to_number", lambda v1: (), lambda v1: {"input": [b"7"], "out_type": v1.int32}),
    ("substr", lambda v1: ([b"hello", b"world"], 1, 3), {}),
    ("substr", lambda v1: ("héllo".encode(), 1, 2, None, "UTF8_CHAR"), {}),
    ("strings.substr", lambda v1: (b"hello", -3, 2), {}),
    ("as_string", lambda v1: ([1.5, 2.0],), {"precision": 2}),
    ("reduce_join", lambda v1: ([[b"a", b"b"], [b"c", b"d"]], 1, True), {"separator": b","}),
    ("reduce_join", lambda v1: ([[b"a", b"b"], [b"c", b"d"]],), {"reduction_indices": 0}),
    ("strings.reduce_join", lambda v1: ([[b"a", b"b"], [b"c", b"d"]],), {"axis": 1, "keep_dims": True}),
    ("regex_replace", lambda v1: ([b"a1b22", b"c"], b"[0-9]+", b"#"), {}),
    ("strings.split", lambda v1: ([b"a b  c", b"", b"d"],), {}),
    ("strings.split", lambda v1: (), {"source": [b"a,b,,c", b"d"], "sep": b","}),
    ("strings.split", lambda v1: ([b"a b c", b"d"],), {"maxsplit": 1, "result_type": "RaggedTensor"}),
    (
        "decode_raw",
        lambda v1: (),
        lambda v1: {"bytes": [b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"], "out_type": v1.int16},
    ),
    ("decode_raw", lambda v1: (b"\x00\x01\x00\x02", v1.int16, False), {}),
    ("io.decode_raw", lambda v1: (), lambda v1: {"bytes": b"\x00\x00\xc0\x3f", "out_type": v1.float32}),
    ("decode_csv", lambda v1: ([b"1,a,2.5", b"3,,"], [[0], [b"z"], [0.0]]), {}),
    ("decode_base64", lambda v1: ([b"aGVsbG8", b"YQ"],), {}),
    ("encode_base64", lambda v1: ([b"hello", b"a"],), {"pad": True}),
    ("decode_compressed", lambda v1: ([gzip.compress(b"data")],), {"compression_type": "GZIP"}),
    ("parse_example", lambda v1: ([_example(), _example()], _features(v1)), {"example_names": ["e1", "e2"]}),
    ("io.parse_example", lambda v1: ([_example()], _features(v1)), {}),
    ("parse_single_example", lambda v1: (_example(), _features(v1), None, "ex"), {}),
    ("io.parse_single_example", lambda v1: (_example(),), lambda v1: {"features": _features(v1)}),
    (
        "parse_single_sequence_example",
        lambda v1: (_sequence_example(),),
        lambda v1: {
            "context_features": {"c": v1.FixedLenFeature([], v1.float32)},
            "sequence_features": {"t": v1.FixedLenSequenceFeature([2], v1.int64)},
            "example_name": "ex",
        },
    ),
    (
        "io.parse_single_sequence_example",
        lambda v1: (_sequence_example(), None, {"t": v1.VarLenFeature(v1.int64)}),
        {},
    ),
    ("serialize_tensor", lambda v1: (np.array(X, np.int32),), {}),
    ("parse_tensor", lambda v1: (tf.io.serialize_tensor(np.array(F, np.float32)).numpy(), v1.float32), {}),
    ("image.resize_image_with_crop_or_pad", lambda v1: (IMAGE, 5, 2), {}),
    ("image.transpose_image", lambda v1: (IMAGE,), {}),
]


def _call(v1, name, make_args, kwargs):
    fn = v1
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn(*make_args(v1), **(kwargs(v1) if callable(kwargs) else kwargs))


def _assert_same(got, want, where):
    if isinstance(want, tf.SparseTensor):
        assert isinstance(got, pf.SparseTensor), where
        for field in ("indices", "values", "dense_shape"):
            _assert_same(getattr(got, field), getattr(want, field), f"{where}.{field}")
    elif isinstance(want, tf.RaggedTensor):
        assert isinstance(got, pf.RaggedTensor) and got.to_list() == want.to_list(), where
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            _assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    else:
        w = want.numpy() if hasattr(want, "numpy") else np.asarray(want)
        if isinstance(w, bytes):  # (a scalar string: bytes in both)
            assert got == w, where
            return
        g = np.asarray(got)
        assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        if w.dtype.kind == "f" or w.dtype.kind == "c":
            np.testing.assert_allclose(g.astype(w.dtype), w, rtol=1e-6, err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)


@pytest.mark.parametrize("name, make_args, kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_tf1_names_give_tensorflows_results(name, make_args, kwargs):
    want = _call(tf.compat.v1, name, make_args, kwargs)
    got = _call(pf.compat.v1, name, make_args, kwargs)
    _assert_same(got, want, name)


# names checked by the tests below, not by CASES
RANDOM = {"random_uniform", "random_normal", "truncated_normal", "random_shuffle", "random_crop", "multinomial",
          "set_random_seed", "image.sample_distorted_bounding_box", "random.multinomial", "random.set_random_seed",
          "read_file"}  # fmt: skip


def test_every_added_name_is_tensorflows_and_checked():
    tables = {"": compat_v1_ops.TOP, "io.": compat_v1_ops.IO, "math.": compat_v1_ops.MATH,
              "random.": compat_v1_ops.RANDOM, "sparse.": compat_v1_ops.SPARSE, "strings.": compat_v1_ops.STRINGS,
              "image.": compat_v1_ops.IMAGE}  # fmt: skip
    checked = {case[0] for case in CASES} | RANDOM
    for prefix, table in tables.items():
        namespace = getattr(tf.compat.v1, prefix[:-1]) if prefix else tf.compat.v1
        for name, fn in table.items():
            assert hasattr(namespace, name), f"tf.compat.v1.{prefix}{name} is not TensorFlow's"
            same_as_top = compat_v1_ops.TOP.get(name) is fn and name in checked
            assert f"{prefix}{name}" in checked or same_as_top, f"pf.compat.v1.{prefix}{name} is not compared"
            got = pf.compat.v1
            for part in f"{prefix}{name}".split("."):
                got = getattr(got, part)
            assert got is fn, f"pf.compat.v1.{prefix}{name}"


def test_old_and_new_argument_names_together_are_refused():
    with pytest.raises(ValueError, match="keep_dims"):
        pf.compat.v1.reduce_sum(X, keepdims=True, keep_dims=True)
    with pytest.raises(ValueError, match="dimension"):
        pf.compat.v1.argmax(X, axis=0, dimension=0)
    with pytest.raises(ValueError, match="x` and `y"):
        pf.compat.v1.where([True, False], [1, 2], [[1, 2]])
    with pytest.raises(ValueError, match="axis"):
        pf.compat.v1.expand_dims(X)


@pytest.fixture
def global_seed():
    """The global random seed is set by the test and unset after it."""
    yield
    pf.random.set_seed(None)


def test_random_ops_have_tensorflows_shapes_dtypes_and_ranges(global_seed):
    v1 = pf.compat.v1
    for fn, args, kwargs in [
        ("random_uniform", ([3, 4],), {"minval": 2, "maxval": 5, "dtype": "int32"}),
        ("random_uniform", ([5],), {"minval": -1.0, "maxval": 1.0}),
        ("random_normal", ([2, 3],), {"mean": 1.0, "stddev": 0.5, "dtype": "float64"}),
        ("truncated_normal", ([100],), {"stddev": 2.0}),
        ("random_shuffle", (np.arange(6).reshape(3, 2),), {}),
        ("random_crop", (IMAGE[0], [2, 2, 3]), {}),
        ("multinomial", ([[0.0, 0.0, -1e9], [-1e9, 0.0, 0.0]], 5), {"output_dtype": "int32"}),
        ("multinomial", ([[0.0, 1.0]], 4), {}),
    ]:
        want = getattr(tf.compat.v1, fn)(*args, **kwargs).numpy()
        got = np.asarray(getattr(v1, fn)(*args, seed=3, **kwargs))
        assert got.dtype == want.dtype and got.shape == want.shape, fn
    assert set(np.asarray(v1.random_uniform([50], 2, 5, v1.int32)).tolist()) <= {2, 3, 4}
    assert np.abs(np.asarray(v1.truncated_normal([500], stddev=2.0))).max() <= 4.0
    assert sorted(np.asarray(v1.random_shuffle(np.arange(6))).tolist()) == list(range(6))
    draws = np.asarray(v1.random.multinomial([[0.0, 0.0, -1e9], [-1e9, 0.0, 0.0]], 20))
    assert set(draws[0].tolist()) <= {0, 1} and set(draws[1].tolist()) <= {1, 2}
    v1.random.set_random_seed(7)
    first = np.asarray(v1.random_uniform([4]))
    v1.set_random_seed(7)
    np.testing.assert_array_equal(np.asarray(v1.random_uniform([4])), first)


def test_v1_sample_distorted_bounding_box_takes_seed2(global_seed):
    boxes = np.array([[[0.1, 0.1, 0.9, 0.9]]], np.float32)
    args = (np.array([60, 80, 3], np.int32), boxes)
    want = tf.compat.v1.image.sample_distorted_bounding_box(*args, seed=1, seed2=2, min_object_covered=0.3)
    got = pf.compat.v1.image.sample_distorted_bounding_box(*args, seed=1, seed2=2, min_object_covered=0.3)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.numpy().dtype and np.asarray(g).shape == w.numpy().shape

    def sizes(seed, seed2):
        pf.compat.v1.set_random_seed(5)  # (op seeds repeat from the global seed, as in TensorFlow)
        return np.asarray(pf.compat.v1.image.sample_distorted_bounding_box(*args, seed, seed2, 0.3)[1]).tolist()

    assert sizes(1, 2) == sizes(1, 2)
    assert len({str(sizes(1, seed2)) for seed2 in range(2, 8)}) > 1  # seed2 takes part in the draws
    begin, size, _ = (np.asarray(x) for x in got)
    assert (begin[:2] >= 0).all() and (begin[:2] + size[:2] <= [60, 80]).all() and size[2] == -1


def test_read_file(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"\x00abc")
    assert pf.compat.v1.read_file(str(path)) == tf.compat.v1.read_file(str(path)).numpy()


# ---------------------------------------------------------------------------- datasets and iterators


def _pipeline(v1, path):
    records = v1.data.TFRecordDataset(path).map(lambda r: v1.parse_single_example(r, _features(v1))["a"])
    letters = v1.data.Dataset.from_tensor_slices({"x": np.arange(1, 6), "s": [b"a", b"b", b"c", b"d", b"e"]})
    letters = letters.map(lambda e: (e["x"] * 2, e["s"]))
    return letters.concatenate(records.map(lambda a: (a[1], b"r"))).batch(2)


def _tf_records(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(2):
            writer.write(_example())
    return path


def _drain(get_next, out_of_range):
    elements = []
    while True:
        try:
            elements.append(get_next())
        except out_of_range:
            return elements


def _values(elements):
    return [[np.asarray(getattr(x, "numpy", lambda x=x: x)()).tolist() for x in e] for e in elements]


def test_one_shot_iterators_give_tensorflows_sequence(tmp_path):
    path = _tf_records(tmp_path)
    want = _drain(tf.compat.v1.data.make_one_shot_iterator(_pipeline(tf.compat.v1, path)).get_next,
                  tf.errors.OutOfRangeError)  # fmt: skip
    ds = _pipeline(pf.compat.v1, path)
    for it in (pf.compat.v1.data.make_one_shot_iterator(ds), ds.make_one_shot_iterator()):
        got = _drain(it.get_next, pf.errors.OutOfRangeError)
        assert _values(got) == _values(want)
        with pytest.raises(pf.errors.OutOfRangeError):
            it.get_next()
    with pytest.raises(ValueError, match="one-shot"):
        ds.make_one_shot_iterator().initializer()
    assert _values(pf.compat.v1.data.make_one_shot_iterator(pf.Dataset.range(2).batch(1))) == [[0], [1]]


def test_initializable_iterators_restart_as_tensorflows_in_a_session(tmp_path):
    path = _tf_records(tmp_path)
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        it = tf.compat.v1.data.make_initializable_iterator(_pipeline(tf.compat.v1, path))
        next_element = it.get_next()
        want = []
        for _ in range(2):
            sess.run(it.initializer)
            want.append(_drain(lambda: sess.run(next_element), tf.errors.OutOfRangeError))
    ds = _pipeline(pf.compat.v1, path)
    for it in (ds.make_initializable_iterator(), pf.compat.v1.data.make_initializable_iterator(ds)):
        with pytest.raises(pf.errors.FailedPreconditionError, match="initializer"):
            it.get_next()
        got = []
        for epoch in range(2):
            (it.initializer if epoch else it.initialize)()
            it.get_next()  # (a part-read epoch: the next initializer starts over)
            it.initializer()
            got.append(_drain(it.get_next, pf.errors.OutOfRangeError))
        assert [_values(e) for e in got] == [_values(e) for e in want]
        it.close()


def test_v1_datasets_are_parafeed_datasets_with_tf1_attributes():
    ds = pf.compat.v1.data.Dataset.range(6).map(lambda x: (x, [x, x])).filter(lambda x, y: x % 2 == 0)
    want = tf.compat.v1.data.Dataset.range(6).map(lambda x: (x, [x, x])).filter(lambda x, y: x % 2 == 0)
    assert isinstance(ds, pf.Dataset) and isinstance(ds, pf.compat.v1.data.Dataset)
    assert type(ds).__name__ == "FilterDataset"
    assert [t.name for t in ds.output_types] == [t.name for t in want.output_types]
    assert [s.as_list() for s in want.output_shapes] == [list(s) for s in ds.output_shapes]
    assert not hasattr(pf.Dataset.range(2), "make_one_shot_iterator")  # (TF2 datasets have no TF1 methods)
    assert hasattr(tf.compat.v1.data.TFRecordDataset([]), "make_one_shot_iterator")
    assert isinstance(pf.compat.v1.data.TFRecordDataset([]), pf.compat.v1.data.TFRecordDataset)
    zipped = pf.compat.v1.data.Dataset.zip((pf.Dataset.range(2), ds))
    mixed = pf.compat.v1.data.experimental.sample_from_datasets([pf.Dataset.range(2)], seed=1)
    assert all(hasattr(d, "make_initializable_iterator") for d in (zipped, mixed, ds.apply(lambda d: d.take(1))))
    flat = pf.compat.v1.data.Dataset.range(2).flat_map(lambda x: pf.compat.v1.data.Dataset.from_tensors(x).repeat(2))
    assert [int(x) for x in flat] == [0, 0, 1, 1]
    batched = pf.compat.v1.data.Dataset.range(5).batch(2)
    loaded = pickle.loads(pickle.dumps(batched))
    assert type(loaded) is type(batched) and [b.tolist() for b in loaded] == [[0, 1], [2, 3], [4]]


def test_import_parafeed_compat_v1_as_tf():
    import parafeed.compat.v1 as tf1

    assert tf1 is pf.compat.v1 and tf1.sparse_tensor_to_dense is pf.sparse.to_dense

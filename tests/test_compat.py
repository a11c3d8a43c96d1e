"""pf.compat.v1: TF1's names where they differ from TF2's, parafeed's own elsewhere; pf.data for `import parafeed
as tf` modules."""

import numpy as np
import pytest

import parafeed as pf

tf = pytest.importorskip("tensorflow")


def test_tf1_names_match_tensorflow():
    image = np.random.default_rng(0).random((1, 5, 7, 3)).astype(np.float32)
    for align in (False, True):
        want = tf.compat.v1.image.resize_bilinear(image, [3, 4], align_corners=align).numpy()
        np.testing.assert_array_equal(pf.compat.v1.image.resize_bilinear(image, [3, 4], align_corners=align), want)
    got, want = pf.compat.v1.string_split([b"a b", b"c"]), tf.compat.v1.string_split([b"a b", b"c"])
    assert got.indices.tolist() == want.indices.numpy().tolist() and got.values.tolist() == want.values.numpy().tolist()
    assert pf.compat.v1.to_int32([1.7]).tolist() == tf.compat.v1.to_int32([1.7]).numpy().tolist()
    assert pf.compat.v1.dimension_value(pf.compat.v1.Dimension(4)) == 4


def test_tf1_datasets_and_iterators(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with pf.io.TFRecordWriter(path) as writer:
        writer.write(pf.io.serialize_example({"x": 3}))
    ds = pf.compat.v1.data.TFRecordDataset(path).map(
        lambda r: pf.compat.v1.parse_single_example(r, {"x": pf.compat.v1.FixedLenFeature([], pf.int64)})
    )
    it = pf.compat.v1.data.make_one_shot_iterator(ds)
    assert int(it.get_next()["x"]) == 3
    assert pf.compat.v1.gfile.Exists(path) and pf.compat.v1.gfile.Glob(str(tmp_path / "*")) == [path]


def test_names_parafeed_lacks_say_so():
    with pytest.raises(AttributeError, match="no such name"):
        pf.compat.v1.placeholder  # noqa: B018
    assert pf.compat.v2 is pf and pf.data is pf

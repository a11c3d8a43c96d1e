"""pf.image's geometry (crops, pads, flips, rotations), random crops and flips, sample_distorted_bounding_box and
encoding (encode_jpeg, encode_png, extract_jpeg_shape) against tf.image: the deterministic ops bit-exact, errors
where TensorFlow raises them, the random ones by what they may produce and by their distributions, the encoders by
what TensorFlow decodes from their bytes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parafeed as pf

tf = pytest.importorskip("tensorflow", reason="compared with tf.image (make test installs TensorFlow)")

DTYPES = [np.uint8, np.int32, np.float16, np.float32]


def image(rng, shape, dtype=np.uint8):
    return rng.integers(0, 256, shape).astype(dtype)


def assert_same(actual, expected):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (actual.shape, expected.shape)
    assert np.array_equal(actual, expected)


def same_or_both_fail(ours, theirs):
    """Both give the same array, or TensorFlow raises ValueError / InvalidArgumentError and parafeed
    InvalidArgumentError."""
    try:
        expected = theirs()
    except (ValueError, tf.errors.InvalidArgumentError):
        with pytest.raises(pf.errors.InvalidArgumentError):
            ours()
        return False
    assert_same(ours(), expected)
    return True


images = st.tuples(st.sampled_from([(), (2,)]), st.integers(1, 9), st.integers(1, 9), st.integers(1, 3))


@settings(max_examples=60, deadline=None)
@given(shape=images, box=st.tuples(*[st.integers(-1, 11)] * 4), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99))
def test_crop_pad_and_crop_or_pad(shape, box, dtype, seed):
    batch, h, w, c = shape
    x = image(np.random.default_rng(seed), (*batch, h, w, c), dtype)
    t = tf.constant(x)
    oh, ow, th, tw = box
    same_or_both_fail(lambda: pf.image.crop_to_bounding_box(x, oh, ow, th, tw),
                      lambda: tf.image.crop_to_bounding_box(t, oh, ow, th, tw))  # fmt: skip
    same_or_both_fail(lambda: pf.image.pad_to_bounding_box(x, oh, ow, th, tw),
                      lambda: tf.image.pad_to_bounding_box(t, oh, ow, th, tw))  # fmt: skip
    same_or_both_fail(lambda: pf.image.resize_with_crop_or_pad(x, th, tw),
                      lambda: tf.image.resize_with_crop_or_pad(t, th, tw))  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(shape=images, dtype=st.sampled_from(DTYPES), k=st.integers(-5, 5), fraction=st.floats(0.01, 1.0),
       seed=st.integers(0, 99))  # fmt: skip
def test_flips_rotations_transpose_central_crop(shape, dtype, k, fraction, seed):
    batch, h, w, c = shape
    x = image(np.random.default_rng(seed), (*batch, h, w, c), dtype)
    t = tf.constant(x)
    assert_same(pf.image.flip_left_right(x), tf.image.flip_left_right(t))
    assert_same(pf.image.flip_up_down(x), tf.image.flip_up_down(t))
    assert_same(pf.image.rot90(x, k), tf.image.rot90(t, k))
    assert_same(pf.image.rot90(x, np.int64(k)), tf.image.rot90(t, k))
    assert_same(pf.image.transpose(x), tf.image.transpose(t))
    assert_same(pf.image.central_crop(x, fraction), tf.image.central_crop(t, fraction))
    assert_same(pf.image.central_crop(x, np.float32(fraction)), tf.image.central_crop(t, np.float32(fraction)))


def test_geometry_errors_name_the_op():
    x = np.zeros((4, 5, 3), np.uint8)
    cases = [
        (lambda: pf.image.flip_left_right(x[0]), r"flip_left_right\(\): `image` must be 3-D .* add a channels axis"),
        (lambda: pf.image.flip_up_down(np.zeros((0, 3, 3))), r"flip_up_down\(\): `image` of shape \(0, 3, 3\) is empty"),
        (lambda: pf.image.rot90(x, [1]), r"rot90\(\): `k` must be a scalar"),
        (lambda: pf.image.transpose(np.zeros((1, 1, 2, 2, 3))), r"transpose\(\): `image` must be 3-D"),
        (lambda: pf.image.central_crop(x, 0.0), r"central_crop\(\): `central_fraction` must be in \(0, 1\]"),
        (lambda: pf.image.crop_to_bounding_box(x, 0, 0, 5, 2), r"the box 5x2 at \(0, 0\) does not fit in the 4x5"),
        (lambda: pf.image.crop_to_bounding_box(x, -1, 0, 2, 2), r"offsets must be >= 0"),
        (lambda: pf.image.pad_to_bounding_box(x, 0, 0, 3, 8), r"pad_to_bounding_box\(\): the 4x5 image at \(0, 0\) does not"),
        (lambda: pf.image.resize_with_crop_or_pad(x, 0, 3), r"resize_with_crop_or_pad\(\): the target size must be > 0"),
        (lambda: pf.image.random_crop(x, (5, 5, 3)), r"random_crop\(\): cannot crop \(5, 5, 3\) out of shape"),
        (lambda: pf.image.random_crop(x, (2, 2)), r"`size` must be 3 integers"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(pf.errors.InvalidArgumentError, match=message):
            call()
    with pytest.raises(pf.errors.ArgumentTypeError, match=r"rot90\(\): `k` must be an integer"):
        pf.image.rot90(x, 1.5)
    with pytest.raises(TypeError):
        tf.image.rot90(x, 1.5)


def test_random_crop_windows():
    x = np.arange(6 * 7 * 2).reshape(6, 7, 2)
    offsets = set()
    for _ in range(300):
        crop = pf.image.random_crop(x, (4, 3, 2), seed=5)
        y, left = divmod(int(crop[0, 0, 0]) // 2, 7)
        assert_same(crop, tf.image.crop_to_bounding_box(tf.constant(x), y, left, 4, 3))
        offsets.add((y, left))
    assert offsets == {(y, left) for y in range(3) for left in range(5)}  # every placement, as tf's uniform offsets
    rng = np.random.default_rng(0)
    assert len({int(pf.image.random_crop(x, (2, 2, 2), rng=rng)[0, 0, 0]) for _ in range(30)}) > 1
    a = pf.image.stateless_random_crop(x, (4, 3, 2), seed=(1, 2))
    assert_same(a, pf.image.stateless_random_crop(x, (4, 3, 2), seed=[1, 2]))


@pytest.mark.parametrize("which", ["left_right", "up_down"])
def test_random_flips(which):
    x = image(np.random.default_rng(1), (5, 4, 3))
    flip = getattr(pf.image, f"flip_{which}")
    flipped = [np.array_equal(getattr(pf.image, f"random_flip_{which}")(x, seed=3), flip(x)) for _ in range(400)]
    assert 0.4 < np.mean(flipped) < 0.6
    batch = np.stack([x] * 64)
    out = getattr(pf.image, f"random_flip_{which}")(batch, seed=4)
    per_image = [np.array_equal(o, flip(x)) for o in out]
    assert all(p or np.array_equal(o, x) for p, o in zip(per_image, out)) and 0 < sum(per_image) < 64
    stateless = getattr(pf.image, f"stateless_random_flip_{which}")
    outcomes = {np.array_equal(stateless(x, seed=(i, 0)), flip(x)) for i in range(20)}
    assert outcomes == {True, False}
    assert_same(stateless(batch, seed=(7, 7)), stateless(batch, seed=(7, 7)))


def sdbb_samples(op, n, **kwargs):
    return [op(**kwargs, seed=s) for s in n]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_sample_distorted_bounding_box_crops(dtype):
    size = np.array([120, 200, 3], dtype)
    boxes = np.array([[[0.1, 0.2, 0.5, 0.6], [0.3, 0.3, 0.9, 0.95]]], np.float32)
    args = dict(min_object_covered=0.3, aspect_ratio_range=(0.75, 1.33), area_range=(0.08, 1.0), max_attempts=50)
    x = tf.zeros(size.astype(np.int32).tolist())
    for seed in range(1, 40):
        begin, extent, bbox = pf.image.sample_distorted_bounding_box(size, boxes, seed=seed, **args)
        theirs = tf.image.sample_distorted_bounding_box(size, boxes, seed=seed, **args)
        for ours, expected in zip((begin, extent, bbox), theirs):
            assert ours.dtype == expected.dtype.as_numpy_dtype and ours.shape == tuple(expected.shape)
        y, x0, _ = begin.astype(np.int64)
        h, w, last = extent.astype(np.int64)
        assert np.int64(last) == np.int64(np.array(-1).astype(dtype)) and begin[2] == 0
        if dtype != np.uint8:  # (uint8's -1 is 255, in TensorFlow too)
            assert tf.slice(x, begin, extent).shape == (h, w, 3)
        assert y >= 0 and y + h <= 120 and x0 >= 0 and x0 + w <= 200
        np.testing.assert_array_equal(bbox, np.float32([[[y / 120, x0 / 200, (y + h) / 120, (x0 + w) / 200]]]))
        if (h, w) != (120, 200):  # a sample, not the fallback: the constraints hold
            assert 0.08 * 24000 <= h * w <= 24000 and 0.75 - 0.5 / h <= w / h <= 1.33 + 0.5 / h  # w = round(h * ratio)
            covered = []
            for ymin, xmin, ymax, xmax in boxes[0]:
                by0, bx0, by1, bx1 = int(ymin * 120), int(xmin * 200), int(ymax * 120), int(xmax * 200)
                inter = max(0, min(y + h, by1) - max(y, by0)) * max(0, min(x0 + w, bx1) - max(x0, bx0))
                covered.append(inter / ((by1 - by0) * (bx1 - bx0)))
            assert max(covered) >= 0.3


def test_sample_distorted_bounding_box_distribution_matches_tensorflow():
    """Inception's crop (area 0.08-1, aspect 3/4-4/3) on a 300x400 image: the crops' area, aspect ratio and centre
    have TensorFlow's distribution (the draws themselves are NumPy's)."""
    size = [300, 400, 3]
    whole = [[[0.0, 0.0, 1.0, 1.0]]]
    args = dict(min_object_covered=0.1, aspect_ratio_range=(3 / 4, 4 / 3), area_range=(0.08, 1.0), max_attempts=10)

    def stats(samples):
        begin, extent = np.array([s[0] for s in samples], float), np.array([s[1] for s in samples], float)
        area = extent[:, 0] * extent[:, 1] / 120000
        centre = (begin[:, 1] + extent[:, 1] / 2) / 400
        return np.array([area.mean(), (extent[:, 1] / extent[:, 0]).mean(), centre.mean(), area.std()])

    ours = stats([pf.image.stateless_sample_distorted_bounding_box(size, whole, (s, 1), **args) for s in range(600)])
    theirs = stats([[t.numpy() for t in tf.image.stateless_sample_distorted_bounding_box(size, whole, (s, 1), **args)]
                    for s in range(600)])  # fmt: skip
    np.testing.assert_allclose(ours, theirs, atol=0.04)


def test_sample_distorted_bounding_box_fallback_and_errors():
    size = [40, 60, 3]
    box = [[[0.0, 0.0, 1.0, 1.0]]]
    impossible = dict(min_object_covered=1.0, area_range=(0.05, 0.1), max_attempts=5)  # the whole image: fallback
    ours = pf.image.sample_distorted_bounding_box(size, box, seed=1, **impossible)
    theirs = tf.image.sample_distorted_bounding_box(size, box, seed=1, **impossible)
    for a, b in zip(ours, theirs):
        assert_same(a, b)
    no_boxes = np.zeros((1, 0, 4), np.float32)
    _, extent, _ = pf.image.sample_distorted_bounding_box(size, no_boxes, seed=2, use_image_if_no_bounding_boxes=True)
    assert extent[0] * extent[1] >= 0.05 * 2400
    assert_same(pf.image.stateless_sample_distorted_bounding_box(size, box, seed=[3, 4])[0],
                pf.image.stateless_sample_distorted_bounding_box(size, box, seed=(3, 4))[0])  # fmt: skip
    cases = [
        (dict(bounding_boxes=no_boxes), r"no bounding boxes given; pass use_image_if_no_bounding_boxes=True"),
        (dict(bounding_boxes=[[0, 0, 1, 1.0]]), r"`bounding_boxes` must be 3-D \[batch, num_boxes, 4\]"),
        (dict(bounding_boxes=[[[0, 0, 2, 1.0]]]), r"must be in \[0.0, 1.0\]"),
        (dict(bounding_boxes=box, min_object_covered=-1), r"`min_object_covered` must be non-negative"),
        (dict(bounding_boxes=box, aspect_ratio_range=(0, 1)), r"`aspect_ratio_range` must be positive"),
        (dict(bounding_boxes=box, area_range=(0.1, 1.5)), r"`area_range` must be in \(0, 1\]"),
        (dict(bounding_boxes=box, max_attempts=0), r"`max_attempts` must be positive"),
        (dict(bounding_boxes=box, image_size=[40, 60]), r"`image_size` must be \[height, width, channels\]"),
    ]
    for kwargs, message in cases:
        kwargs = {"image_size": size, **kwargs}
        with pytest.raises(pf.errors.InvalidArgumentError, match=r"sample_distorted_bounding_box\(\): .*" + message):
            pf.image.sample_distorted_bounding_box(seed=1, **kwargs)
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            tf.image.sample_distorted_bounding_box(seed=1, **kwargs)
    with pytest.raises(pf.errors.ElementTypeError, match="`image_size` of dtype float32"):
        pf.image.sample_distorted_bounding_box(np.float32(size), box)


@pytest.mark.parametrize("quality", [95, 75, 10])
@pytest.mark.parametrize("chroma_downsampling", [True, False])
@pytest.mark.parametrize("channels", [1, 3])
def test_encode_jpeg_decodes_like_tensorflows(quality, chroma_downsampling, channels):
    x = image(np.random.default_rng(quality), (37, 53, channels))
    ours = pf.image.encode_jpeg(x, quality=quality, chroma_downsampling=chroma_downsampling)
    theirs = tf.io.encode_jpeg(x, quality=quality, chroma_downsampling=chroma_downsampling).numpy()
    assert isinstance(ours, bytes)
    assert_same(tf.io.decode_jpeg(ours).numpy(), tf.io.decode_jpeg(theirs))  # the same libjpeg-turbo quantisation
    assert_same(pf.image.decode_jpeg(ours), tf.io.decode_jpeg(ours))
    assert_same(pf.image.extract_jpeg_shape(ours), tf.image.extract_jpeg_shape(ours))
    assert_same(pf.image.extract_jpeg_shape(ours, np.int64), tf.image.extract_jpeg_shape(ours, tf.int64))


def test_encode_jpeg_options():
    x = image(np.random.default_rng(2), (20, 30, 3))
    kwargs = dict(progressive=True, optimize_size=True, density_unit="cm", x_density=72, y_density=96,
                  xmp_metadata="<x:xmpmeta xmlns:x='adobe:ns:meta/'/>")  # fmt: skip
    ours = pf.image.encode_jpeg(x, **kwargs)
    theirs = tf.io.encode_jpeg(x, **kwargs).numpy()
    assert ours[:20] == theirs[:20]  # the JFIF header: version, units (2: per cm), densities
    assert b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta" in ours
    assert pf.image.is_jpeg(ours) == tf.io.is_jpeg(ours).numpy() and not pf.image.is_jpeg(pf.image.encode_png(x))
    assert_same(tf.io.decode_jpeg(ours).numpy(), tf.io.decode_jpeg(theirs))
    for kwargs, message in [(dict(format="rgb", image=x[..., :1]), r"format 'rgb' takes 3 channels"),
                            (dict(format="cmyk", image=x), r"`format` must be '', 'grayscale' or 'rgb'"),
                            (dict(quality=101, image=x), r"`quality` must be in \[0, 100\]"),
                            (dict(image=x[None]), r"`image` must be 3-D"),
                            (dict(image=x[..., :2]), r"format '' takes 1 or 3 channels")]:  # fmt: skip
        with pytest.raises(pf.errors.InvalidArgumentError, match=r"encode_jpeg\(\): " + message):
            pf.image.encode_jpeg(**kwargs)
    with pytest.raises(pf.errors.ElementTypeError, match=r"encode_jpeg\(\): `image` of dtype float32"):
        pf.image.encode_jpeg(x.astype(np.float32))
    with pytest.raises(pf.errors.InvalidArgumentError, match=r"extract_jpeg_shape\(\): invalid JPEG data"):
        pf.image.extract_jpeg_shape(b"not a jpeg")


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_encode_png_round_trips(channels, dtype):
    rng = np.random.default_rng(channels)
    x = rng.integers(0, np.iinfo(dtype).max + 1, (9, 13, channels)).astype(dtype)
    for compression in (-1, 0, 9):
        data = pf.image.encode_png(x, compression=compression)
        assert_same(tf.io.decode_png(data, dtype=tf.as_dtype(dtype)).numpy(), x)
        assert_same(pf.image.decode_png(data, dtype=dtype), x)
    with pytest.raises(pf.errors.InvalidArgumentError, match=r"encode_png\(\): `compression` must be in \[-1, 9\]"):
        pf.image.encode_png(x, compression=10)
    with pytest.raises(pf.errors.InvalidArgumentError, match=r"encode_png\(\): `image` must have 1, 2, 3 or 4"):
        pf.image.encode_png(np.zeros((2, 2, 5), dtype))

"""pf.image.resize (every method, antialias, preserve_aspect_ratio), resize_with_pad and TensorFlow 1's resize
functions against tf.image on the same inputs: bit-exact (TensorFlow's CPU kernels are deterministic), for uint8,
int16, float16, float32 and float64 images, single and batched, down to 1x1."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.tensor_ops.image import resize_v1

tf = pytest.importorskip("tensorflow", reason="compared with tf.image (make test installs TensorFlow)")

METHODS = ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"]
DTYPES = [np.uint8, np.int16, np.float16, np.float32, np.float64]


def image(rng, shape, dtype):
    """Pixels over the dtype's image range (0-255 for uint8, 0-1 for floats), with the range's ends."""
    if np.dtype(dtype).kind == "f":
        x = rng.random(shape)
        x.flat[:: max(1, x.size // 3)] = 1.0
        return x.astype(dtype)
    x = rng.integers(0, 256 if dtype == np.uint8 else 30000, shape)
    x.flat[:: max(1, x.size // 3)] = 0
    return x.astype(dtype)


def assert_same(actual, expected):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (actual.shape, expected.shape)
    assert np.array_equal(actual, expected, equal_nan=True), np.nanmax(np.abs(actual.astype(float) - expected))


shapes = st.tuples(st.integers(1, 24), st.integers(1, 24), st.integers(1, 4))
sizes = st.tuples(st.integers(1, 40), st.integers(1, 40))


@settings(max_examples=30, deadline=None)
@given(shape=shapes, size=sizes, method=st.sampled_from(METHODS), antialias=st.booleans(),
       dtype=st.sampled_from(DTYPES), batch=st.sampled_from([0, 1, 2]), seed=st.integers(0, 2**16))  # fmt: skip
def test_resize_is_bit_exact(shape, size, method, antialias, dtype, batch, seed):
    rng = np.random.default_rng(seed)
    x = image(rng, ((batch,) if batch else ()) + shape, dtype)
    actual = pf.image.resize(x, size, method=method, antialias=antialias)
    assert_same(actual, tf.image.resize(tf.constant(x), size, method=method, antialias=antialias))
    assert actual.dtype == (x.dtype if method == "nearest" else np.float32)


@pytest.mark.parametrize("method", METHODS)
def test_resize_photo_sizes_down_and_up(method):
    """A photo-sized image to the sizes preprocessing uses (a large downscale exercises the antialiased spans)."""
    x = image(np.random.default_rng(1), (97, 131, 3), np.uint8)
    for size in [(224, 224), (13, 17), (97, 131)]:
        for antialias in (False, True):
            expected = tf.image.resize(tf.constant(x), size, method=method, antialias=antialias)
            assert_same(pf.image.resize(x, size, method=method, antialias=antialias), expected)


def test_resize_out_of_range_and_negative_floats():
    x = (np.random.default_rng(2).standard_normal((2, 9, 7, 3)) * 1000).astype(np.float32)
    for method in METHODS:
        assert_same(pf.image.resize(x, (5, 11), method), tf.image.resize(tf.constant(x), (5, 11), method))


@settings(max_examples=25, deadline=None)
@given(shape=shapes, size=sizes, method=st.sampled_from(["bilinear", "nearest", "area"]), seed=st.integers(0, 99))
def test_preserve_aspect_ratio_and_resize_with_pad(shape, size, method, seed):
    x = image(np.random.default_rng(seed), shape, np.uint8)
    for call, tf_call in [
        (lambda: pf.image.resize(x, size, method, preserve_aspect_ratio=True),
         lambda: tf.image.resize(tf.constant(x), size, method, preserve_aspect_ratio=True)),
        (lambda: pf.image.resize_with_pad(x, *size, method=method),
         lambda: tf.image.resize_with_pad(tf.constant(x), *size, method=method)),
    ]:  # fmt: skip
        try:
            expected = tf_call()
        except (ValueError, tf.errors.InvalidArgumentError):  # a side rounds to 0
            with pytest.raises(pf.errors.InvalidArgumentError, match="must be positive"):
                call()
            continue
        assert_same(call(), expected)


V1_CENTRES = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel_centers)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, size=sizes, centres=st.sampled_from(V1_CENTRES), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 99))  # fmt: skip
def test_v1_kernels_with_align_corners_and_half_pixel_centers(shape, size, centres, dtype, seed):
    x = image(np.random.default_rng(seed), (2, *shape), dtype)
    align, half = centres
    v1 = tf.compat.v1.image
    for ours, theirs in [(resize_v1.resize_bilinear, v1.resize_bilinear), (resize_v1.resize_bicubic, v1.resize_bicubic),
                         (resize_v1.resize_nearest_neighbor, v1.resize_nearest_neighbor)]:  # fmt: skip
        expected = theirs(tf.constant(x), size, align_corners=align, half_pixel_centers=half)
        assert_same(ours(x, size, align_corners=align, half_pixel_centers=half), expected)
    assert_same(resize_v1.resize_area(x, size, align_corners=align), v1.resize_area(tf.constant(x), size, align))


@pytest.mark.parametrize("method", [0, 1, 2, 3, "bilinear", "area"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_v1_resize_images(method, align_corners):
    x = image(np.random.default_rng(3), (11, 6, 3), np.uint8)
    v1 = tf.compat.v1.image
    for size in [(4, 9), (1, 1), (11, 6)]:  # the same size gives the image back, in its dtype
        expected = v1.resize_images(tf.constant(x), size, method, align_corners)
        assert_same(resize_v1.resize_images(x, size, method, align_corners), expected)
        assert_same(resize_v1.resize(x, size, method, align_corners), expected)
    kept = v1.resize_images(tf.constant(x), (20, 20), method, preserve_aspect_ratio=True)
    assert_same(resize_v1.resize_images(x, (20, 20), method, preserve_aspect_ratio=True), kept)
    padded = v1.resize_image_with_pad(tf.constant(x), 8, 12, method, align_corners)
    assert_same(resize_v1.resize_image_with_pad(x, 8, 12, method, align_corners), padded)


def test_resize_method_constants_are_tensorflows():
    for name in ["BILINEAR", "NEAREST_NEIGHBOR", "BICUBIC", "AREA", "LANCZOS3", "LANCZOS5", "GAUSSIAN",
                 "MITCHELLCUBIC"]:  # fmt: skip
        assert getattr(pf.image.ResizeMethod, name) == getattr(tf.image.ResizeMethod, name)
    for name in ["BILINEAR", "NEAREST_NEIGHBOR", "BICUBIC", "AREA"]:
        assert getattr(resize_v1.ResizeMethod, name) == getattr(tf.compat.v1.image.ResizeMethod, name)
    assert not hasattr(pf.image, "resize_bilinear")  # TensorFlow 1's names live in resize_v1 only


class Pixels(np.ndarray):
    """An ndarray subclass, as some libraries hand images over."""


def test_inputs_that_are_not_plain_arrays():
    x = image(np.random.default_rng(4), (5, 6, 3), np.uint8)
    expected = tf.image.resize(tf.constant(x), (3, 4))
    assert_same(pf.image.resize(x.tolist(), np.array([3, 4])), expected)  # a nested list: int64 pixels, same floats
    subclassed = pf.image.resize(x.view(Pixels), [3, 4])
    assert type(subclassed) is pf.Tensor  # (a result is a Tensor, whatever the input array type)
    assert_same(subclassed, expected)
    assert_same(pf.image.resize(x[None], (np.int64(3), np.int32(4))), expected[None])
    empty = pf.image.resize(np.zeros((0, 5, 6, 3), np.uint8), (3, 4))
    assert empty.shape == (0, 3, 4, 3) and empty.dtype == np.float32


def test_errors_name_the_op_and_the_fix():
    x = np.zeros((5, 6, 3), np.uint8)
    cases = [
        (lambda: pf.image.resize(x[:, :, 0], (2, 2)), r"resize\(\): `images` must be 3-D .* add a channels axis"),
        (lambda: pf.image.resize(x, (2, 2), method="linear"), r"resize\(\): resize method 'linear' is not implemented"),
        (lambda: pf.image.resize(x, (2, 2, 2)), r"`size` must be 1-D with 2 elements"),
        (lambda: pf.image.resize(x, (2.5, 2)), r"`size` must be 1-D with 2 elements"),
        (lambda: pf.image.resize(x, (0, 2)), r"the output size must be positive, got 0x2"),
        (lambda: pf.image.resize(np.zeros((0, 4, 3)), (2, 2)), r"is empty; height, width and channels must be > 0"),
        (lambda: pf.image.resize_with_pad(x, 0, 3), r"resize_with_pad\(\): the target size must be > 0"),
        (lambda: resize_v1.resize_bilinear(x, (2, 2)), r"resize_bilinear\(\): `images` must be 4-D"),
        (lambda: resize_v1.resize_bicubic(x[None], (2, 2), True, half_pixel_centers=True),
         r"if half_pixel_centers is True, align_corners must be False"),
        (lambda: resize_v1.resize_images(x, (2, 2), method=7), r"resize_images\(\): resize method 7 is not implemented"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(pf.errors.InvalidArgumentError, match=message):
            call()
    with pytest.raises(pf.errors.ElementTypeError, match=r"resize\(\): `images` of dtype bool is not supported"):
        pf.image.resize(np.zeros((2, 2, 1), bool), (3, 3))
    # the same inputs fail in TensorFlow (ValueError for the static ones, InvalidArgumentError for the values)
    for call in [lambda: tf.image.resize(x[:, :, 0], (2, 2)), lambda: tf.image.resize(x, (2, 2), method="linear"),
                 lambda: tf.image.resize(x, (0, 2)), lambda: tf.image.resize(np.zeros((0, 4, 3)), (2, 2))]:  # fmt: skip
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            call()

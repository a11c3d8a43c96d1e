"""pf.image's colour and pixel-value ops against tf.image on the same inputs: the adjust_* ops, the colour spaces,
convert_image_dtype, per_image_standardization and total_variation, with the tolerances stated in the modules'
docstrings (0 where TensorFlow's arithmetic is reproduced operation by operation); the random ops by their ranges
and by the deterministic op with the parameter they drew."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.tensor_ops.image import draws

tf = pytest.importorskip("tensorflow", reason="compared with tf.image (make test installs TensorFlow)")

DTYPES = [np.uint8, np.uint16, np.int16, np.float32, np.float64]


def image(rng, shape, dtype, ties=False):
    """Pixels over the dtype's image range (integers' full range, floats 0-1 with the ends), some grey."""
    if np.dtype(dtype).kind == "f":
        x = rng.random(shape)
        x.flat[:: max(1, x.size // 4)] = 1.0
        x.flat[1 :: max(1, x.size // 4)] = 0.0
    else:
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, 0), int(info.max) + 1, shape)
    if ties and shape[-1] == 3:
        x[..., 1] = x[..., 0]
    return x.astype(dtype)


def assert_close(actual, expected, atol=0.0):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if atol == 0:
        assert np.array_equal(actual, expected, equal_nan=True), np.abs(actual.astype(float) - expected).max()
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=0, atol=atol)


shapes = st.one_of(
    st.tuples(st.integers(1, 16), st.integers(1, 16)).map(lambda s: (*s, 3)),
    st.tuples(st.integers(1, 3), st.integers(1, 12), st.integers(1, 12)).map(lambda s: (*s, 3)),
)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, dtype=st.sampled_from(DTYPES), delta=st.floats(-1, 1), factor=st.floats(0, 4),
       ties=st.booleans(), seed=st.integers(0, 2**16))  # fmt: skip
def test_adjust_ops_are_bit_exact(shape, dtype, delta, factor, ties, seed):
    x = image(np.random.default_rng(seed), shape, dtype, ties)
    t = tf.constant(x)
    assert_close(pf.image.adjust_brightness(x, delta), tf.image.adjust_brightness(t, delta))
    assert_close(pf.image.adjust_contrast(x, factor), tf.image.adjust_contrast(t, factor))
    assert_close(pf.image.adjust_saturation(x, factor), tf.image.adjust_saturation(t, factor))
    assert_close(pf.image.adjust_hue(x, delta), tf.image.adjust_hue(t, delta))
    assert_close(pf.image.rgb_to_grayscale(x), tf.image.rgb_to_grayscale(t))


def test_adjust_float_images_out_of_range():
    x = (np.random.default_rng(1).standard_normal((2, 7, 9, 3)) * 2).astype(np.float32)
    t = tf.constant(x)
    assert_close(pf.image.adjust_brightness(x, -0.3), tf.image.adjust_brightness(t, -0.3))
    assert_close(pf.image.adjust_contrast(x, 1.7), tf.image.adjust_contrast(t, 1.7))
    assert_close(pf.image.adjust_saturation(x, 0.4), tf.image.adjust_saturation(t, 0.4))
    assert_close(pf.image.adjust_hue(x, 0.9), tf.image.adjust_hue(t, 0.9))


@pytest.mark.parametrize("dtype", DTYPES)
def test_adjust_gamma(dtype):
    """TensorFlow's pow (Eigen's) and NumPy's differ by an ulp in about a quarter of float32 values: 1 ulp for
    floats, +-1 in a few uint16 / int16 values; uint8 was exact over every value and 600 gamma and gain pairs."""
    x = image(np.random.default_rng(2), (16, 16, 3), dtype)
    for gamma, gain in [(0.5, 1), (2.2, 0.8), (1, 1.3), (0, 1)]:
        expected = tf.image.adjust_gamma(tf.constant(x), gamma, gain)
        atol = 0 if dtype == np.uint8 else 1 if np.dtype(dtype).kind in "iu" else 2.5e-7 * max(1, gain)
        assert_close(pf.image.adjust_gamma(x, gamma, gain), expected, atol)


def test_adjust_gamma_uint8_every_value():
    x = np.arange(256, dtype=np.uint8).reshape(16, 16, 1)
    for gamma in np.linspace(0.1, 3, 12):
        assert_close(pf.image.adjust_gamma(x, gamma), tf.image.adjust_gamma(tf.constant(x), gamma))


def test_float16_images():
    """float16 stays float16 where TensorFlow's CPU computes in half (brightness, gamma, grayscale, HSV); contrast,
    hue and saturation have no CPU half kernel in TensorFlow: parafeed computes them in float32 and rounds."""
    x = image(np.random.default_rng(3), (2, 6, 5, 3), np.float32).astype(np.float16)
    t = tf.constant(x)
    assert_close(pf.image.adjust_brightness(x, 0.1), tf.image.adjust_brightness(t, 0.1))
    assert_close(pf.image.adjust_gamma(x, 1.5), tf.image.adjust_gamma(t, 1.5))
    assert_close(pf.image.rgb_to_grayscale(x), tf.image.rgb_to_grayscale(t))
    assert_close(pf.image.rgb_to_hsv(x), tf.image.rgb_to_hsv(t))
    assert_close(pf.image.hsv_to_rgb(x), tf.image.hsv_to_rgb(t))
    for ours, theirs in [(pf.image.adjust_contrast, tf.image.adjust_contrast), (pf.image.adjust_hue, tf.image.adjust_hue),
                         (pf.image.adjust_saturation, tf.image.adjust_saturation)]:  # fmt: skip
        expected = theirs(tf.constant(x.astype(np.float32)), 0.3).numpy().astype(np.float16)
        assert_close(ours(x, 0.3), expected)


@settings(max_examples=30, deadline=None)
@given(shape=shapes, dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_colour_spaces(shape, dtype, seed):
    x = image(np.random.default_rng(seed), shape, dtype, ties=seed % 2 == 0)
    t = tf.constant(x)
    assert_close(pf.image.rgb_to_hsv(x), tf.image.rgb_to_hsv(t))
    assert_close(pf.image.hsv_to_rgb(x), tf.image.hsv_to_rgb(t))
    # TensorFlow multiplies by the 3x3 matrix in its BLAS's order: within a few ulps
    atol = 5e-7 if dtype == np.float32 else 1e-15
    for ours, theirs in [(pf.image.rgb_to_yuv, tf.image.rgb_to_yuv), (pf.image.yuv_to_rgb, tf.image.yuv_to_rgb),
                         (pf.image.rgb_to_yiq, tf.image.rgb_to_yiq), (pf.image.yiq_to_rgb, tf.image.yiq_to_rgb)]:  # fmt: skip
        assert_close(ours(x), theirs(t), atol)
    back = pf.image.hsv_to_rgb(pf.image.rgb_to_hsv(x))
    np.testing.assert_allclose(back, x, atol=1e-6 if dtype == np.float32 else 1e-12)


def test_grayscale_to_rgb_and_shapes():
    x = image(np.random.default_rng(4), (4, 5, 1), np.uint8)
    assert_close(pf.image.grayscale_to_rgb(x), tf.image.grayscale_to_rgb(tf.constant(x)))
    assert_close(pf.image.grayscale_to_rgb(x[0]), tf.image.grayscale_to_rgb(tf.constant(x[0])))
    assert_close(pf.image.rgb_to_hsv([0.1, 0.5, 0.2]), tf.image.rgb_to_hsv(tf.constant([0.1, 0.5, 0.2])))
    assert pf.image.rgb_to_grayscale(np.zeros((2, 3, 4, 3), np.uint8)).shape == (2, 3, 4, 1)


@pytest.mark.parametrize("src", [np.uint8, np.uint16, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("dst", [np.uint8, np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32])
@pytest.mark.parametrize("saturate", [False, True])
def test_convert_image_dtype(src, dst, saturate):
    rng = np.random.default_rng(5)
    x = (
        (rng.standard_normal((6, 7, 3)) * 0.7 + 0.5).astype(src)
        if np.dtype(src).kind == "f"
        else image(rng, (6, 7, 3), src)
    )
    expected = tf.image.convert_image_dtype(tf.constant(x), dst, saturate=saturate)
    if not saturate and np.dtype(src).kind == "f" and np.dtype(dst).kind in "iu":
        x = np.clip(x, 0, 1)  # out of range floats wrap in a platform's own way without saturate
        expected = tf.image.convert_image_dtype(tf.constant(x), dst)
    assert_close(pf.image.convert_image_dtype(x, dst, saturate=saturate), expected)


def test_per_image_standardization_and_total_variation():
    for dtype in (np.uint8, np.float32):
        x = image(np.random.default_rng(6), (3, 21, 17, 3), dtype)
        expected = tf.image.per_image_standardization(tf.constant(x))
        assert_close(pf.image.per_image_standardization(x), expected, 2e-6)
        assert_close(pf.image.per_image_standardization(x[0]), expected[0], 2e-6)
    flat = np.full((4, 4, 3), 7, np.uint8)  # std 0: divided by 1/sqrt(N) instead
    assert_close(pf.image.per_image_standardization(flat), tf.image.per_image_standardization(tf.constant(flat)))
    for dtype in (np.int8, np.int16, np.int32):  # integers wrap in their dtype, as in TensorFlow
        x = image(np.random.default_rng(7), (2, 9, 8, 3), dtype)
        assert_close(pf.image.total_variation(x), tf.image.total_variation(tf.constant(x)))
        assert_close(pf.image.total_variation(x[0]), tf.image.total_variation(tf.constant(x[0])))
    x = image(np.random.default_rng(8), (2, 30, 40, 3), np.float32)
    expected = tf.image.total_variation(tf.constant(x)).numpy()
    np.testing.assert_allclose(pf.image.total_variation(x), expected, rtol=4e-7)


def draw_state(seed):
    """The state of the generator a seeded op draws from, to replay its draw."""
    return draws.generator(seed).bit_generator.state


def replay(seed, state, low, high):
    gen = draws.generator(seed)
    after = gen.bit_generator.state
    gen.bit_generator.state = state
    value = gen.random(dtype=np.float32) * (np.float32(high) - np.float32(low)) + np.float32(low)
    gen.bit_generator.state = after
    return value


@pytest.mark.parametrize(
    "ours, theirs, args, low, high",
    [
        (pf.image.random_brightness, tf.image.adjust_brightness, (0.3,), -0.3, 0.3),
        (pf.image.random_contrast, tf.image.adjust_contrast, (0.2, 1.8), 0.2, 1.8),
        (pf.image.random_saturation, tf.image.adjust_saturation, (0.5, 1.5), 0.5, 1.5),
        (pf.image.random_hue, tf.image.adjust_hue, (0.25,), -0.25, 0.25),
    ],
)
def test_random_colour_ops_apply_the_op_with_their_draw(ours, theirs, args, low, high):
    x = image(np.random.default_rng(9), (2, 8, 9, 3), np.uint8)
    drawn = []
    for _ in range(5):
        state = draw_state(1234)
        out = ours(x, *args, seed=1234)
        value = replay(1234, state, low, high)
        assert low <= value < high
        assert_close(out, theirs(tf.constant(x), value))
        drawn.append(value)
    assert len(set(drawn)) == 5  # a seeded op gives a sequence, as TensorFlow's op seeds do


def test_random_colour_op_draws_cover_their_range():
    x = np.full((1, 1, 3), 0.5, np.float32)
    deltas = np.array([pf.image.random_brightness(x, 0.2, seed=7)[0, 0, 0] - 0.5 for _ in range(400)])
    assert -0.2 <= deltas.min() < -0.18 and 0.18 < deltas.max() < 0.2 and abs(deltas.mean()) < 0.02


def test_stateless_random_colour_ops():
    x = image(np.random.default_rng(10), (8, 9, 3), np.uint8)
    for op, args in [(pf.image.stateless_random_brightness, (0.3,)), (pf.image.stateless_random_contrast, (0.2, 1.8)),
                     (pf.image.stateless_random_saturation, (0.5, 1.5)), (pf.image.stateless_random_hue, (0.25,))]:  # fmt: skip
        a, b = op(x, *args, seed=(1, 2)), op(x, *args, seed=np.array([1, 2]))
        assert np.array_equal(a, b)
        assert any(not np.array_equal(a, op(x, *args, seed=(i, 3))) for i in range(5))
        with pytest.raises(pf.errors.InvalidArgumentError, match=r"`seed` must be a shape \[2\] integer seed"):
            op(x, *args, seed=3)


def test_errors_name_the_op_and_the_fix():
    rgb = np.zeros((4, 4, 3), np.uint8)
    cases = [
        (lambda: pf.image.adjust_hue(rgb, 1.5), r"adjust_hue\(\): `delta` must be in the interval \[-1, 1\]"),
        (lambda: pf.image.adjust_hue(np.zeros((4, 4, 4)), 0.1), r"adjust_hue\(\): `image` must have 3 channels"),
        (lambda: pf.image.adjust_saturation(rgb[0], 0.1), r"must be at least 3-D"),
        (lambda: pf.image.adjust_contrast(rgb[0], 0.1), r"adjust_contrast\(\): `images` must be at least 3-D"),
        (lambda: pf.image.adjust_contrast(rgb, [1.5]), r"`contrast_factor` must be a scalar"),
        (lambda: pf.image.adjust_gamma(rgb, -1), r"`gamma` must be a non-negative real number"),
        (lambda: pf.image.random_brightness(rgb, -1), r"`max_delta` must be non-negative"),
        (lambda: pf.image.random_hue(rgb, 0.6), r"`max_delta` must be <= 0.5"),
        (lambda: pf.image.random_contrast(rgb, 0.5, 0.5), r"`upper` must be > `lower`"),
        (lambda: pf.image.random_saturation(rgb, -0.5, 0.5), r"`lower` must be non-negative"),
        (lambda: pf.image.grayscale_to_rgb(rgb), r"the last dimension of a grayscale image must be 1"),
        (lambda: pf.image.rgb_to_grayscale(np.zeros((2, 2, 2))), r"must be 3 \(RGB\)"),
        (lambda: pf.image.rgb_to_hsv(np.zeros((2, 2, 4))), r"rgb_to_hsv\(\): the last dimension of `images` must be 3"),
        (lambda: pf.image.total_variation(np.zeros((2, 2))), r"total_variation\(\): `images` must be 3-D"),
        (lambda: pf.image.per_image_standardization(np.zeros((2, 2))), r"must be at least 3-D"),
    ]
    for call, message in cases:
        with pytest.raises(pf.errors.InvalidArgumentError, match=message):
            call()
    for call, message in [(lambda: pf.image.rgb_to_hsv(rgb), r"rgb_to_hsv\(\): `images` of dtype uint8 is not supported"
                           r".*convert it with pf.image.convert_image_dtype"),
                          (lambda: pf.image.rgb_to_yuv(rgb), r"rgb_to_yuv\(\): `images` of dtype uint8"),
                          (lambda: pf.image.total_variation(rgb), r"total_variation\(\): `images` of dtype uint8")]:  # fmt: skip
        with pytest.raises(pf.errors.ElementTypeError, match=message):
            call()

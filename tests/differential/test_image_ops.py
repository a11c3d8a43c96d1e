"""pf.image against tf.image / tf.io on the same inputs, with the tolerances documented in docs/formats.md."""

import cv2
import numpy as np
import pytest

import parafeed as pf
from parafeed.tensor_ops import image as pfi

tf = pytest.importorskip("tensorflow", reason="compared with tf.image (make test installs TensorFlow)")


def photo(h=120, w=160, seed=0):
    """A smooth, photo-like test image: gradients, a few shapes and mild noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (h + w) + 60], axis=2)
    cv2.circle(img, (w // 3, h // 2), h // 4, (250, 40, 40), -1)
    cv2.rectangle(img, (w // 2, h // 5), (w - 10, h // 2), (20, 200, 90), -1)
    img += rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def jpeg(img, quality=90):
    _ok, data = cv2.imencode(".jpg", img[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, quality])
    return data.tobytes()


def png(img):
    _ok, data = cv2.imencode(".png", img[:, :, ::-1] if img.shape[2] == 3 else img)
    return data.tobytes()


@pytest.mark.parametrize("channels", [0, 1, 3])
def test_decode_jpeg_is_bit_exact(channels):
    data = jpeg(photo())
    expected = tf.io.decode_jpeg(data, channels=channels).numpy()
    actual = pfi.decode_jpeg(data, channels=channels)
    assert actual.shape == expected.shape and actual.dtype == np.uint8
    assert np.array_equal(actual, expected)  # same libjpeg-turbo, same (fast integer) inverse DCT


@pytest.mark.parametrize("ratio", [2, 4, 8])
def test_decode_jpeg_dct_ratio(ratio):
    data = jpeg(photo(123, 157))
    expected = tf.io.decode_jpeg(data, ratio=ratio).numpy()
    actual = pfi.decode_jpeg(data, ratio=ratio)
    assert np.array_equal(actual, expected)


def test_decode_jpeg_min_size_uses_the_smallest_dct_scale_that_fits():
    data = jpeg(photo(400, 600))
    image = pfi.decode_jpeg(data, min_size=(100, 100))
    assert image.shape[:2] == (100, 150)  # 1/4 scale: the next step, 1/8, would be 50 x 75
    assert np.array_equal(image, tf.io.decode_jpeg(data, ratio=4).numpy())
    assert pfi.decode_jpeg(data, min_size=(101, 100)).shape[:2] == (200, 300)  # 1/2
    assert pfi.decode_jpeg(data, min_size=(201, 100)).shape[:2] == (400, 600)  # full size


def gray_jpeg(img):
    return cv2.imencode(".jpg", cv2.cvtColor(img[:, :, ::-1], cv2.COLOR_BGR2GRAY))[1].tobytes()


@pytest.mark.parametrize("subsampling", ["420", "422", "444", "gray"])
def test_decode_and_crop_jpeg_gives_tf_pixels(subsampling):
    img = photo(157, 211, seed=3)
    if subsampling == "gray":
        data = gray_jpeg(img)
    else:
        flag = {"420": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420, "422": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422,
                "444": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444}[subsampling]  # fmt: skip
        data = cv2.imencode(".jpg", img[:, :, ::-1], [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, flag])[1].tobytes()
    rng = np.random.default_rng(7)
    for ratio in (1, 2, 4):
        height, width = -(-157 // ratio), -(-211 // ratio)
        for channels in (0, 1, 3):
            for fancy in (True, False):
                y, x = int(rng.integers(0, height - 1)), int(rng.integers(0, width - 1))
                window = [y, x, int(rng.integers(1, height - y + 1)), int(rng.integers(1, width - x + 1))]
                args = dict(channels=channels, ratio=ratio, fancy_upscaling=fancy)
                expected = tf.image.decode_and_crop_jpeg(data, window, **args).numpy()
                actual = pfi.decode_and_crop_jpeg(data, window, **args)
                assert actual.shape == expected.shape and actual.dtype == np.uint8, (window, args)
                assert np.array_equal(actual, expected), (window, args)  # same partial decoding, same pixels
    whole = [0, 0, 157, 211]
    assert np.array_equal(pfi.decode_and_crop_jpeg(data, whole), pfi.decode_jpeg(data))


def test_decode_and_crop_jpeg_errors_name_the_window_and_the_data():
    data = jpeg(photo())
    for window in ([0, 0, 121, 10], [100, 150, 10, 11], [0, 0, 0, 5], [-1, 0, 5, 5]):
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.image.decode_and_crop_jpeg(data, window)
        with pytest.raises(pf.errors.InvalidArgumentError, match=r"does not fit in the 120x160 image"):
            pfi.decode_and_crop_jpeg(data, window)
    with pytest.raises(pf.errors.InvalidArgumentError, match="4 integers"):
        pfi.decode_and_crop_jpeg(data, [0, 0, 5])
    with pytest.raises(pf.errors.InvalidArgumentError, match="not a valid JPEG"):
        pfi.decode_and_crop_jpeg(data[:200], [0, 0, 10, 10])
    with pytest.raises(pf.errors.InvalidArgumentError, match="not a valid JPEG"):
        pfi.decode_and_crop_jpeg(b"not a jpeg at all", [0, 0, 1, 1])
    truncated = data[: len(data) * 2 // 3]  # the window's rows are past the end: found while decoding
    with pytest.raises(pf.errors.InvalidArgumentError, match="Premature end of JPEG file"):
        pfi.decode_and_crop_jpeg(truncated, [100, 0, 20, 20])
    assert pfi.decode_and_crop_jpeg(truncated, [100, 0, 20, 20], try_recover_truncated=True).shape == (20, 20, 3)


@pytest.mark.parametrize("channels", [0, 1, 3, 4])
def test_decode_png(channels):
    rgb = photo()
    data = png(rgb)
    expected = tf.io.decode_png(data, channels=channels).numpy()
    actual = pfi.decode_png(data, channels=channels)
    assert actual.shape == expected.shape
    tolerance = 1 if channels == 1 else 0  # RGB -> gray: libpng's weights vs ours
    assert np.abs(actual.astype(int) - expected).max() <= tolerance


@pytest.mark.parametrize("op", ["decode_png", "decode_jpeg"])
def test_decode_png_and_jpeg_decode_the_other_formats_too(op):
    rgb = photo()
    rgba = np.concatenate([rgb, rgb[:, :, :1]], axis=2)
    for data in [jpeg(rgb), png(rgb), png(rgba), cv2.imencode(".bmp", rgb[:, :, ::-1])[1].tobytes()]:
        for channels in (0, 1, 3, 4):
            try:
                expected = getattr(tf.io, op)(data, channels=channels).numpy()
            except tf.errors.InvalidArgumentError:
                with pytest.raises(pf.errors.InvalidArgumentError):
                    getattr(pfi, op)(data, channels=channels)
                continue
            actual = getattr(pfi, op)(data, channels=channels)
            assert actual.shape == expected.shape, (op, data[:4], channels)
            assert np.abs(actual.astype(int) - expected).max() <= (1 if channels == 1 else 0), (op, data[:4], channels)


def test_decode_png_16_bit_and_gray():
    img16 = np.arange(60 * 80, dtype=np.uint16).reshape(60, 80, 1) * 13
    _ok, data = cv2.imencode(".png", img16)
    expected = tf.io.decode_png(data.tobytes(), dtype=tf.uint16).numpy()
    np.testing.assert_array_equal(pfi.decode_png(data.tobytes(), dtype=np.uint16), expected)


def test_decode_image_formats():
    rgb = photo()
    for data in [jpeg(rgb), png(rgb), cv2.imencode(".bmp", rgb[:, :, ::-1])[1].tobytes()]:
        expected = tf.io.decode_image(data).numpy()
        actual = pfi.decode_image(data)
        assert actual.shape == expected.shape
        assert np.abs(actual.astype(int) - expected).max() <= 1
    as_float = pfi.decode_image(png(rgb), dtype=np.float32)
    np.testing.assert_allclose(as_float, tf.io.decode_image(png(rgb), dtype=tf.float32).numpy(), atol=1e-6)


@pytest.mark.parametrize("size", [(224, 224), (60, 80), (31, 47), (300, 250)])
@pytest.mark.parametrize("method, atol", [("bilinear", 0.002), ("area", 0.01), ("nearest", 0)])
def test_resize(size, method, atol):
    img = photo()
    expected = tf.image.resize(img, size, method=method).numpy()
    actual = pfi.resize(img, size, method=method)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    assert np.abs(actual.astype(np.float64) - expected).max() <= atol  # on a 0..255 scale


def test_resize_batch_and_aspect_ratio():
    batch = np.stack([photo(seed=i) for i in range(3)])
    np.testing.assert_allclose(pfi.resize(batch, (50, 60)), tf.image.resize(batch, (50, 60)).numpy(), atol=0.02)
    kept = pfi.resize(photo(), (100, 100), preserve_aspect_ratio=True)
    assert kept.shape == tf.image.resize(photo(), (100, 100), preserve_aspect_ratio=True).shape


@pytest.mark.parametrize("fraction", [0.5, 0.33, 0.875, 1.0])
def test_central_crop_matches_exactly(fraction):
    img = photo(121, 97)
    np.testing.assert_array_equal(pfi.central_crop(img, fraction), tf.image.central_crop(img, fraction).numpy())


@pytest.mark.parametrize("src, dst", [(np.uint8, np.float32), (np.float32, np.uint8), (np.uint8, np.uint16),
                                      (np.uint16, np.uint8), (np.uint8, np.int32), (np.float32, np.float64)])  # fmt: skip
def test_convert_image_dtype_matches_exactly(src, dst):
    img = photo().astype(src) if src != np.float32 else photo().astype(np.float32) / 255
    expected = tf.image.convert_image_dtype(img, dst).numpy()
    np.testing.assert_array_equal(pfi.convert_image_dtype(img, dst), expected)


def test_per_image_standardization():
    img = photo()
    np.testing.assert_allclose(
        pfi.per_image_standardization(img), tf.image.per_image_standardization(img).numpy(), atol=1e-5
    )
    flat = np.full((4, 4, 3), 7, np.uint8)  # std 0: divided by 1/sqrt(N) instead
    np.testing.assert_allclose(pfi.per_image_standardization(flat), tf.image.per_image_standardization(flat).numpy())


def test_random_ops_shapes_and_seeds():
    img = photo()
    crop = pfi.stateless_random_crop(img, (50, 60, 3), seed=(1, 2))
    assert crop.shape == (50, 60, 3)
    np.testing.assert_array_equal(crop, pfi.stateless_random_crop(img, (50, 60, 3), seed=(1, 2)))
    flips = {bool(pfi.stateless_random_flip_left_right(img, seed=(i, 0))[0, 0, 0] == img[0, -1, 0]) for i in range(20)}
    assert flips == {True, False}
    rng = np.random.default_rng(0)
    crops = {tuple(pfi.random_crop(img, (10, 10, 3), rng=rng)[0, 0].tolist()) for _ in range(20)}
    assert len(crops) > 1
    with pytest.raises(pf.errors.InvalidArgumentError, match="cannot crop"):
        pfi.random_crop(img, (500, 10, 3))


def test_decode_errors_are_clear():
    with pytest.raises(pf.errors.InvalidArgumentError, match="not a valid JPEG"):
        pfi.decode_jpeg(b"\xff\xd8\xff garbage")
    with pytest.raises(pf.errors.InvalidArgumentError, match="unknown image format"):
        pfi.decode_image(b"hello world")
    with pytest.raises(pf.errors.InvalidArgumentError, match="corrupt or truncated"):
        pfi.decode_png(png(photo())[:60])

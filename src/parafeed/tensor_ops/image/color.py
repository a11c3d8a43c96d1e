"""Colour: ``adjust_brightness`` / ``contrast`` / ``saturation`` / ``hue`` / ``gamma``, their ``random_*`` and
``stateless_random_*`` forms, and the colour-space conversions (``rgb_to_hsv``, ``hsv_to_rgb``,
``rgb_to_grayscale``, ``grayscale_to_rgb``, ``rgb_to_yuv``, ``yuv_to_rgb``, ``rgb_to_yiq``, ``yiq_to_rgb``), like
tf.image.

The ``adjust_*`` ops convert as TensorFlow does: float16 and float32 images are adjusted as they are, every other
dtype is converted to float32 with :func:`convert_image_dtype` (integers to [0, 1]), adjusted, and converted back
(brightness, contrast and gamma saturate, hue and saturation do not). TensorFlow's CPU has no float16 kernel for
contrast, hue and saturation (it fails); parafeed adjusts a float16 image in float32 and rounds the result.

The per-pixel arithmetic follows TensorFlow's kernels operation by operation in float32 (the channel means of
``adjust_contrast`` summed in TensorFlow's order, by folding the pixels in halves), so most results are bit-exact.
Two are not: TensorFlow's ``pow`` (Eigen's) rounds differently from NumPy's in about a quarter of the values, and it
multiplies by the YUV / YIQ matrices in its BLAS's order. Measured max abs error against tf.image
(tests/differential/test_image_color.py), on 0-255 (uint8) and 0-1 (float32) images:

| op | uint8 | float32 |
|---|---|---|
| adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation | 0 | 0 |
| adjust_gamma | 0 (every value, 600 gamma / gain pairs) | 2.4e-7 (1 ulp); uint16 / int16: +-1 in 0.06% |
| rgb_to_grayscale | 0 | 0 |
| rgb_to_hsv, hsv_to_rgb (float dtypes only) | - | 0 (float16 and float64 too) |
| rgb_to_yuv, yuv_to_rgb, rgb_to_yiq, yiq_to_rgb (float dtypes only) | - | 4.8e-7 |

The random ops draw their parameter (uniformly, as TensorFlow) from :mod:`parafeed.tensor_ops.image.draws` and
apply the deterministic op with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.tensor_ops.image import checks, draws
from parafeed.tensor_ops.image.pixels import convert_image_dtype

F32 = np.float32


def _as_float(x: np.ndarray) -> np.ndarray:
    """TensorFlow's rule for the adjust ops: float16 and float32 stay, the rest become float32 in [0, 1]."""
    return x if x.dtype in (np.float16, np.float32) else convert_image_dtype(x, F32)


def _color_image(op: str, image: Any) -> np.ndarray:
    """An image the per-pixel colour kernels take: at least 3-D, three channels."""
    x = checks.dtype(op, checks.array(op, image), checks.REALS)
    if x.ndim < 3:
        raise InvalidArgumentError(f"{op}: `image` must be at least 3-D (height, width, 3), got shape {x.shape}")
    if x.shape[-1] != 3:
        raise InvalidArgumentError(f"{op}: `image` must have 3 channels (RGB), got shape {x.shape}")
    return x


def _factor(op: str, value: Any, name: str) -> np.float32:
    x = np.asarray(value)
    if x.ndim != 0:
        raise InvalidArgumentError(f"{op}: `{name}` must be a scalar, got shape {x.shape}")
    return F32(checks.number(op, value, name))


def adjust_brightness(image: Any, delta: Any) -> np.ndarray:
    """Add ``delta`` to every value (on the [0, 1] scale for integer images), like tf.image.adjust_brightness."""
    op = "adjust_brightness()"
    x = checks.dtype(op, checks.array(op, image), checks.REALS)
    shift = checks.array(op, delta, "delta")  # a Python float is float32 first, as TensorFlow converts it
    if shift.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"{op}: `delta` must be a number, got {delta!r}")
    flt = _as_float(x)
    adjusted = flt + shift.astype(flt.dtype)
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> np.ndarray:
    """``(x - mean) * contrast_factor + mean`` per channel of each image (the mean over height and width), like
    tf.image.adjust_contrast."""
    op = "adjust_contrast()"
    x = checks.dtype(op, checks.array(op, images, "images"), checks.REALS, "images")
    if x.ndim < 3:
        raise InvalidArgumentError(f"{op}: `images` must be at least 3-D (height, width, channels), got {x.shape}")
    factor = _factor(op, contrast_factor, "contrast_factor")
    flt = _as_float(x)
    adjusted = _contrast(flt.astype(F32, copy=False), factor).astype(flt.dtype, copy=False)
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def _contrast(x: np.ndarray, factor: np.float32) -> np.ndarray:
    """AdjustContrastv2: each image's channel means summed by folding the pixels in halves (TensorFlow's order),
    then ``mean + factor * (x - mean)``."""
    if x.size == 0:
        return x.copy()
    h, w, c = x.shape[-3:]
    size = h * w
    planes = x.reshape(-1, size, c)
    right = size // 2
    left = size - right
    sums = np.empty((planes.shape[0], left, c), F32)
    np.add(planes[:, left:], planes[:, :right], out=sums[:, :right])
    if left > right:
        sums[:, right] = planes[:, right]
    remaining = left
    while remaining > 1:
        right = remaining // 2
        left = remaining - right
        sums[:, :right] += sums[:, left:remaining]
        remaining = left
    mean = sums[:, 0] * (F32(1) / F32(size))
    means = np.tile(mean, size)  # the means along whole rows: NumPy's loops then run along them, not over channels
    out = planes.reshape(len(planes), -1) - means
    out *= factor
    out += means
    return out.reshape(x.shape)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> np.ndarray:
    """``gain * x ** gamma`` (on the [0, 1] scale for integer images), like tf.image.adjust_gamma."""
    op = "adjust_gamma()"
    x = checks.dtype(op, checks.array(op, image), checks.REALS)
    if checks.number(op, gamma, "gamma") < 0:
        raise InvalidArgumentError(f"{op}: `gamma` must be a non-negative real number, got {gamma}")
    flt = _as_float(x)
    t = flt.dtype.type
    adjusted = t(checks.number(op, gain, "gain")) * flt ** t(checks.number(op, gamma, "gamma"))
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def adjust_hue(image: Any, delta: Any, name: Any = None) -> np.ndarray:
    """Rotate the hue by ``delta`` turns (in [-1, 1]), like tf.image.adjust_hue: saturation and value are kept."""
    op = "adjust_hue()"
    shift = checks.number(op, delta, "delta")
    if not -1 <= shift <= 1:
        raise InvalidArgumentError(f"{op}: `delta` must be in the interval [-1, 1], got {delta}")
    x = _color_image(op, image)
    flt = _as_float(x)
    adjusted = _blocks(flt.astype(F32, copy=False), _hue, _factor(op, delta, "delta")).astype(flt.dtype, copy=False)
    return convert_image_dtype(adjusted, x.dtype)


# The sextant of the hue from the comparisons (r < g, b < r, b > g, b < g, b > r) as a 5-bit code: TensorFlow's
# six orderings of r, g, b, ties going to either side as in its kernel.
_SEXTANT = np.array(
    [(1 if b_r else 3 if b_g else 2) if r_g else (0 if c_g else 4 if c_r else 5)
     for r_g in (0, 1) for b_r in (0, 1) for b_g in (0, 1) for c_g in (0, 1) for c_r in (0, 1)],
    np.uint8,
)  # fmt: skip
_ODD = np.array([0, 1, 0, 1, 0, 1, 0], bool)
# Which of (max, mid, min) each output channel (r, g, b) takes, per sextant
_HUE_ROLES = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0], [1, 2, 0], [0, 2, 1]], np.uint8)
_BLOCK = 32768  # pixels per block: the temporaries of a block stay in the caches


def _blocks(x: np.ndarray, kernel: Any, parameter: np.float32) -> np.ndarray:
    """``kernel`` over blocks of pixels of ``x`` (``(..., 3)`` float32), into one output."""
    flat = x.reshape(-1, 3)
    out = np.empty(flat.shape, F32)
    for start in range(0, len(flat), _BLOCK):
        block = flat[start : start + _BLOCK]
        kernel(*(np.ascontiguousarray(block[:, i]) for i in range(3)), parameter, out[start : start + _BLOCK])
    return out.reshape(x.shape)


def _hue(r: np.ndarray, g: np.ndarray, b: np.ndarray, delta: np.float32, out: np.ndarray) -> None:
    """AdjustHue on a block: each pixel to (hue in [0, 6), min, max), the hue moved, back to RGB; in float32,
    operation by operation as TensorFlow's kernel."""
    u8 = np.uint8
    code = (r < g).view(u8) << 4
    code |= (b < r).view(u8) << 3
    code |= (b > g).view(u8) << 2
    code |= (b < g).view(u8) << 1
    code |= (b > r).view(u8)
    sextant = _SEXTANT.take(code)
    v_max = np.maximum(np.maximum(r, g), b)
    v_min = np.minimum(np.minimum(r, g), b)
    v_mid = np.maximum(np.minimum(r, g), np.minimum(np.maximum(r, g), b))
    span = v_max - v_min
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (v_mid - v_min) / span
    hue = sextant.astype(F32)
    hue += np.where(_ODD.take(sextant), F32(1) - ratio, ratio)
    hue[v_max == v_min] = 0
    hue += delta * F32(6)
    hue = np.where(hue < 0, hue + F32(6), hue)  # hue + delta * 6 is in [-6, 12)
    hue = np.where(hue >= 6, hue - F32(6), hue)
    sextant = np.minimum(hue.astype(u8), u8(5))
    fraction = hue - sextant
    fraction = np.where(_ODD.take(sextant), F32(1) - fraction, fraction)
    mid = v_min + fraction * span
    for channel in range(3):
        role = _HUE_ROLES[:, channel].take(sextant)
        out[:, channel] = np.where(role == 0, v_max, np.where(role == 1, mid, v_min))


def adjust_saturation(image: Any, saturation_factor: Any, name: Any = None) -> np.ndarray:
    """Multiply the saturation by ``saturation_factor`` (clipped to [0, 1]), like tf.image.adjust_saturation."""
    op = "adjust_saturation()"
    x = _color_image(op, image)
    factor = _factor(op, saturation_factor, "saturation_factor")
    flt = _as_float(x)
    adjusted = _blocks(flt.astype(F32, copy=False), _saturation, factor).astype(flt.dtype, copy=False)
    return convert_image_dtype(adjusted, x.dtype)


# Per sextant of the hue (6: a hue of exactly 1, TensorFlow's default case), which of (c, x, 0) r, g, b take.
_SATURATION_ROLES = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0], [1, 2, 0], [0, 2, 1], [2, 2, 2]], np.uint8)
_HUE_OFFSETS = np.array([0.0, 2.0 / 6.0, 4.0 / 6.0])  # added in double, as TensorFlow's kernel adds them


def _saturation(r: np.ndarray, g: np.ndarray, b: np.ndarray, factor: np.float32, out: np.ndarray) -> None:
    """AdjustSaturation on a block: its own RGB -> HSV, the saturation scaled and clipped, HSV -> RGB; in float32,
    operation by operation as TensorFlow's kernel."""
    v = np.maximum(r, np.maximum(g, b))
    span = v - np.minimum(r, np.minimum(g, b))
    red, green = r == v, g == v
    sector = np.where(red, 0, np.where(green, 1, 2))
    difference = np.where(red, g - b, np.where(green, b - r, r - g))
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, span / v, F32(0))
        hue = ((F32(1) / (F32(6) * span)) * difference).astype(np.float64)
    hue += _HUE_OFFSETS.take(sector)
    hue32 = hue.astype(F32)
    hue32[span <= 0] = 0
    hue32 = np.where(hue32 < 0, hue32 + F32(1), hue32)
    s = np.minimum(F32(1), np.maximum(F32(0), s * factor))
    c = s * v
    m = v - c
    dh = hue32 * F32(6)
    sextant = np.where((dh >= 0) & (dh < 6), dh, F32(6)).astype(np.uint8)
    # the remainder of dh by 2 (TensorFlow subtracts 2 until it is below 2: exact, as fmod is)
    x = c * (F32(1) - np.abs(np.fmod(dh, F32(2)) - F32(1)))
    zero = np.zeros_like(c)
    for channel in range(3):
        role = _SATURATION_ROLES[:, channel].take(sextant)
        out[:, channel] = np.where(role == 0, c, np.where(role == 1, x, zero))
        out[:, channel] += m


def _uniform(gen: np.random.Generator, low: float, high: float) -> np.float32:
    """A float32 uniform in [low, high), as TensorFlow's random_uniform makes it from a draw in [0, 1)."""
    return gen.random(dtype=F32) * (F32(high) - F32(low)) + F32(low)


def _check_delta(op: str, max_delta: Any, limit: float | None = None) -> float:
    value = checks.number(op, max_delta, "max_delta")
    if limit is not None and value > limit:
        raise InvalidArgumentError(f"{op}: `max_delta` must be <= {limit}, got {max_delta}")
    if value < 0:
        raise InvalidArgumentError(f"{op}: `max_delta` must be non-negative, got {max_delta}")
    return value


def _check_range(op: str, lower: Any, upper: Any) -> tuple[float, float]:
    low, high = checks.number(op, lower, "lower"), checks.number(op, upper, "upper")
    if high <= low:
        raise InvalidArgumentError(f"{op}: `upper` must be > `lower`, got lower={lower}, upper={upper}")
    if low < 0:
        raise InvalidArgumentError(f"{op}: `lower` must be non-negative, got {lower}")
    return low, high


def random_brightness(image: Any, max_delta: Any, seed: int | None = None) -> np.ndarray:
    """``adjust_brightness`` by a delta drawn uniformly from [-max_delta, max_delta), like
    tf.image.random_brightness."""
    d = _check_delta("random_brightness()", max_delta)
    return adjust_brightness(image, _uniform(draws.generator(seed), -d, d))


def stateless_random_brightness(image: Any, max_delta: Any, seed: Any) -> np.ndarray:
    """``random_brightness`` fixed by ``seed=(a, b)``."""
    op = "stateless_random_brightness()"
    d = _check_delta(op, max_delta)
    return adjust_brightness(image, _uniform(draws.stateless_generator(op, seed), -d, d))


def random_contrast(image: Any, lower: Any, upper: Any, seed: int | None = None) -> np.ndarray:
    """``adjust_contrast`` by a factor drawn uniformly from [lower, upper), like tf.image.random_contrast."""
    low, high = _check_range("random_contrast()", lower, upper)
    return adjust_contrast(image, _uniform(draws.generator(seed), low, high))


def stateless_random_contrast(image: Any, lower: Any, upper: Any, seed: Any) -> np.ndarray:
    """``random_contrast`` fixed by ``seed=(a, b)``."""
    op = "stateless_random_contrast()"
    low, high = _check_range(op, lower, upper)
    return adjust_contrast(image, _uniform(draws.stateless_generator(op, seed), low, high))


def random_saturation(image: Any, lower: Any, upper: Any, seed: int | None = None) -> np.ndarray:
    """``adjust_saturation`` by a factor drawn uniformly from [lower, upper), like tf.image.random_saturation."""
    low, high = _check_range("random_saturation()", lower, upper)
    return adjust_saturation(image, _uniform(draws.generator(seed), low, high))


def stateless_random_saturation(image: Any, lower: Any, upper: Any, seed: Any = None) -> np.ndarray:
    """``random_saturation`` fixed by ``seed=(a, b)``."""
    op = "stateless_random_saturation()"
    low, high = _check_range(op, lower, upper)
    return adjust_saturation(image, _uniform(draws.stateless_generator(op, seed), low, high))


def random_hue(image: Any, max_delta: Any, seed: int | None = None) -> np.ndarray:
    """``adjust_hue`` by a delta drawn uniformly from [-max_delta, max_delta), ``max_delta <= 0.5``, like
    tf.image.random_hue."""
    d = _check_delta("random_hue()", max_delta, 0.5)
    return adjust_hue(image, _uniform(draws.generator(seed), -d, d))


def stateless_random_hue(image: Any, max_delta: Any, seed: Any) -> np.ndarray:
    """``random_hue`` fixed by ``seed=(a, b)``."""
    op = "stateless_random_hue()"
    d = _check_delta(op, max_delta, 0.5)
    return adjust_hue(image, _uniform(draws.stateless_generator(op, seed), -d, d))


# ---------------------------------------------------------------------------------------------- colour spaces


def _float_rgb(op: str, images: Any) -> np.ndarray:
    x = checks.dtype(op, checks.array(op, images, "images"), checks.FLOATS, "images")
    if x.ndim < 1 or x.shape[-1] != 3:
        raise InvalidArgumentError(f"{op}: the last dimension of `images` must be 3 (the channels), got {x.shape}")
    return x


def rgb_to_hsv(images: Any, name: Any = None) -> np.ndarray:
    """RGB in [0, 1] to HSV in [0, 1] (float dtypes only), like tf.image.rgb_to_hsv, in the images' dtype."""
    x = _float_rgb("rgb_to_hsv()", images)
    t = x.dtype.type
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    span = v - np.minimum(np.minimum(r, g), b)
    out = np.empty_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[..., 1] = np.where(v > t(0), span / v, t(0))
        norm = (t(1) / span) * (t(1) / t(6))
        hue = np.where(
            r == v, norm * (g - b), np.where(g == v, norm * (b - r) + t(2) / t(6), norm * (r - g) + t(4) / t(6))
        )
    hue = np.where(span > t(0), hue, t(0))
    out[..., 0] = np.where(hue < t(0), hue + t(1), hue)
    out[..., 2] = v
    return out


def hsv_to_rgb(images: Any, name: Any = None) -> np.ndarray:
    """HSV in [0, 1] to RGB (float dtypes only), like tf.image.hsv_to_rgb, in the images' dtype."""
    x = _float_rgb("hsv_to_rgb()", images)
    t = x.dtype.type
    h, s, v = x[..., 0], x[..., 1], x[..., 2]
    dh = h * t(6)

    def clip(value: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(value, t(0)), t(1))

    one_s = -s + t(1)
    out = np.empty_like(x)
    out[..., 0] = (one_s + s * clip(np.abs(dh - t(3)) - t(1))) * v
    out[..., 1] = (one_s + s * clip(-np.abs(dh - t(2)) + t(2))) * v
    out[..., 2] = (one_s + s * clip(-np.abs(dh - t(4)) + t(2))) * v
    return out


_GRAY = np.array([0.2989, 0.5870, 0.1140], F32)


def rgb_to_grayscale(images: Any, name: Any = None) -> np.ndarray:
    """One channel ``0.2989 R + 0.5870 G + 0.1140 B`` (computed in float32, converted back to the images' dtype),
    like tf.image.rgb_to_grayscale."""
    op = "rgb_to_grayscale()"
    x = checks.dtype(op, checks.array(op, images, "images"), checks.REALS, "images")
    if x.ndim < 1 or x.shape[-1] != 3:
        raise InvalidArgumentError(f"{op}: the last dimension of `images` must be 3 (RGB), got shape {x.shape}")
    flt = convert_image_dtype(x, F32)
    gray = (flt[..., 0] * _GRAY[0] + flt[..., 1] * _GRAY[1]) + flt[..., 2] * _GRAY[2]
    return convert_image_dtype(gray[..., None], x.dtype)


def grayscale_to_rgb(images: Any, name: Any = None) -> np.ndarray:
    """The one channel repeated three times, like tf.image.grayscale_to_rgb."""
    op = "grayscale_to_rgb()"
    x = checks.array(op, images, "images")
    if x.ndim < 2:
        raise InvalidArgumentError(f"{op}: a grayscale image must be at least 2-D (..., 1), got shape {x.shape}")
    if x.shape[-1] != 1:
        raise InvalidArgumentError(f"{op}: the last dimension of a grayscale image must be 1, got shape {x.shape}")
    return np.repeat(x, 3, axis=-1)


_RGB_TO_YUV: list[list[float]] = [
    [0.299, -0.14714119, 0.61497538],
    [0.587, -0.28886916, -0.51496512],
    [0.114, 0.43601035, -0.10001026],
]
_YUV_TO_RGB: list[list[float]] = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]
_RGB_TO_YIQ: list[list[float]] = [
    [0.299, 0.59590059, 0.2115],
    [0.587, -0.27455667, -0.52273617],
    [0.114, -0.32134392, 0.31119955],
]
_YIQ_TO_RGB: list[list[float]] = [
    [1, 1, 1],
    [0.95598634, -0.27201283, -1.10674021],
    [0.6208248, -0.64720424, 1.70423049],
]


def _mix(op: str, images: Any, matrix: list[list[float]]) -> np.ndarray:
    x = _float_rgb(op, images)
    return np.matmul(x, np.asarray(matrix, x.dtype))


def rgb_to_yuv(images: Any) -> np.ndarray:
    """RGB in [0, 1] to YUV (float dtypes), like tf.image.rgb_to_yuv."""
    return _mix("rgb_to_yuv()", images, _RGB_TO_YUV)


def yuv_to_rgb(images: Any) -> np.ndarray:
    """YUV to RGB (float dtypes), like tf.image.yuv_to_rgb."""
    return _mix("yuv_to_rgb()", images, _YUV_TO_RGB)


def rgb_to_yiq(images: Any) -> np.ndarray:
    """RGB in [0, 1] to YIQ (float dtypes), like tf.image.rgb_to_yiq."""
    return _mix("rgb_to_yiq()", images, _RGB_TO_YIQ)


def yiq_to_rgb(images: Any) -> np.ndarray:
    """YIQ to RGB (float dtypes), like tf.image.yiq_to_rgb."""
    return _mix("yiq_to_rgb()", images, _YIQ_TO_RGB)

"""Pixel values: ``convert_image_dtype`` (TensorFlow's scaling between integer and float images, bit-exact),
``per_image_standardization``, ``total_variation`` and parafeed's ``normalize``.

Tolerances against tf.image (max abs error, measured by tests/differential/test_image_color.py):
``convert_image_dtype`` 0 (bit-exact); ``per_image_standardization`` 2e-6 on the standardised values (the mean and
the deviation are sums in another order than Eigen's); ``total_variation`` 0 for integer images, 4e-7 relative for
float images (the same reason).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.tensor_ops.image import checks


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False) -> np.ndarray:
    """Convert between image dtypes with TensorFlow's scaling (integers span [0, max], floats [0, 1]), exactly as
    tf.image.convert_image_dtype does: integer to integer by a power of two, integer to float by ``1 / max``, float
    to integer by ``max + 0.5`` and truncation, float to float by a cast. ``saturate`` clamps to the target's range
    first (as ``tf.saturate_cast``), so values out of it do not wrap."""
    op = "convert_image_dtype()"
    image = checks.array(op, image)
    src, dst = image.dtype, np.dtype(dtype)
    if dst.kind not in "iuf" or src.kind not in "iuf":
        raise ElementTypeError(
            f"{op}: only integer and float dtypes convert, got {src} -> {dst}; cast booleans with astype first"
        )
    if src == dst:
        return image
    if src.kind in "iu" and dst.kind in "iu":
        scale_in, scale_out = int(np.iinfo(src).max), int(np.iinfo(dst).max)
        if scale_in > scale_out:
            return cast(image // src.type((scale_in + 1) // (scale_out + 1)), dst, saturate)
        return cast(image, dst, saturate) * dst.type((scale_out + 1) // (scale_in + 1))
    if src.kind == "f" and dst.kind == "f":
        return image.astype(dst)
    if src.kind in "iu":
        with np.errstate(over="ignore", invalid="ignore"):  # int32 to float16 overflows to inf, as in TensorFlow
            return image.astype(dst) * dst.type(1.0 / np.iinfo(src).max)
    return cast(image * src.type(np.iinfo(dst).max + 0.5), dst, saturate)


def cast(x: np.ndarray, dtype: np.dtype, saturate: bool = False) -> np.ndarray:
    """``x.astype(dtype)`` as tf.cast does it (floats truncate toward zero); with ``saturate``, as tf.saturate_cast:
    clamped first to the target's range as the source dtype holds it (the largest float32 not above int32's max is
    2147483520, not 2147483647, which float32 rounds up past the range)."""
    if saturate:
        low, high = _saturate_limits(x.dtype, np.dtype(dtype))
        x = np.clip(x, low, high)
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(dtype)


def _saturate_limits(src: np.dtype, dst: np.dtype) -> tuple[Any, Any]:
    """The bounds tf.saturate_cast clamps to: the target's range in the source dtype, each moved one step toward
    zero where the source dtype rounds it out of the range."""
    info_in = np.finfo(src) if src.kind == "f" else np.iinfo(src)
    info_out = np.finfo(dst) if dst.kind == "f" else np.iinfo(dst)
    try:
        common = np.promote_types(src, dst)
    except TypeError:
        common = np.dtype(float)
    with np.errstate(over="ignore"):
        low = src.type(max(info_in.min, info_out.min))
        high = src.type(min(float(info_in.max), float(info_out.max)))
        if src.kind == "f" and np.array([low, info_out.min], common)[0] < info_out.min:
            low = np.nextafter(low, src.type(0))
        if src.kind == "f" and np.array([high, info_out.max], common)[0] > np.array(info_out.max, common):
            high = np.nextafter(high, src.type(0))
    return low, high


def per_image_standardization(image: Any) -> np.ndarray:
    """``(x - mean) / max(std, 1 / sqrt(N))`` over each image's ``N = height * width * channels`` values, float32,
    like tf.image.per_image_standardization (the values are not scaled to [0, 1] first)."""
    op = "per_image_standardization()"
    x = checks.array(op, image)
    if x.ndim < 3:
        raise InvalidArgumentError(f"{op}: `image` must be at least 3-D (height, width, channels), got shape {x.shape}")
    if 0 in x.shape[-3:]:
        raise InvalidArgumentError(f"{op}: `image` of shape {x.shape} is empty; height, width and channels must be > 0")
    checks.dtype(op, x, (*checks.REALS, "bool", "uint32", "uint64"))
    x = x.astype(np.float32)
    axes = (-3, -2, -1)
    n = math.prod(x.shape[-3:])
    mean = x.mean(axis=axes, keepdims=True, dtype=np.float32)
    std = np.maximum(x.std(axis=axes, keepdims=True, dtype=np.float32), np.float32(1.0 / math.sqrt(n)))
    return ((x - mean) / std).astype(np.float32)


def total_variation(images: Any) -> np.ndarray:
    """The sum of absolute differences between neighbouring pixels, down and across, in the images' dtype (integers
    wrap around as TensorFlow's do): a scalar for one 3-D image, one value per image for a 4-D batch, like
    tf.image.total_variation."""
    op = "total_variation()"
    x = checks.array(op, images, "images")
    if x.ndim not in (3, 4):
        raise InvalidArgumentError(
            f"{op}: `images` must be 3-D (height, width, channels) or 4-D (batch, height, width, channels), "
            f"got shape {x.shape}"
        )
    checks.dtype(op, x, ("int8", "int16", "int32", "int64", *checks.FLOATS), "images")
    axes = None if x.ndim == 3 else (1, 2, 3)
    with np.errstate(over="ignore"):
        down = np.abs(np.diff(x, axis=-3)).sum(axis=axes, dtype=x.dtype)
        across = np.abs(np.diff(x, axis=-2)).sum(axis=axes, dtype=x.dtype)
        return np.asarray(down + across, dtype=x.dtype)


def normalize(image: Any, mean: Any, std: Any) -> np.ndarray:
    """``(x - mean) / std`` per channel, float32 (e.g. ImageNet's mean and std on [0, 1] images); parafeed's own,
    TensorFlow has no such op."""
    mean = np.asarray(mean, np.float32)
    std = np.asarray(std, np.float32)
    if np.any(std == 0):
        raise InvalidArgumentError("normalize(): `std` must not contain 0")
    return (np.asarray(image, np.float32) - mean) / std

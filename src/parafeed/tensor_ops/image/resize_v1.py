"""TensorFlow 1's resize functions (tf.compat.v1.image): ``resize_images`` (also ``resize``), ``resize_bilinear``,
``resize_bicubic``, ``resize_nearest_neighbor``, ``resize_area``, ``resize_image_with_pad`` and the integer
``ResizeMethod``, with ``align_corners`` and ``half_pixel_centers``.

These names are for ``pf.compat.v1.image``; ``pf.image`` exports TensorFlow 2's. The differences from TensorFlow 2:
no half-pixel centres unless asked (``x_in = x_out * scale``, or ``(in - 1) / (out - 1)`` with ``align_corners``),
the legacy bicubic kernel (a = -0.75, edge pixels repeated), and ``resize_images`` returns an image that already
has the size unchanged (in its own dtype). ``resize_bilinear`` and the other kernel functions take only 4-D batches,
as TensorFlow's ops do.

Bit-exact with TensorFlow on CPU (max abs error 0, measured by tests/differential/test_image_resize.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.image import checks, kernels
from parafeed.tensor_ops.image.resize import Resizer, pad_resized, per_image, resize_common

__all__ = [
    "ResizeMethod",
    "resize",
    "resize_area",
    "resize_bicubic",
    "resize_bilinear",
    "resize_image_with_pad",
    "resize_images",
    "resize_nearest_neighbor",
]


class ResizeMethod:
    """tf.compat.v1.image.ResizeMethod: integers (TensorFlow 2's strings are accepted too)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _method(op: str, method: Any, align_corners: bool) -> Resizer:
    def named(value: int, name: str) -> bool:
        return bool(method in (value, name))

    if named(ResizeMethod.BILINEAR, "bilinear"):
        return lambda x, h, w: kernels.linear(x, h, w, align_corners, False)
    if named(ResizeMethod.NEAREST_NEIGHBOR, "nearest"):
        return lambda x, h, w: kernels.nearest(x, h, w, align_corners, False)
    if named(ResizeMethod.BICUBIC, "bicubic"):
        return lambda x, h, w: kernels.cubic(x, h, w, align_corners, False)
    if named(ResizeMethod.AREA, "area"):
        return lambda x, h, w: kernels.area(x, h, w, align_corners)
    raise InvalidArgumentError(
        f"{op}: resize method {method!r} is not implemented; use ResizeMethod.BILINEAR (0), NEAREST_NEIGHBOR (1), "
        "BICUBIC (2) or AREA (3)"
    )


def resize_images(images: Any, size: Any, method: Any = ResizeMethod.BILINEAR, align_corners: bool = False,
                  preserve_aspect_ratio: bool = False, name: Any = None) -> np.ndarray:  # fmt: skip
    """tf.compat.v1.image.resize_images: float32 (nearest keeps the dtype), or the image itself if it already has
    ``size``."""
    op = "resize_images()"
    resizer = _method(op, method, bool(align_corners))
    return resize_common(op, images, size, resizer, preserve_aspect_ratio, True)


resize = resize_images


def resize_image_with_pad(image: Any, target_height: Any, target_width: Any, method: Any = ResizeMethod.BILINEAR,
                          align_corners: bool = False) -> np.ndarray:  # fmt: skip
    """tf.compat.v1.image.resize_image_with_pad: resize_images to the fitted size, then zero padding."""
    op = "resize_image_with_pad()"
    resizer = _method(op, method, bool(align_corners))
    return pad_resized(op, image, target_height, target_width, lambda x, size: resize_common(
        op, x, size, resizer, False, True))  # fmt: skip


def _kernel_op(op: str, images: Any, size: Any, align_corners: bool, half_pixel_centers: bool, resizer: Resizer,
               dtypes: tuple[str, ...] = checks.REALS) -> np.ndarray:  # fmt: skip
    x = checks.array(op, images, "images")
    if x.ndim != 4:
        raise InvalidArgumentError(
            f"{op}: `images` must be 4-D (batch, height, width, channels), got shape {x.shape}; use x[None] for one "
            "image"
        )
    checks.dtype(op, x, dtypes, "images")
    if align_corners and half_pixel_centers:
        raise InvalidArgumentError(f"{op}: if half_pixel_centers is True, align_corners must be False")
    height, width = checks.size(op, size)
    checks.positive(op, height, width)
    if 0 in x.shape[1:]:
        raise InvalidArgumentError(
            f"{op}: `images` of shape {x.shape} is empty; height, width and channels must be > 0"
        )
    return per_image(resizer, x, height, width)


def resize_bilinear(images: Any, size: Any, align_corners: bool = False, name: Any = None,
                    half_pixel_centers: bool = False) -> np.ndarray:  # fmt: skip
    """tf.compat.v1.image.resize_bilinear on a 4-D batch: float32."""
    a, hp = bool(align_corners), bool(half_pixel_centers)
    return _kernel_op("resize_bilinear()", images, size, a, hp, lambda x, h, w: kernels.linear(x, h, w, a, hp))


def resize_bicubic(images: Any, size: Any, align_corners: bool = False, name: Any = None,
                   half_pixel_centers: bool = False) -> np.ndarray:  # fmt: skip
    """tf.compat.v1.image.resize_bicubic on a 4-D batch: float32 (half-pixel centres use Keys' kernel, as
    tf.image.resize; otherwise the legacy a = -0.75 kernel)."""
    a, hp = bool(align_corners), bool(half_pixel_centers)
    return _kernel_op("resize_bicubic()", images, size, a, hp, lambda x, h, w: kernels.cubic(x, h, w, a, hp))


def resize_nearest_neighbor(images: Any, size: Any, align_corners: bool = False, name: Any = None,
                            half_pixel_centers: bool = False) -> np.ndarray:  # fmt: skip
    """tf.compat.v1.image.resize_nearest_neighbor on a 4-D batch, in the input's dtype."""
    a, hp = bool(align_corners), bool(half_pixel_centers)
    return _kernel_op("resize_nearest_neighbor()", images, size, a, hp, lambda x, h, w: kernels.nearest(x, h, w, a, hp))


def resize_area(images: Any, size: Any, align_corners: bool = False, name: Any = None) -> np.ndarray:
    """tf.compat.v1.image.resize_area on a 4-D batch: float32 (each output averages the input area it covers)."""
    a = bool(align_corners)
    return _kernel_op("resize_area()", images, size, a, False, lambda x, h, w: kernels.area(x, h, w, a))

"""``resize`` with every ``ResizeMethod`` and ``antialias``, and ``resize_with_pad``, with TensorFlow 2's semantics
(tf.image.resize: half-pixel centres).

Results are float32, except ``NEAREST_NEIGHBOR``, which keeps the input's dtype, as in TensorFlow. Every method
computes TensorFlow's own kernel (:mod:`parafeed.tensor_ops.image.kernels`) in NumPy, in its order of float32
operations, so the results are bit-exact with tf.image on CPU: max abs error 0 for every method, with and without
``antialias`` and ``preserve_aspect_ratio``, on 0-255 (uint8, int16) and 0-1 (float16, float32, float64) images,
single and batched, 1x1 to photo size (measured by tests/differential/test_image_resize.py). The weights are cached
per size, so a pipeline resizing to one size computes them once; a batch is resized image by image.

Speed against tf.image on one core (benchmarks/image_ops.py, a 375x500 photo to 224x224): nearest 4x faster,
bilinear as fast on uint8 and 1.6x slower on float32, bicubic, area and the antialiased kernels within 2x.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.image import checks, kernels
from parafeed.tensor_ops.image.crop import pad_to_bounding_box

Resizer = Callable[[np.ndarray, int, int], np.ndarray]


class ResizeMethod:
    """The methods of :func:`resize` (tf.image.ResizeMethod): their values are the strings TensorFlow uses."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_SPANS = {ResizeMethod.LANCZOS3, ResizeMethod.LANCZOS5, ResizeMethod.GAUSSIAN, ResizeMethod.MITCHELLCUBIC}
_METHODS = (
    ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR, ResizeMethod.BICUBIC, ResizeMethod.AREA,
    ResizeMethod.LANCZOS3, ResizeMethod.LANCZOS5, ResizeMethod.GAUSSIAN, ResizeMethod.MITCHELLCUBIC,
)  # fmt: skip


def _resizer(op: str, method: Any, antialias: bool) -> Resizer:
    """The function that resizes a 4-D batch with ``method`` as tf.image.resize does."""
    if method == ResizeMethod.BILINEAR:
        if antialias:
            return lambda x, h, w: kernels.scale_and_translate(x, h, w, "triangle", True)
        return lambda x, h, w: kernels.linear(x, h, w, False, True)
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        return lambda x, h, w: kernels.nearest(x, h, w, False, True)
    if method == ResizeMethod.BICUBIC:
        if antialias:
            return lambda x, h, w: kernels.scale_and_translate(x, h, w, "keyscubic", True)
        return lambda x, h, w: kernels.cubic(x, h, w, False, True)
    if method == ResizeMethod.AREA:
        return lambda x, h, w: kernels.area(x, h, w, False)
    if isinstance(method, str) and method in _SPANS:
        return lambda x, h, w: kernels.scale_and_translate(x, h, w, method, antialias)
    raise InvalidArgumentError(
        f"{op}: resize method {method!r} is not implemented; use one of pf.image.ResizeMethod's: {', '.join(_METHODS)}"
    )


def resize_common(op: str, images: Any, size: Any, resizer: Resizer, preserve_aspect_ratio: bool,
                  skip_same_size: bool) -> np.ndarray:  # fmt: skip
    """What tf.image.resize and tf.compat.v1.image.resize_images share: the checks, ``preserve_aspect_ratio``
    (the largest size within ``size`` of the image's aspect ratio, rounded in float32 as TensorFlow does), and with
    ``skip_same_size`` (TensorFlow 1) the image itself when it already has the size."""
    x4, single = checks.batch(checks.image(op, images, "images", nonempty=False))
    new_h, new_w = checks.size(op, size)
    _, h, w, channels = x4.shape
    if preserve_aspect_ratio:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            factor = min(np.float32(new_h) / np.float32(h), np.float32(new_w) / np.float32(w))
            new_h, new_w = (int(np.rint(factor * np.float32(side))) for side in (h, w))
    if skip_same_size and (new_h, new_w) == (h, w):
        return checks.unbatch(x4, single)
    checks.positive(op, new_h, new_w)
    if h == 0 or w == 0 or channels == 0:
        raise InvalidArgumentError(
            f"{op}: `images` of shape {x4.shape[1:] if single else x4.shape} is empty; height, width and "
            "channels must be > 0"
        )
    return checks.unbatch(per_image(resizer, x4, new_h, new_w), single)


def per_image(resizer: Resizer, x4: np.ndarray, height: int, width: int) -> np.ndarray:
    """``resizer`` applied image by image into one output: a batch's temporaries would not stay in the caches."""
    if len(x4) <= 1:
        return resizer(x4, height, width)
    first = resizer(x4[:1], height, width)
    out = np.empty((len(x4), *first.shape[1:]), first.dtype)
    out[0] = first[0]
    for i in range(1, len(x4)):
        out[i] = resizer(x4[i : i + 1], height, width)[0]
    return out


def resize(images: Any, size: Any, method: Any = ResizeMethod.BILINEAR, preserve_aspect_ratio: bool = False,
           antialias: bool = False, name: Any = None) -> np.ndarray:  # fmt: skip
    """Resize ``(H, W, C)`` or ``(N, H, W, C)`` images to ``size = (new_height, new_width)``, like tf.image.resize.

    Args:
        method: a :class:`ResizeMethod` (``"bilinear"``, ``"nearest"``, ``"bicubic"``, ``"area"``, ``"lanczos3"``,
            ``"lanczos5"``, ``"gaussian"``, ``"mitchellcubic"``).
        preserve_aspect_ratio: resize to the largest size within ``size`` that keeps the aspect ratio.
        antialias: when downsampling, widen the kernel by the scale so every input pixel contributes (bilinear,
            bicubic and the scale-and-translate methods; ignored by nearest and area, as in TensorFlow).

    Returns:
        float32, or the input's dtype for ``NEAREST_NEIGHBOR``; bit-exact with TensorFlow on CPU.
    """
    op = "resize()"
    return resize_common(op, images, size, _resizer(op, method, bool(antialias)), preserve_aspect_ratio, False)


def resize_with_pad(image: Any, target_height: Any, target_width: Any, method: Any = ResizeMethod.BILINEAR,
                    antialias: bool = False) -> np.ndarray:  # fmt: skip
    """Resize keeping the aspect ratio to fit ``target_height x target_width``, then zero-pad the rest evenly (like
    tf.image.resize_with_pad: the sizes are computed in float32 and floored)."""
    op = "resize_with_pad()"
    resizer = _resizer(op, method, bool(antialias))
    return pad_resized(op, image, target_height, target_width, lambda x, size: resize_common(
        op, x, size, resizer, False, False))  # fmt: skip


def pad_resized(op: str, image: Any, target_height: Any, target_width: Any,
                resize_to: Callable[[np.ndarray, tuple[int, int]], np.ndarray]) -> np.ndarray:  # fmt: skip
    """What resize_with_pad and TensorFlow 1's resize_image_with_pad share: the fitted size, the resize through
    ``resize_to``, the padding."""
    x4, single = checks.batch(checks.image(op, image))
    th, tw = checks.integer(op, target_height, "target_height"), checks.integer(op, target_width, "target_width")
    if th <= 0 or tw <= 0:
        raise InvalidArgumentError(f"{op}: the target size must be > 0, got {th}x{tw} (height x width)")
    f32 = np.float32
    h, w, fth, ftw = f32(x4.shape[1]), f32(x4.shape[2]), f32(th), f32(tw)
    ratio = max(w / ftw, h / fth)
    resized_h, resized_w = h / ratio, w / ratio
    pad_h = max(0, int(np.floor((fth - resized_h) / f32(2))))
    pad_w = max(0, int(np.floor((ftw - resized_w) / f32(2))))
    resized = resize_to(x4, (int(np.floor(resized_h)), int(np.floor(resized_w))))
    return checks.unbatch(pad_to_bounding_box(resized, pad_h, pad_w, th, tw), single)

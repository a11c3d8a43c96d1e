"""Geometry without resampling: crops, pads, flips, rotations and transposes (like tf.image), on one 3-D image
``(height, width, channels)`` or a 4-D batch, in the image's dtype.

All are bit-exact with tf.image: they move pixels, never compute them. Crops, flips, rotations and transposes
return NumPy views of the input where they can (copy one before writing into it); pads return new arrays.
``random_*`` draw from :mod:`parafeed.tensor_ops.image.draws`; a batch gets one draw per image, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.image import checks, draws


def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any):
    """The ``target_height x target_width`` window whose top-left corner is at ``(offset_height, offset_width)``
    (like tf.image.crop_to_bounding_box)."""
    op = "crop_to_bounding_box()"
    x4, single = checks.batch(checks.image(op, image))
    oh, ow = checks.integer(op, offset_height, "offset_height"), checks.integer(op, offset_width, "offset_width")
    th, tw = checks.integer(op, target_height, "target_height"), checks.integer(op, target_width, "target_width")
    _check_crop(op, x4.shape[1], x4.shape[2], oh, ow, th, tw)
    return checks.unbatch(x4[:, oh : oh + th, ow : ow + tw], single)


def _check_crop(op: str, height: int, width: int, oh: int, ow: int, th: int, tw: int) -> None:
    if oh < 0 or ow < 0:
        raise InvalidArgumentError(f"{op}: offsets must be >= 0, got offset_height={oh}, offset_width={ow}")
    if th <= 0 or tw <= 0:
        raise InvalidArgumentError(f"{op}: the target size must be > 0, got {th}x{tw} (height x width)")
    if oh + th > height or ow + tw > width:
        raise InvalidArgumentError(
            f"{op}: the box {th}x{tw} at ({oh}, {ow}) does not fit in the {height}x{width} image; offset + target "
            "must be <= the image's height and width"
        )


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any):
    """The image placed at ``(offset_height, offset_width)`` on zeros of ``target_height x target_width`` (like
    tf.image.pad_to_bounding_box)."""
    op = "pad_to_bounding_box()"
    x4, single = checks.batch(checks.image(op, image))
    oh, ow = checks.integer(op, offset_height, "offset_height"), checks.integer(op, offset_width, "offset_width")
    th, tw = checks.integer(op, target_height, "target_height"), checks.integer(op, target_width, "target_width")
    n, h, w, c = x4.shape
    if oh < 0 or ow < 0:
        raise InvalidArgumentError(f"{op}: offsets must be >= 0, got offset_height={oh}, offset_width={ow}")
    if oh + h > th or ow + w > tw:
        raise InvalidArgumentError(
            f"{op}: the {h}x{w} image at ({oh}, {ow}) does not fit in {th}x{tw}; the target must be at least the "
            "image's size plus the offset"
        )
    out = np.zeros((n, th, tw, c), x4.dtype)
    out[:, oh : oh + h, ow : ow + w] = x4
    return checks.unbatch(out, single)


def resize_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> np.ndarray:
    """Centre-crop or zero-pad each side to ``target_height x target_width`` (like
    tf.image.resize_with_crop_or_pad: an odd difference puts the extra pixel bottom / right)."""
    op = "resize_with_crop_or_pad()"
    x4, single = checks.batch(checks.image(op, image))
    th, tw = checks.integer(op, target_height, "target_height"), checks.integer(op, target_width, "target_width")
    if th <= 0 or tw <= 0:
        raise InvalidArgumentError(f"{op}: the target size must be > 0, got {th}x{tw} (height x width)")
    n, h, w, c = x4.shape
    crop_h, crop_w = max((h - th) // 2, 0), max((w - tw) // 2, 0)
    pad_h, pad_w = max((th - h) // 2, 0), max((tw - w) // 2, 0)
    cropped = x4[:, crop_h : crop_h + min(th, h), crop_w : crop_w + min(tw, w)]
    if cropped.shape[1:3] == (th, tw):
        return checks.unbatch(cropped, single)
    out = np.zeros((n, th, tw, c), x4.dtype)
    out[:, pad_h : pad_h + cropped.shape[1], pad_w : pad_w + cropped.shape[2]] = cropped
    return checks.unbatch(out, single)


def central_crop(image: Any, central_fraction: Any) -> np.ndarray:
    """The central ``central_fraction`` of each side (like tf.image.central_crop, with its rounding: the margin is
    ``int((side - side * fraction) / 2)``)."""
    op = "central_crop()"
    fraction = checks.number(op, central_fraction, "central_fraction")
    if not 0.0 < fraction <= 1.0:
        raise InvalidArgumentError(f"{op}: `central_fraction` must be in (0, 1], got {central_fraction}")
    if fraction == 1.0:
        return checks.array(op, image)
    x = checks.image(op, image)
    # TensorFlow computes the margins in Python, so a NumPy float32 fraction computes them in float32
    value = central_fraction[()] if isinstance(central_fraction, np.ndarray) else central_fraction
    scale = value if isinstance(value, np.floating) else fraction
    h, w = (float(side) for side in x.shape[-3:-1])
    top, left = int((h - h * scale) / 2), int((w - w * scale) / 2)
    return x[..., top : x.shape[-3] - top, left : x.shape[-2] - left, :]


def _crop(op: str, value: Any, size: Any, gen: np.random.Generator) -> np.ndarray:
    value = checks.array(op, value, "value")
    sizes = np.asarray(size)
    if sizes.ndim != 1 or sizes.dtype.kind not in "iu" or len(sizes) != value.ndim:
        raise InvalidArgumentError(
            f"{op}: `size` must be {value.ndim} integers, one per dimension of `value` {value.shape}, got {size!r}"
        )
    if any(s > d or s < 0 for s, d in zip(sizes, value.shape)):
        raise InvalidArgumentError(
            f"{op}: cannot crop {tuple(int(s) for s in sizes)} out of shape {value.shape}; size must fit in it"
        )
    start = [int(gen.integers(0, d - s + 1)) for s, d in zip(sizes, value.shape)]
    return value[tuple(slice(a, a + int(s)) for a, s in zip(start, sizes))]


def random_crop(
    value: Any, size: Any, seed: int | None = None, name: Any = None, rng: np.random.Generator | None = None
) -> np.ndarray:
    """A uniformly placed crop of ``size`` (one entry per dimension of ``value``), like tf.image.random_crop."""
    return _crop("random_crop()", value, size, draws.draws(seed, rng))


def stateless_random_crop(value: Any, size: Any, seed: Any, name: Any = None) -> np.ndarray:
    """``random_crop`` fixed by ``seed=(a, b)`` (like tf.image.stateless_random_crop)."""
    return _crop("stateless_random_crop()", value, size, draws.stateless_generator("stateless_random_crop()", seed))


def _flipped(op: str, image: Any, axis: int) -> np.ndarray:
    x = checks.image(op, image)
    return np.flip(x, axis - 3)


def flip_left_right(image: Any) -> np.ndarray:
    """Mirror horizontally (like tf.image.flip_left_right)."""
    return _flipped("flip_left_right()", image, 1)


def flip_up_down(image: Any) -> np.ndarray:
    """Mirror vertically (like tf.image.flip_up_down)."""
    return _flipped("flip_up_down()", image, 0)


def _random_flip(op: str, image: Any, axis: int, gen: np.random.Generator) -> np.ndarray:
    x = checks.image(op, image)
    if x.ndim == 3:
        return np.flip(x, axis) if gen.random(dtype=np.float32) < 0.5 else x
    flips = gen.random(len(x), dtype=np.float32) > 0.5  # TensorFlow rounds each draw (halves to even): 1 flips
    out = x.copy()
    out[flips] = np.flip(x[flips], axis + 1)
    return out


def random_flip_left_right(image: Any, seed: int | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """Mirror horizontally with probability 1/2 (per image for a batch), like tf.image.random_flip_left_right."""
    return _random_flip("random_flip_left_right()", image, 1, draws.draws(seed, rng))


def random_flip_up_down(image: Any, seed: int | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """Mirror vertically with probability 1/2 (per image for a batch), like tf.image.random_flip_up_down."""
    return _random_flip("random_flip_up_down()", image, 0, draws.draws(seed, rng))


def stateless_random_flip_left_right(image: Any, seed: Any) -> np.ndarray:
    """``random_flip_left_right`` fixed by ``seed=(a, b)``."""
    op = "stateless_random_flip_left_right()"
    return _random_flip(op, image, 1, draws.stateless_generator(op, seed))


def stateless_random_flip_up_down(image: Any, seed: Any) -> np.ndarray:
    """``random_flip_up_down`` fixed by ``seed=(a, b)``."""
    op = "stateless_random_flip_up_down()"
    return _random_flip(op, image, 0, draws.stateless_generator(op, seed))


def rot90(image: Any, k: Any = 1, name: Any = None) -> np.ndarray:
    """Rotate by ``k`` quarter turns counter-clockwise (like tf.image.rot90; ``k`` is taken modulo 4)."""
    op = "rot90()"
    x = checks.image(op, image)
    turns = checks.integer(op, k, "k") % 4
    return np.rot90(x, turns, axes=(x.ndim - 3, x.ndim - 2))


def transpose(image: Any, name: Any = None) -> np.ndarray:
    """Swap height and width (like tf.image.transpose)."""
    x = checks.image("transpose()", image)
    return np.swapaxes(x, -3, -2)

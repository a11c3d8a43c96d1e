"""``sample_distorted_bounding_box`` and ``stateless_sample_distorted_bounding_box``: the random crop of
Inception / ResNet ImageNet training (like tf.image's).

The sampling is TensorFlow's, step for step in float32: for up to ``max_attempts`` aspect ratios drawn from
``aspect_ratio_range``, a height drawn between the smallest and largest that give an area in ``area_range`` (the
width rounded from it), a position drawn uniformly (TensorFlow never draws the last row or column offset: parafeed
keeps that), accepted once it covers ``min_object_covered`` of one of the bounding boxes; else the whole image. The
numbers drawn are NumPy's (:mod:`parafeed.tensor_ops.image.draws`), not TensorFlow's Philox stream, so a seed gives
another box than in TensorFlow, from the same distribution.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.image import checks, draws

F32 = np.float32
_INT32_MAX = 2**31 - 1


def sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: int | None = 0,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: Any = None,
    use_image_if_no_bounding_boxes: Any = None,
    name: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random crop ``(begin, size, bboxes)`` of an image of ``image_size = [height, width, channels]`` that
    covers at least ``min_object_covered`` of one of ``bounding_boxes`` (``[batch, N, 4]`` of ``[y_min, x_min, y_max,
    x_max]`` in [0, 1]), like tf.image.sample_distorted_bounding_box.

    ``begin = [y, x, 0]`` and ``size = [height, width, -1]`` (in ``image_size``'s dtype) slice the image;
    ``bboxes`` is the crop as a ``[1, 1, 4]`` float32 box. ``seed=0`` (TensorFlow's default) draws unseeded.
    """
    op = "sample_distorted_bounding_box()"
    return _sample(op, image_size, bounding_boxes, draws.generator(int(seed) if seed else None), min_object_covered,
                   aspect_ratio_range, area_range, max_attempts, use_image_if_no_bounding_boxes)  # fmt: skip


def stateless_sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: Any,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: Any = None,
    use_image_if_no_bounding_boxes: Any = None,
    name: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sample_distorted_bounding_box`` fixed by ``seed=(a, b)`` (like
    tf.image.stateless_sample_distorted_bounding_box)."""
    op = "stateless_sample_distorted_bounding_box()"
    return _sample(op, image_size, bounding_boxes, draws.stateless_generator(op, seed), min_object_covered,
                   aspect_ratio_range, area_range, max_attempts, use_image_if_no_bounding_boxes)  # fmt: skip


def _pair(op: str, value: Any, default: tuple[float, float], name: str) -> tuple[np.float32, np.float32]:
    try:
        values = np.asarray(default if value is None else value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        values = np.zeros(0)
    if values.size != 2:
        raise InvalidArgumentError(f"{op}: `{name}` must be 2 numbers [min, max], got {value!r}")
    return F32(values[0]), F32(values[1])


def _sample(op: str, image_size: Any, bounding_boxes: Any, gen: np.random.Generator, min_object_covered: Any,
            aspect_ratio_range: Any, area_range: Any, max_attempts: Any,
            use_image: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    size = checks.dtype(op, checks.array(op, image_size, "image_size"),
                        ("uint8", "int8", "int16", "int32", "int64"), "image_size")  # fmt: skip
    if size.shape != (3,):
        raise InvalidArgumentError(f"{op}: `image_size` must be [height, width, channels], got shape {size.shape}")
    height, width = int(size[0]), int(size[1])
    if not (0 <= height < _INT32_MAX and 0 <= width < _INT32_MAX):
        raise InvalidArgumentError(f"{op}: the image height and width must be in [0, 2**31 - 1), got {size.tolist()}")
    boxes = np.asarray(bounding_boxes, F32)
    if boxes.ndim != 3 or boxes.shape[-1] != 4:
        raise InvalidArgumentError(
            f"{op}: `bounding_boxes` must be 3-D [batch, num_boxes, 4], got shape {boxes.shape}; e.g. "
            "[[[y_min, x_min, y_max, x_max]]]"
        )
    covered = F32(checks.number(op, min_object_covered, "min_object_covered"))
    if covered < 0:
        raise InvalidArgumentError(f"{op}: `min_object_covered` must be non-negative, got {min_object_covered}")
    ratio_lo, ratio_hi = _pair(op, aspect_ratio_range, (0.75, 1.33), "aspect_ratio_range")
    if not (ratio_lo > 0 and ratio_hi > 0):
        raise InvalidArgumentError(f"{op}: `aspect_ratio_range` must be positive, got {aspect_ratio_range}")
    area_lo, area_hi = _pair(op, area_range, (0.05, 1.0), "area_range")
    if not (area_lo > 0 and area_hi > 0) or area_lo > 1 or area_hi > 1:
        raise InvalidArgumentError(f"{op}: `area_range` must be in (0, 1], got {area_range}")
    attempts = 100 if max_attempts is None else checks.integer(op, max_attempts, "max_attempts")
    if attempts <= 0:
        raise InvalidArgumentError(f"{op}: `max_attempts` must be positive, got {max_attempts}")
    flat = boxes.reshape(-1, 4)
    if ((flat < 0) | (flat > 1) | np.isnan(flat)).any():
        raise InvalidArgumentError(f"{op}: all bounding box coordinates must be in [0.0, 1.0], got {flat.tolist()}")
    rects = [
        (int(F32(b[1]) * F32(width)), int(F32(b[0]) * F32(height)), int(F32(b[3]) * F32(width)),
         int(F32(b[2]) * F32(height)))
        for b in flat
    ]  # fmt: skip
    image_rect = (0, 0, width, height)
    if not rects:
        if not use_image:
            raise InvalidArgumentError(
                f"{op}: no bounding boxes given; pass use_image_if_no_bounding_boxes=True to sample from the whole "
                "image"
            )
        rects = [image_rect]
    crop = None
    for _ in range(attempts):
        ratio = gen.random(dtype=F32) * (ratio_hi - ratio_lo) + ratio_lo
        crop = _random_crop(width, height, area_lo, area_hi, ratio, gen)
        if crop is not None and _covers(crop, covered, rects):
            break
        crop = None
    x0, y0, x1, y1 = crop if crop is not None else image_rect
    begin = np.array([y0, x0, 0], np.int64).astype(size.dtype)
    extent = np.array([y1 - y0, x1 - x0, -1], np.int64).astype(size.dtype)
    fh, fw = F32(height), F32(width)
    bboxes = np.array([[[F32(y0) / fh, F32(x0) / fw, F32(y1) / fh, F32(x1) / fw]]], F32)
    return begin, extent, bboxes


def _rint(value: np.float32) -> int:
    """lrintf: to the nearest integer, halves to even."""
    return int(np.rint(value))


def _random_crop(width: int, height: int, min_area_frac: np.float32, max_area_frac: np.float32,
                 ratio: np.float32, gen: np.random.Generator) -> tuple[int, int, int, int] | None:  # fmt: skip
    """TensorFlow's GenerateRandomCrop: ``(x_min, y_min, x_max, y_max)`` or None where the draw fails."""
    if max_area_frac <= 0 or ratio <= 0 or width <= 0 or height <= 0 or min_area_frac > max_area_frac:
        return None
    min_area = min_area_frac * F32(width) * F32(height)
    max_area = max_area_frac * F32(width) * F32(height)
    crop_h = _rint(np.sqrt(F32(min_area / ratio)))
    max_h = _rint(np.sqrt(F32(max_area / ratio)))
    if _rint(F32(max_h) * ratio) > width:
        max_h = int((width + 0.5 - float(F32(1e-7))) / float(ratio))  # the largest height whose width rounds in
        if _rint(F32(max_h) * ratio) > width:
            max_h -= 1
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += int(gen.integers(max_h - crop_h + 1))
    crop_w = _rint(F32(crop_h) * ratio)
    area = F32(crop_w * crop_h)
    if area < min_area:  # a rounding put the area out of range: try one pixel taller, then one shorter
        crop_h += 1
        crop_w = _rint(F32(crop_h) * ratio)
        area = F32(crop_w * crop_h)
    if area > max_area:
        crop_h -= 1
        crop_w = _rint(F32(crop_h) * ratio)
        area = F32(crop_w * crop_h)
    if area < min_area or area > max_area or crop_w > width or crop_h > height or crop_w <= 0 or crop_h <= 0:
        return None
    y = int(gen.integers(height - crop_h)) if crop_h < height else 0
    x = int(gen.integers(width - crop_w)) if crop_w < width else 0
    return x, y, x + crop_w, y + crop_h


def _area(rect: tuple[int, int, int, int]) -> np.float32:
    return F32((rect[2] - rect[0]) * (rect[3] - rect[1]))


def _covers(crop: tuple[int, int, int, int], fraction: np.float32, boxes: list[tuple[int, int, int, int]]) -> bool:
    """Whether ``crop`` has at least one pixel and covers ``fraction`` of one box of at least one pixel."""
    if _area(crop) < 1:
        return False
    for box in boxes:
        box_area = _area(box)
        if box_area < 1:
            continue
        inter = (max(crop[0], box[0]), max(crop[1], box[1]), min(crop[2], box[2]), min(crop[3], box[3]))
        if inter[0] > inter[2] or inter[1] > inter[3]:
            inter = (0, 0, 0, 0)
        if _area(inter) / box_area >= fraction:
            return True
    return False

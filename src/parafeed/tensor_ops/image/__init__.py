"""``pf.image``: tf.image's operations on NumPy arrays, with TensorFlow 2's semantics.

Images are ``(height, width, channels)`` arrays, or ``(batch, height, width, channels)`` where TensorFlow takes
batches; results are NumPy arrays with TensorFlow's dtypes (``resize`` gives float32 except for nearest neighbour,
the ``adjust_*`` ops give the input's dtype back). The modules, by what they hold:

* ``decode`` / ``encode``: JPEG, PNG, GIF, BMP to pixels, ``extract_jpeg_shape``; pixels to JPEG and PNG.
* ``resize`` (every ``ResizeMethod``, ``antialias``, ``preserve_aspect_ratio``, ``resize_with_pad``) on the
  kernels of ``kernels`` (TensorFlow's own, bit-exact); ``resize_v1``: TensorFlow 1's (``align_corners``,
  ``half_pixel_centers``), for ``pf.compat.v1.image``, not exported here.
* ``crop``: crops, pads, flips, rotations; ``boxes``: ``sample_distorted_bounding_box``.
* ``color``: brightness, contrast, saturation, hue, gamma and the colour spaces; ``pixels``:
  ``convert_image_dtype``, ``per_image_standardization``, ``total_variation``.
* ``draws``: the one place the random ops draw from; ``checks``: what every op checks first.

Each module's docstring states its tolerance against tf.image, measured by ``tests/differential/test_image_*.py``
(and summarised in docs/porting.md, "pf.image against tf.image").
"""

from parafeed.tensor_ops.image.boxes import sample_distorted_bounding_box, stateless_sample_distorted_bounding_box
from parafeed.tensor_ops.image.color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    grayscale_to_rgb,
    hsv_to_rgb,
    random_brightness,
    random_contrast,
    random_hue,
    random_saturation,
    rgb_to_grayscale,
    rgb_to_hsv,
    rgb_to_yiq,
    rgb_to_yuv,
    stateless_random_brightness,
    stateless_random_contrast,
    stateless_random_hue,
    stateless_random_saturation,
    yiq_to_rgb,
    yuv_to_rgb,
)
from parafeed.tensor_ops.image.crop import (
    central_crop,
    crop_to_bounding_box,
    flip_left_right,
    flip_up_down,
    pad_to_bounding_box,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    resize_with_crop_or_pad,
    rot90,
    stateless_random_crop,
    stateless_random_flip_left_right,
    stateless_random_flip_up_down,
    transpose,
)
from parafeed.tensor_ops.image.decode import (
    decode_and_crop_jpeg,
    decode_image,
    decode_jpeg,
    decode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from parafeed.tensor_ops.image.encode import encode_jpeg, encode_png
from parafeed.tensor_ops.image.pixels import convert_image_dtype, normalize, per_image_standardization, total_variation
from parafeed.tensor_ops.image.resize import ResizeMethod, resize, resize_with_pad
from parafeed.values.tensor import export_tensor_results

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "decode_and_crop_jpeg",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_png",
    "extract_jpeg_shape",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "is_jpeg",
    "normalize",
    "pad_to_bounding_box",
    "per_image_standardization",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_saturation",
    "resize",
    "resize_with_crop_or_pad",
    "resize_with_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "sample_distorted_bounding_box",
    "stateless_random_brightness",
    "stateless_random_contrast",
    "stateless_random_crop",
    "stateless_random_flip_left_right",
    "stateless_random_flip_up_down",
    "stateless_random_hue",
    "stateless_random_saturation",
    "stateless_sample_distorted_bounding_box",
    "total_variation",
    "transpose",
    "yiq_to_rgb",
    "yuv_to_rgb",
]

export_tensor_results(globals())  # (results as Tensors, as TensorFlow's operations return them)

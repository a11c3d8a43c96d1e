"""Decoding images (like tf.io / tf.image): ``decode_jpeg``, ``decode_and_crop_jpeg``, ``decode_png``,
``decode_image`` and ``extract_jpeg_shape``.

JPEG through libjpeg-turbo (simplejpeg, and parafeed's own ``_jpeg`` extension for partial decoding), PNG and BMP
through OpenCV, GIF through Pillow. All release the GIL, so they scale on a thread pool; OpenCV is set to one
thread per call (its own threads would compete with parafeed's workers, which parallelise across elements).
Results match TensorFlow's within the tolerances of ``docs/formats.md`` (JPEG bit-exact, checked by
``tests/differential/test_image_ops.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.tensor_ops.image import checks
from parafeed.tensor_ops.image.pixels import convert_image_dtype
from parafeed.values.byte_strings import scalar_bytes

_JPEG, _PNG, _GIF, _BMP = b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF8", b"BM"
_SIGNATURES = (_JPEG, _PNG, _GIF)  # (the formats TensorFlow's decode_jpeg and decode_png take: not BMP)
_COLORSPACES = {1: "GRAY", 3: "RGB"}


def _check_bytes(step: str, contents: Any) -> bytes:
    return scalar_bytes(step, contents, "contents", text=False)


def _channels_arg(step: str, channels: int | None, allowed: tuple[int, ...]) -> int:
    channels = 0 if channels is None else int(channels)
    if channels not in allowed:
        raise InvalidArgumentError(f"{step}: `channels` must be one of {allowed}, got {channels}")
    return channels


def _jpeg_args(step: str, contents: Any, channels: int, ratio: int) -> tuple[bytes, int]:
    """The JPEG bytes and the channels asked for, checked (with ``ratio``) as tf.io.decode_jpeg checks them."""
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"{step}: `ratio` must be 1, 2, 4 or 8, got {ratio}")
    return _check_bytes(step, contents), _channels_arg(step, channels, (0, 1, 3))


def decode_jpeg(
    contents: bytes,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    min_size: tuple[int, int] | None = None,
) -> np.ndarray:
    """Decode a JPEG to ``uint8 (H, W, C)`` (like tf.io.decode_jpeg).

    Args:
        channels: 0 keeps the file's channels, 1 gives grayscale, 3 RGB.
        ratio: downscale by 1, 2, 4 or 8 during decoding.
        min_size: ``(height, width)``: decode at the smallest scale of 1/2, 1/4 or 1/8 that is at least this big
            (libjpeg-turbo scales in the DCT domain, much cheaper than a full decode); resize afterwards for an
            exact size.
        dct_method: ``""`` or ``"INTEGER_FAST"`` (TensorFlow's default, and its exact output) or
            ``"INTEGER_ACCURATE"`` (libjpeg's slower, more accurate inverse DCT).
    """
    import simplejpeg

    step = "decode_jpeg()"
    if _other_format(data := _check_bytes(step, contents), _JPEG):  # (as TensorFlow's: PNG and GIF data too)
        return decode_image(data, channels, expand_animations=False)
    data, channels = _jpeg_args(step, data, channels, ratio)
    try:
        if channels and ratio == 1 and min_size is None:  # (the header is not needed: one parse less)
            height = width = 0
        else:
            height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data, strict=not try_recover_truncated)
        if channels == 0:
            channels = 1 if colorspace == "Gray" else 3
        if min_size is not None:  # the largest power-of-two factor that keeps min_size (other factors are slow)
            want_h, want_w = int(min_size[0]), int(min_size[1])
            fits = [f for f in (8, 4, 2) if -(-height // f) >= want_h and -(-width // f) >= want_w]
            ratio = max(ratio, fits[0] if fits else 1)
        min_h, min_w = (-(-height // ratio), -(-width // ratio)) if ratio > 1 else (0, 0)
        image = simplejpeg.decode_jpeg(
            data, colorspace=_COLORSPACES[channels], fastdct=dct_method != "INTEGER_ACCURATE",
            fastupsample=not fancy_upscaling, min_height=min_h, min_width=min_w, min_factor=ratio,
            strict=not try_recover_truncated,
        )  # fmt: skip
    except ValueError as err:
        raise InvalidArgumentError(f"{step}: not a valid JPEG ({len(data)} bytes): {err}") from None
    return image if image.ndim == 3 else image[:, :, None]


def decode_and_crop_jpeg(
    contents: bytes,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
) -> np.ndarray:
    """Decode only ``crop_window = [y, x, height, width]`` of a JPEG to ``uint8 (height, width, C)`` (like
    tf.image.decode_and_crop_jpeg, and the same pixels: rows above the window are skipped without the inverse DCT,
    columns outside it are not decoded, rows below it are not read). The window is in the coordinates of the image
    after ``ratio``; the other arguments are :func:`decode_jpeg`'s.
    """
    step = "decode_and_crop_jpeg()"
    data, channels = _jpeg_args(step, contents, channels, ratio)
    window = np.asarray(crop_window).reshape(-1)
    if window.size != 4 or window.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{step}: `crop_window` must be 4 integers [y, x, height, width], got {crop_window}")
    y, x, height, width = (int(v) for v in window)
    try:
        from parafeed.tensor_ops import _jpeg
    except ImportError:
        raise InvalidArgumentError(
            f"{step}: parafeed was installed without its libjpeg-turbo extension (parafeed.tensor_ops._jpeg); "
            "install the libjpeg-turbo headers (e.g. apt install libjpeg-turbo8-dev or libjpeg62-turbo-dev) and "
            "reinstall parafeed, or decode the whole image with decode_jpeg() and slice it"
        ) from None
    try:
        pixels, shape = _jpeg.decode_crop(
            data, y, x, height, width, channels, ratio, dct_method != "INTEGER_ACCURATE", fancy_upscaling,
            not try_recover_truncated,
        )  # fmt: skip
    except ValueError as err:
        raise InvalidArgumentError(f"{step}: not a valid JPEG ({len(data)} bytes): {err}") from None
    if pixels is None:
        raise InvalidArgumentError(
            f"{step}: crop window [y={y}, x={x}, height={height}, width={width}] does not fit in the "
            f"{shape[0]}x{shape[1]} image (height x width after ratio {ratio}); height and width must be > 0"
        )
    return np.frombuffer(pixels, np.uint8).reshape(shape)


def decode_png(contents: bytes, channels: int = 0, dtype: Any = np.uint8) -> np.ndarray:
    """Decode a PNG to ``(H, W, C)`` of ``uint8`` or ``uint16`` (like tf.io.decode_png); channels 0, 1, 3 or 4.
    As TensorFlow's, it decodes JPEG and GIF data too."""
    step = "decode_png()"
    data = _check_bytes(step, contents)
    if _other_format(data, _PNG):
        return decode_image(data, channels, dtype, expand_animations=False)
    if not data.startswith(_PNG):
        raise InvalidArgumentError(
            f"{step}: not a PNG, JPEG or GIF (the data starts with {data[:8]!r}); decode_image() decodes BMP too"
        )
    return _decode_cv2(step, data, _channels_arg(step, channels, (0, 1, 3, 4)), np.dtype(dtype))


def _other_format(data: bytes, signature: bytes) -> bool:
    """Whether ``data`` is an image of another format than ``signature``'s that decode_image decodes."""
    return not data.startswith(signature) and data.startswith(_SIGNATURES)


def _decode_cv2(step: str, data: bytes, channels: int, dtype: np.dtype) -> np.ndarray:
    cv2 = checks.cv2()
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise InvalidArgumentError(f"{step}: the image data ({len(data)} bytes) is corrupt or truncated")
    if image.ndim == 2:
        image = image[:, :, None]
    if image.shape[2] == 3:
        image = image[:, :, ::-1]  # OpenCV gives BGR
    elif image.shape[2] == 4:
        # OpenCV gives BGRA; a gray + alpha PNG (colour type 4) keeps its two channels, as TensorFlow decodes it
        gray_alpha = channels == 0 and data.startswith(_PNG) and len(data) > 25 and data[25] == 4
        image = image[:, :, [0, 3]] if gray_alpha else image[:, :, [2, 1, 0, 3]]
    return _to_channels(np.ascontiguousarray(image), channels, dtype)


def _to_channels(image: np.ndarray, channels: int, dtype: np.dtype) -> np.ndarray:
    have = image.shape[2]
    if channels and channels != have:
        if channels == 1:
            rgb = image[:, :, :3].astype(np.float32)
            gray = rgb @ np.array([0.2989, 0.5870, 0.1140], np.float32) if have >= 3 else rgb[:, :, 0]
            image = np.round(gray)[:, :, None].astype(image.dtype)
        elif have == 1:
            image = np.repeat(image, 3, axis=2)
            if channels == 4:
                image = np.concatenate([image, np.full_like(image[:, :, :1], np.iinfo(image.dtype).max)], axis=2)
        elif channels == 3:
            image = image[:, :, :3]
        else:
            image = np.concatenate([image, np.full_like(image[:, :, :1], np.iinfo(image.dtype).max)], axis=2)
    if dtype == np.uint16 and image.dtype == np.uint8:
        return image.astype(np.uint16) * 257
    if dtype == np.uint8 and image.dtype == np.uint16:
        return (image // 257).astype(np.uint8)
    if dtype not in (np.uint8, np.uint16):
        return convert_image_dtype(image, dtype)
    return np.ascontiguousarray(image)


def decode_image(
    contents: bytes, channels: int | None = None, dtype: Any = np.uint8, expand_animations: bool = True
) -> np.ndarray:
    """Decode a JPEG, PNG, GIF or BMP by its signature (like tf.io.decode_image).

    GIFs give ``(frames, H, W, 3)`` unless ``expand_animations=False`` (first frame). A float ``dtype`` scales to
    [0, 1) as convert_image_dtype does.
    """
    step = "decode_image()"
    data = _check_bytes(step, contents)
    channels = _channels_arg(step, channels, (0, 1, 3, 4))
    dtype = np.dtype(dtype)
    if data.startswith(_JPEG):
        if channels == 4:
            raise InvalidArgumentError(f"{step}: a JPEG has no alpha channel; use channels 0, 1 or 3")
        image = decode_jpeg(data, channels)
        return image if dtype == np.uint8 else convert_image_dtype(image, dtype)
    if data.startswith(_PNG):
        png_dtype = np.uint16 if dtype == np.uint16 else np.uint8
        image = decode_png(data, channels, png_dtype)
        return image if dtype == png_dtype else convert_image_dtype(image, dtype)
    if data.startswith(_BMP):
        return _decode_cv2(step, data, channels, dtype)
    if data.startswith(_GIF):
        return _decode_gif(step, data, channels, dtype, expand_animations)
    raise InvalidArgumentError(f"{step}: unknown image format (not JPEG, PNG, GIF or BMP), first bytes {data[:8]!r}")


def _decode_gif(step: str, data: bytes, channels: int, dtype: np.dtype, expand: bool) -> np.ndarray:
    import io

    from PIL import Image, ImageSequence

    try:
        with Image.open(io.BytesIO(data)) as gif:
            frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(gif)]
    except Exception as err:
        raise InvalidArgumentError(f"{step}: the GIF data is corrupt: {err}") from None
    frames = [_to_channels(f, channels, dtype) for f in frames]
    return np.stack(frames) if expand else frames[0]


def extract_jpeg_shape(contents: Any, output_type: Any = np.int32) -> np.ndarray:
    """``[height, width, channels]`` of a JPEG from its header, without decoding it (like
    tf.image.extract_jpeg_shape); ``output_type`` int32 or int64."""
    import simplejpeg

    op = "extract_jpeg_shape()"
    dtype = np.dtype(output_type)
    if dtype not in (np.int32, np.int64):
        raise ElementTypeError(f"{op}: `output_type` must be int32 or int64, got {dtype}")
    data = _check_bytes(op, contents)
    try:
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
    except ValueError as err:
        raise InvalidArgumentError(f"{op}: invalid JPEG data ({len(data)} bytes): {err}") from None
    channels = {"Gray": 1, "CMYK": 4, "YCCK": 4}.get(colorspace, 3)
    return np.array([height, width, channels], dtype)


def is_jpeg(contents: Any, name: Any = None) -> np.bool_:
    """Whether ``contents`` starts like a JPEG (``FF D8 FF``), like tf.io.is_jpeg."""
    return np.bool_(_check_bytes("is_jpeg()", contents).startswith(_JPEG))

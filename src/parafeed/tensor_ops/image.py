"""Image decoding and augmentation on NumPy arrays (``H x W x C``, or ``N x H x W x C`` where noted), like tf.image.

Decoding uses libjpeg-turbo through simplejpeg (JPEG), OpenCV (PNG, BMP) and Pillow (GIF); resizing uses OpenCV.
All release the GIL, so they scale on a thread pool. OpenCV is set to one thread per call (its own threads would
compete with parafeed's workers, which parallelise across elements). Results match TensorFlow's within the
tolerances stated in ``docs/formats.md`` (and checked by ``tests/differential/test_image_ops.py``).

Random ops come in tf.image's two flavours: ``random_*`` draw from a generator kept per ``seed`` (or the one passed
as ``rng``), ``stateless_random_*`` depend only on ``seed=(a, b)``, so they are reproducible in parallel pipelines.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError

__all__ = [
    "central_crop",
    "convert_image_dtype",
    "decode_and_crop_jpeg",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "flip_left_right",
    "normalize",
    "per_image_standardization",
    "random_crop",
    "random_flip_left_right",
    "resize",
    "stateless_random_crop",
    "stateless_random_flip_left_right",
]

_JPEG, _PNG, _GIF, _BMP = b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF8", b"BM"
_COLORSPACES = {1: "GRAY", 3: "RGB"}


def _cv2() -> Any:
    """OpenCV, limited to one thread per call: parafeed parallelises across elements, and OpenCV's own threads
    would spin (sched_yield) against parafeed's workers for the same cores."""
    import cv2

    if cv2.getNumThreads() != 1:
        cv2.setNumThreads(1)
    return cv2


def _check_bytes(step: str, contents: Any) -> bytes:
    if isinstance(contents, np.ndarray) and contents.shape == () and contents.dtype == object:
        contents = contents.item()
    if not isinstance(contents, (bytes, bytearray, memoryview)):
        raise InvalidArgumentError(f"{step}: `contents` must be the encoded image bytes, got {type(contents).__name__}")
    return bytes(contents)


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
    data, channels = _jpeg_args(step, contents, channels, ratio)
    try:
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
    """Decode a PNG to ``(H, W, C)`` of ``uint8`` or ``uint16`` (like tf.io.decode_png); channels 0, 1, 3 or 4."""
    step = "decode_png()"
    data = _check_bytes(step, contents)
    if not data.startswith(_PNG):
        raise InvalidArgumentError(f"{step}: not a PNG (the data does not start with the PNG signature)")
    return _decode_cv2(step, data, _channels_arg(step, channels, (0, 1, 3, 4)), np.dtype(dtype))


def _decode_cv2(step: str, data: bytes, channels: int, dtype: np.dtype) -> np.ndarray:
    cv2 = _cv2()
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise InvalidArgumentError(f"{step}: the image data ({len(data)} bytes) is corrupt or truncated")
    if image.ndim == 2:
        image = image[:, :, None]
    if image.shape[2] == 3:
        image = image[:, :, ::-1]  # OpenCV gives BGR
    elif image.shape[2] == 4:
        image = image[:, :, [2, 1, 0, 3]]
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


# ---------------------------------------------------------------------------------------------- geometry

_CV2_METHODS = {"bilinear": "INTER_LINEAR", "nearest": "", "area": "INTER_AREA"}


def resize(images: np.ndarray, size: tuple[int, int], method: str = "bilinear", preserve_aspect_ratio: bool = False,
           antialias: bool = False) -> np.ndarray:  # fmt: skip
    """Resize ``(H, W, C)`` or ``(N, H, W, C)`` images to ``size = (height, width)`` (like tf.image.resize).

    Methods ``"bilinear"`` (half-pixel centres, as tf), ``"nearest"`` and ``"area"``. Output is float32, except
    ``"nearest"``, which keeps the dtype, as in TensorFlow.
    """
    cv2 = _cv2()
    step = "resize()"
    images = np.asarray(images)
    if images.ndim not in (3, 4):
        raise InvalidArgumentError(f"resize(): images must be (H, W, C) or (N, H, W, C), got shape {images.shape}")
    if method not in _CV2_METHODS:
        raise InvalidArgumentError(f"{step}: `method` must be one of {sorted(_CV2_METHODS)}, got {method!r}")
    if antialias:
        raise InvalidArgumentError(f"{step}: antialias=True is not supported; use method='area' to downscale smoothly")
    height, width = (int(s) for s in size)
    if height <= 0 or width <= 0:
        raise InvalidArgumentError(f"{step}: `size` must be positive, got {size}")
    h, w = images.shape[-3:-1]
    if preserve_aspect_ratio:
        scale = min(height / h, width / w)
        height, width = max(1, round(h * scale)), max(1, round(w * scale))
    if method == "nearest":  # tf's half-pixel-centre rule, exactly, by indexing
        rows = np.minimum(np.floor((np.arange(height) + 0.5) * (h / height)).astype(np.intp), h - 1)
        cols = np.minimum(np.floor((np.arange(width) + 0.5) * (w / width)).astype(np.intp), w - 1)
        return images[..., rows[:, None], cols[None, :], :]
    flag = getattr(cv2, _CV2_METHODS[method])

    def one(image: np.ndarray) -> np.ndarray:
        # tf resizes in float32: convert in a per-thread scratch buffer, not a fresh array per image
        source = image if image.dtype == np.float32 else _float32_scratch(image)
        out = cv2.resize(source, (width, height), interpolation=flag)
        return out if out.ndim == 3 else out[:, :, None]

    if images.ndim == 3:
        return one(images)
    return np.stack([one(im) for im in images]) if len(images) else np.zeros((0, height, width, images.shape[3]))


_scratch = threading.local()


def _float32_scratch(image: np.ndarray) -> np.ndarray:
    """``image`` as float32 in this thread's reusable buffer (valid until the thread's next call)."""
    buf = getattr(_scratch, "buf", None)
    if buf is None or buf.size < image.size:
        buf = _scratch.buf = np.empty(image.size, np.float32)
    view = buf[: image.size].reshape(image.shape)
    np.copyto(view, image, casting="unsafe")
    return view


def central_crop(image: np.ndarray, central_fraction: float) -> np.ndarray:
    """The central ``central_fraction`` of each side (like tf.image.central_crop, same rounding)."""
    if not 0.0 < central_fraction <= 1.0:
        raise InvalidArgumentError(f"central_crop(): central_fraction must be in (0, 1], got {central_fraction}")
    if central_fraction == 1.0:
        return image
    h, w = image.shape[-3:-1]
    top, left = int((h - h * central_fraction) / 2), int((w - w * central_fraction) / 2)
    return image[..., top : h - top, left : w - left, :]


_rng_lock = threading.Lock()
_generators: dict[Any, np.random.Generator] = {}


def _generator(seed: int | None, rng: np.random.Generator | None) -> np.random.Generator:
    if rng is not None:
        return rng
    with _rng_lock:
        gen = _generators.get(seed)
        if gen is None:
            gen = _generators[seed] = np.random.default_rng(seed)
        return gen


def _stateless(seed: Any) -> np.random.Generator:
    pair = np.asarray(seed).reshape(-1)
    if pair.size != 2:
        raise InvalidArgumentError(f"stateless ops need `seed` of two integers, got {seed!r}")
    return np.random.default_rng([int(v) & 0xFFFFFFFFFFFFFFFF for v in pair])


def _crop(step: str, value: np.ndarray, size: Any, gen: np.random.Generator) -> np.ndarray:
    value = np.asarray(value)
    size = tuple(int(s) for s in size)
    if len(size) != value.ndim or any(s > d or s < 0 for s, d in zip(size, value.shape)):
        raise InvalidArgumentError(f"{step}: cannot crop {size} out of shape {value.shape}; size must fit in it")
    start = [int(gen.integers(0, d - s + 1)) for s, d in zip(size, value.shape)]
    return value[tuple(slice(a, a + s) for a, s in zip(start, size))]


def random_crop(value: np.ndarray, size: Any, seed: int | None = None, rng: np.random.Generator | None = None):
    """A uniformly placed crop of ``size`` (one entry per dimension of ``value``), like tf.image.random_crop."""
    return _crop("random_crop()", value, size, _generator(seed, rng))


def stateless_random_crop(value: np.ndarray, size: Any, seed: Any) -> np.ndarray:
    """``random_crop`` fixed by ``seed=(a, b)``."""
    return _crop("stateless_random_crop()", value, size, _stateless(seed))


def random_flip_left_right(image: np.ndarray, seed: int | None = None, rng: np.random.Generator | None = None):
    """Mirror the image horizontally with probability 1/2 (per image for a batch)."""
    return _flip(np.asarray(image), _generator(seed, rng))


def stateless_random_flip_left_right(image: np.ndarray, seed: Any) -> np.ndarray:
    """``random_flip_left_right`` fixed by ``seed=(a, b)``."""
    return _flip(np.asarray(image), _stateless(seed))


def _flip(image: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    if image.ndim == 3:
        return image[:, ::-1] if gen.random() < 0.5 else image
    flips = gen.random(len(image)) < 0.5
    out = image.copy()
    out[flips] = image[flips][:, :, ::-1]
    return out


def flip_left_right(image: np.ndarray) -> np.ndarray:
    """Mirror horizontally."""
    return np.asarray(image)[..., ::-1, :]


# ---------------------------------------------------------------------------------------------- values


def convert_image_dtype(image: np.ndarray, dtype: Any, saturate: bool = False) -> np.ndarray:
    """Convert between image dtypes with tf's scaling (integers span [0, max], floats [0, 1]), exactly as tf does."""
    image = np.asarray(image)
    src, dst = image.dtype, np.dtype(dtype)
    if src == dst:
        return image
    if dst.kind not in "iuf" or src.kind not in "iuf":
        raise InvalidArgumentError(f"convert_image_dtype(): only integer and float dtypes, got {src} -> {dst}")
    if src.kind in "iu" and dst.kind in "iu":
        scale_in, scale_out = int(np.iinfo(src).max), int(np.iinfo(dst).max)
        if scale_in > scale_out:
            return _cast(image // ((scale_in + 1) // (scale_out + 1)), dst, saturate)
        return _cast(image, dst, saturate) * dst.type((scale_out + 1) // (scale_in + 1))
    if src.kind == "f" and dst.kind == "f":
        return image.astype(dst)
    if src.kind in "iu":
        return image.astype(dst) * dst.type(1.0 / np.iinfo(src).max)
    return _cast(image * src.type(np.iinfo(dst).max + 0.5), dst, saturate)


def _cast(x: np.ndarray, dtype: np.dtype, saturate: bool) -> np.ndarray:
    if saturate:
        info = np.iinfo(dtype)
        x = np.clip(x, max(info.min, -(2**63)), info.max)
    with np.errstate(invalid="ignore"):
        return x.astype(dtype)


def per_image_standardization(image: np.ndarray) -> np.ndarray:
    """``(x - mean) / max(std, 1 / sqrt(N))`` over each image's pixels, float32 (like tf's)."""
    x = np.asarray(image, dtype=np.float32)
    axes = tuple(range(x.ndim - 3, x.ndim))
    n = math.prod(x.shape[-3:])
    mean = x.mean(axis=axes, keepdims=True)
    std = np.maximum(x.std(axis=axes, keepdims=True), np.float32(1.0 / math.sqrt(n)))
    return ((x - mean) / std).astype(np.float32)


def normalize(image: np.ndarray, mean: Any, std: Any) -> np.ndarray:
    """``(x - mean) / std`` per channel, float32 (e.g. ImageNet's mean and std on [0, 1] images)."""
    mean = np.asarray(mean, np.float32)
    std = np.asarray(std, np.float32)
    if np.any(std == 0):
        raise InvalidArgumentError("normalize(): `std` must not contain 0")
    return (np.asarray(image, np.float32) - mean) / std

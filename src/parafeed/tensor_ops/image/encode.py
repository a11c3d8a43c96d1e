"""Encoding images: ``encode_jpeg`` and ``encode_png`` (like tf.io / tf.image), through OpenCV's libjpeg-turbo and
libpng (and zlib for two-channel PNGs, which OpenCV cannot write).

The bytes are not TensorFlow's, but they decode in TensorFlow (and in parafeed) to the same pixels: PNG exactly;
JPEG to what TensorFlow's own encoder gives with the same quality and chroma subsampling (the same libjpeg-turbo
quantisation; tests/differential/test_image_geometry.py checks both round trips).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.image import checks

_FORMATS = {"": (1, 3), "grayscale": (1,), "rgb": (3,)}


def encode_jpeg(
    image: Any,
    format: str = "",
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: Any = None,
) -> bytes:
    """JPEG bytes of a ``uint8 (height, width, 1 or 3)`` image, like tf.io.encode_jpeg: ``quality`` 0-100,
    ``chroma_downsampling`` 4:2:0 (else 4:4:4), ``density_unit`` ``"in"`` or ``"cm"`` with ``x_density`` /
    ``y_density`` in the JFIF header, ``xmp_metadata`` as an XMP segment."""
    op = "encode_jpeg()"
    x = checks.dtype(op, checks.array(op, image), ("uint8",))
    if x.ndim != 3:
        raise InvalidArgumentError(f"{op}: `image` must be 3-D (height, width, channels), got shape {x.shape}")
    if format not in _FORMATS:
        raise InvalidArgumentError(f"{op}: `format` must be '', 'grayscale' or 'rgb', got {format!r}")
    if x.shape[2] not in _FORMATS[format]:
        want = " or ".join(str(c) for c in _FORMATS[format])
        raise InvalidArgumentError(f"{op}: format {format!r} takes {want} channels, got shape {x.shape}")
    quality = checks.integer(op, quality, "quality")
    if not 0 <= quality <= 100:
        raise InvalidArgumentError(f"{op}: `quality` must be in [0, 100], got {quality}")
    if density_unit not in ("in", "cm"):
        raise InvalidArgumentError(f"{op}: `density_unit` must be 'in' or 'cm', got {density_unit!r}")
    if 0 in x.shape:
        raise InvalidArgumentError(f"{op}: cannot encode the empty image of shape {x.shape}")
    cv2 = checks.cv2()
    params = [
        cv2.IMWRITE_JPEG_QUALITY, max(quality, 1),
        cv2.IMWRITE_JPEG_PROGRESSIVE, int(bool(progressive)),
        cv2.IMWRITE_JPEG_OPTIMIZE, int(bool(optimize_size)),
        cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
        cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420 if chroma_downsampling else cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444,
    ]  # fmt: skip
    pixels = np.ascontiguousarray(x[:, :, ::-1] if x.shape[2] == 3 else x)  # OpenCV takes BGR
    ok, encoded = cv2.imencode(".jpg", pixels, params)
    if not ok:
        raise InvalidArgumentError(f"{op}: JPEG encoding of the {x.shape} image failed")
    data = encoded.tobytes()
    units = 1 if density_unit == "in" else 2
    x_d, y_d = checks.integer(op, x_density, "x_density"), checks.integer(op, y_density, "y_density")
    return _jfif(data, units, x_d, y_d, xmp_metadata)


def _jfif(data: bytes, units: int, x_density: int, y_density: int, xmp: str) -> bytes:
    """``data`` with the JFIF header's density set and an XMP segment after it (where there is a JFIF header)."""
    if data[2:4] != b"\xff\xe0" or data[6:11] != b"JFIF\x00":
        return data
    length = struct.unpack(">H", data[4:6])[0]
    app0 = bytearray(data[2 : 4 + length])
    app0[11:16] = struct.pack(">BHH", units, x_density & 0xFFFF, y_density & 0xFFFF)
    segments = bytes(app0)
    if xmp:
        payload = b"http://ns.adobe.com/xap/1.0/\x00" + xmp.encode()
        if len(payload) + 2 <= 0xFFFF:
            segments += b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    return data[:2] + segments + data[4 + length :]


def encode_png(image: Any, compression: int = -1, name: Any = None) -> bytes:
    """PNG bytes of a ``uint8`` or ``uint16 (height, width, 1 to 4)`` image (gray, gray + alpha, RGB, RGBA), like
    tf.io.encode_png; ``compression`` 0-9, -1 for zlib's default (6)."""
    op = "encode_png()"
    x = checks.dtype(op, checks.array(op, image), ("uint8", "uint16"))
    if x.ndim != 3:
        raise InvalidArgumentError(f"{op}: `image` must be 3-D (height, width, channels), got shape {x.shape}")
    if not 1 <= x.shape[2] <= 4:
        raise InvalidArgumentError(f"{op}: `image` must have 1, 2, 3 or 4 channels, got shape {x.shape}")
    level = checks.integer(op, compression, "compression")
    if not -1 <= level <= 9:
        raise InvalidArgumentError(f"{op}: `compression` must be in [-1, 9], got {level}")
    if 0 in x.shape:
        raise InvalidArgumentError(f"{op}: cannot encode the empty image of shape {x.shape}")
    level = 6 if level == -1 else level
    if x.shape[2] == 2:
        return _png(x, level)
    cv2 = checks.cv2()
    pixels = x if x.shape[2] == 1 else x[:, :, [2, 1, 0]] if x.shape[2] == 3 else x[:, :, [2, 1, 0, 3]]
    ok, encoded = cv2.imencode(".png", np.ascontiguousarray(pixels), [cv2.IMWRITE_PNG_COMPRESSION, level])
    if not ok:
        raise InvalidArgumentError(f"{op}: PNG encoding of the {x.shape} image failed")
    return encoded.tobytes()


def _png(x: np.ndarray, level: int) -> bytes:
    """A PNG of gray + alpha pixels (colour type 4), rows unfiltered."""
    height, width, _ = x.shape
    depth = 8 * x.dtype.itemsize
    rows = x.astype(x.dtype.newbyteorder(">"), copy=False).reshape(height, -1).view(np.uint8)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, depth, 4, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, level)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body

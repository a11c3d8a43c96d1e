"""TFRecord's record framing: ``u64 length | u32 masked CRC-32C of the length | data | u32 masked CRC-32C of data``
(little-endian), the CRC-32C from ``google-crc32c``. Shared by the reader and writer (:mod:`parafeed.io.tfrecord`)
and the record index (:mod:`parafeed.io.index`)."""

from __future__ import annotations

import struct
from collections.abc import Callable

MASK_DELTA = 0xA282EAD8
HEADER = struct.Struct("<QI")  # the length and its masked CRC
U32 = struct.Struct("<I")


def crc32c_function() -> Callable[[bytes], int]:
    """google-crc32c's CRC-32C (hardware accelerated C), imported on first use."""
    import google_crc32c

    return google_crc32c.value


def mask(crc: int) -> int:
    """TFRecord's masking of a CRC-32C value."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + MASK_DELTA) & 0xFFFFFFFF

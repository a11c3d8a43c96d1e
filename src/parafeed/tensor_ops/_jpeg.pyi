"""Types of the optional C extension ``parafeed.tensor_ops._jpeg`` (built from ``_jpeg.c`` with libjpeg-turbo, whose
comments give the contract)."""

from typing_extensions import Buffer

def decode_crop(
    data: Buffer,
    y: int,
    x: int,
    height: int,
    width: int,
    channels: int,
    scale: int,
    fast_dct: bool,
    fancy_upsampling: bool,
    strict: bool,
    /,
) -> tuple[bytearray, tuple[int, int, int]] | tuple[None, tuple[int, int]]: ...

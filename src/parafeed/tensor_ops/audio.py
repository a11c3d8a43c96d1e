"""``pf.audio``: ``decode_wav`` and ``encode_wav`` as TensorFlow's (16-bit PCM WAV; samples as float32 in [-1, 1))."""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.convert import array
from parafeed.values.byte_strings import scalar_bytes
from parafeed.values.tensor import export_tensor_results

__all__ = ["decode_wav", "encode_wav"]

_PCM, _EXTENSIBLE = 1, 0xFFFE


class DecodeWav(NamedTuple):
    audio: np.ndarray
    sample_rate: np.ndarray


def decode_wav(contents: Any, desired_channels: int = -1, desired_samples: int = -1, name: Any = None) -> DecodeWav:
    """``tf.audio.decode_wav``: ``(audio, sample_rate)``: float32 ``[samples, channels]`` (16-bit samples / 32768)
    and an int32 rate. ``desired_channels`` keeps the first channels or repeats the last; ``desired_samples`` cuts
    or pads with zeros; -1 keeps the file's."""
    op = "decode_wav()"
    data = scalar_bytes(op, contents, "contents", text=False)
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise InvalidArgumentError(f"{op}: not a WAV file (no RIFF/WAVE header; starts with {data[:12]!r})")
    fmt, samples = None, None
    at = 12
    while at + 8 <= len(data) and samples is None:
        chunk, size = data[at : at + 4], struct.unpack_from("<I", data, at + 4)[0]
        body = data[at + 8 : at + 8 + size]
        if len(body) < size:
            raise InvalidArgumentError(f"{op}: the {chunk!r} chunk at byte {at} is cut short ({len(body)} of {size})")
        if chunk == b"fmt ":
            if size < 16:
                raise InvalidArgumentError(f"{op}: the fmt chunk has {size} bytes, fewer than 16")
            fmt = struct.unpack_from("<HHIIHH", body)
        elif chunk == b"data":
            samples = body
        at += 8 + size + (size & 1)
    if fmt is None or samples is None:
        raise InvalidArgumentError(f"{op}: the WAV data has no {'fmt' if fmt is None else 'data'} chunk")
    audio_format, channels, rate, _, _, bits = fmt
    if audio_format not in (_PCM, _EXTENSIBLE):
        raise InvalidArgumentError(f"{op}: only PCM WAV is supported, the file's format is {audio_format}")
    if bits != 16:
        raise InvalidArgumentError(f"{op}: can only read 16-bit WAV files, this one has {bits}-bit samples")
    if channels < 1:
        raise InvalidArgumentError(f"{op}: the WAV file has {channels} channels")
    frames = len(samples) // (2 * channels)
    audio = np.frombuffer(samples, "<i2", count=frames * channels).reshape(frames, channels)
    audio = audio.astype(np.float32) / np.float32(32768)
    if desired_channels > 0 and desired_channels != channels:
        keep = np.minimum(np.arange(desired_channels), channels - 1)
        audio = audio[:, keep]
    if desired_samples >= 0 and desired_samples != frames:
        audio = np.pad(audio[:desired_samples], [(0, max(0, desired_samples - frames)), (0, 0)])
    return DecodeWav(np.ascontiguousarray(audio), np.array(rate, np.int32))


def encode_wav(audio: Any, sample_rate: Any, name: Any = None) -> bytes:
    """``tf.audio.encode_wav``: float32 ``[samples, channels]`` in [-1, 1] as a 16-bit PCM WAV file (values beyond
    are clipped)."""
    op = "encode_wav()"
    x = array(audio, op)
    if x.ndim != 2 or x.dtype != np.float32:
        raise InvalidArgumentError(f"{op}: audio must be float32 [samples, channels], got {x.dtype} {x.shape}")
    rate = int(np.asarray(sample_rate))
    pcm = np.clip(np.round(x * np.float32(32768)), -32768, 32767).astype("<i2").tobytes()
    channels = x.shape[1]
    fmt = struct.pack("<HHIIHH", _PCM, channels, rate, rate * channels * 2, channels * 2, 16)
    return b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + (
        struct.pack("<I", len(pcm)) + pcm)  # fmt: skip


export_tensor_results(globals())  # (results as Tensors, as TensorFlow's operations return them)

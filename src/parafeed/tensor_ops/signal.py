"""``pf.signal``: TensorFlow's ``tf.signal`` operations that audio input pipelines call (``stft``, ``frame``, the
windows, ``fft`` / ``ifft`` / ``rfft`` / ``irfft``), on NumPy, in TensorFlow's precision: float32 signals give
complex64 spectra computed in float32.

The FFTs are scipy's (pocketfft, the algorithm TensorFlow's DUCC FFT descends from: for the same input they give
TensorFlow's bits in our tests); the windows are computed with TensorFlow's formula in float32, whose cosines differ
from TensorFlow's by a few float32 ulps (below 1e-6), so ``stft`` matches within that (docs/formats.md).

Example:
    >>> pf.signal.stft(np.zeros(400, np.float32), frame_length=255, frame_step=128).shape
    (2, 129)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.convert import array, axis_arg
from parafeed.values.tensor import export_tensor_results

__all__ = ["fft", "frame", "hamming_window", "hann_window", "ifft", "irfft", "rfft", "stft"]

_COMPLEX: dict[np.dtype, np.dtype] = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}


def _scipy_fft() -> Any:
    try:
        import scipy.fft  # type: ignore[import-untyped]
    except ImportError:
        raise ImportError(
            "pf.signal's FFTs need scipy (TensorFlow's float32 FFT results): pip install 'parafeed[audio]'"
        ) from None
    return scipy.fft


def hann_window(window_length: Any, periodic: bool = True, dtype: Any = np.float32, name: Any = None) -> np.ndarray:
    """``tf.signal.hann_window``: ``0.5 - 0.5 cos(2 pi n / N)``, N the length (periodic) or length - 1."""
    return _raised_cosine("hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length: Any, periodic: bool = True, dtype: Any = np.float32, name: Any = None) -> np.ndarray:
    """``tf.signal.hamming_window``: ``0.54 - 0.46 cos(2 pi n / N)``."""
    return _raised_cosine("hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def _raised_cosine(op: str, length: Any, periodic: bool, dtype: Any, a: float, b: float) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise InvalidArgumentError(f"{op}(): dtype must be a floating point type, got {dt}")
    length = int(length)
    if length == 1:
        return np.ones(1, dt)
    even = 1 - length % 2
    n = dt.type(length + int(bool(periodic)) * even - 1)
    count = np.arange(length, dtype=dt)
    return (dt.type(a) - dt.type(b) * np.cos(dt.type(2 * np.pi) * count / n)).astype(dt)


def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False, pad_value: Any = 0, axis: Any = -1,
          name: Any = None) -> np.ndarray:  # fmt: skip
    """``tf.signal.frame``: windows of ``frame_length`` samples every ``frame_step`` along ``axis`` (which becomes two
    axes: frames, samples); ``pad_end`` pads the end with ``pad_value`` so that every sample is in a frame."""
    op = "frame()"
    x = array(signal, op)
    if x.ndim == 0:
        raise InvalidArgumentError(f"{op}: `signal` must have at least one dimension, got a scalar")
    length, step = int(frame_length), int(frame_step)
    if length <= 0 or step <= 0:
        raise InvalidArgumentError(f"{op}: frame_length and frame_step must be positive, got {length}, {step}")
    ax = axis_arg(axis, x.ndim, op)
    samples = x.shape[ax]
    if pad_end:
        count = -(-samples // step)
        padding = max(0, (count - 1) * step + length - samples)
        widths = [(0, 0)] * x.ndim
        widths[ax] = (0, padding)
        x = np.pad(x, widths, constant_values=np.asarray(pad_value, x.dtype))
    else:
        count = 0 if samples < length else 1 + (samples - length) // step
    moved = np.moveaxis(x, ax, -1)
    if count == 0:
        frames = np.zeros((*moved.shape[:-1], 0, length), x.dtype)
    else:
        windows = np.lib.stride_tricks.sliding_window_view(moved, length, axis=-1)
        frames = windows[..., : (count - 1) * step + 1 : step, :]
    return np.ascontiguousarray(np.moveaxis(frames, (-2, -1), (ax, ax + 1)))


def stft(
    signals: Any,
    frame_length: Any,
    frame_step: Any,
    fft_length: Any = None,
    window_fn: Callable[..., Any] | None = hann_window,
    pad_end: bool = False,
    name: Any = None,
) -> np.ndarray:
    """``tf.signal.stft``: the short-time Fourier transform of the innermost axis: frames of ``frame_length`` every
    ``frame_step``, times ``window_fn(frame_length, dtype=...)``, through an FFT of ``fft_length`` (by default the
    smallest power of 2 that holds a frame): ``[..., frames, fft_length // 2 + 1]`` complex."""
    op = "stft()"
    x = array(signals, op)
    if x.dtype.kind != "f":
        raise InvalidArgumentError(f"{op}: `signals` must be float32 or float64, got {x.dtype}")
    length = int(frame_length)
    n = int(fft_length) if fft_length is not None else 2 ** math.ceil(math.log2(length))
    frames = frame(x, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * np.asarray(window_fn(length, dtype=x.dtype), x.dtype)
    return rfft(frames, [n])


def rfft(input_tensor: Any, fft_length: Any = None, name: Any = None) -> np.ndarray:
    """``tf.signal.rfft``: the FFT of a real signal's innermost axis, cut or zero-padded to ``fft_length``."""
    x = array(input_tensor, "rfft()")
    if x.dtype not in _COMPLEX or x.ndim == 0:
        raise InvalidArgumentError(f"rfft(): input must be float32 or float64 of rank >= 1, got {x.dtype} {x.shape}")
    n = x.shape[-1] if fft_length is None else int(np.reshape(fft_length, -1)[0])
    if x.size == 0:  # (TensorFlow pads no empty input: its kernel then wants n values)
        if n > x.shape[-1]:
            raise InvalidArgumentError(f"rfft(): an empty input's last dimension has {x.shape[-1]} values, < {n}")
        return np.zeros((*x.shape[:-1], n // 2 + 1), _COMPLEX[x.dtype])
    return np.asarray(_scipy_fft().rfft(x, n=n, axis=-1), _COMPLEX[x.dtype])


def irfft(input_tensor: Any, fft_length: Any = None, name: Any = None) -> np.ndarray:
    """``tf.signal.irfft``: the real signal of a half spectrum (``fft_length`` samples: by default 2 (n - 1))."""
    x = _complex(input_tensor, "irfft()")
    n = 2 * (x.shape[-1] - 1) if fft_length is None else int(np.reshape(fft_length, -1)[0])
    real = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
    return np.asarray(_scipy_fft().irfft(x, n=n, axis=-1), real)


def fft(input: Any, name: Any = None) -> np.ndarray:
    """``tf.signal.fft``: the FFT of a complex signal's innermost axis (complex64 or complex128, kept)."""
    x = _complex(input, "fft()")
    return np.asarray(_scipy_fft().fft(x, axis=-1), x.dtype)


def ifft(input: Any, name: Any = None) -> np.ndarray:
    """``tf.signal.ifft``: the inverse FFT of the innermost axis, scaled by 1/n as TensorFlow's."""
    x = _complex(input, "ifft()")
    return np.asarray(_scipy_fft().ifft(x, axis=-1), x.dtype)


def _complex(value: Any, op: str) -> np.ndarray:
    x = array(value, op)
    if x.dtype.kind != "c":
        raise InvalidArgumentError(f"{op}: input must be complex64 or complex128, got {x.dtype}; pf.complex(x, 0)")
    if x.ndim == 0:
        raise InvalidArgumentError(f"{op}: input must have at least one dimension, got a scalar")
    return x


export_tensor_results(globals())  # (results as Tensors, as TensorFlow's operations return them)

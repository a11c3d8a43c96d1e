"""pf.signal and pf.audio against tf.signal and tf.audio: STFTs, frames, windows and FFTs on signals hypothesis makes
(lengths around the frame length, both float dtypes), WAV files decoded and encoded both ways. FFT results are
compared within float rounding: the windows' cosines differ from TensorFlow's by a few float32 ulps (docs/formats.md).
"""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parafeed as pf

tf = pytest.importorskip("tensorflow", reason="compared with tf.signal (make test installs TensorFlow)")

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def signals(min_size=0, max_size=600):
    return st.tuples(st.sampled_from([np.float32, np.float64]), st.integers(min_size, max_size), st.integers(0, 2),
                     st.integers(0, 2**32 - 1)).map(_signal)  # fmt: skip


def _signal(args):
    dtype, length, batch, seed = args
    shape = (length,) if batch == 0 else (batch, length)
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def both(fn, *args):
    """TensorFlow's and parafeed's results (or error kinds) of ``fn(module, *args)``."""
    out = []
    for module in (tf, pf):
        try:
            result = fn(module, *[tf.constant(a) if module is tf else a for a in args])
            out.append(np.asarray(result.numpy() if hasattr(result, "numpy") else result))
        except TypeError:
            out.append("TypeError")
        except (ValueError, tf.errors.InvalidArgumentError):  # (TensorFlow's, and parafeed's InvalidArgumentError)
            out.append("ValueError")
    return out


def assert_close(want, got, rtol=1e-5):
    assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), (want, got)
    if not isinstance(want, np.ndarray):
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


@SETTINGS
@given(signals(), st.sampled_from([16, 64, 255, 256]), st.sampled_from([8, 64, 128]), st.booleans(),
       st.sampled_from([None, 512]))  # fmt: skip
def test_stft(x, frame_length, frame_step, pad_end, fft_length):
    want, got = both(lambda m, s: m.signal.stft(s, frame_length, frame_step, fft_length=fft_length, pad_end=pad_end), x)
    assert_close(want, got)


@SETTINGS
@given(signals(max_size=40), st.sampled_from([1, 4, 7]), st.sampled_from([1, 3, 8]), st.booleans(),
       st.sampled_from([0, -1]))  # fmt: skip
def test_frame(x, frame_length, frame_step, pad_end, axis):
    want, got = both(lambda m, s: m.signal.frame(s, frame_length, frame_step, pad_end=pad_end, axis=axis), x)
    assert isinstance(want, np.ndarray) and want.dtype == got.dtype and want.shape == got.shape, (want, got)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("window", ["hann_window", "hamming_window"])
@pytest.mark.parametrize("length", [1, 2, 31, 255, 256, 400])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(window, length, periodic):
    want, got = both(lambda m: getattr(m.signal, window)(length, periodic=periodic))
    np.testing.assert_allclose(got, want, atol=1e-6)


@SETTINGS
@given(signals(min_size=1, max_size=300), st.sampled_from([None, 8, 100, 256]))
def test_rfft_and_irfft(x, n):
    want, got = both(lambda m, s: m.signal.rfft(s, None if n is None else [n]), x)
    assert_close(want, got)
    if isinstance(want, np.ndarray) and want.shape[-1] > 1:
        inverse = both(lambda m, s: m.signal.irfft(s, None if n is None else [n]), want)
        assert_close(*inverse)


@SETTINGS
@given(signals(min_size=1, max_size=300))
def test_fft_and_ifft(x):
    spectrum = x.astype(np.complex64 if x.dtype == np.float32 else np.complex128)
    for op in ("fft", "ifft"):
        assert_close(*both(lambda m, s: getattr(m.signal, op)(s), spectrum))
    assert both(lambda m, s: m.signal.fft(s), x) == ["ValueError", "ValueError"]  # (real input: a complex is needed)


def wav_file(samples, channels, width=2, rate=16000):
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    return buffer.getvalue()


@pytest.mark.parametrize("channels", [1, 2, 3])
@pytest.mark.parametrize("desired_channels", [-1, 1, 2, 4])
@pytest.mark.parametrize("desired_samples", [-1, 0, 5, 12])
def test_decode_wav(channels, desired_channels, desired_samples):
    samples = np.random.default_rng(channels).integers(-32768, 32768, (10, channels)).astype("<i2")
    data = wav_file(samples, channels)
    want = tf.audio.decode_wav(data, desired_channels=desired_channels, desired_samples=desired_samples)
    got = pf.audio.decode_wav(data, desired_channels=desired_channels, desired_samples=desired_samples)
    np.testing.assert_array_equal(got.audio, want.audio.numpy())
    assert got.audio.dtype == np.float32 and got.sample_rate.dtype == np.int32 and got.sample_rate == 16000


def test_decode_wav_errors():
    for bad in [wav_file(np.zeros(10, np.uint8), 1, width=1), b"RIFF\x00\x00\x00\x00WAVE", b"not a wav file"]:
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.audio.decode_wav(bad)
        with pytest.raises(pf.errors.InvalidArgumentError, match="decode_wav"):
            pf.audio.decode_wav(bad)


def test_encode_wav_gives_tensorflows_bytes():
    audio = np.concatenate([np.random.default_rng(0).uniform(-1.2, 1.2, (50, 2)), [[1e-5, -1e-5], [0.5, -1]]])
    audio = audio.astype(np.float32)
    want = tf.audio.encode_wav(audio, 22050).numpy()
    assert pf.audio.encode_wav(audio, 22050) == want
    np.testing.assert_array_equal(pf.audio.decode_wav(want).audio, tf.audio.decode_wav(want).audio.numpy())

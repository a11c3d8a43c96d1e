"""TensorFlow's resize kernels, computed the way its CPU kernels compute them, one axis at a time.

Every kernel TensorFlow resizes with is separable: an output pixel is a combination of input rows, then of input
columns (or columns, then rows), with weights that depend only on the sizes. This module computes, per axis and
cached per size, where each output samples and with which float32 weights, following TensorFlow's sampling rules:

* ``linear_axis``: ResizeBilinear's lower and upper neighbour and the fraction between them (half-pixel centres,
  or the legacy ``x * scale`` with ``align_corners``); the result is ``top + (bottom - top) * fraction`` after
  ``left + (right - left) * fraction``, in this order, as TensorFlow rounds it.
* ``nearest_axis``: ResizeNearestNeighbor's source index (floor, or round with ``align_corners``).
* ``cubic_axis``: ResizeBicubic's four neighbours and their weights from its 1025-entry table (Keys' a = -0.5 with
  half-pixel centres, weights outside the image dropped and the rest renormalised; a = -0.75 otherwise).
* ``area_axis``: ResizeArea's covered input pixels and the fraction each contributes.
* ``span_axis``: ScaleAndTranslate's span of inputs and its normalised kernel weights, for lanczos3, lanczos5,
  gaussian, mitchellcubic and the antialiased triangle (bilinear) and keyscubic (bicubic).

The passes (:func:`linear`, :func:`taps`, :func:`nearest`) then do the arithmetic in float32, in TensorFlow's order
(rows then columns for bicubic and scale-and-translate, columns then rows for bilinear and area), so the results are
bit-exact with tf.image on CPU (measured by tests/differential/test_image_resize.py: max abs error 0). Lanczos
weights call the C library's ``sinf``, as TensorFlow does; where it cannot be loaded they round a double-precision
sine, which moves some weights by an ulp.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

try:
    from parafeed.tensor_ops import _resize
except ImportError:  # (an optional extension: the NumPy version below does the same)
    _resize = None  # type: ignore[assignment]

F32 = np.float32
_TABLE_SIZE = 1024
_TINY = F32(1000) * np.finfo(F32).tiny  # below this a weight sum is not normalised (TensorFlow's guard)


def resize_scale(n_in: int, n_out: int, align_corners: bool) -> np.float32:
    """Input pixels per output pixel, in float32 (``(in - 1) / (out - 1)`` with ``align_corners``)."""
    if align_corners and n_in > 1 and n_out > 1:
        return F32(n_in - 1) / F32(n_out - 1)
    return F32(n_in) / F32(n_out)


def _positions(n_out: int, scale: np.float32, half_pixel: bool) -> np.ndarray:
    i = np.arange(n_out, dtype=F32)
    return (i + F32(0.5)) * scale - F32(0.5) if half_pixel else i * scale


def _frozen(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays made read-only (they are cached and shared)."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _pair(index: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Source indices (as ``intp``) and their weights, read-only."""
    index = index.astype(np.intp)
    _frozen(index, weights)
    return index, weights


@functools.lru_cache(maxsize=512)
def linear_axis(n_in: int, n_out: int, align_corners: bool, half_pixel: bool) -> tuple[np.ndarray, ...]:
    """``(lower, upper, fraction, rows, lower_at, upper_at)``: ResizeBilinear's neighbours and fractions, the input
    indices any output needs (sorted) and where ``lower`` / ``upper`` are among them."""
    pos = _positions(n_out, resize_scale(n_in, n_out, align_corners), half_pixel)
    floor = np.floor(pos)
    lower = np.maximum(floor, 0).astype(np.intp)
    upper = np.minimum(np.ceil(pos).astype(np.intp), n_in - 1)
    fraction = (pos - floor).astype(F32)
    rows = np.unique(np.concatenate([lower, upper]))
    return _frozen(lower, upper, fraction, rows, np.searchsorted(rows, lower), np.searchsorted(rows, upper))


@functools.lru_cache(maxsize=512)
def nearest_axis(n_in: int, n_out: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """ResizeNearestNeighbor's source index per output index."""
    i = np.arange(n_out, dtype=F32)
    scale = resize_scale(n_in, n_out, align_corners)
    pos = (i + F32(0.5)) * scale if half_pixel else i * scale
    # roundf (halves away from zero) on the float32 position, done exactly in float64; floor otherwise
    index = np.floor(pos.astype(np.float64) + 0.5) if align_corners else np.floor(pos)
    index = np.minimum(index.astype(np.int64), n_in - 1)
    if half_pixel:
        index = np.maximum(index, 0)
    return _frozen(index.astype(np.intp))[0]


@functools.lru_cache(maxsize=2)
def _cubic_table(a: float) -> tuple[np.ndarray, np.ndarray]:
    """ResizeBicubic's coefficients for distances ``t`` and ``1 + t``, ``t = i / 1024``, computed in double and
    stored as float32."""
    x = (np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE).astype(F32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = x + 1.0
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return near.astype(F32), far.astype(F32)


@functools.lru_cache(maxsize=512)
def cubic_axis(n_in: int, n_out: int, align_corners: bool, half_pixel: bool) -> tuple[np.ndarray, np.ndarray]:
    """ResizeBicubic's four source indices and float32 weights per output index, ``(n_out, 4)`` each."""
    pos = _positions(n_out, resize_scale(n_in, n_out, align_corners), half_pixel)
    floor = np.floor(pos)
    offset = np.rint((pos - floor).astype(F32) * F32(_TABLE_SIZE)).astype(np.intp)  # lrintf: halves to even
    near, far = _cubic_table(-0.5 if half_pixel else -0.75)
    weights = np.stack([far[offset], near[offset], near[_TABLE_SIZE - offset], far[_TABLE_SIZE - offset]], 1)
    wanted = floor.astype(np.int64)[:, None] + np.arange(-1, 3)
    index = np.clip(wanted, 0, n_in - 1)
    if half_pixel:  # Keys' kernel: samples outside the image weigh 0, the others are renormalised
        weights = np.where(index == wanted, weights, F32(0)).astype(F32)
        total = ((weights[:, 0] + weights[:, 1]) + weights[:, 2]) + weights[:, 3]
        ok = np.abs(total) >= _TINY
        inverse = F32(1) / np.where(ok, total, F32(1))
        weights = np.where(ok[:, None], weights * inverse[:, None], weights).astype(F32)
    return _pair(index, weights)


@functools.lru_cache(maxsize=512)
def area_axis(n_in: int, n_out: int, scale: float, columns: bool) -> tuple[np.ndarray, np.ndarray]:
    """ResizeArea's covered input indices and the fraction of each, ``(n_out, K)``; padded with weight 0. Along
    columns the first covered pixel always counts and the last one counts once more when it is another (TensorFlow
    adds them outside its loop); along rows only the covered ones count."""
    s = F32(scale)
    i = np.arange(n_out, dtype=np.int64)
    lo = i.astype(F32) * s
    hi = (i + 1).astype(F32) * s
    start = np.floor(lo).astype(np.int64)
    end = np.ceil(hi).astype(np.int64)
    count = end - start
    if columns:
        count = np.where(count == 1, 1, np.maximum(count, 2))
    k = max(int(count.max()), 1)
    step = np.arange(k)
    v = start[:, None] + step
    if columns:  # the last term is end - 1 even where the span is empty
        v = np.where((step == count[:, None] - 1) & (count[:, None] > 1), end[:, None] - 1, v)
    vf, v1 = v.astype(F32), (v + 1).astype(F32)
    lo2, hi2 = lo[:, None], hi[:, None]
    weights = np.where(vf < lo2, np.where(v1 > hi2, s, v1 - lo2), np.where(v1 > hi2, hi2 - vf, F32(1)))
    weights = np.where(step < count[:, None], weights, F32(0)).astype(F32)
    return _pair(np.clip(v, 0, n_in - 1), weights)


def area_scale(height_scale: float, width_scale: float) -> np.float32:
    """The factor ResizeArea multiplies its sums by: ``1 / (height_scale * width_scale)``, the product in float32,
    the division in double."""
    with np.errstate(divide="ignore"):
        return F32(1.0 / np.float64(F32(height_scale) * F32(width_scale)))


# ---------------------------------------------------------------------------------------------- scale and translate


def _sinf() -> Callable[[np.ndarray], np.ndarray]:
    """The C library's single-precision sine (TensorFlow's ``std::sin(float)``), vectorised; or, where it cannot be
    loaded, the double-precision sine rounded to float32 (an ulp apart in about 1% of arguments)."""
    try:
        import ctypes

        function = ctypes.CDLL("libm.so.6").sinf
        function.restype, function.argtypes = ctypes.c_float, [ctypes.c_float]
    except (OSError, AttributeError):
        return lambda x: np.sin(x.astype(np.float64)).astype(F32)

    def sinf(x: np.ndarray) -> np.ndarray:
        values, where = np.unique(x.astype(F32), return_inverse=True)
        return np.array([function(float(v)) for v in values], F32)[where].reshape(x.shape)

    return sinf


_sin: Callable[[np.ndarray], np.ndarray] | None = None


def _lanczos(radius: float) -> Callable[[np.ndarray], np.ndarray]:
    r = F32(radius)
    pi = F32(3.14159265359)

    def kernel(x: np.ndarray) -> np.ndarray:
        global _sin
        if _sin is None:
            _sin = _sinf()
        px = pi * x
        with np.errstate(divide="ignore", invalid="ignore"):
            value = r * _sin(px) * _sin(px / r) / (pi * pi * x * x)
        # the limit sin(x) / x -> 1 below 1e-3, a double compared with the float (as in TensorFlow)
        return np.where(x > r, F32(0), np.where(x.astype(np.float64) <= 1e-3, F32(1), value)).astype(F32)

    return kernel


def _gaussian(x: np.ndarray) -> np.ndarray:
    radius = F32(1.5)
    sigma = np.float64(radius / F32(3))
    value = np.exp((-x * x).astype(np.float64) / (2.0 * sigma * sigma)).astype(F32)
    return np.where(x >= radius, F32(0), value).astype(F32)


def _box(x: np.ndarray) -> np.ndarray:
    return np.where(x < F32(0.5), F32(1), np.where(x == F32(0.5), F32(0.5), F32(0))).astype(F32)


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.where(x < F32(1), F32(1) - x, F32(0)).astype(F32)


def _keys_cubic(x: np.ndarray) -> np.ndarray:
    far = ((F32(-0.5) * x + F32(2.5)) * x - F32(4)) * x + F32(2)
    near = ((F32(1.5) * x - F32(2.5)) * x) * x + F32(1)
    return np.where(x >= F32(2), F32(0), np.where(x >= F32(1), far, near)).astype(F32)


def _mitchell_cubic(x: np.ndarray) -> np.ndarray:
    far = (((F32(-7) / F32(18)) * x + F32(2)) * x - F32(10) / F32(3)) * x + F32(16) / F32(9)
    near = (((F32(7) / F32(6)) * x - F32(2)) * x) * x + F32(8) / F32(9)
    return np.where(x >= F32(2), F32(0), np.where(x >= F32(1), far, near)).astype(F32)


# ScaleAndTranslate's kernels: (function of |x| in float32, radius)
SPAN_KERNELS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], float]] = {
    "lanczos1": (_lanczos(1), 1.0),
    "lanczos3": (_lanczos(3), 3.0),
    "lanczos5": (_lanczos(5), 5.0),
    "gaussian": (_gaussian, 1.5),
    "box": (_box, 1.0),
    "triangle": (_triangle, 1.0),
    "keyscubic": (_keys_cubic, 2.0),
    "mitchellcubic": (_mitchell_cubic, 2.0),
}


@functools.lru_cache(maxsize=512)
def span_axis(kernel: str, n_in: int, n_out: int, antialias: bool) -> tuple[np.ndarray, np.ndarray]:
    """ScaleAndTranslate's source indices and float32 weights, ``(n_out, span)``, for a resize from ``n_in`` to
    ``n_out`` (scale ``n_out / n_in`` in float32, no translation). With ``antialias`` a downscale widens the kernel
    by the scale, so every input pixel contributes."""
    function, radius = SPAN_KERNELS[kernel]
    inv_scale = F32(1.0 / np.float64(F32(n_out) / F32(n_in)))
    kernel_scale = max(inv_scale, F32(1)) if antialias else F32(1)
    reach = F32(radius) * kernel_scale
    span = min(2 * math.ceil(reach) + 1, n_in)
    sample = (np.arange(n_out, dtype=F32) + F32(0.5)) * inv_scale
    start = np.clip(np.ceil(sample - reach - F32(0.5)).astype(np.int64), 0, n_in - 1)
    end = np.clip(np.floor(sample + reach - F32(0.5)).astype(np.int64), 0, n_in - 1) + 1
    source = start[:, None] + np.arange(span)
    distance = np.abs(((source.astype(F32) + F32(0.5)) - sample[:, None]) * (F32(1) / kernel_scale))
    weights = np.where(source < end[:, None], function(distance), F32(0)).astype(F32)
    total = np.zeros(n_out, F32)
    for k in range(span):  # summed in order, as TensorFlow sums them
        total += weights[:, k]
    ok = np.abs(total) >= _TINY
    inverse = F32(1) / np.where(ok, total, F32(1))
    weights = np.where(ok[:, None], weights * inverse[:, None], F32(0)).astype(F32)
    outside = (sample < 0) | (sample > n_in)  # an output sampling outside the image gets no inputs
    weights[outside] = 0
    source[outside] = np.arange(span)
    weights = np.where(source < n_in, weights, F32(0)).astype(F32)
    return _pair(np.clip(source, 0, n_in - 1), weights)


# ---------------------------------------------------------------------------------------------- passes


def _columns(index: np.ndarray, channels: int) -> np.ndarray:
    """Indices of whole pixels along a row of ``width * channels`` values: NumPy gathers single values of a 2-D view
    faster than pixels of a few channels."""
    return (index[:, None] * channels + np.arange(channels)).ravel()


def _take(x: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    """``np.take(x, index, axis)`` of a 4-D array; along the columns (axis 2) through a 2-D view of its rows."""
    if axis != 2:
        return np.take(x, index, axis=axis)
    n, h, w, c = x.shape
    rows = np.ascontiguousarray(x).reshape(n * h, w * c)
    return np.take(rows, _columns(index, c), axis=1).reshape(n, h, len(index), c)


def _weights(weights: np.ndarray, axis: int, channels: int) -> np.ndarray:
    """One weight per output row (axis 1) broadcast over the row, or per output column (axis 2) repeated over its
    channels, so NumPy's inner loops run along whole rows instead of over the few channels."""
    if axis == 1:
        return weights[:, None, None]
    return np.repeat(weights, channels).reshape(len(weights), channels)


def taps(x: np.ndarray, axis: int, index: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_k weights[o, k] * x[.., index[o, k], ..]`` along ``axis`` (1 or 2) of a 4-D array, accumulated in
    float32 in the order of ``k`` (TensorFlow's order). Every value is cast to float32 first, as TensorFlow casts
    it."""
    x = x.astype(F32, copy=False)
    acc: np.ndarray | None = None
    for k in range(index.shape[1]):
        part = _take(x, index[:, k], axis)
        part *= _weights(weights[:, k], axis, x.shape[3])
        if acc is None:
            acc = part
        else:
            acc += part
    assert acc is not None
    return acc


def linear(x: np.ndarray, out_h: int, out_w: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """ResizeBilinear on a 4-D batch: float32, bit-exact. Each needed input row is interpolated across once, then
    each output row between its two interpolated rows. uint8 and float32 images go through the C extension
    ``_resize`` (the same arithmetic, value by value) where it is built."""
    n, h, w, c = x.shape
    if (h, w) == (out_h, out_w):
        return x.astype(F32)
    if _resize is not None and x.dtype in (np.uint8, F32) and x.size:
        out = np.empty((n, out_h, out_w, c), F32)
        yl, yu, fy = _c_linear_axis(h, out_h, align_corners, half_pixel)
        xl, xu, fx = _c_linear_axis(w, out_w, align_corners, half_pixel)
        _resize.bilinear(np.ascontiguousarray(x), x.dtype == F32, n, h, w, c, yl, yu, fy, xl, xu, fx, out)
        return out
    _, _, y_frac, rows, lower_at, upper_at = linear_axis(h, out_h, align_corners, half_pixel)
    x_lower, x_upper, x_frac, _, _, _ = linear_axis(w, out_w, align_corners, half_pixel)
    source = x if len(rows) == h else np.take(x, rows, axis=1)
    left = _take(source, x_lower, 2).astype(F32, copy=False)
    across = _take(source, x_upper, 2).astype(F32, copy=False)
    across -= left
    across *= _weights(x_frac, 2, x.shape[3])
    across += left
    top = np.take(across, lower_at, axis=1)
    out = np.take(across, upper_at, axis=1)
    out -= top
    out *= y_frac[:, None, None]
    out += top
    return out


@functools.lru_cache(maxsize=512)
def _c_linear_axis(n_in: int, n_out: int, align_corners: bool, half_pixel: bool) -> tuple[np.ndarray, ...]:
    """:func:`linear_axis`'s ``(lower, upper, fraction)`` as the C kernel takes them: int64, int64, float32."""
    lower, upper, fraction = linear_axis(n_in, n_out, align_corners, half_pixel)[:3]
    return _frozen(
        *(np.ascontiguousarray(a, np.int64 if a.dtype.kind == "i" else F32) for a in (lower, upper, fraction))
    )


def nearest(x: np.ndarray, out_h: int, out_w: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """ResizeNearestNeighbor on a 4-D batch, in its dtype."""
    _, h, w, _ = x.shape
    rows = nearest_axis(h, out_h, align_corners, half_pixel)
    cols = nearest_axis(w, out_w, align_corners, half_pixel)
    return _take(np.take(x, rows, axis=1), cols, 2)


def cubic(x: np.ndarray, out_h: int, out_w: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """ResizeBicubic on a 4-D batch: float32, bit-exact (rows first, then columns)."""
    _, h, w, _ = x.shape
    rows = taps(x, 1, *cubic_axis(h, out_h, align_corners, half_pixel))
    return taps(rows, 2, *cubic_axis(w, out_w, align_corners, half_pixel))


def area(x: np.ndarray, out_h: int, out_w: int, align_corners: bool) -> np.ndarray:
    """ResizeArea on a 4-D batch: float32, bit-exact (columns first, then rows, then the scale)."""
    _, h, w, _ = x.shape
    h_scale, w_scale = resize_scale(h, out_h, align_corners), resize_scale(w, out_w, align_corners)
    across = taps(x, 2, *area_axis(w, out_w, float(w_scale), True))
    out = taps(across, 1, *area_axis(h, out_h, float(h_scale), False))
    with np.errstate(invalid="ignore"):
        out *= area_scale(float(h_scale), float(w_scale))
    return out


def scale_and_translate(x: np.ndarray, out_h: int, out_w: int, kernel: str, antialias: bool) -> np.ndarray:
    """ScaleAndTranslate (no translation) on a 4-D batch: float32, bit-exact (rows first, then columns)."""
    _, h, w, _ = x.shape
    rows = taps(x, 1, *span_axis(kernel, h, out_h, antialias))
    return taps(rows, 2, *span_axis(kernel, w, out_w, antialias))

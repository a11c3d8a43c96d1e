"""The C bilinear kernel (``tensor_ops/_resize.c``) gives the NumPy kernel's values bit for bit (which
tests/differential/test_image_resize.py checks against TensorFlow), for every dtype it takes and shape."""

import numpy as np
import pytest

from parafeed.tensor_ops.image import kernels

CASES = [((1, 375, 500, 3), 224, 224, False, True), ((2, 7, 9, 1), 13, 4, True, False), ((3, 1, 6, 3), 4, 1, False, True),
         ((1, 5, 5, 4), 5, 8, False, False), ((1, 300, 20, 2), 7, 41, False, True), ((1, 6, 8, 3), 40, 33, False, True),
         ((2, 40, 30, 3), 9, 11, True, False), ((1, 2, 3, 3), 9, 5, True, False)]  # fmt: skip
# (the C kernel keeps two rows interpolated across: upscales reuse them for many output rows, downscales replace them)


@pytest.mark.skipif(kernels._resize is None, reason="the optional C extension was not built")
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("case", CASES)
def test_c_kernel_equals_numpy_kernel(case, dtype, monkeypatch):
    shape, out_h, out_w, align_corners, half_pixel = case
    x = (np.random.default_rng(0).random(shape) * 255).astype(dtype)
    fast = kernels.linear(x, out_h, out_w, align_corners, half_pixel)
    monkeypatch.setattr(kernels, "_resize", None)
    assert np.array_equal(fast, kernels.linear(x, out_h, out_w, align_corners, half_pixel))

"""Types of the optional C extension ``parafeed.tensor_ops._resize`` (``_resize.c``: TensorFlow's ResizeBilinear,
bit-exact with ``image/kernels.py``'s NumPy version)."""

from typing import Any

def bilinear(
    src: Any,
    is_float: bool,
    n: int,
    h: int,
    w: int,
    c: int,
    y_lower: Any,
    y_upper: Any,
    y_frac: Any,
    x_lower: Any,
    x_upper: Any,
    x_frac: Any,
    out: Any,
    /,
) -> None: ...

"""``pf.DType``: a dtype as ``tf.DType`` shows it (``.min``, ``.max``, ``.is_floating``, ``.as_numpy_dtype`` ...), on
a NumPy dtype that NumPy takes wherever it takes a dtype. ``values/dtypes.py`` holds the named ones."""

from __future__ import annotations

from typing import Any

import numpy as np

STRING = np.dtype(object)  # string tensors hold ``bytes`` in object arrays, as ``tensor.numpy()`` gives them


class DType:
    """A dtype as ``tf.DType`` shows it, on a NumPy dtype.

    NumPy accepts it as a dtype (``np.zeros(3, pf.int32)``: it has a ``dtype`` attribute); it equals and hashes as
    its NumPy dtype, so ``pf.int32 == np.int32`` and dicts keyed by NumPy dtypes find it. NumPy's own dtype
    attributes (``kind``, ``itemsize`` ...) are passed through.

    Example:
        >>> pf.uint8.max, pf.float32.is_floating, pf.int64.as_numpy_dtype
        (255, True, <class 'numpy.int64'>)
    """

    __slots__ = ("dtype",)

    def __init__(self, dtype: np.dtype):
        self.dtype = dtype

    @property
    def name(self) -> str:
        return "string" if self.dtype == STRING else self.dtype.name

    @property
    def as_numpy_dtype(self) -> type:
        return self.dtype.type

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        return of(np.dtype(self.dtype.type(0).real.dtype)) if self.is_complex else self

    @property
    def is_bool(self) -> bool:
        return self.dtype.kind == "b"

    @property
    def is_floating(self) -> bool:
        return self.dtype.kind == "f" or self.name == "bfloat16"

    @property
    def is_integer(self) -> bool:
        return self.dtype.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self.dtype.kind in "bu"

    @property
    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    @property
    def is_numpy_compatible(self) -> bool:
        return True

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def size(self) -> int:
        return 1 if self.dtype == STRING else self.dtype.itemsize

    @property
    def min(self) -> Any:
        return self._limit("min")

    @property
    def max(self) -> Any:
        return self._limit("max")

    @property
    def limits(self) -> tuple[Any, Any]:
        return self.min, self.max

    def _limit(self, which: str) -> Any:
        if self.is_integer:
            return getattr(np.iinfo(self.dtype), which)
        if self.is_floating:
            if self.dtype.kind != "f":
                import ml_dtypes

                return getattr(ml_dtypes.finfo(self.dtype), which)  # type: ignore[no-untyped-call]
            return getattr(np.finfo(self.dtype), which)
        raise TypeError(f"Cannot find {which}imum value of {self!r}.")

    def is_compatible_with(self, other: Any) -> bool:
        return self.__eq__(other)

    def __getattr__(self, attribute: str) -> Any:  # (NumPy's dtype attributes: kind, itemsize, type, char ...)
        return getattr(self.dtype, attribute)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.dtype == other.dtype
        if isinstance(other, str) and other in ("string", "str", "bytes"):
            return self.dtype == STRING
        try:
            return bool(self.dtype == other)
        except TypeError:
            return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        return of, (self.dtype,)

    def __repr__(self) -> str:
        return f"pf.{self.name}"

    def __str__(self) -> str:
        return self.name


_DTYPES: dict[np.dtype, DType] = {}


def of(dtype: np.dtype) -> DType:
    """The one :class:`DType` of a NumPy dtype."""
    found = _DTYPES.get(dtype)
    if found is None:
        found = _DTYPES[dtype] = DType(np.dtype(dtype))
    return found

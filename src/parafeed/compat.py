"""``pf.compat``: TensorFlow's ``tf.compat.v1`` names that input code still uses, and ``tf.compat.v2``.

``pf.compat.v1.X`` is TF1's ``X`` where it differs from TF2's (``image.resize`` with ``align_corners``,
``string_split`` giving a SparseTensor, ``gfile``'s capitalised names, ``random_uniform``, ``py_func`` ...) and
``pf.X`` otherwise, so ``tf.compat.v1.parse_single_example`` or ``tf.compat.v1.data.TFRecordDataset`` port by
the rename too. TF1's sessions, placeholders and queue runners have no counterpart: they name the TF2 way instead.
"""

from __future__ import annotations

import logging as _logging
import types
from typing import Any

import parafeed


class _Namespace(types.ModuleType):
    """A namespace whose names not set here are looked up in ``fallback`` (a module or namespace)."""

    def __init__(self, name: str, fallback: Any, **names: Any):
        super().__init__(name)
        self._fallback = fallback
        vars(self).update(names)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(self._fallback, name)
        except AttributeError:
            raise AttributeError(
                f"{self.__name__}.{name}: parafeed has no such name (TF1 sessions, placeholders and queue runners have "
                "no counterpart: iterate the dataset, see docs/porting.md)"
            ) from None


def _image() -> _Namespace:
    from parafeed.tensor_ops import image
    from parafeed.tensor_ops.image import resize_v1
    from parafeed.values.tensor import export_tensor_results

    names: dict[str, Any] = {name: getattr(resize_v1, name) for name in resize_v1.__all__}
    names["__all__"] = list(names)
    export_tensor_results(names)  # (results as Tensors, as pf.image's)
    del names["__all__"]
    return _Namespace("pf.compat.v1.image", image, **names)


def _one_shot(dataset: Any) -> Any:
    """TF1's ``make_one_shot_iterator(ds)``: an iterator with ``get_next()``."""
    return iter(dataset)


def _v1() -> _Namespace:
    from parafeed.io.gfile import gfile_v1
    from parafeed.tensor_ops import python_ops, random_ops
    from parafeed.tensor_ops.strings import string_split
    from parafeed.values.tensor import Dimension, dimension_value

    data = _Namespace("pf.compat.v1.data", parafeed, experimental=parafeed.experimental,
                      make_one_shot_iterator=_one_shot, make_initializable_iterator=_one_shot)  # fmt: skip
    logging = _Namespace("pf.compat.v1.logging", _logging.getLogger("parafeed.compat"),
                         set_verbosity=lambda level: None, INFO=_logging.INFO, WARN=_logging.WARNING,
                         WARNING=_logging.WARNING, ERROR=_logging.ERROR, DEBUG=_logging.DEBUG)  # fmt: skip
    return _Namespace(
        "pf.compat.v1", parafeed, data=data, gfile=gfile_v1, image=_image(), logging=logging,
        string_split=string_split, py_func=python_ops.py_func, Dimension=Dimension, dimension_value=dimension_value,
        random_uniform=random_ops.uniform, random_normal=random_ops.normal,
        truncated_normal=random_ops.truncated_normal, random_shuffle=random_ops.shuffle,
        set_random_seed=random_ops.set_seed, io=parafeed.io, parse_single_example=parafeed.io.parse_single_example,
        parse_example=parafeed.io.parse_example, decode_raw=parafeed.io.decode_raw, decode_csv=parafeed.io.decode_csv,
        FixedLenFeature=parafeed.io.FixedLenFeature, VarLenFeature=parafeed.io.VarLenFeature,
        FixedLenSequenceFeature=parafeed.io.FixedLenSequenceFeature, read_file=parafeed.io.read_file,
    )  # fmt: skip


def __getattr__(name: str) -> Any:
    if name == "v1":
        globals()["v1"] = value = _v1()
        return value
    if name == "v2":
        return parafeed
    if name == "dimension_value":
        from parafeed.values.tensor import dimension_value

        return dimension_value
    raise AttributeError(f"pf.compat.{name}: parafeed has v1 (TF1's names) and v2 (parafeed itself)")

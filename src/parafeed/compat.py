"""``pf.compat``: TensorFlow's ``tf.compat.v1`` names that input code still uses, and ``tf.compat.v2``.

``pf.compat.v1.X`` is TF1's ``X`` where it differs from TF2's (``image.resize`` with ``align_corners``,
``string_split`` giving a SparseTensor, ``gfile``'s capitalised names, ``sparse_to_dense``, ``reduce_sum`` with
``keep_dims``, ``py_func`` ...: :mod:`parafeed.compat_v1_ops`) and ``pf.X`` otherwise, so
``tf.compat.v1.parse_single_example`` or ``tf.compat.v1.data.TFRecordDataset`` port by the rename too; TF1 code
ports with ``import parafeed.compat.v1 as tf``. ``pf.compat.v1.data``'s datasets are :class:`DatasetV1`s, with
``make_one_shot_iterator()`` and ``make_initializable_iterator()``. TF1's sessions, placeholders and queue runners
have no counterpart: they name the TF2 way instead.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging as _logging
import sys
import types
from typing import Any

import parafeed
from parafeed.core.dataset import Dataset
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import FailedPreconditionError, InvalidArgumentError, OutOfRangeError
from parafeed.values.structure import map_structure


class _Namespace(types.ModuleType):
    """A namespace whose names not set here are looked up in ``fallback`` (a module or namespace)."""

    def __init__(self, name: str, fallback: Any, fill: Any = None, **names: Any):
        super().__init__(name)
        self._fallback = fallback
        self._fill = fill  # (a function giving more names, called on first use)
        vars(self).update(names)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._fill is not None:
            fill, self._fill = self._fill, None
            vars(self).update(fill())
            return getattr(self, name)
        try:
            return getattr(self._fallback, name)
        except AttributeError:
            raise AttributeError(
                f"{self.__name__}.{name}: parafeed has no such name (TF1 sessions, placeholders and queue runners have "
                "no counterpart: iterate the dataset, see docs/porting.md)"
            ) from None


def _image(names_v1: dict[str, Any]) -> _Namespace:
    from parafeed.tensor_ops import image
    from parafeed.tensor_ops.image import resize_v1
    from parafeed.values.tensor import export_tensor_results

    names: dict[str, Any] = {name: getattr(resize_v1, name) for name in resize_v1.__all__}
    names["__all__"] = list(names)
    export_tensor_results(names)  # (results as Tensors, as pf.image's)
    del names["__all__"]
    return _Namespace("pf.compat.v1.image", image, **names, **names_v1)


class Iterator:
    """TF1's iterator of a dataset (``make_one_shot_iterator``, ``make_initializable_iterator``): ``get_next()``
    gives the next element and raises :class:`~parafeed.errors.OutOfRangeError` at the end, as TensorFlow's does.

    An initializable iterator starts at ``initialize()`` (also ``initializer()``: TF1's ``sess.run(it.initializer)``)
    and starts over at each later call; a one-shot iterator starts at once and has no initializer.
    """

    def __init__(self, dataset: Dataset, one_shot: bool):
        self._dataset = dataset
        self._one_shot = one_shot
        self._it: DatasetIterator | None = iter(dataset) if one_shot else None

    def initialize(self) -> None:
        """Start (over) at the dataset's first element."""
        if self._one_shot:
            raise InvalidArgumentError("initializer: a one-shot iterator has none; use make_initializable_iterator()")
        self.close()
        self._it = iter(self._dataset)

    initializer = initialize

    def get_next(self, name: str | None = None) -> Any:
        """The next element; :class:`~parafeed.errors.OutOfRangeError` at the end."""
        if self._it is None:
            raise FailedPreconditionError(
                "get_next(): the iterator has not been initialized: call `it.initializer()` first (TF1's "
                "`sess.run(it.initializer)`)"
            )
        return self._it.get_next()

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        try:
            return self.get_next()
        except OutOfRangeError:
            raise StopIteration from None

    @property
    def element_spec(self) -> Any:
        """The spec of the dataset's elements."""
        return self._dataset.element_spec

    def close(self) -> None:
        """Release the threads, processes and files of the current run."""
        if self._it is not None:
            self._it.close()


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """TF1's ``make_one_shot_iterator(ds)``: an :class:`Iterator` over any dataset, started."""
    return Iterator(dataset, one_shot=True)


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """TF1's ``make_initializable_iterator(ds)``: an :class:`Iterator` that starts at ``initializer()``."""
    return Iterator(dataset, one_shot=False)


class DatasetV1(Dataset):
    """``tf.compat.v1.data.Dataset``: a parafeed Dataset with TF1's ``make_one_shot_iterator()``,
    ``make_initializable_iterator()``, ``output_types`` and ``output_shapes``; its transformations give DatasetV1s.

    ``pf.compat.v1.data``'s datasets are these (``pf.compat.v1.data.TFRecordDataset(...)``, ``.Dataset.range(...)``
    ...): each node's class is a subclass of its parafeed class and of this one, so it is the same step everywhere.
    """

    _plain: type[Dataset] = Dataset  # (the parafeed class this node's class adds TF1's methods to)

    def make_one_shot_iterator(self) -> Iterator:
        """An :class:`Iterator` over this dataset, started."""
        return Iterator(self, one_shot=True)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Iterator:
        """An :class:`Iterator` that starts at ``initializer()``."""
        return Iterator(self, one_shot=False)

    @property
    def output_types(self) -> Any:
        """The dtypes of the elements (``element_spec``'s), in their structure."""
        return map_structure(lambda spec: spec.dtype, self.element_spec)

    @property
    def output_shapes(self) -> Any:
        """The shapes of the elements (``element_spec``'s), in their structure."""
        return map_structure(lambda spec: spec.shape, self.element_spec)

    def __reduce__(self) -> tuple[Any, ...]:  # pickles as its parafeed node, made a DatasetV1 again on loading
        plain = object.__new__(self._plain)
        plain.__dict__.update(self.__dict__)
        return as_v1, (plain,)


def _giving_v1(fn: Any, name: str) -> Any:
    """``fn`` (a Dataset method or constructor) giving its Dataset results as DatasetV1s."""
    if fn is None:  # a method: the next class's, after DatasetV1 in the node's classes

        def method(self: DatasetV1, *args: Any, **kwargs: Any) -> Any:
            return as_v1(getattr(super(DatasetV1, self), name)(*args, **kwargs))

        return functools.update_wrapper(method, getattr(Dataset, name))
    return functools.wraps(fn)(lambda *args, **kwargs: as_v1(fn(*args, **kwargs)))


for _name in dir(Dataset):
    _value = inspect.getattr_static(Dataset, _name)
    if isinstance(_value, staticmethod) and not _name.startswith("_"):
        setattr(DatasetV1, _name, staticmethod(_giving_v1(_value.__func__, _name)))
    elif isinstance(_value, types.FunctionType) and not _name.startswith("_"):
        setattr(DatasetV1, _name, _giving_v1(None, _name))

_V1_CLASSES: dict[type, type] = {Dataset: DatasetV1}


def v1_class(cls: type[Dataset]) -> type[DatasetV1]:
    """The class of ``cls``'s nodes as TF1 datasets: a subclass of ``cls`` and :class:`DatasetV1`, named as ``cls``."""
    if issubclass(cls, DatasetV1):
        return cls
    if cls not in _V1_CLASSES:
        names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__, "_plain": cls}
        _V1_CLASSES.setdefault(cls, type(cls.__name__, (DatasetV1, cls), names))  # (one class, whichever thread wins)
    return _V1_CLASSES[cls]


def as_v1(value: Any) -> Any:
    """A Dataset as a :class:`DatasetV1` (the same step, in a new node); anything else as it is."""
    if not isinstance(value, Dataset) or isinstance(value, DatasetV1):
        return value
    node = copy.copy(value)
    node.__class__ = v1_class(type(value))
    return node


class _DataNamespace(_Namespace):
    """``pf.compat.v1.data`` (and its ``experimental``): parafeed's names, whose datasets are DatasetV1s."""

    def __getattr__(self, name: str) -> Any:
        value = super().__getattr__(name)
        if isinstance(value, type) and issubclass(value, Dataset):
            value = v1_class(value)
        elif isinstance(value, types.FunctionType):
            value = _giving_v1(value, name)
        setattr(self, name, value)
        return value


def _v1_names() -> dict[str, Any]:
    """The names of ``pf.compat.v1`` (built on first use)."""
    from parafeed import compat_v1_ops as ops
    from parafeed.io.gfile import gfile_v1
    from parafeed.tensor_ops import python_ops
    from parafeed.tensor_ops.strings import string_split
    from parafeed.values.tensor import Dimension, dimension_value

    data = _DataNamespace("pf.compat.v1.data", parafeed, Dataset=DatasetV1,
                          experimental=_DataNamespace("pf.compat.v1.data.experimental", parafeed.experimental),
                          make_one_shot_iterator=make_one_shot_iterator,
                          make_initializable_iterator=make_initializable_iterator)  # fmt: skip
    logging = _Namespace("pf.compat.v1.logging", _logging.getLogger("parafeed.compat"),
                         set_verbosity=lambda level: None, INFO=_logging.INFO, WARN=_logging.WARNING,
                         WARNING=_logging.WARNING, ERROR=_logging.ERROR, DEBUG=_logging.DEBUG)  # fmt: skip
    namespaces = {name: _Namespace(f"pf.compat.v1.{name}", getattr(parafeed, name), **names)
                  for name, names in (("io", ops.IO), ("math", ops.MATH), ("random", ops.RANDOM),
                                      ("sparse", ops.SPARSE), ("strings", ops.STRINGS))}  # fmt: skip
    return dict(
        ops.TOP, **namespaces, data=data, gfile=gfile_v1, image=_image(ops.IMAGE), logging=logging,
        string_split=string_split, py_func=python_ops.py_func, Dimension=Dimension, dimension_value=dimension_value,
        FixedLenFeature=parafeed.io.FixedLenFeature, VarLenFeature=parafeed.io.VarLenFeature,
        FixedLenSequenceFeature=parafeed.io.FixedLenSequenceFeature,
    )  # fmt: skip


v1 = _Namespace("pf.compat.v1", parafeed, fill=_v1_names)
"""TF1's names (``tf.compat.v1``), filled in on first use."""
sys.modules[f"{__name__}.v1"] = v1  # (so that `import parafeed.compat.v1 as tf` works, as TensorFlow's does)


def __getattr__(name: str) -> Any:
    if name == "v2":
        return parafeed
    if name == "dimension_value":
        from parafeed.values.tensor import dimension_value

        return dimension_value
    raise AttributeError(f"pf.compat.{name}: parafeed has v1 (TF1's names) and v2 (parafeed itself)")

"""In-memory sources: ``from_tensors``, ``from_tensor_slices``, ``range``, and lists of elements (built by
``from_list.py``, windows and groups)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core.arguments import as_int
from parafeed.core.dataset import Dataset
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import DatasetIterator, PositionIterator
from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.values.elements import short_repr, to_element
from parafeed.values.sparse import SparseTensor, SparseTensorSpec, sparse_rows
from parafeed.values.structure import (
    STRING,
    DatasetSpec,
    TensorSpec,
    as_dtype,
    flatten,
    is_nested,
    iter_leaves_with_paths,
    map_structure,
    pack_as,
    spec_of,
)


def read_only(element: Any) -> Any:
    """The element with its arrays as read-only views, so a user function cannot change the source in place."""

    def freeze(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray):
            view = leaf.view()
            view.flags.writeable = False
            return view
        return leaf

    return map_structure(freeze, element)


class TensorsDataset(Dataset):
    """One element: the given (nested) tensors."""

    kind = SOURCE

    def __init__(self, tensors: Any, name: str | None = None):
        super().__init__(name=name)
        self._element = read_only(to_element(tensors, "from_tensors()"))
        if not flatten(self._element):
            raise InvalidArgumentError(
                f"from_tensors(): `tensors` has no components ({short_repr(tensors)}); an element needs at least one"
            )

    @property
    def nbytes(self) -> int:
        """Bytes of the data it holds (what a copy of it in another process costs)."""
        return _nbytes(flatten(self._element))

    def _make_iterator(self) -> DatasetIterator:
        return _TensorsIterator(self._element)

    def _element_spec(self) -> Any:
        return spec_of(self._element)

    def _cardinality(self) -> int:
        return 1


class _TensorsIterator(DatasetIterator):
    def __init__(self, element: Any):
        super().__init__()
        self._element = element
        self._done = False

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        self._done = True
        return self._element

    def _get_state(self) -> dict:
        return {"done": self._done}

    def _set_state(self, state: dict) -> None:
        self._done = bool(state["done"])


def _dataset_array(tensors: Any) -> np.ndarray | None:
    """A list (or object array) of datasets as a 1-D object array, whose slices are the datasets (tf.data stacks
    them into a variant tensor); None for anything else."""
    if (type(tensors) is list or (isinstance(tensors, np.ndarray) and tensors.dtype == object and tensors.ndim == 1)) \
            and len(tensors) and all(isinstance(t, Dataset) for t in tensors):  # fmt: skip
        out = np.empty(len(tensors), dtype=object)
        out[:] = list(tensors)
        return out
    return None


class TensorSlicesDataset(Dataset):
    """The slices of (nested) tensors along their first dimension."""

    kind = SOURCE

    def __init__(self, tensors: Any, name: str | None = None):
        super().__init__(name=name)
        datasets = _dataset_array(tensors)
        self._of_datasets = datasets is not None
        element = datasets if self._of_datasets else to_element(tensors, "from_tensor_slices()")
        self._sparse_specs: dict[int, Any] = {}  # flat index -> the spec of a SparseTensor leaf's rows
        if any(type(leaf) is SparseTensor for leaf in flatten(element)):
            element = self._sparse_as_rows(element)
        sizes = []
        for path, leaf in iter_leaves_with_paths(element):
            if not isinstance(leaf, np.ndarray):
                raise InvalidArgumentError(
                    f"from_tensor_slices(): component {path} is a scalar ({short_repr(leaf)}); every component needs a "
                    "first dimension to slice along. Use from_tensors() for a single element."
                )
            sizes.append((path, leaf.shape[0]))
        if not sizes:
            raise InvalidArgumentError("from_tensor_slices(): `tensors` has no components")
        if len({n for _, n in sizes}) > 1:
            listed = ", ".join(f"{p}: {n}" for p, n in sizes)
            raise InvalidArgumentError(
                f"from_tensor_slices(): all components must have the same size in the first dimension, got {listed}"
            )
        self._element = read_only(element)
        self._flat = flatten(self._element)
        self._length = sizes[0][1]

    def _sparse_as_rows(self, element: Any) -> Any:
        """``element`` with every SparseTensor leaf as an object array of its rows (SparseTensors of rank - 1)."""
        flat = flatten(element)
        for j, leaf in enumerate(flat):
            if type(leaf) is SparseTensor:
                rows = np.empty(int(leaf.dense_shape[0]) if len(leaf.dense_shape) > 1 else 0, dtype=object)
                rows[:] = sparse_rows(leaf, "from_tensor_slices()")
                self._sparse_specs[j] = SparseTensorSpec(tuple(int(d) for d in leaf.dense_shape[1:]), leaf.values.dtype)
                flat[j] = rows
        return pack_as(element, flat)

    @property
    def tensors(self) -> Any:
        """The (nested) arrays this dataset slices, read-only."""
        return self._element

    def take_rows(self, rows: Any) -> TensorSlicesDataset:
        """The same source over the rows at indices ``rows`` only (a replica's share)."""
        part = TensorSlicesDataset(pack_as(self._element, [a[rows] for a in self._flat]), name=self._name)
        part._sparse_specs = self._sparse_specs
        return part

    @property
    def nbytes(self) -> int:
        """Bytes of the data it holds (what a copy of it in another process costs)."""
        return _nbytes(self._flat)

    def _make_iterator(self) -> DatasetIterator:
        return _SlicesIterator(self._element, self._flat, self._length)

    def _element_spec(self) -> Any:
        if self._of_datasets:
            return DatasetSpec(self._flat[0][0].element_spec)
        specs = [TensorSpec(a.shape[1:], a.dtype) for a in self._flat]
        for j, spec in self._sparse_specs.items():
            specs[j] = spec
        return pack_as(self._element, specs)

    def _sample_element(self) -> Any:
        if self._length == 0:
            return pack_as(self._element, [np.zeros(a.shape[1:], a.dtype)[()] for a in self._flat])
        return pack_as(self._element, [a[0] for a in self._flat])

    def _cardinality(self) -> int:
        return self._length


class _SlicesIterator(PositionIterator):
    def __init__(self, structure: Any, flat: list[np.ndarray], length: int):
        super().__init__(length, f"from_tensor_slices() has {length} elements")
        self._structure = structure
        self._plain_tuple = type(structure) is tuple and not any(is_nested(c) for c in structure)
        self._single = len(flat) == 1 and not is_nested(structure)
        self._flat = flat
        self._it = iter(flat[0]) if self._single else zip(*flat)

    def __next__(self) -> Any:
        item = next(self._it)
        self._index += 1
        if self._single or self._plain_tuple:
            return item
        return pack_as(self._structure, item)

    def _seek(self, index: int) -> None:
        flat = [a[index:] for a in self._flat]
        self._it = iter(flat[0]) if self._single else zip(*flat)
        self._index = index


class RangeDataset(Dataset):
    """``range(stop)`` / ``range(start, stop[, step])`` as scalars of ``output_type`` (int64 by default)."""

    kind = SOURCE

    _CHUNK = 4096

    def __init__(self, *args: int, output_type: Any = np.int64, name: str | None = None):
        super().__init__(name=name)
        if not 1 <= len(args) <= 3:
            raise InvalidArgumentError(
                f"range(): takes 1 to 3 positional arguments (start, stop, step), got {len(args)}"
            )
        for a in args:
            if isinstance(a, (float, np.floating)):
                raise ArgumentTypeError(f"range(): arguments must be integers, got {a!r}; use output_type for floats")
        ints = [as_int("range()", "argument", a) for a in args]
        start, stop, step = (0, ints[0], 1) if len(ints) == 1 else (ints[0], ints[1], ints[2] if len(ints) == 3 else 1)
        if step == 0:
            raise InvalidArgumentError("range(): `step` must not be 0")
        self._start, self._stop, self._step = start, stop, step
        self._dtype = as_dtype(output_type)
        if self._dtype == STRING or self._dtype.kind not in "iuf":
            raise InvalidArgumentError(f"range(): `output_type` must be an integer or float dtype, got {output_type!r}")

    def _make_iterator(self) -> DatasetIterator:
        return _RangeIterator(self._start, self._stop, self._step, self._dtype)

    def _element_spec(self) -> Any:
        return TensorSpec((), self._dtype)

    def _sample_element(self) -> Any:
        return self._dtype.type(self._start)

    def _cardinality(self) -> int:
        if self._stop >= np.iinfo(np.int64).max and self._step > 0:
            return -1  # INFINITE: tf.data counts a range up to the largest int64 as endless (enumerate is one)
        return _range_len(self._start, self._stop, self._step)


def _range_len(start: int, stop: int, step: int) -> int:
    """``len(range(start, stop, step))``, also past the largest ssize_t (a range up to the largest int64)."""
    return max(0, (stop - start + step - (1 if step > 0 else -1)) // step)


class _RangeIterator(DatasetIterator):
    def __init__(self, start: int, stop: int, step: int, dtype: np.dtype):
        super().__init__()
        self._start, self._stop, self._step, self._dtype = start, stop, step, dtype
        self._seek(0)

    def _seek(self, index: int) -> None:
        self._index = index  # elements returned before the current chunk
        self._chunk_size = 0
        total = _range_len(self._start, self._stop, self._step)
        self._next_start = self._start + index * self._step
        self._remaining = max(0, total - index)
        self._chunk: Any = iter(())

    def __next__(self) -> Any:
        try:
            return next(self._chunk)
        except StopIteration:
            pass
        self._index += self._chunk_size
        self._chunk_size = 0
        n = min(self._remaining, RangeDataset._CHUNK)
        if n <= 0:
            raise StopIteration
        start = self._next_start
        self._next_start = start + n * self._step
        self._remaining -= n
        self._chunk = iter(np.arange(start, start + n * self._step, self._step, dtype=np.int64).astype(self._dtype))
        self._chunk_size = n
        return next(self._chunk)

    def _position(self) -> int:
        left = self._chunk.__length_hint__()  # elements of the current chunk not yet returned
        return self._index + self._chunk_size - left

    def skip(self, n: int) -> int:
        at = self._position()
        done = max(0, min(n, _range_len(self._start, self._stop, self._step) - at))
        self._seek(at + done)
        return done

    def _get_state(self) -> dict:
        return {"index": self._position()}

    def _set_state(self, state: dict) -> None:
        self._seek(int(state["index"]))


class ElementsDataset(Dataset):
    """A dataset over a list of elements already in memory (windows, groups, cached data)."""

    kind = SOURCE

    def __init__(self, elements: list, element_spec: Any = None, name: str | None = None):
        super().__init__(name=name)
        self._elements = elements
        self._given_spec = element_spec

    def _element_spec(self) -> Any:
        return super()._element_spec() if self._given_spec is None else self._given_spec

    def _static_shapes(self) -> bool:
        return False  # read off an element

    @property
    def nbytes(self) -> int:
        """Bytes of the data it holds (what a copy of it in another process costs)."""
        return sum(_nbytes(flatten(e)) for e in self._elements)

    def _make_iterator(self) -> DatasetIterator:
        return _ListIterator(self._elements)

    def _cardinality(self) -> int:
        return len(self._elements)


class _ListIterator(DatasetIterator):
    def __init__(self, elements: list):
        super().__init__()
        self._elements = elements
        self._it = iter(elements)
        self._index = 0

    def __next__(self) -> Any:
        x = next(self._it)
        self._index += 1
        return x

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        self._index = int(state["index"])
        self._it = iter(self._elements[self._index :])


def _nbytes(leaves: list[Any]) -> int:
    """Bytes of ``leaves``' data (an object array counts its bytes strings)."""
    total = 0
    for leaf in leaves:
        if isinstance(leaf, np.ndarray) and leaf.dtype == object:
            total += sum(len(x) if isinstance(x, bytes) else 64 for x in leaf.flat)
        else:
            total += getattr(leaf, "nbytes", len(leaf) if isinstance(leaf, bytes) else 64)
    return total

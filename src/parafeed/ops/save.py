"""``Dataset.save`` and ``Dataset.load``: write a dataset's elements to a directory of shards, and read them back.

The format is :mod:`parafeed.io.saved_dataset`. As in tf.data, ``shard_func`` maps each element to an int64 shard
index (all elements go to shard 0 without one), the element spec is stored so ``load`` needs none, and ``load``
reads the shards through ``reader_func`` (a function of the dataset of shard datasets; by default they are
interleaved ``multiprocessing.cpu_count()`` at a time, as tf.data does). The loaded dataset's cardinality is the
number of elements saved.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.arguments import callable_arg
from parafeed.core.dataset import AUTOTUNE, Dataset, iterate
from parafeed.core.functions import call, fn_name
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import DatasetIterator, Scope, build_in, current_scope
from parafeed.errors import InvalidArgumentError, NotFoundError
from parafeed.io.saved_dataset import SavedMetadata, SavedWriter, as_spec, compression_of, decode_record
from parafeed.io.tfrecord import TFRecordFileReader
from parafeed.sources.memory import ElementsDataset
from parafeed.values.structure import DatasetSpec, as_dtype, flatten, specs_compatible

WAIT_SECONDS = 5.0  # between checks of Dataset.load(wait=True), as tf.data's


def shard_index(step: str, shard_func: Callable, element: Any) -> int:
    """``shard_func(element)``, which must be an int64 scalar (tf.data refuses other dtypes, int32 included)."""
    value = call(shard_func, element)
    arr = np.asarray(value)
    if arr.shape != () or arr.dtype != np.int64:
        raise InvalidArgumentError(
            f"{step}: `shard_func` {fn_name(shard_func)} must return a scalar int64, got {arr.dtype} with shape "
            f"{arr.shape}; return e.g. np.int64(x % 4)"
        )
    return int(arr)


def save_dataset(
    dataset: Dataset, path: str | os.PathLike, compression: str | None, shard_func: Callable | None,
    checkpoint_args: Any,
) -> None:  # fmt: skip
    """Write every element of ``dataset`` under ``path`` (see the module docs)."""
    if checkpoint_args is not None:
        raise InvalidArgumentError(
            "save(): `checkpoint_args` (TensorFlow checkpoints of the writing iterator) is not supported; a save "
            "that stops is simply not published, so run it again, or save parts with `ds.shard(n, i).save(...)`"
        )
    if shard_func is not None:
        shard_func = callable_arg("save()", "shard_func", shard_func)
    compression = compression_of("save()", compression)
    writer = SavedWriter(os.fspath(path), dataset.element_spec, compression)
    try:
        for element in iterate(dataset):
            shard = 0 if shard_func is None else shard_index("save()", shard_func, element)
            writer.write(element, shard)
    except BaseException:
        writer.abort()
        raise
    writer.finish()


class ShardDataset(Dataset):
    """The elements of one shard file."""

    kind = SOURCE

    def __init__(self, path: str, spec: Any, compression: str):
        super().__init__()
        self._path = path
        self._given = spec
        self._compression = compression

    def _element_spec(self) -> Any:
        return self._given

    def _make_iterator(self) -> DatasetIterator:
        return _ShardIterator(self._path, self._given, self._compression)


class _ShardIterator(DatasetIterator):
    def __init__(self, path: str, spec: Any, compression: str):
        super().__init__()
        self._path = path
        self._spec = spec
        self._dtypes = [s.dtype for s in flatten(spec)]
        self._reader = TFRecordFileReader(path, compression)

    def __next__(self) -> Any:
        return decode_record(self._path, next(self._reader), self._dtypes, self._spec)

    def skip(self, n: int) -> int:
        return self._reader.skip(n)

    def _get_state(self) -> dict:
        return {"reader": self._reader.get_state()}

    def _set_state(self, state: dict) -> None:
        self._reader.set_state(state["reader"])

    def close(self) -> None:
        self._reader.close()


def default_reader_func(datasets: Dataset) -> Dataset:
    """tf.data's default: the shards interleaved ``cpu_count()`` at a time."""
    return datasets.interleave(lambda x: x, cycle_length=multiprocessing.cpu_count(), num_parallel_calls=AUTOTUNE)


def read_shards(step: str, shards: list[str], spec: Any, compression: str, reader_func: Callable | None) -> Dataset:
    """``reader_func`` applied to the dataset of the shards' datasets; checks it returns a dataset of ``spec`` (an
    InvalidArgumentError otherwise, as tf.data raises when the reader's iterator starts)."""
    datasets = ElementsDataset([ShardDataset(p, spec, compression) for p in shards], DatasetSpec(spec))
    func = default_reader_func if reader_func is None else reader_func
    out = func(datasets)
    if not isinstance(out, Dataset):
        raise InvalidArgumentError(
            f"{step}: `reader_func` {fn_name(func)} must return a Dataset, got {type(out).__name__}"
        )
    if not shards:  # nothing saved: the reader's spec cannot be read off a shard
        return ElementsDataset([], spec)
    if not specs_compatible(out.element_spec, spec):
        raise InvalidArgumentError(
            f"{step}: `reader_func` {fn_name(func)} must return a dataset of the saved elements ({spec}), got "
            f"{out.element_spec}"
        )
    return out


class LoadDataset(Dataset):
    """The elements of a dataset written by ``save``."""

    order_fixed = False  # the elements come through reader_func

    kind = SOURCE

    def __init__(
        self, path: str | os.PathLike, element_spec: Any, compression: str | None, reader_func: Callable | None
    ):
        super().__init__()
        path = os.fspath(path)
        meta = SavedMetadata(path)
        saved_spec = meta.element_spec() if element_spec is None else None
        spec = saved_spec if element_spec is None else as_spec("load()", element_spec)
        stored = meta.raw["element_spec"]["leaves"]
        dtypes = [s.dtype for s in flatten(spec)]
        if len(dtypes) != len(stored):
            raise InvalidArgumentError(
                f"load(): `element_spec` {element_spec} has {len(dtypes)} components, the saved dataset at {path} "
                f"has {len(stored)}"
            )
        saved_dtypes = [as_dtype(leaf["dtype"]) for leaf in stored]
        if dtypes != saved_dtypes:
            raise InvalidArgumentError(
                f"load(): `element_spec` {element_spec} does not match the dtypes saved at {path} "
                f"({[leaf['dtype'] for leaf in stored]})"
            )
        self._path = path
        self._given = spec
        self._count = meta.num_elements
        self._shards = meta.shards
        self._compression = compression_of("load()", compression)  # as given: other bytes fail as in tf.data
        self._reader_func = None if reader_func is None else callable_arg("load()", "reader_func", reader_func)

    def reader(self) -> Dataset:
        """The dataset ``reader_func`` makes of the shards (made when an iterator first needs it, as in tf.data)."""
        return read_shards("load()", self._shards, self._given, self._compression, self._reader_func)

    def _element_spec(self) -> Any:
        return self._given

    def _cardinality(self) -> int:
        return self._count

    def _make_iterator(self) -> DatasetIterator:
        return _LoadIterator(self, current_scope())


def load_dataset(
    path: str | os.PathLike, element_spec: Any, compression: str | None, reader_func: Callable | None, wait: bool
) -> LoadDataset:
    """``Dataset.load``: with ``wait``, retry every few seconds until the save at ``path`` is published."""
    while True:
        try:
            return LoadDataset(path, element_spec, compression, reader_func)
        except NotFoundError:
            if not wait:
                raise
            time.sleep(WAIT_SECONDS)


class _LoadIterator(DatasetIterator):
    """The reader's iterator, built on first use (a failing ``reader_func`` fails the first ``next``)."""

    def __init__(self, ds: LoadDataset, scope: Scope):
        super().__init__()
        self._ds = ds
        self._scope = scope
        self._inner: DatasetIterator | None = None

    def _open(self) -> DatasetIterator:
        if self._inner is None:
            self._inner = build_in(self._scope, self._ds.reader())
        return self._inner

    def __next__(self) -> Any:
        return next(self._open())

    def skip(self, n: int) -> int:
        return self._open().skip(n)

    def _get_state(self) -> dict:
        return {"reader": self._open().get_state()}

    def _set_state(self, state: dict) -> None:
        self._open().set_state(state["reader"])

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()

"""``pf.experimental``: the names of ``tf.data.experimental`` (TensorFlow 2.21) that make sense on NumPy elements.

Code written against ``tf.data.experimental`` ports by renaming it ``pf.experimental``. The transformations are
functions that return a function of a dataset, for ``ds.apply(...)``; each does what the ``Dataset`` method of the
same name does (tf.data moved most of them there). A name tf.data has and parafeed does not raises an
AttributeError that says what to use instead.

Example:
    >>> ds = pf.Dataset.range(10).apply(pf.experimental.map_and_batch(lambda x: x * 2, 4))
    >>> [b.tolist() for b in ds]
    [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.dataset import AUTOTUNE, INFINITE, UNKNOWN, Dataset
from parafeed.core.options import (
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ThreadingOptions,
)
from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.io.writers import DatasetTFRecordWriter as TFRecordWriter
from parafeed.ops.group_by_reducer import Reducer
from parafeed.sources.files import CsvDataset
from parafeed.sources.readers import make_batched_features_dataset, make_csv_dataset, parse_example_dataset
from parafeed.sources.sql import SqlDataset
from parafeed.values.optional import Optional

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN

Transformation = Callable[[Dataset], Dataset]


# ---------------------------------------------------------------------------------------------- transformations


def map_and_batch(
    map_func: Callable[..., Any],
    batch_size: int,
    num_parallel_batches: int | None = None,
    drop_remainder: bool = False,
    num_parallel_calls: int | None = None,
) -> Transformation:
    """``map(map_func)`` then ``batch(batch_size)``; the parallelism is ``num_parallel_calls``, else
    ``num_parallel_batches * batch_size`` calls (as tf.data fuses them)."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ArgumentTypeError("map_and_batch(): give `num_parallel_batches` or `num_parallel_calls`, not both")
    calls = num_parallel_calls
    if num_parallel_batches is not None:
        calls = num_parallel_batches * batch_size
    return lambda ds: ds.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder)


def parallel_interleave(
    map_func: Callable[..., Dataset],
    cycle_length: int,
    block_length: int = 1,
    sloppy: bool | None = False,
    buffer_output_elements: int | None = None,
    prefetch_input_elements: int | None = None,
) -> Transformation:
    """``interleave(map_func, cycle_length, block_length, num_parallel_calls=cycle_length,
    deterministic=not sloppy)``; the two buffer sizes are accepted and ignored (parafeed sizes its own)."""
    from parafeed.ops.interleave import InterleaveDataset

    return lambda ds: InterleaveDataset(
        ds, map_func, cycle_length, block_length, cycle_length, not sloppy, what="parallel_interleave"
    )


def group_by_window(
    key_func: Callable[..., Any],
    reduce_func: Callable[[Any, Dataset], Dataset],
    window_size: int | None = None,
    window_size_func: Callable[[Any], Any] | None = None,
) -> Transformation:
    """``ds.group_by_window(key_func, reduce_func, window_size, window_size_func)``."""
    return lambda ds: ds.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(
    element_length_func: Callable[..., Any],
    bucket_boundaries: list[int],
    bucket_batch_sizes: list[int],
    padded_shapes: Any = None,
    padding_values: Any = None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
) -> Transformation:
    """``ds.bucket_by_sequence_length(...)`` with the same arguments."""
    return lambda ds: ds.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
        pad_to_bucket_boundary, no_padding, drop_remainder,
    )  # fmt: skip


def scan(initial_state: Any, scan_func: Callable[..., Any]) -> Transformation:
    """``ds.scan(initial_state, scan_func)``."""
    return lambda ds: ds.scan(initial_state, scan_func)


def group_by_reducer(key_func: Callable[..., Any], reducer: Reducer) -> Transformation:
    """Fold the elements of each key (``key_func(element)``, an int64 scalar) with ``reducer``; one output per key,
    ``reducer.finalize_func(state)``, in increasing key order once the input has ended."""
    from parafeed.ops.group_by_reducer import GroupByReducerDataset

    return lambda ds: GroupByReducerDataset(ds, key_func, reducer)


def unique() -> Transformation:
    """``ds.unique()``."""
    return lambda ds: ds.unique()


def take_while(predicate: Callable[..., Any]) -> Transformation:
    """``ds.take_while(predicate)``."""
    return lambda ds: ds.take_while(predicate)


def enumerate_dataset(start: int = 0) -> Transformation:
    """``ds.enumerate(start)``."""
    return lambda ds: ds.enumerate(start)


def ignore_errors(log_warning: bool = False) -> Transformation:
    """``ds.ignore_errors(log_warning)``."""
    return lambda ds: ds.ignore_errors(log_warning)


def unbatch() -> Transformation:
    """``ds.unbatch()``."""
    return lambda ds: ds.unbatch()


def shuffle_and_repeat(buffer_size: int, count: int | None = None, seed: int | None = None) -> Transformation:
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``: every epoch in a new order. ``count`` is None or -1
    (forever) or > 0, as tf.data's fused step requires."""
    if count is not None and count != -1 and count <= 0:
        raise InvalidArgumentError(f"shuffle_and_repeat(): count must be greater than zero or equal to -1, got {count}")
    return lambda ds: ds.shuffle(buffer_size, seed).repeat(count)


def dense_to_sparse_batch(batch_size: int, row_shape: Any) -> Transformation:
    """``ds.sparse_batch(batch_size, row_shape)``."""
    return lambda ds: ds.sparse_batch(batch_size, row_shape)


def dense_to_ragged_batch(
    batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = np.int64
) -> Transformation:
    """``ds.ragged_batch(batch_size, drop_remainder, row_splits_dtype)``."""
    return lambda ds: ds.ragged_batch(batch_size, drop_remainder, row_splits_dtype)


def rejection_resample(
    class_func: Callable[..., Any], target_dist: Any, initial_dist: Any = None, seed: int | None = None
) -> Transformation:
    """``ds.rejection_resample(class_func, target_dist, initial_dist, seed)``."""
    return lambda ds: ds.rejection_resample(class_func, target_dist, initial_dist, seed)


def snapshot(
    path: str, compression: str | None = "AUTO", reader_func: Any = None, shard_func: Any = None
) -> Transformation:
    """``ds.snapshot(path, compression, reader_func, shard_func)``."""
    return lambda ds: ds.snapshot(path, compression, reader_func, shard_func)


def assert_cardinality(expected_cardinality: int) -> Transformation:
    """Check, while iterating, that the dataset has ``expected_cardinality`` elements; the result reports it."""
    from parafeed.ops.take import AssertCardinalityDataset

    return lambda ds: AssertCardinalityDataset(ds, int(expected_cardinality))


def pad_to_cardinality(cardinality: int, mask_key: str = "valid") -> Transformation:
    """Add ``mask_key: True`` to each dict element, then zero elements with ``mask_key: False`` up to
    ``cardinality`` elements."""
    from parafeed.ops.pad_to_cardinality import pad_to_cardinality as pad

    return pad(cardinality, mask_key)


# ---------------------------------------------------------------------------------------------- functions of datasets


def at(dataset: Dataset, index: int) -> Any:
    """The element at ``index`` of ``dataset``; OutOfRangeError outside ``[0, cardinality)``."""
    from parafeed.ops.take import element_at

    return element_at(dataset, index)


def from_list(elements: list, name: str | None = None) -> Dataset:
    """A dataset of the list's elements, one by one (they may differ in shape, unlike ``from_tensor_slices``)."""
    from parafeed.sources.from_list import from_list as make

    return make(elements, name=name)


def cardinality(dataset: Dataset) -> np.int64:
    """``dataset.cardinality()``."""
    return dataset.cardinality()


def get_structure(dataset: Dataset) -> Any:
    """``dataset.element_spec``."""
    return dataset.element_spec


def get_single_element(dataset: Dataset) -> Any:
    """``dataset.get_single_element()``."""
    return dataset.get_single_element()


def sample_from_datasets(
    datasets: list[Dataset],
    weights: Any = None,
    seed: int | None = None,
    stop_on_empty_dataset: bool = False,
    rerandomize_each_iteration: bool | None = None,
) -> Dataset:
    """``pf.Dataset.sample_from_datasets(...)``."""
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)


def choose_from_datasets(
    datasets: list[Dataset], choice_dataset: Dataset, stop_on_empty_dataset: bool = True
) -> Dataset:
    """``pf.Dataset.choose_from_datasets(...)``."""
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def save(
    dataset: Dataset, path: str, compression: str | None = None, shard_func: Any = None, checkpoint_args: Any = None
) -> None:
    """``dataset.save(path, compression, shard_func, checkpoint_args)``."""
    dataset.save(path, compression, shard_func, checkpoint_args)


def load(path: str, element_spec: Any = None, compression: str | None = None, reader_func: Any = None) -> Dataset:
    """``pf.Dataset.load(path, element_spec, compression, reader_func)``."""
    return Dataset.load(path, element_spec, compression, reader_func)


def Counter(start: int = 0, step: int = 1, dtype: Any = np.int64, name: str | None = None) -> Dataset:
    """``pf.Dataset.counter(start, step, dtype)``: ``start, start + step, ...`` forever."""
    return Dataset.counter(start, step, dtype, name=name)


def RandomDataset(seed: int | None = None, name: str | None = None) -> Dataset:
    """``pf.Dataset.random(seed)``: random int64 scalars forever."""
    return Dataset.random(seed, name=name)


__all__ = [
    "AUTOTUNE",
    "AutoShardPolicy",
    "AutotuneAlgorithm",
    "AutotuneOptions",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "ThreadingOptions",
    "Counter",
    "INFINITE_CARDINALITY",
    "Optional",
    "CsvDataset",
    "RandomDataset",
    "Reducer",
    "SqlDataset",
    "TFRecordWriter",
    "UNKNOWN_CARDINALITY",
    "assert_cardinality",
    "at",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "dense_to_ragged_batch",
    "dense_to_sparse_batch",
    "enable_debug_mode",
    "enumerate_dataset",
    "from_list",
    "get_next_as_optional",
    "get_single_element",
    "get_structure",
    "group_by_reducer",
    "group_by_window",
    "ignore_errors",
    "load",
    "make_batched_features_dataset",
    "make_csv_dataset",
    "map_and_batch",
    "pad_to_cardinality",
    "parallel_interleave",
    "parse_example_dataset",
    "rejection_resample",
    "sample_from_datasets",
    "save",
    "scan",
    "shuffle_and_repeat",
    "snapshot",
    "take_while",
    "unbatch",
    "unique",
]


def enable_debug_mode() -> None:
    """Nothing to do: parafeed always runs your functions as plain Python, element by element, which is what
    tf.data's debug mode switches to."""


def get_next_as_optional(iterator: Any) -> Any:
    """``iterator.get_next_as_optional()``: the next element as an :class:`Optional`, empty at the end."""
    return iterator.get_next_as_optional()


def __getattr__(name: str) -> Any:
    from parafeed.core.missing import EXPERIMENTAL, missing

    raise missing("parafeed.experimental", EXPERIMENTAL, name)

"""Where pipelines start: the ``Dataset`` constructors (``from_tensor_slices``, ``range``, ``from_generator``,
``from_huggingface``, ``list_files``, ``zip``, ``counter``, ``random``, ``sample_from_datasets``,
``choose_from_datasets``, ``load``).

They are static methods of :class:`parafeed.core.dataset.Dataset`, which inherits them from
:class:`DatasetSources`; each builds a node of :mod:`parafeed.sources` (or :mod:`parafeed.ops`), imported when first
used (the facade's declared exception to the layer rule, as in tf.data).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from parafeed.errors import ArgumentTypeError

if TYPE_CHECKING:
    from parafeed.core.dataset import Dataset


class DatasetSources:
    """The static constructors of :class:`~parafeed.core.dataset.Dataset`."""

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """A dataset with ``tensors`` as its single element."""
        from parafeed.sources.memory import TensorsDataset
        from parafeed.values.ragged_build import from_tf, has_ragged

        return TensorsDataset(from_tf(tensors) if has_ragged(tensors) else tensors, name=name)

    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """A dataset of the slices of ``tensors`` along their first dimension."""
        from parafeed.sources.memory import TensorSlicesDataset
        from parafeed.values.ragged_build import has_ragged

        if has_ragged(tensors):  # RaggedTensors slice into their rows
            from parafeed.ops.ragged_batch import RaggedSlicesDataset

            return RaggedSlicesDataset(tensors, name=name)
        return TensorSlicesDataset(tensors, name=name)

    @staticmethod
    def range(*args: int, output_type: Any = np.int64, name: str | None = None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars (or ``output_type``)."""
        from parafeed.sources.memory import RangeDataset

        return RangeDataset(*args, output_type=output_type, name=name)

    @staticmethod
    def from_generator(
        generator: Callable[..., Any],
        output_types: Any = None,
        output_shapes: Any = None,
        args: tuple[Any, ...] | None = None,
        output_signature: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """Elements yielded by ``generator(*args)``, checked against and converted to ``output_signature``."""
        from parafeed.sources.generator import GeneratorDataset

        return GeneratorDataset(generator, output_types, output_shapes, args, output_signature, name=name)

    @staticmethod
    def from_huggingface(
        dataset: Any, columns: list[str] | None = None, defaults: dict[str, Any] | None = None, name: str | None = None
    ) -> Dataset:
        """The rows of a Hugging Face ``datasets.Dataset`` (read by position) or streaming ``IterableDataset``: one
        dict of column -> value per row, with tf.data's types (docs/formats.md#hugging-face-datasets). A null is an
        error naming the row and column, unless ``defaults`` gives the column's value for it.

        Example:
            >>> hf = datasets.load_dataset("imdb", split="train")
            >>> ds = pf.Dataset.from_huggingface(hf, columns=["text", "label"]).distribute(balance="labels")
        """
        from parafeed.sources.huggingface import from_huggingface

        return from_huggingface(dataset, columns, defaults, name)

    @staticmethod
    def list_files(
        file_pattern: str | list[str],
        shuffle: bool | None = None,
        seed: int | None = None,
        name: str | None = None,
        *,
        storage_options: dict[str, Any] | None = None,
    ) -> Dataset:
        """File names (``bytes``) matching glob pattern(s), local or URLs (``s3://bucket/train-*.tfrecord``, with
        the filesystem's ``storage_options``); shuffled unless ``shuffle=False``."""
        from parafeed.sources.files import list_files

        return list_files(file_pattern, shuffle, seed, name=name, storage_options=storage_options)

    @staticmethod
    def zip(*args: Any, datasets: Any = None, name: str | None = None) -> Dataset:
        """Elements of several datasets side by side, in the structure the datasets are given in."""
        from parafeed.ops.zip import ZipDataset

        if datasets is not None and args:
            raise ArgumentTypeError("zip(): give the datasets either positionally or as `datasets=`, not both")
        if datasets is None:
            if not args:
                raise ArgumentTypeError("zip(): at least one dataset is required")
            datasets = args[0] if len(args) == 1 else args
        return ZipDataset(datasets, name=name)

    @staticmethod
    def counter(start: Any = 0, step: Any = 1, dtype: Any = np.int64, name: str | None = None) -> Dataset:
        """``start, start + step, ...`` as scalars of ``dtype``, forever."""
        from parafeed.sources.counter import CounterDataset

        return CounterDataset(start, step, dtype, name=name)

    @staticmethod
    def random(
        seed: int | None = None, rerandomize_each_iteration: bool | None = None, name: str | None = None
    ) -> Dataset:
        """Pseudorandom int64 scalars forever (the same for a seed, not TensorFlow's stream: see docs/porting.md);
        with ``rerandomize_each_iteration`` every ``iter()`` and ``repeat`` pass draws new ones."""
        from parafeed.sources.random import RandomDataset

        return RandomDataset(seed, rerandomize_each_iteration, name=name)

    @staticmethod
    def sample_from_datasets(
        datasets: list[Dataset],
        weights: Any = None,
        seed: int | None = None,
        stop_on_empty_dataset: bool = False,
        rerandomize_each_iteration: bool | None = None,
    ) -> Dataset:
        """Elements of ``datasets`` picked at random, dataset ``i`` with probability ``weights[i]`` (uniform when
        None); ``weights`` may also be a Dataset giving one weight vector per pick.

        An input that runs dry ends the result with ``stop_on_empty_dataset``, else the picks go on among the
        others. A ``seed`` gives the same order in every run (NumPy's stream, not tf.data's); the order changes
        with each ``iter()`` and ``repeat`` pass only with ``rerandomize_each_iteration``.

        Example:
            >>> ds = pf.Dataset.sample_from_datasets([pf.Dataset.range(3), pf.Dataset.range(10, 13)], seed=1)
            >>> sorted(int(x) for x in ds)
            [0, 1, 2, 10, 11, 12]
        """
        from parafeed.sources.mixture import sample_from_datasets

        return sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(
        datasets: list[Dataset], choice_dataset: Dataset, stop_on_empty_dataset: bool = True
    ) -> Dataset:
        """The next element of ``datasets[i]`` for each int64 ``i`` that ``choice_dataset`` gives.

        Example:
            >>> ds = pf.Dataset.choose_from_datasets([pf.Dataset.range(3), pf.Dataset.range(10, 13)],
            ...                                      pf.Dataset.from_tensor_slices(np.int64([0, 1, 1, 0])))
            >>> [int(x) for x in ds]
            [0, 10, 11, 1]
        """
        from parafeed.sources.mixture import choose_from_datasets

        return choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def load(
        path: str, element_spec: Any = None, compression: str | None = None,
        reader_func: Callable[[Dataset], Dataset] | None = None, wait: bool = False,
    ) -> Dataset:  # fmt: skip
        """The elements written by ``ds.save(path)``; the element spec and cardinality are read from ``path``.

        Args:
            reader_func: a function of the dataset of shard datasets that returns the elements (by default the
                shards interleaved ``multiprocessing.cpu_count()`` at a time, as in tf.data).
            wait: wait until a save at ``path`` is finished (checking every few seconds), as tf.data does.
        """
        from parafeed.ops.save import load_dataset

        return load_dataset(path, element_spec, compression, reader_func, wait)

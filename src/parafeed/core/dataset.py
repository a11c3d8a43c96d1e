"""The Dataset node and the start of a run.

A :class:`Dataset` is an immutable description of a pipeline: a node with public ``parents``, a ``kind`` (see
:mod:`parafeed.core.graph`) and its arguments. ``iter(ds)`` starts a run (:func:`iterate`): one
:class:`~parafeed.core.iterator.RunContext` and a tree of :class:`~parafeed.core.iterator.DatasetIterator`, one per
node, which hold all run-time state. The chainable methods here are thin: each builds the node of one step module in
:mod:`parafeed.ops`, imported when first used; the static constructors are in :mod:`parafeed.core.constructors`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from parafeed.core.constructors import DatasetSources
from parafeed.core.graph import MANY_TO_MANY, count_preserving, walk
from parafeed.core.iterator import (
    DatasetIterator,
    IterationCounter,
    ResumePoint,
    RunContext,
    Scope,
    building,
    current_scope,
)
from parafeed.core.options import Options
from parafeed.core.stats import StatsCollector
from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError
from parafeed.values.structure import STRING, TensorSpec, flatten, map_structure, spec_of

AUTOTUNE = -1
"""Let parafeed pick a parallelism or buffer size (``tf.data.AUTOTUNE``)."""
INFINITE = -1
"""Cardinality of a dataset that never ends (``tf.data.INFINITE_CARDINALITY``)."""
UNKNOWN = -2
"""Cardinality that cannot be known without iterating (``tf.data.UNKNOWN_CARDINALITY``)."""


_Node = TypeVar("_Node", bound="Dataset")


class Dataset(DatasetSources):
    """A pipeline of NumPy elements with tf.data's API.

    Build one from a source (``from_tensor_slices``, ``range``, ``from_generator``, ``TFRecordDataset`` ...), chain
    transformations, and iterate it: elements are NumPy arrays and scalars, ``bytes`` for strings, in tuples and
    dicts.

    Example:
        >>> ds = pf.Dataset.range(10).map(lambda x: x * 2).batch(4)
        >>> [b.tolist() for b in ds]
        [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
    """

    kind: str = MANY_TO_MANY
    """How this step's elements relate to its input's (see :mod:`parafeed.core.graph`)."""
    batch_size: int | None = None
    """Elements per batch of a batching step (None for other steps, or when sizes vary)."""
    whole_batches: bool = False
    """A batching step whose every batch is ``batch_size`` consecutive input elements (the last one maybe fewer),
    nothing added or dropped between (``batch``, ``padded_batch``)."""
    seed: int | None = None
    """The seed of a step that draws random numbers (``shuffle``), None for the others."""
    order_fixed: bool = True
    """Whether this step's elements follow from its inputs' states alone: False for steps that hand out elements as
    they finish (``deterministic=False``) or read datasets made by user functions, whose order parafeed cannot vouch
    for (see :func:`parafeed.core.positions.order_fixed`)."""

    def __init__(self, parents: tuple[Dataset, ...] = (), name: str | None = None):
        self._parents = tuple(parents)
        self._name = name
        self._spec: Any = _UNSET
        self._iterations = IterationCounter()

    def __getstate__(self) -> dict[str, Any]:
        """A node pickles as its description (Ray's input workers receive pipelines): not its iteration counter, which
        counts this process's runs, nor its cached element spec."""
        state = self.__dict__.copy()
        del state["_iterations"], state["_spec"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._spec = _UNSET
        self._iterations = IterationCounter()

    # ------------------------------------------------------------------ the graph

    @property
    def parents(self) -> tuple[Dataset, ...]:
        """The nodes this step reads from (a file reader's parent is its dataset of file names)."""
        return self._parents

    @property
    def name(self) -> str | None:
        """The name given to this step (``name=``), shown in stats."""
        return self._name

    def with_parents(self: _Node, *parents: Dataset) -> _Node:
        """This step, with the same arguments, reading from other parents (the graph rewrites of
        :mod:`parafeed.core.graph` build new nodes with it; this node is left as it is)."""
        if len(parents) != len(self._parents) or not all(isinstance(p, Dataset) for p in parents):
            raise InvalidArgumentError(
                f"with_parents(): {type(self).__name__} reads from {len(self._parents)} dataset(s), got "
                f"{parents!r:.100}"
            )
        clone = copy.copy(self)
        clone._parents = tuple(parents)
        clone._spec = _UNSET
        clone._iterations = IterationCounter()
        return clone

    # ------------------------------------------------------------------ what a node implements

    def _make_iterator(self) -> DatasetIterator:
        raise NotImplementedError

    def _element_spec(self) -> Any:
        """This node's element spec; the default looks at the node's first element."""
        return spec_of(self._sample_element())

    def _sample_element(self) -> Any:
        """An element with this node's structure and dtypes, got as cheaply as possible (for specs)."""
        it = iterate(self)
        try:
            return next(it)
        except StopIteration:
            return self._sample_when_empty()
        finally:
            it.close()

    def _sample_when_empty(self) -> Any:
        """``_sample_element`` when this node yields nothing: one built from the parents' samples where the node
        knows how (an empty input still has a structure, as in tf.data), or from its spec where the node knows that
        without a sample of its own (zeros, 1 for a dimension not known: the step after it only learns structure and
        dtypes from it), else an error."""
        if type(self)._element_spec is not Dataset._element_spec and not getattr(self, "_sampling_spec", False):
            self._sampling_spec = True  # (a spec that asks for this node's own sample again: no recursion)
            try:
                sample = _zeros_of(self.element_spec)
            finally:
                self._sampling_spec = False
            if sample is not None:
                return sample
        raise InvalidArgumentError(
            f"element_spec: {type(self).__name__} produced no element to infer its spec from; the spec of a "
            "user function's output is taken from its first result"
        )

    def _cardinality(self) -> int:
        return UNKNOWN

    def _count_records(self) -> int:
        """A source's element count when it can be known by reading file indexes (see :func:`graph.count`)."""
        return self._cardinality()

    def _replica_counts(self, start: Any = 0) -> list[int] | None:
        """How many elements every replica's pipeline yields here, when a replica split upstream makes that known
        (see ``distribute``), for a pass beginning ``start`` samples into the global order; None when a step such as
        ``filter`` makes it unknowable."""
        if count_preserving(self):
            return self._parents[0]._replica_counts(start)
        return None

    def _own_options(self) -> Options | None:
        """Options set by this step (``with_options``)."""
        return None

    def _static_shapes(self) -> bool:
        """Whether ``element_spec``'s shapes are derived statically like tf.data's, not read off a sample element.

        True for nodes that override ``_element_spec`` (with parents that are static too); user-function nodes,
        which infer their spec from a sample, are not.
        """
        return type(self)._element_spec is not Dataset._element_spec and all(p._static_shapes() for p in self._parents)

    def _iter(self, **how: Any) -> DatasetIterator:
        """This node's iterator in the current scope (parents call this, not ``_make_iterator``); ``how`` goes to
        ``_make_iterator`` (a fused step's request, e.g. ``map``'s ``rows``)."""
        run = current_scope().run
        if run is None or run.stats is None:
            return self._make_iterator(**how)
        return run.stats.wrap(self, lambda: self._make_iterator(**how))

    # ------------------------------------------------------------------ inspection

    @property
    def element_spec(self) -> Any:
        """Structure of :class:`TensorSpec` describing each element.

        Shapes after a user function (``map``, ``flat_map`` ...) are those of its first result, since Python
        functions cannot be traced like tf.function: a dimension tf.data would call ``None`` may show a size here.
        """
        if self._spec is _UNSET:
            try:
                self._spec = self._element_spec()
            except AttributeError as err:  # (one raised in a property would read as "no attribute 'element_spec'")
                raise ElementTypeError(
                    f"element_spec of {type(self).__name__}: AttributeError: {err} (raised by a user function "
                    "called on a sample element to learn the spec: does the function fit the elements it gets?)"
                ) from err
        return self._spec

    def cardinality(self) -> np.int64:
        """Number of elements, or :data:`INFINITE` / :data:`UNKNOWN`, as tf.data computes it without iterating."""
        cardinality: np.int64 = np.int64(self._cardinality())  # (annotated: numpy's stubs give Any on Python 3.10)
        return cardinality

    def __len__(self) -> int:
        n = self._cardinality()
        if n == INFINITE:
            raise ArgumentTypeError("The dataset is infinite.")
        if n == UNKNOWN:
            raise ArgumentTypeError("The dataset length is unknown.")
        return n

    def __bool__(self) -> bool:
        return True

    def __iter__(self) -> DatasetIterator:
        """A new run's iterator. Its elements come as TensorFlow's eager iteration gives them: arrays and scalars as
        :class:`~parafeed.values.tensor.Tensor` views (``x.numpy()``, ``x.shape.as_list()`` work), a scalar string as
        a :class:`~parafeed.values.tensor.ScalarString` (its ``bytes``, with ``numpy()`` and ``raw[pf.newaxis]``).
        ``as_numpy_iterator()`` gives the plain NumPy values and ``bytes``."""
        from parafeed.core.iterator import ElementView, eager

        return ElementView(iterate(self), eager)

    def as_numpy_iterator(self) -> DatasetIterator:
        """An iterator over the elements as plain NumPy values (arrays, NumPy scalars, ``bytes``); a
        :class:`SparseTensor` component comes as its dense array, as tf.data's ``as_numpy_iterator`` gives it."""
        from parafeed.core.iterator import Densify, ElementView
        from parafeed.values.sparse import SparseTensorSpec
        from parafeed.values.structure import flatten

        if not self._static_shapes():  # the spec would be read off a sample: look at the first element instead
            return ElementView(iterate(self), Densify(None))
        if any(isinstance(s, SparseTensorSpec) for s in flatten(self.element_spec)):
            return ElementView(iterate(self), Densify(True))
        return iterate(self)

    # ------------------------------------------------------------------ options

    def options(self) -> Options:
        """The options of the whole pipeline up to here: every step's, merged (later steps win)."""
        merged = Options()
        for node in reversed(list(walk(self))):  # upstream first
            own = node._own_options()
            if own is not None:
                merged = merged.merge(own)
        return merged

    def with_options(self, options: Options, name: str | None = None) -> Dataset:
        """This dataset with ``options`` applying to the whole pipeline."""
        from parafeed.ops.with_options import OptionsDataset

        if not isinstance(options, Options):
            raise ArgumentTypeError(f"with_options(): `options` must be a pf.Options, got {type(options).__name__}")
        return OptionsDataset(self, copy.deepcopy(options), name=name)

    def __repr__(self) -> str:
        spec = "" if self._spec is _UNSET else f" element_spec={self._spec!r}"
        return f"<{type(self).__name__}{spec}>"

    def __str__(self) -> str:  # shown by Keras when `fit` is given a pf.Dataset: say what Keras takes
        return f"{self!r} (a parafeed Dataset: Keras and tf.distribute take `ds.to_tf()`)"

    def __getattr__(self, name: str) -> Any:  # only for names not found: tf.data API parafeed lacks says so
        if name.startswith("_"):  # private names (hasattr checks on hot paths): no import, no message
            raise AttributeError(name)
        from parafeed.core.missing import DATASET, missing

        raise missing(type(self).__name__, DATASET, name)

    # ------------------------------------------------------------------ element-wise

    def map(
        self,
        map_func: Callable[..., Any],
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        synchronous: bool | None = None,
        use_unbounded_threadpool: bool = False,
        name: str | None = None,
        executor: str | None = None,
    ) -> Dataset:
        """Apply ``map_func`` to each element (a tuple element is passed as positional arguments).

        With ``num_parallel_calls`` (an int or ``AUTOTUNE``) the function runs in parallel: on threads (for
        functions that release the GIL: NumPy, image ops, I/O) or, with ``executor="process"`` (or
        ``Options(executor="process")``), on worker processes (for pure-Python functions), or with
        ``executor="ray"`` on Ray actors across a cluster (AUTOTUNE sizes the pool up to its CPUs). ``deterministic``
        (default True) keeps the input order. ``synchronous`` and ``use_unbounded_threadpool`` are accepted for
        tf.data compatibility and ignored: a serial map already runs in the consumer's thread, and parallel workers
        are bounded by ``Options.max_workers``.
        """
        from parafeed.ops.map import MapDataset

        return MapDataset(self, map_func, num_parallel_calls, deterministic, executor, name=name)

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """Keep the elements for which ``predicate`` returns a boolean scalar True."""
        from parafeed.ops.filter import FilterDataset

        return FilterDataset(self, predicate, name=name)

    def take_while(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """Elements up to (not including) the first for which ``predicate`` is False."""
        from parafeed.ops.filter import TakeWhileDataset

        return TakeWhileDataset(self, predicate, name=name)

    def unique(self, name: str | None = None) -> Dataset:
        """Drop repeated elements (scalar int32, int64 or string elements)."""
        from parafeed.ops.filter import UniqueDataset

        return UniqueDataset(self, name=name)

    def ignore_errors(self, log_warning: bool = False, name: str | None = None) -> Dataset:
        """Drop elements whose production raised (corrupt records, failing functions); see ``.ignored`` counts."""
        from parafeed.ops.ignore_errors import IgnoreErrorsDataset

        return IgnoreErrorsDataset(self, log_warning, name=name)

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        """Pairs ``(index, element)`` with an int64 index counting from ``start``."""
        from parafeed.ops.zip import ZipDataset

        return ZipDataset((Dataset.range(start, np.iinfo(np.int64).max), self), name=name)

    # ------------------------------------------------------------------ batching

    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Stack ``batch_size`` consecutive elements (the last batch may be smaller unless ``drop_remainder``).

        ``num_parallel_calls`` and ``deterministic`` are accepted for tf.data compatibility and ignored: a batch is
        one NumPy stack per component, and its order is always the input's; put parallel work in ``map``.
        """
        from parafeed.ops.batch import BatchDataset

        return BatchDataset(self, batch_size, drop_remainder, name=name)

    def padded_batch(
        self,
        batch_size: int,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Batch elements of different shapes by padding them to ``padded_shapes`` (``None``: the batch's longest)."""
        from parafeed.ops.padded_batch import PaddedBatchDataset

        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder, name=name)

    def unbatch(self, name: str | None = None) -> Dataset:
        """Split each element along its first dimension into separate elements."""
        from parafeed.ops.batch import UnbatchDataset

        return UnbatchDataset(self, name=name)

    def rebatch(self, batch_size: int | list[int], drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Re-cut batched elements into batches of ``batch_size`` (a list cycles through sizes): unbatch().batch()."""
        from parafeed.ops.batch import RebatchDataset

        return RebatchDataset(self, batch_size, drop_remainder, name=name)

    def window(
        self,
        size: int,
        shift: int | None = None,
        stride: int = 1,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Windows of ``size`` elements, each a (structure of) dataset(s), starting every ``shift`` elements."""
        from parafeed.ops.window import WindowDataset

        return WindowDataset(self, size, shift, stride, drop_remainder, name=name)

    def group_by_window(
        self,
        key_func: Callable[..., Any],
        reduce_func: Callable[[Any, Dataset], Dataset],
        window_size: int | None = None,
        window_size_func: Callable[[Any], Any] | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Group elements by ``key_func`` into windows and apply ``reduce_func(key, window_dataset)`` to each."""
        from parafeed.ops.group import GroupByWindowDataset

        return GroupByWindowDataset(self, key_func, reduce_func, window_size, window_size_func, name=name)

    def bucket_by_sequence_length(
        self,
        element_length_func: Callable[..., Any],
        bucket_boundaries: list[int],
        bucket_batch_sizes: list[int],
        padded_shapes: Any = None,
        padding_values: Any = None,
        pad_to_bucket_boundary: bool = False,
        no_padding: bool = False,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Batch elements of similar length together, one batch size per length bucket."""
        from parafeed.ops.group import bucket_by_sequence_length

        return bucket_by_sequence_length(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
            pad_to_bucket_boundary, no_padding, drop_remainder, name=name,
        )  # fmt: skip

    # ------------------------------------------------------------------ order and count

    def shuffle(
        self, buffer_size: int, seed: int | None = None, reshuffle_each_iteration: bool = True, name: str | None = None
    ) -> Dataset:
        """Shuffle with a buffer of ``buffer_size`` elements (a new order each epoch unless told otherwise)."""
        from parafeed.ops.shuffle import ShuffleDataset

        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration, name=name)

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        """Repeat the dataset ``count`` times (forever when ``None`` or -1)."""
        from parafeed.ops.repeat import RepeatDataset

        return RepeatDataset(self, count, name=name)

    def take(self, count: int, name: str | None = None) -> Dataset:
        """The first ``count`` elements (all of them when -1)."""
        from parafeed.ops.take import TakeDataset

        return TakeDataset(self, count, name=name)

    def skip(self, count: int, name: str | None = None) -> Dataset:
        """All but the first ``count`` elements (none when -1)."""
        from parafeed.ops.take import SkipDataset

        return SkipDataset(self, count, name=name)

    def shard(self, num_shards: int, index: int, name: str | None = None) -> Dataset:
        """Every ``num_shards``-th element starting at ``index``."""
        from parafeed.ops.shard import ShardDataset

        return ShardDataset(self, num_shards, index, name=name)

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """This dataset's elements followed by those of ``dataset`` (same structure and dtypes)."""
        from parafeed.ops.zip import ConcatenateDataset

        return ConcatenateDataset(self, dataset, name=name)

    # ------------------------------------------------------------------ data parallelism

    def distribute(
        self,
        num_replicas: int | None = None,
        replica_id: int | None = None,
        policy: str | None = None,
        input_context: Any = None,
        balance: str | None = None,
        label: str | int = "label",
        label_fn: Callable[[Any], int] | None = None,
        seed: int = 0,
    ) -> Dataset:
        """This pipeline for one replica: a disjoint share of the data.

        ``policy``: ``"FILE"`` (whole files per replica), ``"RECORD"`` (every n-th record), ``"DATA"`` (every n-th
        output element, tf.data's meaning), ``"AUTO"`` (FILE with at least one file per replica, else RECORD; DATA
        without files) or ``"OFF"``; a ``pf.experimental.AutoShardPolicy`` works too. By default, the pipeline's
        ``options().experimental_distribute.auto_shard_policy``, else AUTO.
        ``balance="labels"`` deals every class's elements evenly (each replica within 1
        of its share of every class). It works on TFRecord files (labels from a ``parafeed convert`` manifest,
        ``label_fn(record)`` or the int64 feature named ``label``) and on ``from_tensor_slices`` arrays (the ``label``
        dict key or tuple index, the ``y`` of ``(x, y)`` by default, or ``label_fn(element)``). Replicas default to
        ``input_context``, then ``torch.distributed``, then ``jax.distributed``, then ``TF_CONFIG``. With RECORD and
        DATA, replica ``r`` takes samples ``r, r + n, ...`` of one global order (a seeded shuffle before the split
        included), which is what lets ``pf.distribute.resume`` continue a run on another number of replicas.

        Example:
            >>> ds = pf.TFRecordDataset(files).distribute(2, rank).map(parse).shuffle(1000).batch(32).equal_steps()
        """
        from parafeed.distribute.replica_split import shard_for_replica

        return shard_for_replica(self, num_replicas, replica_id, policy, input_context, balance, label, label_fn, seed)

    def equal_steps(self, policy: str = "pad", steps: int | None = None, name: str | None = None) -> Dataset:
        """Exactly the same number of batches per epoch on every replica.

        ``"pad"`` (default) keeps every sample exactly once and adds a weight to each batch (last in the tuple, or
        ``"sample_weight"`` in a dict): 1 for real rows, 0 for the rows that fill short batches and short replicas.
        ``"drop"`` stops every replica at the shortest's count; ``"repeat"`` starts a short replica's data again.
        ``steps`` is computed from ``distribute``'s counts when they are known; otherwise give it.
        """
        from parafeed.distribute.balance import EqualStepsDataset

        return EqualStepsDataset(self, policy, steps, name=name)

    def to_tf(self, output_signature: Any = None) -> Any:
        """This pipeline as a ``tf.data.Dataset`` (for Keras ``fit`` and tf.distribute strategies); batch first."""
        from parafeed.adapters.tf import to_tf

        return to_tf(self, output_signature)

    def to_torch(self, distribute: bool = False, device: Any = None, **kwargs: Any) -> Any:
        """This pipeline as a PyTorch ``IterableDataset`` of tensors: sharing parafeed's memory, or with ``device``
        (``"cuda"``, ``"cpu"``) on that device, readied ahead; with ``distribute``, split by ``torch.distributed``
        rank (see :func:`parafeed.adapters.torch.to_torch`)."""
        from parafeed.adapters.torch import to_torch

        return to_torch(self, distribute, device, **kwargs)

    def to_jax(self, sharding: Any = None, **kwargs: Any) -> Any:
        """This pipeline as batches of ``jax.Array``s laid out by ``sharding`` (by default split over every device of
        the job), placed ahead of the loop; with ``distribute=True``, split by JAX process, each array the global
        batch of every process's rows (see :func:`parafeed.adapters.jax.to_jax`)."""
        from parafeed.adapters.jax import to_jax

        return to_jax(self, sharding, **kwargs)

    # ------------------------------------------------------------------ nested datasets

    def flat_map(self, map_func: Callable[..., Dataset], name: str | None = None) -> Dataset:
        """Map each element to a dataset and chain those datasets."""
        from parafeed.ops.interleave import InterleaveDataset

        return InterleaveDataset(self, map_func, 1, 1, None, None, name=name, what="flat_map")

    def interleave(
        self,
        map_func: Callable[..., Dataset],
        cycle_length: int | None = None,
        block_length: int | None = None,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Map elements to datasets and take ``block_length`` elements from ``cycle_length`` of them in turn."""
        from parafeed.ops.interleave import InterleaveDataset

        return InterleaveDataset(
            self, map_func, cycle_length, block_length, num_parallel_calls, deterministic, name=name
        )

    # ------------------------------------------------------------------ performance

    def cache(
        self, filename: str = "", name: str | None = None, *, storage_options: dict[str, Any] | None = None
    ) -> Dataset:
        """Keep the elements after the first full pass, in memory or (with ``filename``) in a file.

        A file replays without running anything upstream. As in tf.data, it is tied to its filename: after changing
        the steps before it, delete the file or use another name (a change of dtypes is refused when the input's
        element spec is known without running a user function). ``filename`` may be a URL (``s3://...``: uploaded
        once complete; ``storage_options`` for its filesystem).
        """
        from parafeed.ops.cache import CacheDataset

        return CacheDataset(self, filename, name=name, storage_options=storage_options)

    def offload(
        self,
        workers: int = AUTOTUNE,
        *,
        cpus_per_worker: float = 1.0,
        buffer: int = 2,
        block: int | None = None,
        name: str | None = None,
        executor: str = "ray",
    ) -> Dataset:
        """Run the pipeline so far on Ray input workers (actors across a Ray cluster), or with
        ``executor="process"`` on worker processes of this host; the elements arrive here in the same order as on one
        host, exactly once even when workers die (see ``docs/scale-out.md``).

        Args:
            workers: input workers (Ray actors) to run on; AUTOTUNE: 2 to start with, then more while the trainer
                waits for blocks and fewer when it does not, within the cluster's free CPUs.
                ``iterator.resize(n)`` sets it while running.
            cpus_per_worker: the CPUs each worker reserves in Ray (fractions allowed).
            buffer: calls each worker has requested ahead of the trainer (a call carries as many blocks as take
                about 30 Ray round trips).
            block: elements of this pipeline in one worker's block (default: 1 when it ends in a batch, else 32).
            executor: ``"ray"`` (actors of the Ray cluster this process is connected to) or ``"process"`` (worker
                processes of this host, no Ray: the whole pipeline off the trainer's Python; AUTOTUNE: one per
                core; ``cpus_per_worker`` does not apply).

        Example:
            >>> ds = (pf.TFRecordDataset(files).distribute().map(decode).batch(64)
            ...       .offload(workers=8).equal_steps().prefetch(2))
        """
        from parafeed.ops.offload import OffloadDataset

        return OffloadDataset(self, workers, cpus_per_worker, buffer, block, name=name, executor=executor)

    def prefetch(self, buffer_size: int, name: str | None = None) -> Dataset:
        """Produce up to ``buffer_size`` elements ahead on a background thread."""
        from parafeed.ops.prefetch import PrefetchDataset

        return PrefetchDataset(self, buffer_size, name=name)

    # ------------------------------------------------------------------ whole-dataset helpers

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``, for chaining reusable transformations."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise ArgumentTypeError(f"apply(): `transformation_func` must return a Dataset, got {type(out).__name__}")
        return out

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any], name: str | None = None) -> Any:
        """Fold all elements into a state: ``state = reduce_func(state, element)``.

        ``name`` is accepted for tf.data compatibility and ignored (``reduce`` runs at once; it is not a step).
        """
        from parafeed.ops.reduce import reduce_dataset

        return reduce_dataset(self, initial_state, reduce_func)

    # ------------------------------------------------------------------ sparse and ragged batching

    def sparse_batch(self, batch_size: int, row_shape: Any, name: str | None = None) -> Dataset:
        """Batch elements of different shapes into one :class:`SparseTensor` per batch, of dense shape
        ``(rows, *row_shape)`` (a ``None`` dimension: the batch's largest); every entry of an element is a value.

        Example:
            >>> ds = pf.Dataset.from_tensor_slices([1, 2]).map(lambda n: np.full(n, n)).sparse_batch(2, [3])
            >>> next(iter(ds)).indices.tolist()
            [[0, 0], [1, 0], [1, 1]]
        """
        from parafeed.ops.sparse_batch import SparseBatchDataset

        return SparseBatchDataset(self, batch_size, row_shape, name=name)

    def ragged_batch(
        self, batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = np.int64, name: str | None = None
    ) -> Dataset:
        """Batch elements of varying shape: components with an unknown dimension become :class:`RaggedTensor`
        batches (ragged up to their last unknown dimension), RaggedTensor components gain a ragged dimension, fully
        defined ones are stacked. After a user function, the dimensions that differ in the first batch count as
        unknown (tf.data reads them off its traced spec).

        Example:
            >>> ds = pf.Dataset.range(4).map(lambda x: np.arange(x)).ragged_batch(2)
            >>> next(iter(ds)).to_list()
            [[], [0]]
        """
        from parafeed.ops.ragged_batch import RaggedBatchDataset

        return RaggedBatchDataset(self, batch_size, drop_remainder, row_splits_dtype, name=name)

    # ------------------------------------------------------------------ scans and single elements

    def scan(self, initial_state: Any, scan_func: Callable[[Any, Any], Any], name: str | None = None) -> Dataset:
        """Carry a state through the elements: ``new_state, output = scan_func(state, element)``.

        The new state keeps the initial state's structure and dtypes (shapes may change); a ``scan_func`` that
        changes them is refused when it is tried on a first element as the step is built, as tf.data refuses it.

        Example:
            >>> [int(x) for x in pf.Dataset.range(5).scan(np.int64(0), lambda s, x: (s + x, s + x))]
            [0, 1, 3, 6, 10]
        """
        from parafeed.ops.scan import ScanDataset

        return ScanDataset(self, initial_state, scan_func, name=name)

    def get_single_element(self, name: str | None = None) -> Any:
        """The one element of a dataset that has exactly one; an InvalidArgumentError if it has none or more.

        ``name`` is accepted for tf.data compatibility and ignored (this runs at once; it is not a step).
        """
        from parafeed.ops.reduce import single_element

        return single_element(self)

    # ------------------------------------------------------------------ resampling

    def rejection_resample(
        self,
        class_func: Callable[..., Any],
        target_dist: Any,
        initial_dist: Any = None,
        seed: int | None = None,
        name: str | None = None,
    ) -> Dataset:
        """``(class, element)`` pairs whose classes (``class_func(element)``, ints in ``[0, num_classes)``) follow
        ``target_dist``: elements are dropped, or taken again from a second pass, as tf.data does.

        ``initial_dist`` is the input's class distribution; when None it is estimated while iterating.

        Example:
            >>> ds = pf.Dataset.range(1000).rejection_resample(lambda x: x % 2, [0.9, 0.1], [0.5, 0.5], seed=1)
            >>> classes = [int(c) for c, _ in ds]  # about 90% zeros
        """
        from parafeed.ops.resample import rejection_resample

        return rejection_resample(self, class_func, target_dist, initial_dist, seed, name=name)

    # ------------------------------------------------------------------ saved datasets and snapshots

    def save(
        self, path: str, compression: str | None = None, shard_func: Callable[..., Any] | None = None,
        checkpoint_args: Any = None,
    ) -> None:  # fmt: skip
        """Write every element to the directory ``path`` (parafeed's own format), for ``Dataset.load``.

        Args:
            compression: None/"NONE" or "GZIP".
            shard_func: maps an element to an int64 shard index (one file per shard; all in shard 0 without it).
            checkpoint_args: not supported (a TensorFlow checkpoint of the writer); a save that stops is not published.

        Example:
            >>> pf.Dataset.range(3).save("/tmp/saved")
            >>> list(pf.Dataset.load("/tmp/saved"))
            [np.int64(0), np.int64(1), np.int64(2)]
        """
        from parafeed.ops.save import save_dataset

        save_dataset(self, path, compression, shard_func, checkpoint_args)

    def snapshot(
        self, path: str, compression: str | None = "AUTO", reader_func: Callable[[Dataset], Dataset] | None = None,
        shard_func: Callable[..., Any] | None = None, name: str | None = None,
    ) -> Dataset:  # fmt: skip
        """The input's elements, written under ``path`` on the first complete pass and read from there by later
        runs; a changed upstream pipeline gets a new snapshot (see :mod:`parafeed.ops.snapshot`)."""
        from parafeed.ops.snapshot import SnapshotDataset

        return SnapshotDataset(self, path, compression, reader_func, shard_func, name=name)


class PassThroughDataset(Dataset):
    """Base of one-input steps whose elements are input elements (filter, shuffle, take, cache ...)."""

    def __init__(self, parent: Dataset, name: str | None = None):
        super().__init__((parent,), name=name)

    @property
    def _parent(self) -> Dataset:
        return self._parents[0]

    def _element_spec(self) -> Any:
        return self._parents[0].element_spec

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()

    def _cardinality(self) -> int:
        return self._parents[0]._cardinality()


def start_run(context: RunContext) -> DatasetIterator:
    """Build the iterator tree of ``context.dataset`` in a new run ``context``; returns its root iterator."""
    if context.options.resolve("stats"):
        context.stats = StatsCollector()
    with building(Scope(context)):
        it = context.dataset._iter()
    if context.stats is not None:
        context.stats.finish_building()
    it._run = context
    return it


def iterate(
    dataset: Dataset, run: dict[str, Any] | None = None, resumed: ResumePoint | None = None, tracking: Any = None
) -> DatasetIterator:
    """Start a run of ``dataset``: what ``iter(dataset)`` does, and what checkpoints and adapters call to start
    one as another run would have.

    Args:
        run: a run's state (``{"iteration", "seeds"}``, the ``"run"`` entry of a root state): start as that run
            did, rather than as the next iteration of ``dataset``.
        resumed: where this pass begins in its epoch (see :mod:`parafeed.checkpoint`).
        tracking: a :class:`parafeed.core.positions.Consumption` to record into (an elastic resume).
    """
    context = RunContext(dataset, dataset.options(), resumed=resumed or ResumePoint(), tracking=tracking)
    if run is None:
        context.counter = dataset._iterations
        context.iteration = context.counter.take()
    else:
        context.restore(run)
    return start_run(context)


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


def _zeros_of(spec: Any) -> Any:
    """An element of zeros with ``spec``'s structure and dtypes (a dimension not known: 1; strings: ``b""``), or None
    where a leaf is not a :class:`TensorSpec` (ragged, sparse ...)."""
    if not all(isinstance(leaf, TensorSpec) for leaf in flatten(spec)):
        return None

    def zeros(leaf: TensorSpec) -> Any:
        shape = tuple(1 if d is None else d for d in (leaf.shape or ()))
        return np.full(shape, b"", dtype=STRING) if leaf.dtype == STRING else np.zeros(shape, leaf.dtype)

    return map_structure(zeros, spec)

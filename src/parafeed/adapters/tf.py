"""Feeding TensorFlow: ``ds.to_tf()``, and per-replica pipelines for ``tf.distribute`` strategies.

The parafeed pipeline runs as it is (threads, processes, AUTOTUNE); TensorFlow receives its elements through
``tf.data.Dataset.from_generator``, one Python crossing per element, so batch before converting and each crossing
carries a whole batch. The signature comes from ``element_spec`` (a leading dimension read off a sample is left
unknown, since the last batch may be shorter). parafeed shards replicas itself (``distribute``), so TensorFlow's own
auto-sharding is turned off on the result.

Under a strategy, :func:`distribute` gives every replica a parafeed pipeline of its own:
``make_pipeline(num_replicas, replica_id, batch_size)``. ``strategy.distribute_datasets_from_function`` calls
:func:`dataset_fn` once per worker; it builds the pipelines of that worker's replicas and hands their batches over in
turn (replica 0's, replica 1's, ...), which is the order in which TensorFlow gives a worker's batches to its devices,
so replica ``r`` trains on exactly its own pipeline's batches.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from parafeed.core import graph
from parafeed.core.dataset import UNKNOWN, Dataset, iterate
from parafeed.distribute.agreement import LocalGroup, agreeing_in
from parafeed.distribute.resume import Epochs, save_state
from parafeed.errors import InvalidArgumentError, StateError
from parafeed.feed.stats import FeedStats
from parafeed.values.ragged_spec import RaggedTensorSpec
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.structure import STRING, TensorSpec, flatten, map_structure


def tf_signature(ds: Dataset) -> Any:
    """``ds.element_spec`` as a structure of ``tf.TensorSpec``.

    A leading dimension read off a sample element becomes unknown (a last batch may be shorter); one set by the step
    that batches (``batch(drop_remainder=True)``, ``equal_steps("pad")``) is kept: a fixed batch size spares
    TensorFlow's distributed iterators their partial-batch handling (several milliseconds a step).
    """
    import tensorflow as tf

    exact = graph.static_shapes(ds) or graph.batching_step(ds) is not None

    def convert(spec: Any) -> Any:
        if not isinstance(spec, (TensorSpec, RaggedTensorSpec)):
            raise InvalidArgumentError(f"to_tf(): elements with {spec!r} leaves cannot be given to TensorFlow")
        shape = spec.shape
        if shape and not exact:
            shape = (None, *shape[1:])
        dtype = tf.string if spec.dtype == STRING else tf.as_dtype(spec.dtype)
        if isinstance(spec, RaggedTensorSpec) and spec.ragged_rank > 0:  # rank 0: plain arrays
            return tf.RaggedTensorSpec(shape, dtype, spec.ragged_rank, tf.as_dtype(spec.row_splits_dtype))
        return tf.TensorSpec(shape, dtype)

    return map_structure(convert, ds.element_spec)


def to_tf(ds: Dataset, output_signature: Any = None) -> Any:
    """A ``tf.data.Dataset`` producing ``ds``'s elements (a new parafeed iterator each time TensorFlow iterates it).

    Example:
        >>> model.fit(pf.TFRecordDataset(files).map(parse).batch(64).prefetch(pf.AUTOTUNE).to_tf(), epochs=5)
    """
    signature = output_signature or tf_signature(ds)
    ragged = any(isinstance(s, RaggedTensorSpec) for s in flatten(ds.element_spec))
    return _from_generator(lambda: _elements(ds, ragged), signature, int(ds.cardinality()), _buffers(ds))


def _elements(ds: Dataset, ragged: bool = False) -> Iterator[Any]:
    it = iterate(ds)
    try:
        if ragged:  # pf.RaggedTensor leaves go over as tf.RaggedTensor
            yield from (map_structure(_tf_ragged, element) for element in it)
        else:
            yield from it
    finally:
        it.close()


def _tf_ragged(leaf: Any) -> Any:
    if not isinstance(leaf, RaggedTensor):
        return leaf
    import tensorflow as tf

    return tf.RaggedTensor.from_nested_row_splits(leaf.flat_values, leaf.nested_row_splits, validate=False)


class CheckpointedFeed:
    """A pipeline fed to Keras ``fit`` whose position is saved with the model's checkpoints, to resume after a
    pre-emption exactly where training stopped (not where TensorFlow's read-ahead stopped).

    ``feed.dataset`` is the ``tf.data.Dataset`` to fit on and ``feed.callback`` the Keras callback that writes the
    state (JSON) to ``path`` every ``save_freq`` steps or at every epoch's end (``"epoch"``). When ``path`` exists
    the feed starts from it, and the epochs after it shuffle as the uninterrupted run's would have.

    Example:
        >>> feed = pf.adapters.tf.CheckpointedFeed(ds, "ckpt/loader.json", save_freq=100)
        >>> model.fit(feed.dataset, epochs=5, initial_epoch=feed.epoch, callbacks=[feed.callback, model_checkpoint])
    """

    KEPT_STATES = 64  # positions kept per epoch: TensorFlow reads at most a few batches ahead of training

    def __init__(
        self, ds: Dataset, path: str, save_freq: int | Literal["epoch"] = "epoch", output_signature: Any = None
    ):
        if save_freq != "epoch" and (not isinstance(save_freq, int) or save_freq <= 0):
            raise InvalidArgumentError(
                f"CheckpointedFeed(): `save_freq` must be 'epoch' or an int > 0, got {save_freq!r}"
            )
        self._ds, self._path, self.save_freq = ds, path, save_freq
        saved = _read_json(path) or {}
        self.epoch = saved.get("epoch", 0)  # the epoch to resume in (``initial_epoch``)
        self._epochs = Epochs(ds, saved.get("state"), saved.get("run"), numpy=True)
        self._states: dict[int, dict] = {}  # steps taken in this epoch -> the state then (the last few)
        self._last: int | None = None
        self.dataset = _from_generator(self.elements, output_signature or tf_signature(ds), UNKNOWN, _buffers(ds))
        self.callback = _feed_callback(self)

    def elements(self) -> Iterator[Any]:
        """One epoch's elements, as TensorFlow reads them (``dataset`` is these); the state after each element is
        kept before the element is handed over, so it is there for every batch Keras can report, and the next element
        is read before one is handed over, so that the epoch's last is known as it goes (:attr:`last`)."""
        it = self._epochs.next()
        self._states = states = {0: save_state(it, 0)}
        self._last, step = None, 0
        try:
            x = next(it, _END)
            while x is not _END:
                step += 1
                # the position after this batch is kept before TensorFlow can train on the batch
                states[step] = save_state(it, step)
                states.pop(step - self.KEPT_STATES, None)
                following = next(it, _END)
                if following is _END:
                    self._last = step
                yield x
                x = following
            self._last = step  # (an empty epoch)
        finally:
            it.close()

    @property
    def last(self) -> int | None:
        """The number of the epoch in progress's last batch, once it has been handed to TensorFlow (None before)."""
        return self._last

    def position(self, epoch: int, steps: int) -> dict:
        """The state after the first ``steps`` batches of the epoch in progress, numbered ``epoch``."""
        state = self._states.get(steps)
        if state is None:
            raise StateError(f"CheckpointedFeed: no state kept for step {steps} of epoch {epoch}")
        return state

    def save(self, epoch: int, state: dict | None) -> None:
        """Write the file: to go on in ``epoch`` from ``state`` (None: at the start of ``epoch``)."""
        data = {"epoch": epoch, "state": state, "run": self._epochs.upcoming()}
        tmp = f"{self._path}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, self._path)


def _read_json(path: str) -> Any:
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def _feed_callback(feed: CheckpointedFeed) -> Any:
    import keras

    class FeedCheckpoint(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self._epoch, self._batches, self._total = epoch, 0, getattr(self, "_total", 0)

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            self._total, self._batches = self._total + 1, batch + 1
            if feed.save_freq != "epoch" and self._total % feed.save_freq == 0:
                self._save_position()

        def _save_position(self) -> None:  # the position after the last batch trained on
            feed.save(self._epoch, feed.position(self._epoch, self._batches))

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            # (whether the epoch's last batch was trained: TensorFlow may have read to the end of the epoch, or not
            # yet past its last batch, where training stopped)
            if feed.last is not None and self._batches >= feed.last:
                feed.save(epoch + 1, None)
            else:  # training stopped inside the epoch: save where it stopped
                self._save_position()

    return FeedCheckpoint()


def _buffers(ds: Dataset) -> bool:
    """Whether ``ds`` ends with a ``prefetch`` (options aside): its elements are then ready before TensorFlow asks,
    and a TensorFlow prefetch on top would only hold more batches."""
    from parafeed.ops.prefetch import PrefetchDataset
    from parafeed.ops.with_options import OptionsDataset

    return isinstance(graph.down(ds, lambda node: isinstance(node, OptionsDataset)), PrefetchDataset)


def _from_generator(generator: Callable[[], Iterator[Any]], signature: Any, count: int,
                    buffered: bool = False) -> Any:  # fmt: skip
    """``generator``'s elements as a tf.data.Dataset of ``count`` elements (when known: Keras then knows the steps
    of an epoch), prefetched unless the generator's elements are ``buffered`` already, with TensorFlow's
    auto-sharding off."""
    import tensorflow as tf

    out = tf.data.Dataset.from_generator(generator, output_signature=signature)
    if count != UNKNOWN:
        out = out.apply(tf.data.experimental.assert_cardinality(count))
    if not buffered:
        out = out.prefetch(2)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    return out.with_options(options)


class FeedPositions:
    """Where each of a worker's replicas stands after every batch of the epoch in progress, kept before the batch is
    handed to TensorFlow: what to checkpoint under a strategy (pass one to :func:`distribute`).

    ``states(steps)`` gives this worker's replicas' ``pf.distribute.save_state`` after ``steps`` batches of the epoch
    (a step of the strategy takes one batch of every replica), for any step TensorFlow has read up to, however far
    ahead it reads; ``replica_ids`` says whose. Resume from the list of every worker's states (any replica count), or
    from one replica's with a RECORD or DATA split and nothing but map and batch after it.

    Example:
        >>> positions = pf.adapters.tf.FeedPositions()
        >>> dist = pf.adapters.tf.distribute(strategy, make, 64, positions=positions)
        >>> ...  # after step s of the epoch, with the model checkpoint:
        >>> json.dump(positions.states(s), open(f"ckpt/input-{worker}.json", "w"))
    """

    KEPT_STEPS = 64  # TensorFlow reads at most a few batches ahead of training

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[int, list[dict]] = {}
        self.replica_ids: list[int] = []
        self.epochs = 0  # epochs begun

    def begin(self, replica_ids: list[int], states: list[dict]) -> None:
        with self._lock:
            self.replica_ids, self._kept = list(replica_ids), {0: states}
            self.epochs += 1

    def record(self, steps: int, states: list[dict]) -> None:
        with self._lock:
            self._kept[steps] = states
            self._kept.pop(steps - self.KEPT_STEPS, None)

    def states(self, steps: int) -> list[dict]:
        """This worker's replicas' states after ``steps`` batches of the epoch in progress."""
        with self._lock:
            found = self._kept.get(steps)
        if found is None:
            raise StateError(
                f"FeedPositions: no state kept for step {steps} of the epoch in progress (steps kept: "
                f"{sorted(self._kept)[:3]}...{sorted(self._kept)[-3:]}); ask for a step TensorFlow has read"
            )
        return found


def dataset_fn(
    make_pipeline: Callable[[int, int, int | None], Dataset], global_batch_size: int | None = None,
    repeat: bool = False, stats: FeedStats | None = None, resume_from: dict | list[dict] | None = None,
    positions: FeedPositions | None = None,
) -> Callable[[Any], Any]:  # fmt: skip
    """A function for ``strategy.distribute_datasets_from_function``: for the worker's ``tf.distribute.InputContext``
    it builds ``make_pipeline(num_replicas, replica_id, batch_size)`` for each of the worker's replicas (global
    replica ids; ``batch_size`` is the per-replica share of ``global_batch_size``, or None) and interleaves their
    batches so that replica ``r`` receives its own pipeline's. ``repeat`` repeats the epochs (what ``tf_keras`` needs
    with ``steps_per_epoch``); ``stats`` (a :class:`FeedStats`) measures how long TensorFlow waited for batches;
    ``resume_from`` (a state from ``pf.distribute.save_state`` on any replica, or the list of every replica's) makes
    the first epoch go on from it, on any number of replicas (see ``pf.distribute.resume``), and the later ones
    follow as they would have. When the batch counts are not known before the epoch (a filter after the split), the
    replicas agree at every step: the worker's replicas are read on threads of their own, and the workers of a
    MultiWorkerMirroredStrategy add their votes with TensorFlow's collective ops. ``positions`` (a
    :class:`FeedPositions`) keeps the replicas' states after every batch, to checkpoint with the model.
    """

    def fn(input_context: Any) -> Any:
        workers, worker = input_context.num_input_pipelines, input_context.input_pipeline_id
        replicas = input_context.num_replicas_in_sync
        if replicas % workers:
            raise InvalidArgumentError(f"dataset_fn(): {replicas} replicas do not divide over {workers} workers")
        per_worker = replicas // workers
        batch = input_context.get_per_replica_batch_size(global_batch_size) if global_batch_size else None
        ids = range(worker * per_worker, (worker + 1) * per_worker)
        pipelines = [_checked(make_pipeline(replicas, r, batch), r) for r in ids]
        _check_counts(pipelines, list(ids))
        epochs = [Epochs(p, resume_from, numpy=True) for p in pipelines]
        agree = None  # counts unknown (a filter after the split): the replicas vote each step (one group per epoch)
        if _agree_at_run_time(pipelines[0]):
            combine = None if workers == 1 else worker_votes(workers)
            agree = lambda: LocalGroup(replicas, per_worker, combine)  # noqa: E731
        # the count stays unknown: TensorFlow would report this worker's element count (steps x local replicas)
        # as the distributed dataset's cardinality, which Keras takes for the number of steps
        out = _from_generator(
            lambda: _lockstep(epochs, list(ids), stats, agree, positions), _common_signature(pipelines), UNKNOWN
        )
        return out.repeat() if repeat else out

    return fn


def distribute(
    strategy: Any, make_pipeline: Callable[[int, int, int | None], Dataset], global_batch_size: int | None = None,
    repeat: bool = False, stats: FeedStats | None = None, resume_from: dict | list[dict] | None = None,
    positions: FeedPositions | None = None, ahead: int = 2,
) -> Any:  # fmt: skip
    """A ``tf.distribute.DistributedDataset`` in which every replica of ``strategy`` reads its own parafeed pipeline,
    ``make_pipeline(num_replicas, replica_id, batch_size)`` (see :func:`dataset_fn`). TensorFlow copies each
    replica's batches to that replica's device ``ahead`` batches before the step that takes them
    (``tf.distribute.InputOptions``: ``experimental_fetch_to_device``, ``experimental_per_replica_buffer_size``);
    ``ahead=0`` leaves them in host memory.

    Example:
        >>> def make(num_replicas, replica_id, batch_size):
        ...     return (pf.TFRecordDataset(files).distribute(num_replicas, replica_id, balance="labels")
        ...             .map(parse, num_parallel_calls=pf.AUTOTUNE).shuffle(1000).batch(batch_size)
        ...             .equal_steps().prefetch(pf.AUTOTUNE))
        >>> model.fit(pf.adapters.tf.distribute(strategy, make, global_batch_size=64), epochs=5)
    """
    import tensorflow as tf

    if not isinstance(ahead, int) or isinstance(ahead, bool) or ahead < 0:
        raise InvalidArgumentError(f"distribute(): `ahead` must be an int >= 0, got {ahead!r}")
    fn = dataset_fn(make_pipeline, global_batch_size, repeat, stats, resume_from, positions)
    on_devices = tf.distribute.InputOptions(experimental_fetch_to_device=ahead > 0,
                                            experimental_per_replica_buffer_size=max(1, ahead))  # fmt: skip
    return strategy.distribute_datasets_from_function(fn, options=on_devices)


def _checked(ds: Any, replica_id: int) -> Dataset:
    if not isinstance(ds, Dataset):
        raise InvalidArgumentError(
            f"dataset_fn(): make_pipeline must return a pf.Dataset, got {type(ds).__name__} for replica {replica_id}"
        )
    return ds


def _check_counts(pipelines: list[Dataset], ids: list[int]) -> None:
    """Uneven batch counts hang or break a synchronous strategy at the end of an epoch: refuse them when known, for
    this worker's replicas and, from ``distribute``'s plan, for all replicas of every worker."""
    local = [int(p.cardinality()) for p in pipelines]
    everywhere = graph.replica_counts(pipelines[0])
    for what, counts in ((f"replicas {ids}", local), ("all replicas", everywhere)):
        if counts is not None and all(c >= 0 for c in counts) and len(set(counts)) > 1:
            raise InvalidArgumentError(
                f"dataset_fn(): {what} would yield {counts} batches: a synchronous strategy needs the same number on "
                "every replica. End each pipeline with .equal_steps() (after distribute(...) and batch(...))."
            )


def _common_signature(pipelines: list[Dataset]) -> Any:
    signatures = [tf_signature(p) for p in pipelines]
    for r, s in enumerate(signatures[1:], 1):
        if repr(s) != repr(signatures[0]):
            raise InvalidArgumentError(
                f"dataset_fn(): the replicas' pipelines give different elements: {signatures[0]} vs {s} (replica "
                f"offset {r}); build them the same way"
            )
    return signatures[0]


def _agree_at_run_time(ds: Dataset) -> bool:
    from parafeed.distribute.balance import EqualStepsDataset

    return any(node.agrees for node in graph.find(ds, EqualStepsDataset))


def _lockstep(epochs: list[Epochs], ids: list[int], stats: FeedStats | None,
              agree: Callable[[], LocalGroup] | None = None,
              positions: FeedPositions | None = None) -> Iterator[Any]:  # fmt: skip
    """One batch of each pipeline in turn, until all end together (else a clear error, not a hung strategy).

    With ``agree`` (replicas that vote each step), every replica's iterator is made and read on a thread of its own,
    since a vote waits for the others'."""
    pool = None
    if agree is None:
        iterators = [e.next() for e in epochs]
        pull: Callable[[], list[Any]] = lambda: [_next_or_end(it) for it in iterators]  # noqa: E731
    else:
        group = agree()

        def start(e: Epochs) -> Any:
            with agreeing_in(group):
                return e.next()

        pool = ThreadPoolExecutor(len(ids), thread_name_prefix="parafeed-replica")
        iterators = list(pool.map(start, epochs))
        pull = lambda: list(pool.map(_next_or_end, iterators))  # noqa: E731
    step = 0
    if positions is not None:
        positions.begin(ids, [save_state(it, 0) for it in iterators])
    try:
        while True:
            started = stats.clock() if stats is not None else 0.0
            pulled = pull()
            ended = [r for r, x in zip(ids, pulled) if x is _END]
            if stats is not None:
                stats.record(len(ids) - len(ended), stats.clock() - started)
            if len(ended) == len(ids):
                return
            if ended:
                raise InvalidArgumentError(
                    f"dataset_fn(): replica(s) {ended} ended after {step} batches while the others went on: a "
                    "synchronous strategy needs the same number of batches on every replica. End each pipeline "
                    "with .equal_steps() (give `steps=` when filters make the counts unknowable in advance)."
                )
            step += 1
            if positions is not None:  # kept before TensorFlow can train on the batches
                positions.record(step, [save_state(it, step) for it in iterators])
            yield from pulled
    finally:
        for it in iterators:
            it.close()
        if pool is not None:
            pool.shutdown(wait=False)


_END = object()


def _next_or_end(it: Any) -> Any:
    try:
        return next(it)
    except StopIteration:
        return _END


_VOTE_SERIALS = itertools.count()  # worker_votes() calls: every worker makes them in the same order
VOTES_GROUP_KEY = 0x7066  # the first collective group of the workers' votes (far above the strategy's own keys)
_EPOCH_GROUPS = 1 << 16  # vote groups per worker_votes() call: one per epoch (used again after that many epochs)
_LEFT = -float(1 << 20)  # the vote of a worker that has left the epoch (every sum of real votes is >= 0)


def worker_votes(workers: int) -> Callable[[int, int], int]:
    """(round, this worker's sum of votes) -> the sum over all ``workers``, through TensorFlow's collective ops (what
    MultiWorkerMirroredStrategy configured in this process); every worker calls it for the same rounds in order, and
    iterates one iterator of the dataset at a time.

    Each epoch (its rounds start again at 0) votes in a collective group of its own, round ``k`` as instance
    ``k + 1``. An epoch left before its end (a ``break``, or the end of a Keras ``fit`` while the input was read
    ahead) can leave one worker waiting for a round that the others will never vote on: such a vote must never pair
    with a later round, and when a worker starts its next epoch it votes ``_LEFT`` for the round after its last one
    of the previous epoch, which ends such a wait at once (with an error, in an iterator nobody reads any more). For
    the same reason the collective has no timeout of its own (TensorFlow aborts every collective of the process, the
    training step's included, when one times out): the wait for votes is bounded by ``LocalGroup``'s
    ``AGREE_SECONDS``, and a worker that dies fails the vote through MultiWorkerMirroredStrategy's health checks.
    """
    import contextlib

    import tensorflow as tf

    from parafeed.errors import UnavailableError

    first = next(_VOTE_SERIALS) * _EPOCH_GROUPS
    lock = threading.Lock()
    epoch, last = -1, -1  # the epoch in progress and its last round so far

    def group_of(epoch: int) -> int:
        return VOTES_GROUP_KEY + (first + epoch % _EPOCH_GROUPS) % (2**31 - 1 - VOTES_GROUP_KEY)

    def reduce(group: int, instance: int, vote: float) -> float:
        with tf.device("/CPU:0"):
            total = tf.raw_ops.CollectiveReduceV2(
                input=tf.constant([vote]), group_size=workers, group_key=group, instance_key=instance,
                ordering_token=[], merge_op="Add", final_op="Id",
            )  # fmt: skip
        return float(total.numpy()[0])

    def leave(group: int, instance: int) -> None:
        # (it waits for good where no worker waits for that round: a thread, no more; it fails where a worker is
        # gone, which the training step reports)
        with contextlib.suppress(Exception):
            reduce(group, instance, _LEFT)

    def combine(round_: int, mine: int) -> int:
        nonlocal epoch, last
        with lock:
            if round_ == 0:
                if epoch >= 0:
                    threading.Thread(target=leave, args=(group_of(epoch), last + 2), daemon=True).start()
                epoch += 1
            group, last = group_of(epoch), round_
        total = reduce(group, round_ + 1, float(mine))
        if total < 0:
            raise UnavailableError(
                f"another worker left the epoch before round {round_} of the votes (it started its next epoch)"
            )
        return int(total)

    return combine

"""``offload``: run the pipeline so far on Ray input workers; the trainer receives its elements in the same order.

The pipeline before ``offload`` (the source, the replica's share from ``distribute``, the expensive maps, the batch)
runs on ``workers`` Ray actors (:mod:`parafeed.parallel.ray_input_workers`). Each actor runs the same pipeline with a
block shard (:class:`BlockShardDataset`) inserted where the per-element work begins (:func:`split_point`): worker
``k`` computes blocks ``k, k + K ...`` and only skips past the others (a skip runs none of the steps above it and
seeks in files with an index), and the trainer takes blocks round-robin, so it receives exactly the elements, in
exactly the order, of the pipeline run on one host. Which worker this is comes from the run
(``RunContext.share``), not the node, so one saved state restores into any worker of any number of workers.

Guarantees:

* **Exactly once when workers die.** Every block comes back with the worker's iterator state after it. A worker
  that dies (its process or its node) is replaced by a new actor started from the last state received from it, so
  its next block is the one that was missing: nothing lost, nothing repeated. Without a free CPU for a replacement,
  the remaining workers take over its share (a resize).
* **Elastic.** ``iterator.resize(n)`` moves to ``n`` workers at the next block boundary: every new worker starts
  from the state after the trainer's current block and takes its share of the blocks after it.
* **Checkpoints.** The iterator's state is the pipeline's state after the last block the trainer took, with the
  elements taken from the current one: it restores on any number of workers, or on one host.
* **Backpressure.** Each worker has at most ``buffer`` calls (each of as many blocks as take about 30 Ray round
  trips) requested ahead of the trainer; a replica that falls behind slows only its own workers.
* **Closing.** ``close()`` (or an iterator dropped mid-epoch) cancels the calls in flight and interrupts the running
  ones at their next element; the actors go back to the step's warm pool.
* **AUTOTUNE.** ``workers=AUTOTUNE`` re-sizes the pool from the trainer's wait, as ``resize`` does (``PoolTuner``
  in :mod:`parafeed.parallel.autotune`).
"""

from __future__ import annotations

import collections
import math
import threading
from collections.abc import Callable
from typing import Any

from parafeed.core import graph
from parafeed.core.arguments import positive_int
from parafeed.core.dataset import AUTOTUNE, Dataset, PassThroughDataset, start_run
from parafeed.core.graph import ONE_TO_ONE
from parafeed.core.iterator import DatasetIterator, RunContext, current_scope
from parafeed.core.positions import order_fixed
from parafeed.errors import InvalidArgumentError, StateError
from parafeed.parallel import shutdown
from parafeed.parallel.remote_errors import unpack_error

ELEMENTS_PER_BLOCK = 32  # units of a block when the offloaded pipeline does not end in a batch


class OffloadDataset(PassThroughDataset):
    """The input's elements, computed by Ray input workers (see the module docs)."""

    kind = ONE_TO_ONE

    def __init__(self, parent: Dataset, workers: int, cpus_per_worker: float, buffer: int, block: int | None,
                 name: str | None = None, executor: str = "ray"):  # fmt: skip
        super().__init__(parent, name=name)
        if executor not in ("ray", "process"):
            raise InvalidArgumentError(f"offload(): `executor` must be 'ray' or 'process', got {executor!r}")
        self.executor = executor
        if workers != AUTOTUNE:
            positive_int("offload()", "workers", workers)
        if not cpus_per_worker > 0:
            raise InvalidArgumentError(f"offload(): `cpus_per_worker` must be > 0, got {cpus_per_worker!r}")
        self.workers = workers
        self.cpus_per_worker = float(cpus_per_worker)
        self.buffer = positive_int("offload()", "buffer", buffer)
        self.block = None if block is None else positive_int("offload()", "block", block)
        if any(getattr(node, "agrees", False) for node in graph.walk(parent)):
            raise InvalidArgumentError(
                "offload(): the pipeline has an equal_steps() whose replicas agree at run time (counts not known "
                "before the epoch), which needs this trainer's torch.distributed group, not an input worker's: put "
                "equal_steps() after offload()"
            )

    def _make_iterator(self, in_place_of: str | None = None) -> DatasetIterator:
        """``in_place_of``: the step this offload runs for (a batch whose map's workers read its input: "Batch"); its
        states are then that step's own, as the pipeline run on one host saves them."""
        from parafeed.parallel.ray_input_workers import InputWorkers

        parent = self._parents[0]
        batched = graph.batching_step(parent) is not None
        units = self.block or (1 if batched else ELEMENTS_PER_BLOCK)
        split, block = split_point(parent, units)
        if not order_fixed(split):
            raise InvalidArgumentError(
                "offload(): every input worker computes the order of the elements up to "
                f"{type(split).__name__}, so it must be fixed by seeds and positions; a step with deterministic=False "
                "(or a dataset made by a user function, as in interleave) makes it differ between workers. Use "
                "deterministic=True, or offload only the steps after it"
            )
        run = current_scope().run or RunContext(parent, parent.options())
        pipeline = graph.replace(parent, split, BlockShardDataset(split, block))  # what every input worker runs
        workers: Any
        if self.executor == "process":
            from parafeed.parallel.local_input_workers import LocalInputWorkers

            workers = LocalInputWorkers(pipeline, self.buffer, units, run.shared(parent))
        else:
            workers = InputWorkers(self, pipeline, self.cpus_per_worker, self.buffer, units, run.shared(parent))
        if in_place_of is None:
            return _OffloadIterator(self, workers)
        shared = run.shared(parent)

        def start_state() -> dict:  # (the pipeline's state before its first element, as a worker builds it)
            it = start_run(RunContext.joined(pipeline, shared, (1, 0, 0), threading.Event()))
            try:
                return it.get_state()
            finally:
                it.close()

        return _InPlaceIterator(self, workers, in_place_of, start_state)


class _OffloadIterator(DatasetIterator):
    def __init__(self, node: OffloadDataset, workers: Any):
        super().__init__()
        self._workers = workers  # an InputWorkers
        self._count = node.workers  # workers to start with (AUTOTUNE: a few, then as the trainer's wait asks)
        self._started = False
        self._next_block = 0  # the next block to take
        self._block = -1  # the block being taken
        self._before: dict | None = None  # the pipeline's state before the current block
        self._after: dict | None = None  # ... after it (before the next block): the starting point of a resize
        self._pending: collections.deque = collections.deque()  # the current block's outcomes not yet taken
        self._taken = 0  # outcomes of the current block taken
        self._drop = 0  # outcomes of the next block already taken before a restore
        self._ended = False
        self._closed = False

    @property
    def replaced(self) -> int:
        """Workers replaced after a failure."""
        return self._workers.replaced

    @property
    def num_workers(self) -> int:
        return len(self._workers)

    @property
    def autotune_windows(self) -> list:
        """``workers=AUTOTUNE`` on Ray: its last windows, what it measured in each and the workers it decided on
        (:class:`parafeed.parallel.autotune.PoolWindow`); empty for a fixed count."""
        tuner = self._workers.tuner
        return list(tuner.windows) if tuner is not None else []

    @property
    def actors(self) -> list:
        """The input workers' Ray actors, in worker order (empty before the first element)."""
        return self._workers.actors

    def __next__(self) -> Any:
        while True:
            if self._pending:
                ok, value = self._pending.popleft()
                self._taken += 1
                if ok:
                    return value
                raise unpack_error(value)
            if self._ended or self._closed:
                self.close()
                raise StopIteration
            if not self._started:
                self._start(self._count)
            self._take_block()

    def _start(self, count: int) -> None:
        try:
            self._workers.start(count, self._next_block, self._after)
        except BaseException:
            self.close()
            raise
        self._started = True

    def _take_block(self) -> None:
        try:
            outcomes, state, ended = self._workers.take(self._next_block, self._after)
        except BaseException:
            self.close()
            raise
        self._before, self._after = self._after, state
        self._block, self._next_block = self._next_block, self._next_block + 1
        self._taken, self._ended = self._drop, ended
        self._pending = collections.deque(outcomes[self._drop :])
        self._drop = 0

    def resize(self, workers: int) -> int:
        """Go on with ``workers`` input workers from the next block (the cluster's room permitting); returns how
        many there are. Nothing is lost or repeated: every worker starts from the state after the current block."""
        self._count = positive_int("resize()", "workers", workers)
        self._workers.tuner = None  # (the user's count from now on, not AUTOTUNE's)
        if self._closed:
            return 0
        self._start(self._count)
        return len(self._workers)

    # ------------------------------------------------------------------ checkpoints

    def _get_state(self) -> dict:
        if self._pending:  # inside a block: the state before it, and how much of it was taken
            return {"at": self._before, "block": self._block, "taken": self._taken}
        return {"at": self._after, "block": self._next_block, "taken": self._drop}

    def _set_state(self, state: dict) -> None:
        if self._started:
            raise StateError("set_state(): offload() has started; restore a state into a new iterator (iter(ds))")
        self._after = state["at"]
        self._next_block = int(state["block"])
        self._drop = int(state["taken"])

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        self._workers.close()

    def __del__(self) -> None:  # an epoch left before its end (break, take): its workers go back to the pool
        if not getattr(self, "_closed", True) and not shutdown.finalizing():  # (at exit: closed by shutdown)
            self.close()


class _InPlaceIterator(_OffloadIterator):
    """An offload that runs in place of a step (a batch whose map's workers read its input): its states are that
    step's own, as the pipeline run on one host saves and restores them. Its blocks are whole batches, so between
    two ``next`` calls it always stands between blocks, where a worker's state is the host's but for the block shard's
    entry."""

    def __init__(self, node: OffloadDataset, workers: Any, step: str, start_state: Callable[[], dict]):
        super().__init__(node, workers)
        self._step = step
        self._start_state = start_state

    def _step_name(self) -> str:
        return self._step

    def _get_state(self) -> dict:
        if self._pending or self._drop:  # (not between blocks: cannot happen with blocks of one batch)
            raise StateError(f"get_state(): {self._step} by input workers stands inside a block")
        at = self._after if self._after is not None else self._start_state()
        return {k: v for k, v in _without_shard(at).items() if k not in ("step", "run")}

    def _set_state(self, state: dict) -> None:
        super()._set_state({"at": {**state, "step": self._step}, "block": 0, "taken": 0})


# ---------------------------------------------------------------------- the input workers' share: the block shard


class BlockShardDataset(PassThroughDataset):
    """This input worker's blocks of ``block`` consecutive input elements (see the module docs)."""

    def __init__(self, parent: Dataset, block: int):
        super().__init__(parent)
        self.block = block

    def _make_iterator(self) -> DatasetIterator:
        run = current_scope().run
        if run is None:
            return _BlockShardIterator(self, self._parent._iter(), (1, 0, 0), None)
        it = run.block_shard = _BlockShardIterator(self, self._parent._iter(), run.share, run.stopped)
        return it


def shard_skips(node: Dataset) -> Callable[[], int] | None:
    """In an input worker, for a step built on ``node``: a function that says how many of ``node``'s elements the block
    shard under it has skipped so far (the other workers' blocks), so that the step counts elements as the pipeline
    on one host does (a map's random keys, its index); None where no block shard is under ``node``."""
    run = current_scope().run
    shard = run.block_shard if run is not None else None
    nodes = graph.chain(node, shard.node) if shard is not None else None
    if shard is None or nodes is None:
        return None
    per_element = math.prod(n.batch_size or 1 for n in nodes)  # (the shard's elements in one of node's)
    return lambda: shard.skipped // per_element


class _BlockShardIterator(DatasetIterator):
    def __init__(self, node: BlockShardDataset, parent: DatasetIterator, share: tuple[int, int, int], stopped: Any):
        super().__init__(parent)
        self.node = node
        self._parent = parent
        self._block = node.block
        self.skipped = 0  # input elements skipped over (the other workers' blocks) by this iterator
        self._fresh = True  # nothing taken yet: a skip moves the start (a position saved on one host, restored)
        self._workers, self._worker, self._first = share
        self._stopped = stopped  # (a threading.Event, or None)
        self._next = 0  # the block the input is in
        self._offset = 0  # elements of that block already taken

    def __next__(self) -> Any:
        if self._stopped is not None and self._stopped.is_set():  # (the trainer interrupted this run: it ends)
            raise StopIteration
        self._fresh = False
        if self._offset == 0:
            while (self._next - self._first) % self._workers != self._worker or self._next < self._first:
                if self._parent.skip(self._block) < self._block:
                    raise StopIteration
                self.skipped += self._block
                self._next += 1
        x = next(self._parent)
        self._offset += 1
        if self._offset == self._block:
            self._next, self._offset = self._next + 1, 0
        return x

    # its states are its input's own, with where this worker's blocks stand under SHARD_KEY: a state without it (one
    # the pipeline on one host saved) restores at the start of the share's first block

    def _step_name(self) -> str:
        return self._parent._step_name()

    def _get_state(self) -> dict[str, Any]:
        return {**self._parent._get_state(), SHARD_KEY: [self._next, self._offset]}

    def _set_state(self, state: dict[str, Any]) -> None:
        state = dict(state)
        self._next, self._offset = (int(v) for v in state.pop(SHARD_KEY, (self._first, 0)))
        self._parent._set_state(state)

    def skip(self, n: int) -> int:
        if self._fresh and self._offset == 0:  # (a position saved on one host: its input state and a skip from it)
            return self._parent.skip(n)
        return super().skip(n)


SHARD_KEY = "block_shard"


def _without_shard(state: Any) -> Any:
    """``state`` (an input worker's pipeline's) as the pipeline run on one host saves it: no block shard."""
    if isinstance(state, dict):
        return {k: _without_shard(v) for k, v in state.items() if k != SHARD_KEY}
    if isinstance(state, list):
        return [_without_shard(v) for v in state]
    return state


def _passes_blocks(node: Dataset) -> bool:
    """Whether a block shard below ``node`` gives the same blocks of ``node``'s output as one above it: one output per
    input element in input order, or fixed-size batches of consecutive elements."""
    if len(node.parents) != 1:
        return False
    return (node.kind == ONE_TO_ONE and node.order_fixed) or node.whole_batches


def split_point(root: Dataset, units: int) -> tuple[Dataset, int]:
    """Where the block shard goes in ``root``'s pipeline for blocks of ``units`` of its elements: the node it reads
    from, and the block size there in that node's elements (batches below multiply it)."""
    node = graph.down(root, _passes_blocks)
    return node, units * math.prod(n.batch_size or 1 for n in graph.chain(root, node) or ())


# ---------------------------------------------------------------------- a process map's input read by its workers

PORTABLE_BYTES = 16 << 20  # in-memory data an input worker may hold a copy of


def workers_read_the_input(batch: Dataset, map_node: Any) -> DatasetIterator | None:
    """``map(..., executor="process")`` and then ``batch`` (unless ``Options.experimental_optimization.
    map_input_in_workers = False``): the whole pipeline up to the batch run by local input workers,
    ``offload(executor="process")``, so that the trainer neither reads a record nor touches an element (reading
    TFRecords alone costs a process 25-35 µs per record: more than the whole feed may cost the training loop). The
    workers are the map's ``num_parallel_calls`` (AUTOTUNE: :func:`~parafeed.core.options.input_cores`); the elements,
    their order, their random draws and errors are the pipeline's on one host, and so are its states (a checkpoint
    restores into the pipeline run either way, and resumes on other replica counts).

    What it costs: every worker runs the input pipeline and skips the other workers' batches (a TFRecord reader
    seeks, a serial interleave skips whole rounds, a shuffle's buffer fills in every worker). None where it does not
    apply: the option False, another executor, results out of order, an input whose order is not fixed by its state
    (``deterministic=False`` upstream, datasets made by user functions), replicas that agree at run time, a Python
    generator or more than :data:`PORTABLE_BYTES` of in-memory data to copy into every worker, a state being
    replayed to find what it consumed (an elastic resume), or this run is an input worker's already."""
    from parafeed.sources.generator import GeneratorDataset

    workers = map_node.process_parallelism()
    run = current_scope().run
    if (
        workers is None
        or run is None
        or run.input_worker
        or run.tracking is not None
        or not run.options.experimental_optimization.moves_map_input()
    ):
        return None
    split, _ = split_point(batch, 1)
    upstream = list(graph.walk(batch))
    if not order_fixed(split) or any(getattr(node, "agrees", False) for node in upstream):
        return None
    if any(isinstance(n, GeneratorDataset) or getattr(n, "nbytes", 0) > PORTABLE_BYTES for n in upstream):
        return None
    return OffloadDataset(batch, workers, 1.0, 2, None, executor="process")._make_iterator(in_place_of="Batch")

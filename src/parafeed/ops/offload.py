"""``offload``: run the pipeline so far on Ray input workers; the trainer receives its elements in the same order.

The pipeline before ``offload`` (the source, the replica's share from ``distribute``, the expensive maps, the batch)
runs on ``workers`` Ray actors (:mod:`parafeed.parallel.ray_input_workers`). Each actor runs the same pipeline with a
block shard inserted where the per-element work begins (:mod:`parafeed.ops.block_shard`): worker ``k`` computes
blocks ``k, k + K ...`` and only skips past the others, and the trainer takes blocks round-robin, so it receives
exactly the elements, in exactly the order, of the pipeline run on one host.

Guarantees:

* **Exactly once when workers die.** Every block comes back with the worker's iterator state after it. A worker
  that dies (its process or its node) is replaced by a new actor started from the last state received from it, so
  its next block is the one that was missing: nothing lost, nothing repeated. Without a free CPU for a replacement,
  the remaining workers take over its share (a resize).
* **Elastic.** ``iterator.resize(n)`` moves to ``n`` workers at the next block boundary: every new worker starts
  from the state after the trainer's current block and takes its share of the blocks after it.
* **Checkpoints.** The iterator's state is the pipeline's state after the last block the trainer took, with the
  elements taken from the current one: it restores on any number of workers, or on one host.
* **Backpressure.** Each worker computes at most ``buffer`` blocks ahead of the trainer; a replica that falls
  behind slows only its own workers.
"""

from __future__ import annotations

import collections
import time
from typing import Any

from parafeed.core import graph
from parafeed.core.arguments import positive_int
from parafeed.core.dataset import AUTOTUNE, Dataset, PassThroughDataset
from parafeed.core.graph import ONE_TO_ONE
from parafeed.core.iterator import DatasetIterator, current_scope
from parafeed.core.positions import order_fixed
from parafeed.errors import InvalidArgumentError, WorkerError
from parafeed.parallel import ray_cluster

ELEMENTS_PER_BLOCK = 32  # units of a block when the offloaded pipeline does not end in a batch
_idle_pools = ray_cluster.IdlePools()


class OffloadDataset(PassThroughDataset):
    """The input's elements, computed by Ray input workers (see the module docs)."""

    kind = ONE_TO_ONE

    def __init__(self, parent: Dataset, workers: int, cpus_per_worker: float, buffer: int, block: int | None,
                 name: str | None = None):  # fmt: skip
        super().__init__(parent, name=name)
        if workers != AUTOTUNE:
            positive_int("offload()", "workers", workers)
        if not cpus_per_worker > 0:
            raise InvalidArgumentError(f"offload(): `cpus_per_worker` must be > 0, got {cpus_per_worker!r}")
        self.workers = workers
        self.cpus_per_worker = float(cpus_per_worker)
        self.buffer = positive_int("offload()", "buffer", buffer)
        self.block = None if block is None else positive_int("offload()", "block", block)

    def _make_iterator(self) -> DatasetIterator:
        from parafeed.ops.block_shard import BlockShardDataset, split_point

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
        run = current_scope().run
        random_steps = graph.find(parent, lambda n: n.seed is not None)
        run_state = {
            "options": run.options if run is not None else parent.options(),
            "iteration": run.iteration if run is not None else 0,
            "seeds": [run.seed_for(n) if run is not None else n.seed for n in random_steps],
            "resumed": tuple(vars(run.resumed).values()) if run is not None else (0, 0, False),
        }
        pipeline = graph.replace(parent, split, BlockShardDataset(split, block))  # what every input worker runs
        return _OffloadIterator(self, pipeline, units, run_state)


class _Worker:
    """The trainer's record of one input worker: its actor, its calls in flight, and the last state received."""

    def __init__(self, actor: Any, index: int, state: dict | None):
        self.actor = actor
        self.index = index
        self.state = state
        self.calls: collections.deque = collections.deque()


class _OffloadIterator(DatasetIterator):
    def __init__(self, node: OffloadDataset, pipeline: Dataset, units: int, run: dict):
        super().__init__()
        self._node = node
        self._pipeline = pipeline
        self._units = units
        self._run_state = run
        self._count = node.workers  # workers to start with (AUTOTUNE: as many as the cluster has room for)
        self._ray: Any = None
        self._pool: Any = None
        self._workers: list[_Worker] | None = None
        self._first = 0  # the first block of the current assignment of blocks to workers
        self._next_block = 0  # the next block to take
        self._block = -1  # the block being taken
        self._before: dict | None = None  # the pipeline's state before the current block
        self._after: dict | None = None  # ... after it (before the next block): the starting point of a resize
        self._pending: collections.deque = collections.deque()  # the current block's outcomes not yet taken
        self._taken = 0  # outcomes of the current block taken
        self._drop = 0  # outcomes of the next block already taken before a restore
        self._ended = False
        self._closed = False
        self.replaced = 0  # workers replaced after a failure (a count for tests, stats and benchmarks)

    # ------------------------------------------------------------------ consumer

    def __next__(self) -> Any:
        while True:
            if self._pending:
                ok, value = self._pending.popleft()
                self._taken += 1
                if ok:
                    return value
                from parafeed.parallel.remote_errors import unpack_error

                raise unpack_error(value)
            if self._ended or self._closed:
                self.close()
                raise StopIteration
            if self._workers is None:
                self._launch(self._count)
            self._take_block()

    def _take_block(self) -> None:
        while True:
            workers = self._workers
            worker = workers[(self._next_block - self._first) % len(workers)]
            ref = worker.calls.popleft()
            self._request(worker)
            try:
                outcomes, state, ended = self._ray.get(ref)
                break
            except Exception as err:
                if not ray_cluster.is_actor_failure(self._ray, err):
                    self.close()
                    raise WorkerError(f"offload(): input worker {worker.index} failed: {err}") from err
                self._replace(worker)
        worker.state = state
        self._before, self._after = self._after, state
        self._block, self._next_block = self._next_block, self._next_block + 1
        self._taken, self._ended = self._drop, ended
        self._pending = collections.deque(outcomes[self._drop :])
        self._drop = 0

    # ------------------------------------------------------------------ workers

    def _request(self, worker: _Worker) -> None:
        while len(worker.calls) < self._node.buffer:
            worker.calls.append(worker.actor.blocks.remote(self._units))

    def _launch(self, count: int) -> None:
        """Start ``count`` workers (AUTOTUNE: as many as the cluster has room for) from the state after the current
        block; actors already running are reused."""
        if self._pool is None:
            self._ray = ray_cluster.connect("offload()")
            self._pool = _idle_pools.borrow(
                self._node, self._ray,
                lambda: _worker_pool(self._ray, self._pipeline, self._node.cpus_per_worker),
            )  # fmt: skip
        pool = self._pool
        if len(pool.actors) + pool.free() < (1 if count == AUTOTUNE else count):
            ray_cluster.reclaim_idle()  # other steps' idle workers give their CPUs to this one
        room = ray_cluster.wait_for_room(lambda: len(pool.actors) + pool.free(), "offload()")
        count = room if count == AUTOTUNE else min(count, room)
        while len(pool.actors) > count:
            pool.kill(pool.actors.pop())
        while len(pool.actors) < count:
            pool.actors.append(pool.new_actor())
        first = self._first = self._next_block
        starts = [a.start.remote(self._run_state, (count, k, first), self._after) for k, a in enumerate(pool.actors)]
        try:
            self._ray.get(starts)
        except Exception as err:
            if not ray_cluster.is_actor_failure(self._ray, err):
                raise WorkerError(f"offload(): an input worker could not start the pipeline: {err}") from err
            pool.shutdown()  # one died while starting: start again on new actors
            return self._launch(count)
        self._workers = [_Worker(a, k, self._after) for k, a in enumerate(pool.actors)]
        for worker in self._workers:
            self._request(worker)

    def _replace(self, worker: _Worker) -> None:
        """A worker died: a new actor goes on from the last state received from it; with no room for one, the other
        workers take over (a resize, from the current block on)."""
        pool = self._pool
        pool.kill(worker.actor)
        self.replaced += 1
        if pool.free() < 1:
            time.sleep(ray_cluster.RELEASE_SECONDS)  # a killed actor's CPU shows as free a moment later
        if pool.free() < 1:
            pool.actors.remove(worker.actor)
            self._launch(max(1, len(pool.actors)))
            return
        actor = pool.new_actor()
        pool.actors[pool.actors.index(worker.actor)] = actor
        worker.actor, worker.calls = actor, collections.deque()
        actor.start.remote(self._run_state, (len(self._workers), worker.index, self._first), worker.state)
        self._request(worker)

    def resize(self, workers: int) -> int:
        """Go on with ``workers`` input workers from the next block (the cluster's room permitting); returns how
        many there are. Nothing is lost or repeated: every worker starts from the state after the current block."""
        self._count = positive_int("resize()", "workers", workers)
        if self._closed:
            return 0
        self._launch(workers)
        return len(self._workers)

    @property
    def num_workers(self) -> int:
        return 0 if self._workers is None else len(self._workers)

    # ------------------------------------------------------------------ checkpoints

    def _get_state(self) -> dict:
        if self._pending:  # inside a block: the state before it, and how much of it was taken
            return {"at": self._before, "block": self._block, "taken": self._taken}
        return {"at": self._after, "block": self._next_block, "taken": self._drop}

    def _set_state(self, state: dict) -> None:
        if self._workers is not None:
            from parafeed.errors import StateError

            raise StateError("set_state(): offload() has started; restore a state into a new iterator (iter(ds))")
        self._after = state["at"]
        self._next_block = self._first = int(state["block"])
        self._drop = int(state["taken"])

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        if self._pool is not None:
            _idle_pools.give_back(self._node, self._pool, broken=False)
            self._pool = None
        self._workers = None

    def __del__(self) -> None:  # an epoch left before its end (break, take): its workers go back to the pool
        if not getattr(self, "_closed", True):
            self.close()


def _worker_pool(ray: Any, pipeline: Dataset, cpus: float) -> Any:
    from parafeed.parallel.ray_input_workers import WorkerPool

    return WorkerPool(ray, pipeline, cpus)

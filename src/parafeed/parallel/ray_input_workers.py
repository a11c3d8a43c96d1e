"""Input workers: Ray actors that each run an offloaded pipeline on their share of blocks (``offload``,
:mod:`parafeed.ops.offload`).

An :class:`InputWorker` actor holds the pipeline (sent once, through Ray's object store) and runs one iterator of it
at a time: ``start`` begins one as input worker ``k`` of ``K`` from a saved state, ``blocks`` returns its next block's
outcomes with the iterator's state after them. That state is all a replacement needs to go on where this worker
stopped, so the trainer keeps the last one it received from every worker.

:class:`InputWorkers` is the trainer's side: it starts the actors on the cluster's free CPUs (from a pool kept warm
between epochs), keeps ``buffer`` block requests in flight for each, hands out blocks in round-robin order and
replaces a worker that dies from its last state.
"""

from __future__ import annotations

import collections
import itertools
import math
import threading
import time
import warnings
from typing import Any

from parafeed.core.dataset import AUTOTUNE, start_run
from parafeed.core.iterator import RunContext
from parafeed.core.stats import element_bytes
from parafeed.errors import WorkerError
from parafeed.parallel import ray_cluster
from parafeed.parallel.autotune import PoolTuner
from parafeed.parallel.executor import Outcome
from parafeed.parallel.remote_errors import pack_error

Block = tuple[list[Outcome], dict[str, Any], bool]  # a block's outcomes, the state after it, whether the input ended

# Blocks per call: a call carries as many of a worker's blocks as make it take CALL_FACTOR times the round trip of an
# empty call (measured when the workers start), at most MAX_BLOCKS_PER_CALL and CALL_BYTES of elements.
CALL_FACTOR = 30.0
MAX_BLOCKS_PER_CALL = 256
CALL_BYTES = 8 << 20

AUTOTUNE_START = 2  # workers=AUTOTUNE starts on this many (or the cluster's room), then follows the trainer's wait

_runs = itertools.count(1)  # a number for every start of the workers, naming the calls an interrupt stops


class InputWorker:
    """One input worker (wrapped with ``ray.remote`` where it is used)."""

    def __init__(self, pipeline: Any, path: list[str] | None = None):
        if path is not None:  # (a Ray actor: the driver's import path; a local worker process has it already)
            ray_cluster.adopt_path(path)
        self._pipeline = pipeline
        self._it: Any = None
        self._run = (0, threading.Event())  # the number of the trainer's start this worker runs, and its stop

    def start(
        self, run: dict[str, Any], share: tuple[int, int, int], state: dict[str, Any] | None, number: int
    ) -> None:
        """Begin a run: ``run`` is the trainer's run (options, iteration, seeds, resume point), ``share`` this
        worker's (workers, worker, first block), ``state`` where the pipeline is (None: its beginning), ``number``
        the trainer's number for this start (see :meth:`interrupt`)."""
        if self._it is not None:
            self._it.close()
            self._it = None
        stopped = threading.Event()
        it = start_run(RunContext.joined(self._pipeline, run, share, stopped))
        if state is not None:
            it.set_state(state)
        self._it, self._run = it, (number, stopped)

    def interrupt(self, number: int) -> None:
        """Start ``number``'s run ends at its next element: the trainer no longer wants its blocks. Runs in its own
        thread (the actor's ``control`` concurrency group), beside a running call; an interrupt that arrives after a
        later start does not touch that start's run."""
        running, stopped = self._run
        if running == number:
            stopped.set()

    def blocks(self, units: int, count: int) -> tuple[list[Block], float]:
        """This worker's next ``count`` blocks (fewer when the pipeline ends), each as its ``units`` outcomes
        (``(True, element)`` or ``(False, packed error)``), the state after them and whether the pipeline ended (then
        fewer outcomes may come); with the seconds they took to compute."""
        began = time.perf_counter()
        blocks: list[Block] = []
        ended = False
        while len(blocks) < count and not ended:
            out: list[Outcome] = []
            while len(out) < units:
                try:
                    out.append((True, next(self._it)))
                except StopIteration:
                    ended = True
                    break
                except Exception as err:
                    out.append((False, pack_error(err)))
            blocks.append((out, self._it.get_state(), ended))
        return blocks, time.perf_counter() - began

    def where(self) -> tuple[str, int]:
        """(Ray node id, process id) of this worker."""
        import os

        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()

    def stop(self) -> None:
        if self._it is not None:
            self._it.close()
            self._it = None


class WorkerPool:
    """The input worker actors of one ``offload`` step, spread over the cluster's nodes."""

    def __init__(self, ray: Any, pipeline: Any, cpus: float):
        self.ray = ray
        self.cluster = ray_cluster.session(ray)
        self._pipeline_ref = ray.put(pipeline)
        self._cpus = cpus
        self._class = ray.remote(
            num_cpus=cpus,
            max_restarts=0,
            max_task_retries=0,
            scheduling_strategy="SPREAD",
            concurrency_groups={"control": 1},  # (interrupt() runs beside the call it interrupts)
        )(InputWorker)
        self._path = ray_cluster.driver_path()
        self.actors: list[Any] = []
        self.used = 0.0  # when a block was last taken from it (monotonic)

    def free(self) -> int:
        """Actors the cluster has room for now."""
        _, free = ray_cluster.cpus(self.ray)
        return int(free // self._cpus) if self._cpus else 1 << 30

    def held(self) -> float:
        return len(self.actors) * self._cpus

    def new_actor(self) -> Any:
        return self._class.remote(self._pipeline_ref, self._path)

    def kill(self, actor: Any) -> None:
        if ray_cluster.session(self.ray) == self.cluster:
            self.ray.kill(actor, no_restart=True)

    def shutdown(self) -> None:
        actors, self.actors = self.actors, []
        for actor in actors:
            self.kill(actor)


_idle_pools = ray_cluster.IdlePools()


class _Worker:
    """The trainer's record of one input worker: its actor, its calls in flight, and the last state received."""

    def __init__(self, actor: Any, index: int, state: dict[str, Any] | None):
        self.actor = actor
        self.index = index
        self.state = state
        self.calls: collections.deque[Any] = collections.deque()  # ObjectRefs of its calls (each some blocks)
        self.ready: collections.deque[Block] = collections.deque()  # blocks received, not yet taken
        self.fresh = False  # a replacement whose first call has not come back: it includes the actor's start
        self.filling = True  # its first call since it (re)started has not come back: the trainer's wait for it is the
        # pipeline filling, not its speed (AUTOTUNE's window starts again after it)


class InputWorkers:
    """The input workers of one run of an ``offload`` step, seen from the trainer (see the module docs).

    Args:
        step: the offload step (its pool of actors is kept for its next run).
        pipeline: what every worker runs (the input pipeline with its block shard).
        cpus_per_worker: Ray CPUs each actor takes.
        buffer: blocks each worker computes ahead of the trainer.
        units: outcomes per block.
        run: the trainer's run, as :meth:`RunContext.shared` gives it.
    """

    def __init__(self, step: Any, pipeline: Any, cpus_per_worker: float, buffer: int, units: int, run: dict[str, Any]):
        self._step = step
        self._pipeline = pipeline
        self._cpus = cpus_per_worker
        self._buffer = buffer
        self._units = units
        self._run = dict(run, cores=max(1, int(cpus_per_worker)))  # (its AUTOTUNE steps start on the actor's CPUs)
        self._ray: Any = None
        self._pool: WorkerPool | None = None
        self._workers: list[_Worker] = []
        self._first = 0  # the first block of the current assignment of blocks to workers
        self.replaced = 0  # workers replaced after a failure (a count for tests, stats and benchmarks)
        self._warned = False  # (running on fewer workers than asked is said once per run)
        self._longest_wait = 0.0  # the longest the trainer waited for a block that came: the hung-worker deadline
        self._number = 0  # the number of the last start (see InputWorker.interrupt)
        self.tuner = PoolTuner() if step.workers == AUTOTUNE else None  # (None: the user's count, or resize()'s)
        self._per_call = 1  # blocks per call (see CALL_FACTOR)
        self._round_trip = 0.0  # seconds of an empty call to a worker, measured when they start

    def __len__(self) -> int:
        return len(self._workers)

    @property
    def actors(self) -> list[Any]:
        """The workers' Ray actors, in worker order (to watch them, or to kill one in a fault test)."""
        return [w.actor for w in self._workers]

    def start(self, count: int, first: int, state: dict[str, Any] | None) -> None:
        """Run on ``count`` workers (AUTOTUNE: as many as the cluster has room for; fewer when it has less room)
        from block ``first``, every one from the pipeline's ``state`` before it; actors already running are
        reused."""
        if self._pool is None:
            self._ray = ray_cluster.connect("offload()")
            self._pool = _idle_pools.borrow(
                self._step, self._ray, lambda: WorkerPool(self._ray, self._pipeline, self._cpus)
            )
        pool = self._pool
        with ray_cluster.launch_lock:  # (another replica's launch counts the CPUs after this one's took theirs)
            asked = count
            wanted = AUTOTUNE_START if count == AUTOTUNE else count
            if len(pool.actors) + pool.free() < wanted and ray_cluster.reclaim_idle():
                # other steps' idle workers gave their CPUs to this one: until Ray shows them free (a loaded host
                # takes longer than reclaim_idle's pause), for a few seconds at most; not waiting for the CPUs that
                # other offloads of this process running now hold (another replica's workers hold them all epoch)
                total, others = ray_cluster.cpus(self._ray)[0], _idle_pools.running_cpus(self._ray, pool)
                reachable = min(wanted, len(pool.actors) + int((total - others) // self._cpus)) if self._cpus else 0
                ray_cluster.wait_until(lambda: len(pool.actors) + pool.free() >= reachable)
            room = ray_cluster.wait_for_room(lambda: len(pool.actors) + pool.free(), "offload()")
            count = min(room, AUTOTUNE_START if count == AUTOTUNE else count)
            while len(pool.actors) > count:
                pool.kill(pool.actors.pop())
            new = count - len(pool.actors)
            placed = len(pool.actors)
            free_before = ray_cluster.cpus(self._ray)[1]
            while len(pool.actors) < count:
                pool.actors.append(pool.new_actor())
            self._stop_calls()
            self._number = next(_runs)
            starts = [
                a.start.remote(self._run, (count, k, first), state, self._number) for k, a in enumerate(pool.actors)
            ]
            try:
                started = ray_cluster.await_starts(self._ray, starts, self._cpus, "offload()", placed)
            except WorkerError:
                pool.shutdown()
                raise
            except Exception as err:
                if not ray_cluster.is_actor_failure(self._ray, err):
                    raise WorkerError(f"offload(): an input worker could not start the pipeline: {err}") from err
                pool.shutdown()  # one died while starting: start again on new actors
                started = None
            if started is not None:  # (the next launch counts what is free once Ray shows these actors' CPUs taken)
                new_started = max(0, new - (count - len(started)))  # (an actor that did not start is a new one)
                ray_cluster.settle(self._ray, free_before - new_started * self._cpus)
        if started is None:
            return self.start(asked, first, state)
        if len(started) < count:  # the cluster was shorter than it looked: go on with the workers that started
            for k in reversed(range(count)):
                if k not in started:
                    pool.kill(pool.actors.pop(k))
            self._warn_short(asked, len(started))
            return self.start(len(started), first, state)
        if asked != AUTOTUNE and count < asked:
            self._warn_short(asked, count)
        self._first = first
        self._workers = [_Worker(a, k, state) for k, a in enumerate(pool.actors)]
        if not self._round_trip:
            self._round_trip = self._round_trip_to(pool.actors[0])
        for worker in self._workers:
            self._request(worker)
        if self.tuner is not None:
            self.tuner.restart()

    def _warn_short(self, asked: int, got: int) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"offload(): asked for {asked} input workers, the Ray cluster had room for {got}; running on {got} "
                "(add CPUs or nodes to the cluster for more)",
                RuntimeWarning,
                stacklevel=2,
            )

    def take(self, block: int, before: dict[str, Any] | None) -> tuple[list[Outcome], dict[str, Any], bool]:
        """Block ``block``'s outcomes, the pipeline's state after it, and whether the pipeline ended; ``before`` is
        the state before it, where the workers go on from if one dies and there is no room to replace it."""
        if self._pool is not None:
            self._pool.used = time.monotonic()
        if self.tuner is not None and self._pool is not None:
            count = self.tuner.update(len(self._workers), self._pool.free)
            if count != len(self._workers):
                self.start(count, block, before)
        while True:
            worker = self._workers[(block - self._first) % len(self._workers)]
            if worker.ready:
                return worker.ready.popleft()
            ref = worker.calls.popleft()
            self._request(worker)
            deadline = ray_cluster.hung_after(self._longest_wait)
            if worker.fresh:  # (a new actor's process and pipeline start first: a loaded host may take long)
                deadline += ray_cluster.START_SECONDS
            asked_at = time.monotonic()
            ready, _ = self._ray.wait([ref], timeout=deadline)
            if not ready:  # neither an answer nor a death: a hung worker is replaced like a dead one
                warnings.warn(
                    f"offload(): input worker {worker.index} gave no block in {deadline:.0f} s "
                    f"({ray_cluster.hung_rule()}); replacing it from its last state",
                    RuntimeWarning,
                    stacklevel=2,
                )
                self._replace(worker, block, before)
                continue
            try:
                blocks, seconds = self._ray.get(ref)
            except Exception as err:
                if not ray_cluster.is_actor_failure(self._ray, err):
                    raise WorkerError(f"offload(): input worker {worker.index} failed: {err}") from err
                self._replace(worker, block, before)
                continue
            waited = time.monotonic() - asked_at
            if worker.fresh:
                worker.fresh = False
            else:
                self._longest_wait = max(self._longest_wait, waited)
            if self.tuner is not None:  # (its window measures the pipeline once it is full)
                if worker.filling:
                    self.tuner.restart()
                else:
                    self.tuner.record(waited, seconds)
            worker.filling = False
            worker.state = blocks[-1][1]
            worker.ready.extend(blocks)
            self._size_calls(blocks, seconds)

    def _size_calls(self, blocks: list[Block], seconds: float) -> None:
        """Blocks per call from the last call's: enough to take ``CALL_FACTOR`` round trips, at most doubling."""
        nbytes = max(1, sum(element_bytes(value) for outcomes, _, _ in blocks for ok, value in outcomes if ok))
        most = min(MAX_BLOCKS_PER_CALL, 2 * self._per_call, max(1, CALL_BYTES * len(blocks) // nbytes))
        wanted = CALL_FACTOR * self._round_trip * len(blocks) / max(seconds, 1e-6)
        self._per_call = max(1, min(most, math.ceil(wanted)))

    def _round_trip_to(self, actor: Any) -> float:
        """The shortest of three empty calls' round trips to ``actor``; 0.0 when it does not answer (it is replaced
        in ``take``, and the round trip measured at the next start)."""
        times = []
        for _ in range(3):
            began = time.perf_counter()
            try:
                self._ray.get(actor.where.remote(), timeout=ray_cluster.HUNG_SECONDS)
            except Exception as err:
                if isinstance(err, self._ray.exceptions.GetTimeoutError) or ray_cluster.is_actor_failure(
                    self._ray, err
                ):
                    return 0.0
                raise
            times.append(time.perf_counter() - began)
        return min(times)

    def _request(self, worker: _Worker) -> None:
        while len(worker.calls) < self._buffer:
            worker.calls.append(worker.actor.blocks.remote(self._units, self._per_call))

    def _replace(self, worker: _Worker, block: int, before: dict[str, Any] | None) -> None:
        """A worker died: a new actor goes on from the last state received from it; with no room for one, the other
        workers take over (from ``block`` on, which ``before`` is the state before)."""
        pool = self._pool
        assert pool is not None  # (workers run on a pool)
        pool.kill(worker.actor)
        self.replaced += 1
        if pool.free() < 1:
            time.sleep(ray_cluster.RELEASE_SECONDS)  # a killed actor's CPU shows as free a moment later
        if pool.free() < 1:
            pool.actors.remove(worker.actor)
            self.start(max(1, len(pool.actors)), block, before)
            return
        actor = pool.new_actor()
        pool.actors[pool.actors.index(worker.actor)] = actor
        worker.actor, worker.calls, worker.fresh, worker.filling = actor, collections.deque(), True, True
        actor.start.remote(self._run, (len(self._workers), worker.index, self._first), worker.state, self._number)
        self._request(worker)

    def _stop_calls(self) -> None:
        """The calls in flight are no longer wanted: those queued are cancelled, the running ones interrupted at
        their next element (the actors' next start need not wait for them)."""
        workers, self._workers = self._workers, []
        if self._pool is None or ray_cluster.session(self._ray) != self._pool.cluster:
            return
        for worker in workers:
            for ref in worker.calls:
                self._ray.cancel(ref)
            worker.actor.interrupt.options(concurrency_group="control").remote(self._number)

    def close(self) -> None:
        """Stop the calls in flight and give the actors back to the step's idle pool (its next run starts on
        them)."""
        self._stop_calls()
        if self._pool is not None:
            _idle_pools.give_back(self._step, self._pool, broken=False)
            self._pool = None

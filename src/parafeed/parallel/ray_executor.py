"""The Ray executor: a step's function runs on a pool of Ray actors across a cluster (``map(..., executor="ray")``).

The function is put in Ray's object store once and each actor loads it once, when it starts. Chunks go to the actor
with the fewest chunks outstanding; NumPy arrays in elements and results travel through the object store without
extra copies (results arrive as read-only arrays, as Ray hands them out). The runner bounds the chunks in flight and
puts results back in input order.

Faults: an exception in the function comes back with the actor's traceback as its cause, as with worker processes.
An actor that dies (its process killed, its node lost) loses only the chunks it held: they run again on the other
actors, and a new actor takes its place when the cluster has a free CPU, so the map's output is complete and holds
every result exactly once. Only when no actor is left does the step fail, with :class:`~parafeed.errors.WorkerError`.
Pools are kept between runs of one ``map`` step (the next epoch starts on warm actors) and killed with the step.
"""

from __future__ import annotations

import collections
import threading
import time
import warnings
from typing import Any

from parafeed.errors import WorkerError
from parafeed.parallel import ray_cluster
from parafeed.parallel.executor import FATAL, MakeExecutor, Outcome, ResultQueue

WAIT_SECONDS = 0.05  # the receiver's longest wait for a result before it looks for new submissions and stops


class MapActor:
    """A Ray actor running one function on chunks (the class is wrapped with ``ray.remote`` where it is used)."""

    def __init__(self, fn: Any, path: list[str]):
        ray_cluster.adopt_path(path)
        self._fn = fn

    def run(self, chunk: list[Any]) -> tuple[list[Outcome], float]:
        from parafeed.parallel.remote_errors import pack_error
        from parafeed.parallel.threads import run_chunk

        outcomes, seconds = run_chunk(self._fn, chunk)
        return [(ok, value if ok else pack_error(value)) for ok, value in outcomes], seconds

    def pid(self) -> int:
        """The actor's process id (to watch it, or to stop one in a fault test)."""
        import os

        return os.getpid()


class _Pool:
    """The actors of one ``map`` step: started on demand, up to the cluster's free CPUs."""

    def __init__(self, ray: Any, fn: Any):
        self.ray = ray
        self.fn_ref = ray.put(fn)  # once, for all actors
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(MapActor)
        self.actors: list[Any] = []
        self.path = ray_cluster.driver_path()
        self.cluster = ray_cluster.session(ray)

    def grow(self, n: int) -> int:
        """Have ``n`` actors if the cluster has the CPUs (an actor waiting for a CPU would wait forever; idle pools of
        other steps are shut down to free theirs); returns how many there are."""
        _, free = ray_cluster.cpus(self.ray)
        if free < n - len(self.actors) and ray_cluster.reclaim_idle():
            _, free = ray_cluster.cpus(self.ray)
        for _ in range(min(n - len(self.actors), free)):
            self.actors.append(self.actor_class.remote(self.fn_ref, self.path))
        return len(self.actors)

    def shutdown(self) -> None:
        actors, self.actors = self.actors, []
        if ray_cluster.session(self.ray) == self.cluster:  # else its cluster is gone, and its actors with it
            for actor in actors:
                self.ray.kill(actor, no_restart=True)


class RayExecutor:
    """Runs chunks on a :class:`_Pool` (an :class:`~parafeed.parallel.executor.Executor`); a receiver thread waits
    on the calls in flight and moves results to the runner's queue, sending the chunks of a dead actor to others."""

    kind = "ray"

    def __init__(self, pool: _Pool, workers: int, results: ResultQueue, release: Any):
        self._pool = pool
        self._ray = pool.ray
        self._results = results
        self._release = release
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._calls: dict[Any, tuple[int, list[Any], Any]] = {}  # ObjectRef -> (seq, chunk, actor)
        self._load: collections.Counter[int] = collections.Counter()  # id(actor) -> chunks outstanding
        self._sent: dict[Any, float] = {}  # ObjectRef -> when it was sent (a call that never comes back: a hung actor)
        self._longest = 0.0  # the longest a call took so far
        self._answered: set[int] = (
            set()
        )  # id() of the actors that answered a call (a new one's first includes its start)
        ray_cluster.wait_for_room(lambda: pool.grow(workers), "map()")
        self._receiver = threading.Thread(target=self._receive, name="parafeed-ray-receiver", daemon=True)
        self._receiver.start()

    def submit(self, seq: int, chunk: list[Any]) -> None:
        with self._lock:
            if not self._stop.is_set():
                self._send(seq, chunk)

    def _send(self, seq: int, chunk: list[Any]) -> None:
        """Call the least loaded live actor (the caller holds the lock)."""
        actor = min(self._pool.actors, key=lambda a: self._load[id(a)])
        self._load[id(actor)] += 1
        ref = actor.run.remote(chunk)
        self._calls[ref] = (seq, chunk, actor)
        self._sent[ref] = time.monotonic()

    def grow(self, workers: int) -> None:
        with self._lock:
            if not self._stop.is_set():
                self._pool.grow(workers)

    def _receive(self) -> None:
        ray = self._ray
        while not self._stop.is_set():
            with self._lock:
                refs = list(self._calls)
            if not refs:
                self._stop.wait(WAIT_SECONDS)
                continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=WAIT_SECONDS)
            if not ready and not self._check_hung():
                return
            for ref in ready:
                try:
                    outcomes, seconds = ray.get(ref)
                except Exception as err:
                    if not self._lost(ref, err):
                        return
                    continue
                with self._lock:
                    seq, _, actor = self._calls.pop(ref)
                    self._load[id(actor)] -= 1
                    took = time.monotonic() - self._sent.pop(ref)
                    if id(actor) in self._answered:
                        self._longest = max(self._longest, took)
                    self._answered.add(id(actor))
                self._results.put((seq, [(ok, v if ok else _unpack(v)) for ok, v in outcomes], seconds))
                del outcomes

    def _check_hung(self) -> bool:
        """The actor of a call older than the hung-actor deadline (more for an actor that never answered yet) is
        killed and its calls run elsewhere (as a dead one's); False when nothing can run them."""
        with self._lock:
            now, hung = time.monotonic(), None
            for ref, sent in self._sent.items():
                actor = self._calls[ref][2]
                deadline = ray_cluster.hung_after(self._longest)
                if id(actor) not in self._answered:  # (a new actor's process starts first: a loaded host is slow)
                    deadline += ray_cluster.START_SECONDS
                if now - sent > deadline:
                    hung = ref
                    break
            if hung is None:
                return True
            ref = hung
        warnings.warn(
            f"map(): a Ray actor gave no result in {deadline:.0f} s ({ray_cluster.hung_rule()}); its chunks run again "
            "on the others",
            RuntimeWarning,
            stacklevel=2,
        )
        self._ray.kill(actor, no_restart=True)
        return self._lost(ref, TimeoutError(f"no result in {deadline:.0f} s"), hung=True)

    def _lost(self, ref: Any, err: BaseException, hung: bool = False) -> bool:
        """A call failed: its actor is gone (or ``hung``, and killed), so its chunks go to the others (and a new actor
        is started when a CPU is free); False, after reporting the failure, when nothing can run them."""
        if self._stop.is_set():
            return False
        if not hung and not ray_cluster.is_actor_failure(self._ray, err):
            self._results.put((FATAL, WorkerError(f"map(): a Ray call failed: {err!r}"), 0.0))
            return False
        with self._lock:
            if ref not in self._calls:  # a call of an actor already found dead: rerun with its others
                return True
            actor = self._calls[ref][2]
            orphans = [(ref, call) for ref, call in self._calls.items() if call[2] is actor]
            for orphan, _ in orphans:
                del self._calls[orphan]
                self._sent.pop(orphan, None)
            self._pool.actors = [a for a in self._pool.actors if a is not actor]
            self._load.pop(id(actor), None)
            self._pool.grow(len(self._pool.actors) + 1)
            if not self._pool.actors:
                self._results.put((FATAL, WorkerError(
                    f"map(): the Ray actor running it died ({err}) and the cluster has no free CPU for another; "
                    f"{sum(len(c[1]) for _, c in orphans)} element(s) were not computed"), 0.0))  # fmt: skip
                return False
            for _, (seq, chunk, _) in orphans:
                self._send(seq, chunk)  # the chunks run again elsewhere: each result still comes back once
        return True

    def close(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            self._stop.set()
            busy = bool(self._calls)
            self._calls.clear()
        self._receiver.join(timeout=5)
        self._release(self._pool, broken=busy)


def _unpack(packed: tuple[bytes, str]) -> BaseException:
    from parafeed.parallel.remote_errors import unpack_error

    return unpack_error(packed)


_idle_pools = ray_cluster.IdlePools()


def ray_executor_factory(step: Any, fn: Any) -> tuple[MakeExecutor, int]:
    """``make(workers, results)`` for the runner, and the cluster's CPU count (AUTOTUNE's ceiling): actors running
    ``fn`` (element -> result) for ``step``."""
    ray = ray_cluster.connect("map()")
    total, _ = ray_cluster.cpus(ray)

    def make(workers: int, results: ResultQueue) -> RayExecutor:
        pool = _idle_pools.borrow(step, ray, lambda: _Pool(ray, fn))
        return RayExecutor(pool, workers, results, lambda p, broken: _idle_pools.give_back(step, p, broken))

    return make, max(1, total)

"""The Ray cluster parafeed runs on: connecting to it, its CPUs, and actors that fail cleanly when it has too few.

Ray is optional (``pip install parafeed[ray]``) and imported only here, when a pipeline first asks for it (the Ray
map executor, ``offload``). parafeed joins the cluster the process is already connected to (``ray.init(...)`` called
by the user), else the one ``RAY_ADDRESS`` names, else it starts a local Ray on this machine.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from parafeed.errors import InvalidArgumentError, WorkerError

ACTOR_WAIT_SECONDS = 120.0  # how long a new actor may wait for a CPU before the step gives up on it
START_SECONDS = 300.0  # how long a launch's first actor may take to start: its process, its imports and the
# pipeline's start (a host loaded by other work starts them slowly: minutes on 2 busy cores)
RELEASE_SECONDS = 0.5  # the time Ray takes to show a killed actor's CPU as free
START_GRACE_SECONDS = 5.0  # once some actors of a launch run, how long the others may stay unplaced on a full cluster
# (or twice the longest start seen in this process, up to 30 s: a loaded machine starts actor processes slowly)
# An actor is hung (neither answering nor dead) when a call takes HUNG_FACTOR times the longest one so far, and at
# least HUNG_SECONDS (the first calls include the pipeline's start on the actor): it is then replaced like a dead one.
HUNG_FACTOR = 10.0
HUNG_SECONDS = 60.0

# Launches of actors in this process, one at a time: each counts the free CPUs after the previous one's actors took
# theirs (two replicas offloading at once never count the same CPUs).
launch_lock = threading.Lock()


def connect(step: str) -> Any:
    """The ``ray`` module, connected to a cluster."""
    try:
        import ray
    except ImportError:
        raise InvalidArgumentError(
            f"{step}: Ray is not installed; install it with `pip install parafeed[ray]` (or `pip install ray`)"
        ) from None
    if not ray.is_initialized():
        ray.init(ignore_reinit_error=True, include_dashboard=False, configure_logging=False)
    return ray


def cpus(ray: Any) -> tuple[int, int]:
    """(CPUs of the cluster, CPUs free now)."""
    return int(ray.cluster_resources().get("CPU", 0)), int(ray.available_resources().get("CPU", 0))


def session(ray: Any) -> str | None:
    """The cluster this process is connected to now (its GCS address), None when it is not connected."""
    return ray.get_runtime_context().gcs_address if ray.is_initialized() else None


def driver_path() -> list[str]:
    """The driver's ``sys.path``: actors on this host (or on hosts sharing its file system) import the user's modules
    from it, as worker processes do (elsewhere, ship them with Ray's ``runtime_env``)."""
    return list(sys.path)


def adopt_path(path: list[str]) -> None:
    """Put the driver's import path entries this process lacks at the end of its own."""
    sys.path.extend(p for p in path if p not in sys.path)


def is_actor_failure(ray: Any, err: BaseException) -> bool:
    """Whether ``err`` (from ``ray.get`` on an actor call) means the actor or its node is gone, rather than an error
    in the call itself."""
    lost = (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError, ray.exceptions.OwnerDiedError)
    unavailable = getattr(ray.exceptions, "ActorUnavailableError", ())
    return isinstance(err, lost) or (bool(unavailable) and isinstance(err, unavailable))


def wait_for_room(room: Callable[[], int], what: str) -> int:
    """``room()`` (actors the cluster has room for) once it is at least 1: other steps' idle pools are shut down
    first, then it waits for running ones to free a CPU, up to ``ACTOR_WAIT_SECONDS``."""
    free = room()
    if free < 1 and reclaim_idle():
        free = room()
    deadline = time.monotonic() + ACTOR_WAIT_SECONDS
    while free < 1:
        if time.monotonic() > deadline:
            raise WorkerError(
                f"{what}: the Ray cluster had no free CPU for an actor for {ACTOR_WAIT_SECONDS:.0f} s; free one "
                "(close other iterators using Ray), add a node, or ask for fewer CPUs per actor"
            )
        time.sleep(RELEASE_SECONDS)
        free = room()
    return free


def hung_after(longest: float) -> float:
    """Seconds after which a call is taken for hung, given the longest one so far."""
    return max(HUNG_SECONDS, HUNG_FACTOR * longest)


def hung_rule() -> str:
    """The hung-actor deadline's rule, for messages."""
    return f"{HUNG_FACTOR:g} times the longest call so far, at least {HUNG_SECONDS:g} s"


_slowest_start = 0.0  # the longest an actor call of a launch took to finish, in this process


def await_starts(ray: Any, starts: list[Any], cpus_per_actor: float, what: str, placed: int = 0) -> list[int]:
    """The indices of the actor calls in ``starts`` (one per new or reused actor) that finished, waiting at most
    ``START_SECONDS`` for the first and, once some have, ``START_GRACE_SECONDS`` (or twice the slowest start seen
    so far, up to 30 s) more for the others while the cluster has no CPU free for them (they would wait for a CPU
    another job holds). The first ``placed`` calls go to actors that hold their CPU already (reused: one may still
    be finishing an interrupted call), which are waited for as long. Errors of the calls are
    raised (``ray.get``); no call finished in time: :class:`WorkerError`. The caller kills the actors left out."""
    global _slowest_start
    index = {ref: k for k, ref in enumerate(starts)}
    pending, done = list(starts), []
    began = time.monotonic()
    deadline = began + START_SECONDS
    stuck_since: float | None = None
    while pending:
        ready, pending = ray.wait(pending, num_returns=len(pending), timeout=RELEASE_SECONDS)
        ray.get(ready)  # (raises the calls' errors)
        done += [index[r] for r in ready]
        now = time.monotonic()
        if ready:
            _slowest_start = max(_slowest_start, now - began)
        if not pending:
            break
        full = cpus(ray)[1] < cpus_per_actor
        waiting_for_cpu = all(index[ref] >= placed for ref in pending)
        stuck_since = (stuck_since or now) if done and full and waiting_for_cpu else None
        if stuck_since is not None and now - stuck_since > max(START_GRACE_SECONDS, min(2 * _slowest_start, 30.0)):
            break
        if now > deadline:
            if done:
                break
            raise WorkerError(
                f"{what}: no actor started within {START_SECONDS:.0f} s: the Ray cluster had no free CPU for one, or "
                "its hosts are too loaded to start a process; free a CPU (close other iterators using Ray), add a "
                "node, or ask for fewer CPUs per actor"
            )
    return sorted(done)


def settle(ray: Any, free: float) -> None:
    """Until Ray shows at most ``free`` CPUs free (actors just started take a moment to show as holding theirs), at
    most ``RELEASE_SECONDS``."""
    deadline = time.monotonic() + RELEASE_SECONDS
    while cpus(ray)[1] > free and time.monotonic() < deadline:
        time.sleep(0.02)


ACTIVE_SECONDS = 2.0  # a lent pool counts as running while it was used this recently


class IdlePools:
    """Actor pools kept between runs of a step (by ``id(step)``): the next epoch starts on warm actors. A pool is
    shut down when its step is collected, when a running step needs its CPUs (:func:`reclaim_idle`), or when it was
    made on a cluster that is gone. A pool has ``cluster`` (its :func:`session`) and ``shutdown()`` (and, for
    :meth:`running_cpus`, ``held()``: the CPUs its actors hold, and ``used``: when it was last used)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[int, Any] = {}
        self._lent: weakref.WeakSet[Any] = weakref.WeakSet()  # pools borrowed by running steps
        _all_idle.add(self)

    def borrow(self, step: Any, ray: Any, make: Callable[[], Any]) -> Any:
        key = id(step)
        with self._lock:
            pool = self._idle.pop(key, None)
        if pool is not None and pool.cluster != session(ray):
            pool = None  # made on a cluster that has been shut down since
        if pool is None:
            pool = make()
            weakref.finalize(step, self._forget, key)
        with self._lock:
            self._lent.add(pool)
        return pool

    def give_back(self, step: Any, pool: Any, broken: bool) -> None:
        """Keep ``pool`` for the step's next run, unless calls were still running on it (an abandoned run)."""
        with self._lock:
            self._lent.discard(pool)
        if broken:
            pool.shutdown()
            return
        with self._lock:
            old, self._idle[id(step)] = self._idle.get(id(step)), pool
        if old is not None and old is not pool:
            old.shutdown()

    def running_cpus(self, ray: Any, besides: Any) -> float:
        """The CPUs that the actors of pools other than ``besides`` hold on the cluster ``ray`` is on, where they run
        steps now: lent, and used in the last ``ACTIVE_SECONDS`` (an iterator abandoned without ``close`` keeps its
        pool lent until it is collected)."""
        here, since = session(ray), time.monotonic() - ACTIVE_SECONDS
        with self._lock:
            lent = [pool for pool in self._lent if pool is not besides]
        return float(sum(pool.held() for pool in lent if pool.cluster == here and pool.used >= since))

    def reclaim(self) -> bool:
        with self._lock:
            pools, self._idle = list(self._idle.values()), {}
        for pool in pools:
            pool.shutdown()
        return bool(pools)

    def _forget(self, key: int) -> None:
        with self._lock:
            pool = self._idle.pop(key, None)
        if pool is not None:
            pool.shutdown()


_all_idle: weakref.WeakSet[IdlePools] = weakref.WeakSet()


def wait_until(test: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Poll ``test`` until it holds (True) or ``seconds`` pass (False)."""
    deadline = time.monotonic() + seconds
    while not test():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def reclaim_idle() -> bool:
    """Shut every idle pool down, so that a running step can have their CPUs; False if there was none."""
    reclaimed = [pools.reclaim() for pools in list(_all_idle)]
    if any(reclaimed):
        time.sleep(RELEASE_SECONDS)  # the killed actors' CPUs show as free a moment later
    return any(reclaimed)

"""The Ray cluster parafeed runs on: connecting to it, its CPUs, and actors that fail cleanly when it has too few.

Ray is optional (``pip install parafeed[ray]``) and imported only here, when a pipeline first asks for it (the Ray
map executor, ``offload``). parafeed joins the cluster the process is already connected to (``ray.init(...)`` called
by the user), else the one ``RAY_ADDRESS`` names, else it starts a local Ray on this machine.
"""

from __future__ import annotations

import sys
from typing import Any

from parafeed.errors import InvalidArgumentError

ACTOR_WAIT_SECONDS = 120.0  # how long a new actor may wait for a CPU before the step gives up on it


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

"""Input workers: Ray actors that each run an offloaded pipeline on their share of blocks (see ``ops/offload.py``).

An :class:`InputWorker` holds the pipeline (sent once, through Ray's object store) and runs one iterator of it at a
time: ``start`` begins one as input worker ``k`` of ``K`` from a saved state, ``blocks`` returns its next block's
outcomes with the iterator's state after them. That state is all a replacement needs to go on where this worker
stopped, so the trainer keeps the last one it received from every worker.
"""

from __future__ import annotations

from typing import Any

from parafeed.parallel import ray_cluster


class InputWorker:
    """One input worker (wrapped with ``ray.remote`` where it is used)."""

    def __init__(self, pipeline: Any, path: list[str]):
        ray_cluster.adopt_path(path)
        self._pipeline = pipeline
        self._it: Any = None

    def start(self, run: dict, share: tuple[int, int, int], state: dict | None) -> None:
        """Begin a run: ``run`` is the trainer's run (options, iteration, seeds, resume point), ``share`` this
        worker's (workers, worker, first block), ``state`` where the pipeline is (None: its beginning)."""
        from parafeed.core.dataset import start_run
        from parafeed.core.iterator import ResumePoint, RunContext

        if self._it is not None:
            self._it.close()
            self._it = None
        context = RunContext(self._pipeline, run["options"], resumed=ResumePoint(*run["resumed"]), share=share)
        context.restore(run)
        it = start_run(context)
        if state is not None:
            it.set_state(state)
        self._it = it

    def blocks(self, units: int) -> tuple[list, dict, bool]:
        """The next ``units`` outcomes of this worker's share (``(True, element)`` or ``(False, packed error)``),
        the state after them, and whether the pipeline ended (then fewer may come)."""
        from parafeed.parallel.remote_errors import pack_error

        out: list = []
        ended = False
        while len(out) < units:
            try:
                out.append((True, next(self._it)))
            except StopIteration:
                ended = True
                break
            except Exception as err:
                out.append((False, pack_error(err)))
        return out, self._it.get_state(), ended

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
        self._class = ray.remote(num_cpus=cpus, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD")(
            InputWorker
        )
        self._path = ray_cluster.driver_path()
        self.actors: list[Any] = []

    def free(self) -> int:
        """Actors the cluster has room for now."""
        _, free = ray_cluster.cpus(self.ray)
        return int(free // self._cpus) if self._cpus else 1 << 30

    def new_actor(self) -> Any:
        return self._class.remote(self._pipeline_ref, self._path)

    def kill(self, actor: Any) -> None:
        if ray_cluster.session(self.ray) == self.cluster:
            self.ray.kill(actor, no_restart=True)

    def shutdown(self) -> None:
        actors, self.actors = self.actors, []
        for actor in actors:
            self.kill(actor)

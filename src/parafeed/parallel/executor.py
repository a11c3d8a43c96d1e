"""The executor contract: what the parallel map runner (:mod:`parafeed.parallel.runner`) needs from an executor.

An executor runs a step's function on *chunks* (lists of input elements) somewhere (threads, worker processes) and
reports every finished chunk on the runner's result queue. The runner numbers chunks (``seq``), bounds how many are
outstanding, and restores the input order itself, so an executor may finish chunks in any order.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any, Protocol

Outcome = tuple[bool, Any]
"""One element's outcome: ``(True, result)`` or ``(False, exception)`` (the exception keeps its traceback, or for a
worker process carries it as its ``__cause__``)."""

FATAL = "fatal"
"""The ``seq`` of a message ``(FATAL, WorkerError, 0.0)``: the executor broke (a worker died); nothing more comes."""


class Executor(Protocol):
    """Runs chunks and puts ``(seq, [Outcome, ...], seconds)`` on the result queue for each, in any order; or
    ``(FATAL, error, 0.0)`` once when it cannot go on. ``seconds`` is the time the function took (for AUTOTUNE)."""

    kind: str  # "thread" or "process"

    def submit(self, seq: int, chunk: list[Any]) -> None:
        """Run the function on every element of ``chunk`` (never blocks for long; the runner bounds the backlog)."""

    def grow(self, workers: int) -> None:
        """Run on ``workers`` workers at least from now on (AUTOTUNE raised the parallelism)."""

    def close(self) -> None:
        """Stop: no result is put after this returns; idempotent."""


ResultQueue = queue.SimpleQueue[tuple[Any, Any, float]]
"""The runner's result queue: ``(seq, [Outcome, ...], seconds)`` or ``(FATAL, error, 0.0)`` from the executor, and the
runner's own messages."""

MakeExecutor = Callable[[int, ResultQueue], Executor]
"""``make(workers, results)``: an executor of ``workers`` workers (to start with) reporting on ``results``, called
when a parallel step starts running."""

"""Pipeline-wide options, set with ``ds.with_options(pf.Options(...))`` (like tf.data.Options).

Options set anywhere in a pipeline apply to all of it: ``ds.options()`` merges those of every step, the ones set
later (downstream) winning for fields both set.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from parafeed.errors import InvalidArgumentError

EXECUTORS = ("thread", "process")


@dataclass(frozen=True)
class Options:
    """How a pipeline runs. ``None`` means "not set here" (a default applies, or another step's setting).

    Args:
        executor: where ``map(..., num_parallel_calls=...)`` runs its function by default: ``"thread"`` (NumPy,
            image decoding and I/O, which release the GIL) or ``"process"`` (pure-Python functions).
        deterministic: the default for steps whose ``deterministic`` is None: outputs in input order (True, the
            default) or first-finished first (False).
        max_workers: the most threads or processes a parallel step may use (default: the CPU count).
        ram_budget: bytes that buffered elements may take in total; AUTOTUNE grows buffers only within it
            (default: half of the machine's memory, as tf.data).
        autotune: let AUTOTUNE adjust parallelism and buffers while running (default True); when off, AUTOTUNE
            means ``max_workers`` threads and buffers of 2.
        stats: collect per-stage counters and timings (``iterator.stats()``); costs a little per element.
    """

    executor: str | None = None
    deterministic: bool | None = None
    max_workers: int | None = None
    ram_budget: int | None = None
    autotune: bool | None = None
    stats: bool | None = None

    def __post_init__(self) -> None:
        if self.executor is not None and self.executor not in EXECUTORS:
            raise InvalidArgumentError(f"Options: executor must be one of {EXECUTORS}, got {self.executor!r}")
        for name in ("max_workers", "ram_budget"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                raise InvalidArgumentError(f"Options: {name} must be an int > 0, got {value!r}")
        for name in ("deterministic", "autotune", "stats"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise InvalidArgumentError(f"Options: {name} must be True, False or None, got {value!r}")

    def merge(self, other: Options) -> Options:
        """These options with the fields ``other`` sets taking precedence."""
        changes = {
            f.name: getattr(other, f.name) for f in dataclasses.fields(other) if getattr(other, f.name) is not None
        }
        return dataclasses.replace(self, **changes)

    # resolved values ---------------------------------------------------------------------------------------------

    @property
    def workers(self) -> int:
        return self.max_workers or os.cpu_count() or 1

    @property
    def budget(self) -> int:
        return self.ram_budget or _half_of_memory()

    def resolve(self, name: str) -> Any:
        value = getattr(self, name)
        return _DEFAULTS[name] if value is None else value


_DEFAULTS = {"executor": "thread", "deterministic": True, "autotune": True, "stats": False}


def _half_of_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 4 << 30

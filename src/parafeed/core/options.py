"""Pipeline-wide options, set with ``ds.with_options(pf.Options(...))``, with ``tf.data.Options``' attributes.

Options set anywhere in a pipeline apply to all of it: ``ds.options()`` merges those of every step, the ones set
later (downstream) winning for fields both set. As in tf.data, an option left unset is ``None``; options are
set by keyword or by attribute, groups included, so tf.data code ports by renaming::

    options = pf.Options()
    options.experimental_distribute.auto_shard_policy = pf.experimental.AutoShardPolicy.DATA
    options.deterministic = False
    ds = ds.with_options(options)

``with_options`` keeps a copy: changing an Options object afterwards does not change the dataset.
"""

from __future__ import annotations

import copy
import enum
import os
from typing import Any, ClassVar, TypeVar

from parafeed.errors import ArgumentTypeError, InvalidArgumentError

EXECUTORS = ("thread", "process", "ray")
AUTOTUNE_EXECUTORS = ("thread", "process")


class AutoShardPolicy(enum.IntEnum):
    """How a dataset is split between workers (``tf.data.experimental.AutoShardPolicy``): ``distribute()``'s
    ``policy`` by name."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """Accepted for tf.data compatibility (``tf.data.experimental.ExternalStatePolicy``); parafeed saves no
    function state, so it has no effect."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


class AutotuneAlgorithm(enum.Enum):
    """Accepted for tf.data compatibility; parafeed has one autotuner (see docs/parallel.md)."""

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


_Group = TypeVar("_Group", bound="_OptionGroup")


class _OptionGroup:
    """Options with a fixed set of fields, ``None`` when unset, type-checked when set; unknown names are refused."""

    _FIELDS: ClassVar[dict[str, Any]] = {}  # name -> accepted type(s), or a nested group class
    _IGNORED: ClassVar[frozenset[str]] = frozenset()  # fields accepted for tf.data compatibility, without effect

    def __init__(self, **values: Any):
        for name, kind in self._FIELDS.items():
            object.__setattr__(self, name, kind() if _is_group(kind) else None)
        for name, value in values.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._FIELDS:
            raise AttributeError(
                f"{type(self).__name__}: no option named {name!r}; the options are {', '.join(self._FIELDS)}"
            )
        object.__setattr__(self, name, self._check(name, value))

    def _check(self, name: str, value: Any) -> Any:
        kind = self._FIELDS[name]
        if value is None:
            return kind() if _is_group(kind) else None
        if kind is bool and not isinstance(value, bool):
            raise InvalidArgumentError(f"{type(self).__name__}: {name} must be True, False or None, got {value!r}")
        if kind is int and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise InvalidArgumentError(f"{type(self).__name__}: {name} must be an int >= 0, got {value!r}")
        if kind not in (bool, int) and not isinstance(value, kind):
            expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise ArgumentTypeError(f"{type(self).__name__}: {name} must be a {expected}, got {value!r}")
        return copy.deepcopy(value) if _is_group(kind) else value

    def merge(self: _Group, other: _Group) -> _Group:
        """These options with the fields ``other`` sets taking precedence."""
        merged = copy.deepcopy(self)
        for name, kind in self._FIELDS.items():
            theirs = getattr(other, name)
            if _is_group(kind):
                object.__setattr__(merged, name, getattr(self, name).merge(theirs))
            elif theirs is not None:
                object.__setattr__(merged, name, theirs)
        return merged

    def _values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._FIELDS}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # unhashable, as __eq__ compares values (typeshed's is a method)

    def __repr__(self) -> str:
        shown = {k: v for k, v in self._values().items() if v is not None and v != type(v)()}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


def _is_group(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, _OptionGroup)


class AutotuneOptions(_OptionGroup):
    """``options.autotune``: ``enabled`` (parafeed's autotuner, default True), ``cpu_budget`` (the most workers a
    parallel step may use) and ``ram_budget`` (bytes); the other fields are accepted and have no effect, except
    parafeed's own ``executor``: where AUTOTUNE runs a ``map(..., num_parallel_calls=AUTOTUNE)`` that chose no
    executor (nor ``Options.executor``) once its first elements, timed inline, show the function is worth running in
    parallel. ``"thread"`` (the default): on threads, moving to worker processes if the threads do not speed it up
    (it holds the GIL). ``"process"``: on worker processes at once, where the function can be sent to one (else
    threads): what the device feeds (``to_torch(device="cuda")``, ``to_jax()`` on accelerators) set, since the
    training loop's Python needs the GIL, and gets it late beside the map's threads."""

    _FIELDS: ClassVar[dict[str, Any]] = {
        "enabled": bool, "cpu_budget": int, "ram_budget": int, "autotune_algorithm": AutotuneAlgorithm,
        "initial_parallelism": int, "min_parallelism": int, "executor": str,
    }  # fmt: skip
    _IGNORED = frozenset({"autotune_algorithm", "initial_parallelism", "min_parallelism"})

    def _check(self, name: str, value: Any) -> Any:
        if name == "executor" and value is not None and value not in AUTOTUNE_EXECUTORS:
            raise InvalidArgumentError(f"AutotuneOptions: executor must be one of {AUTOTUNE_EXECUTORS}, got {value!r}")
        return super()._check(name, value)


class DistributeOptions(_OptionGroup):
    """``options.experimental_distribute``: ``auto_shard_policy`` is the policy ``distribute()`` and the TF adapter
    use when none is given; ``num_devices`` is accepted and has no effect."""

    _FIELDS: ClassVar[dict[str, Any]] = {"auto_shard_policy": AutoShardPolicy, "num_devices": int}
    _IGNORED = frozenset({"num_devices"})


class ThreadingOptions(_OptionGroup):
    """``options.threading``: ``private_threadpool_size`` bounds parallel steps' workers like ``max_workers``;
    ``max_intra_op_parallelism`` is accepted and has no effect (NumPy picks its own threads)."""

    _FIELDS: ClassVar[dict[str, Any]] = {"max_intra_op_parallelism": int, "private_threadpool_size": int}
    _IGNORED = frozenset({"max_intra_op_parallelism"})


class RemoteOptions(_OptionGroup):
    """``options.remote``: how files named by URL are read (:mod:`parafeed.io.remote`, docs/storage.md).

    ``read_ahead``: bytes in flight per open file at most (64 MiB); AUTOTUNE grows the read-ahead up to it while
    the reader waits on reads. ``block_size``: bytes per ranged request (4 MiB). ``retries``: attempts after a
    transient fault (5xx, throttling, timeouts, connections cut, short bodies) before the read fails (10).
    ``retry_delay``: seconds before the first retry, doubled each time up to 10 s, with jitter (0.1).
    ``retry_seconds``: seconds of failures without progress after which the read fails, whatever the count (60).
    ``cache_dir``: a local directory where whole files read from URLs are kept and read again at local-disk speed
    (off unless set; :mod:`parafeed.io.remote_cache`). ``cache_bytes``: what the cache may hold, least recently used
    files evicted first (16 GiB).
    """

    _FIELDS: ClassVar[dict[str, Any]] = {
        "read_ahead": int, "block_size": int, "retries": int, "retry_delay": (int, float),
        "retry_seconds": (int, float), "cache_dir": (str, os.PathLike), "cache_bytes": int,
    }  # fmt: skip


class OptimizationOptions(_OptionGroup):
    """``options.experimental_optimization``: ``map_and_batch_fusion`` (on unless set to False, or unless
    ``apply_default_optimizations`` is False, as in tf.data) runs ``map`` then ``batch`` as one step
    (:mod:`parafeed.ops.map_and_batch`: a map's error fails its whole batch). parafeed's own
    ``map_input_in_workers`` (on unless set to False) runs a fused ``map(..., executor="process")`` and ``batch``
    with their input pipeline in the same worker processes, which then read the input themselves: the training
    process's CPU per element falls from about 130-190 µs to 3 µs on P5 (where it applies, and what it costs:
    :func:`parafeed.ops.offload.workers_read_the_input`). The other fields are accepted without effect:
    parafeed does not rewrite pipelines otherwise, and what tf.data's optimizer parallelizes is set by you
    (``num_parallel_calls``)."""

    _FIELDS: ClassVar[dict[str, Any]] = dict.fromkeys(
        ("apply_default_optimizations", "filter_fusion", "filter_parallelization", "inject_prefetch",
         "seq_interleave_prefetch", "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion",
         "map_parallelization", "noop_elimination", "parallel_batch", "shuffle_and_repeat_fusion",
         "map_input_in_workers"),
        bool,
    )  # fmt: skip
    _IGNORED = frozenset(_FIELDS) - {"map_and_batch_fusion", "apply_default_optimizations", "map_input_in_workers"}
    apply_default_optimizations: bool | None  # (for the type checker: the fields are set from _FIELDS)
    map_and_batch_fusion: bool | None
    map_input_in_workers: bool | None

    def fuses_map_and_batch(self) -> bool:
        default = self.apply_default_optimizations is not False
        return default if self.map_and_batch_fusion is None else self.map_and_batch_fusion

    def moves_map_input(self) -> bool:
        return self.map_input_in_workers is not False


class Options(_OptionGroup):
    """How a pipeline runs. ``None`` means "not set here" (a default applies, or another step's setting).

    Args:
        executor: where ``map(..., num_parallel_calls=...)`` runs its function by default: ``"thread"`` (NumPy,
            image decoding and I/O, which release the GIL), ``"process"`` (pure-Python functions) or ``"ray"``
            (actors on a Ray cluster: more CPUs than this host has).
        deterministic: the default for steps whose ``deterministic`` is None: outputs in input order (True, the
            default) or first-finished first (False). ``experimental_deterministic`` is the same option.
        max_workers: the most threads or processes a parallel step may use (default: ``autotune.cpu_budget``,
            ``threading.private_threadpool_size``, else the CPU count).
        ram_budget: bytes that buffered elements may take in total (default: ``autotune.ram_budget``, else half of
            the machine's memory, as tf.data); AUTOTUNE grows buffers only within it.
        autotune: let AUTOTUNE adjust parallelism and buffers while running: a bool, or tf.data's
            :class:`AutotuneOptions` (``options.autotune.enabled = False``). When off, AUTOTUNE means
            ``max_workers`` threads and buffers of 2.
        stats: collect per-stage counters and timings (``iterator.stats()``); costs a little per element.
        experimental_distribute: :class:`DistributeOptions` (``auto_shard_policy``).
        threading: :class:`ThreadingOptions` (``experimental_threading`` is the same group).
        remote: :class:`RemoteOptions`: read-ahead and retries for files named by URL.

    The other ``tf.data.Options`` fields (``experimental_optimization``, ``experimental_slack``,
    ``experimental_external_state_policy``, ``experimental_symbolic_checkpoint``, ``experimental_warm_start``,
    ``dataset_name``, ``framework_type``) are accepted and have no effect.
    """

    _FIELDS: ClassVar[dict[str, Any]] = {
        "executor": str, "deterministic": bool, "max_workers": int, "ram_budget": int, "autotune": AutotuneOptions,
        "stats": bool, "experimental_distribute": DistributeOptions, "threading": ThreadingOptions,
        "experimental_optimization": OptimizationOptions, "experimental_slack": bool,
        "experimental_external_state_policy": ExternalStatePolicy, "experimental_symbolic_checkpoint": bool,
        "experimental_warm_start": bool, "dataset_name": str, "framework_type": list, "remote": RemoteOptions,
    }  # fmt: skip
    _IGNORED = frozenset(
        {"experimental_optimization", "experimental_slack", "experimental_external_state_policy",
         "experimental_symbolic_checkpoint", "experimental_warm_start", "dataset_name", "framework_type"}
    )  # fmt: skip
    _ALIASES: ClassVar[dict[str, str]] = {
        "experimental_deterministic": "deterministic",
        "experimental_threading": "threading",
    }

    def __init__(self, **values: Any):
        super().__init__(**{self._ALIASES.get(k, k): v for k, v in values.items()})

    def __getattr__(self, name: str) -> Any:  # only called for names that are not set: the aliases
        if name in Options._ALIASES:
            return getattr(self, Options._ALIASES[name])
        raise AttributeError(f"Options: no option named {name!r}; the options are {', '.join(self._FIELDS)}")

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(self._ALIASES.get(name, name), value)

    def _check(self, name: str, value: Any) -> Any:
        if name == "autotune" and isinstance(value, bool):
            return AutotuneOptions(enabled=value)
        if name == "executor" and value is not None and value not in EXECUTORS:
            raise InvalidArgumentError(f"Options: executor must be one of {EXECUTORS}, got {value!r}")
        if (
            name in ("max_workers", "ram_budget")
            and value is not None
            and (not isinstance(value, int) or isinstance(value, bool) or value <= 0)
        ):
            raise InvalidArgumentError(f"Options: {name} must be an int > 0, got {value!r}")
        return super()._check(name, value)

    # resolved values ---------------------------------------------------------------------------------------------

    @property
    def workers(self) -> int:
        return (
            self.max_workers or self.autotune.cpu_budget or self.threading.private_threadpool_size or schedulable_cpus()
        )

    @property
    def budget(self) -> int:
        return self.ram_budget or self.autotune.ram_budget or _half_of_memory()

    @property
    def shard_policy(self) -> str | None:
        """``experimental_distribute.auto_shard_policy``'s name ("AUTO", "FILE", ...), None when unset."""
        policy = self.experimental_distribute.auto_shard_policy
        return None if policy is None else policy.name

    def resolve(self, name: str) -> Any:
        value = self.autotune.enabled if name == "autotune" else getattr(self, name)
        return _DEFAULTS[name] if value is None else value


_DEFAULTS = {"executor": "thread", "deterministic": True, "autotune": True, "stats": False}


def schedulable_cpus() -> int:
    """The cores this process may run on (what TensorFlow's ``port::MaxParallelism()`` counts), not all cores."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


TRAINER_CORE_FROM = 5  # hosts with this many schedulable cores or more keep one of them for the training loop


def input_cores() -> int:
    """The workers AUTOTUNE starts a parallel step (and an offload) on: this training process's share of the
    schedulable cores, less one for its training loop, whose Python launches the accelerator's kernels, on shares of
    :data:`TRAINER_CORE_FROM` cores or more. Starting there, not at 2, puts a many-core host to work at once: a worker
    process takes a second to start, so a climb that adds them one trial at a time takes tens of seconds to find the
    cores (16 cores: a third of them after 20 s). The share: all of them, or, where ``torchrun`` starts several
    training processes on the host (``LOCAL_WORLD_SIZE``) and none was pinned to fewer cores, an equal part (8 GPUs
    on 128 cores: 16 each, 15 for input)."""
    cores = schedulable_cpus()
    trainers = _local_trainers()
    if trainers > 1 and cores >= (os.cpu_count() or cores):  # (a launcher that pins each rank gave it its share)
        cores = max(1, cores // trainers)
    return cores - 1 if cores >= TRAINER_CORE_FROM else cores


def _local_trainers() -> int:
    """Training processes on this host, as ``torchrun`` says (``LOCAL_WORLD_SIZE``); 1 without it."""
    try:
        return max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        return 1


def _half_of_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 4 << 30

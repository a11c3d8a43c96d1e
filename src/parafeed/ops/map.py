"""``map``: apply a user function to every element."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from parafeed.core.arguments import callable_arg, deterministic_arg, parallelism_arg
from parafeed.core.dataset import AUTOTUNE, Dataset
from parafeed.core.functions import element_fn, fn_name, to_result, user_error
from parafeed.core.graph import ONE_TO_ONE, REORDERING, walk
from parafeed.core.iterator import DatasetIterator, current_options, current_scope, resolve_deterministic
from parafeed.core.options import EXECUTORS, input_cores
from parafeed.core.positions import order_fixed, position, seek
from parafeed.core.tensor_functions import draws_random
from parafeed.errors import InvalidArgumentError
from parafeed.ops.map_draws import Keyed, KeyedCall
from parafeed.parallel.autotune import Learned
from parafeed.sources.draws import draw_seed
from parafeed.values.elements import SCALAR_TYPES

if TYPE_CHECKING:
    from parafeed.parallel.batch_rows import BatchRows

THREAD_TASK_SECONDS = 0.02  # target duration of one task: amortises the hand-off, keeps workers balanced
THREAD_DEPTH = 2  # tasks outstanding per thread: with 0.02 s tasks, as many elements in flight as 8 tasks of 0.005 s,
# with a quarter of the hand-offs (P5 on 2 cores: 40 % fewer thread switches per image, 8-19 % less GIL time)
PROCESS_TASK_SECONDS = 0.01
RAY_TASK_SECONDS = 0.05  # a Ray call costs about a millisecond: longer tasks keep that under 2 %


class MapDataset(Dataset):
    """Elements ``map_func(element)``, in input order (or, with ``deterministic=False``, as they finish)."""

    def __init__(
        self,
        parent: Dataset,
        map_func: Callable[..., Any],
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        executor: str | None = None,
        name: str | None = None,
    ):
        super().__init__((parent,), name=name)
        self._fn = callable_arg("map()", "map_func", map_func)
        self._num_parallel_calls = parallelism_arg("map()", num_parallel_calls)
        self._deterministic = deterministic_arg("map()", deterministic)
        if executor is not None and executor not in EXECUTORS:
            raise InvalidArgumentError(f"map(): `executor` must be one of {EXECUTORS}, got {executor!r}")
        self._executor = executor
        if executor == "process" and num_parallel_calls is not None:  # warm workers for when iteration starts
            from parafeed.parallel.process_startup import prestart

            prestart(input_cores() if num_parallel_calls == AUTOTUNE else num_parallel_calls)  # (where AUTOTUNE starts)
        self._what = f"map(): the result of {fn_name(self._fn)}"
        self._learned = Learned()  # where AUTOTUNE settled in earlier passes (epochs): the next one starts there
        if draws_random(map_func):  # its draws are keyed by element: a seed of its own, saved with the run's
            self.seed = draw_seed("map()", None)[0]

    @property
    def kind(self) -> str:  # type: ignore[override]  # a property where Dataset has a class attribute
        return REORDERING if self._deterministic is False else ONE_TO_ONE

    @property
    def order_fixed(self) -> bool:  # type: ignore[override]  # (as kind)
        return self._deterministic is not False

    def _make_iterator(self, rows: BatchRows | None = None) -> DatasetIterator:
        """``rows``: a fused ``batch`` that the results go to; worker threads (or processes) write them into it when
        the order of results is fixed (:mod:`parafeed.ops.map_and_batch`)."""
        parent, fn = self._parents[0]._iter(), self._fn
        run = current_scope().run
        skipped = None
        if run is not None and run.input_worker:  # (elements skipped below count as on one host)
            from parafeed.ops.offload import shard_skips

            skipped = shard_skips(self._parents[0])
        if self.seed is not None:
            scope = current_scope()

            def run_key() -> tuple[int, int]:
                return (scope.run.seed_for(self) if scope.run is not None else cast(int, self.seed)), scope.iteration

            parent, fn = Keyed(parent, run_key, skipped), KeyedCall(fn)
        apply = element_fn(fn, self._what)
        if self._num_parallel_calls is None:
            return _MapIterator(parent, fn, self._what)
        from parafeed.parallel.runner import ParallelMapIterator

        chosen = self._executor or current_options().executor  # (None: AUTOTUNE may move it to processes)
        executor = chosen or self._learned.executor or current_options().resolve("executor")
        if executor == "process" and run is not None and run.input_worker:  # (one of the workers already)
            return _InWorkerMapIterator(parent, fn, self._what, skipped)
        if executor == "ray":  # results come back from the object store: not written into a fused batch's rows
            from parafeed.parallel.ray_executor import ray_executor_factory

            make_executor, cluster_cpus = ray_executor_factory(self, apply)
            return ParallelMapIterator(
                parent, fn=apply, user_fn=fn, step="map()", num_parallel_calls=self._num_parallel_calls,
                deterministic=self._deterministic, task_seconds=RAY_TASK_SECONDS, depth=4,
                make_executor=make_executor, max_parallelism=cluster_cpus,
                order_fixed=order_fixed(self._parents[0]), learned=self._learned,
            )  # fmt: skip
        fused = rows is not None and resolve_deterministic(self._deterministic)
        if fused:  # results are written into the batch: the input numbers its elements
            from parafeed.ops.map_and_batch import Numbered, placing

            parent = Numbered(parent)
        if executor == "process":
            from parafeed.parallel.processes import process_executor_factory

            return ParallelMapIterator(
                parent, fn=apply, user_fn=fn, step="map()", num_parallel_calls=self._num_parallel_calls,
                deterministic=self._deterministic, task_seconds=PROCESS_TASK_SECONDS, depth=4,
                make_executor=process_executor_factory(self, apply, rows if fused else None),
                order_fixed=order_fixed(self._parents[0]), learned=self._learned,
            )  # fmt: skip
        from parafeed.parallel.threads import thread_executor_factory

        make_serial: Callable[[Any, int], _MapIterator] = functools.partial(self._serial_iterator, fn=fn)
        deterministic = self._deterministic
        switch_to, at_once = None, False
        in_worker = run is not None and run.input_worker  # (an input worker starts no processes of its own)
        if chosen is None and self._num_parallel_calls == AUTOTUNE and not in_worker:  # holds the GIL: to processes
            from parafeed.ops.offload import PORTABLE_BYTES  # (a function holding more data stays here, on threads)
            from parafeed.parallel.processes import process_executor_factory

            switch_to = process_executor_factory(self, apply, rows if fused else None, PORTABLE_BYTES)
            # Options.autotune.executor: at once, unless this map is in a dataset a function made (an interleave's,
            # one per file: a pool each)
            at_once = current_options().autotune.executor == "process" and (
                run is None or any(node is self for node in walk(run.dataset))
            )
        if fused:
            apply, deterministic = placing(apply, cast("BatchRows", rows)), True  # (fused: rows is not None)

            def make_serial(numbered: Numbered, index: int) -> _MapIterator:  # (on Numbered input when fused)
                return self._serial_iterator(numbered.inner, index, fn)

        return ParallelMapIterator(
            parent, fn=apply, user_fn=fn, step="map()", num_parallel_calls=self._num_parallel_calls,
            deterministic=deterministic, make_executor=thread_executor_factory(apply),
            task_seconds=THREAD_TASK_SECONDS, make_serial=make_serial, depth=THREAD_DEPTH,
            order_fixed=order_fixed(self._parents[0]), learned=self._learned, switch_to=switch_to,
            switch_at_once=at_once,
        )  # fmt: skip

    @property
    def learned(self) -> Learned:
        """What AUTOTUNE learned of this map in its earlier passes (the executor it moved to, if any)."""
        return self._learned

    def may_move_to_processes(self) -> bool:
        """Whether AUTOTUNE may move this map from threads to worker processes in the pass being built: no executor
        chosen, ``num_parallel_calls=AUTOTUNE``, and no move learned yet."""
        chosen = self._executor or current_options().executor
        return chosen is None and self._num_parallel_calls == AUTOTUNE and self._learned.executor is None

    def process_parallelism(self) -> int | None:
        """This map's ``num_parallel_calls`` (an int, or AUTOTUNE) where it runs on worker processes of this host in
        input order; None where it runs serially, on threads or on Ray, or hands results out as they finish."""
        if self._num_parallel_calls is None or not resolve_deterministic(self._deterministic):
            return None
        executor = self._executor or current_options().executor or self._learned.executor
        return self._num_parallel_calls if (executor or "thread") == "process" else None

    def _serial_iterator(self, parent: DatasetIterator, index: int, fn: Callable[..., Any]) -> _MapIterator:
        it = _MapIterator(parent, fn, self._what)
        it.index = index
        return it

    def _sample_element(self) -> Any:
        return element_fn(self._fn, self._what)(self._parents[0]._sample_element())

    def _cardinality(self) -> int:
        return self._parents[0]._cardinality()


class _MapIterator(DatasetIterator):
    """The serial map. Its ``__next__`` applies the function as :func:`parafeed.core.functions.element_fn` does (which
    the executors run), written out here: a call less per element is a tenth of a cheap pipeline's time. ``index``
    counts the elements mapped (or skipped) so far."""

    def __init__(self, parent: DatasetIterator, fn: Callable[..., Any], what: str):
        super().__init__(parent)
        self._parent = parent
        self._fn = fn
        self._what = what
        self.index = 0

    def __next__(self) -> Any:
        x = next(self._parent)
        try:
            y = self._fn(*x) if type(x) is tuple else self._fn(x)
        except Exception as err:
            raise user_error(err, "map()", self._fn, self.index)
        self.index += 1
        return y if type(y) in SCALAR_TYPES else to_result(y, self._what)

    def skip(self, n: int) -> int:
        done = self._parent.skip(n)  # skipped elements are not mapped: their results would be dropped anyway
        self.index += done
        return done

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "index": self.index}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self.index = int(state["index"])


class _InWorkerMapIterator(_MapIterator):
    """A process map run inline by an input worker (its input read there too: ``map_input_in_workers``); its states
    are the process map's (``ParallelMap``: a position and the index, counting the elements skipped below as the
    pipeline on one host counts them), so a checkpoint taken with the input in the workers restores into the
    pipeline run on one host, and the other way round."""

    def __init__(self, parent: DatasetIterator, fn: Callable[..., Any], what: str,
                 skipped: Callable[[], int] | None):  # fmt: skip
        super().__init__(parent, fn, what)
        self._skipped, self._seen = skipped, 0

    def __next__(self) -> Any:
        x = next(self._parent)
        if self._skipped is not None:
            skipped = self._skipped()
            self.index, self._seen = self.index + skipped - self._seen, skipped
        try:
            y = self._fn(*x) if type(x) is tuple else self._fn(x)
        except Exception as err:
            raise user_error(err, "map()", self._fn, self.index)
        self.index += 1
        return y if type(y) in SCALAR_TYPES else to_result(y, self._what)

    def _step_name(self) -> str:
        return "ParallelMap"

    def _get_state(self) -> dict:
        return {**position(self._parent.get_state(), 0), "index": self.index}

    def _set_state(self, state: dict) -> None:
        seek(self._parent, state)
        self.index = int(state["index"])

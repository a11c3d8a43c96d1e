"""``map``: apply a user function to every element."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parafeed.arguments import callable_arg, deterministic_arg, parallelism_arg
from parafeed.dataset import Dataset
from parafeed.elements import SCALAR_TYPES
from parafeed.errors import InvalidArgumentError
from parafeed.functions import call, fn_name, to_result, user_error
from parafeed.iterator import DatasetIterator
from parafeed.options import EXECUTORS
from parafeed.stats import current_options


class MapDataset(Dataset):
    """Elements ``map_func(element)``, in input order."""

    _count_preserving = True

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
        self._process_pool: Any = None  # the worker processes of executor="process", kept across iterators

    def _make_iterator(self) -> DatasetIterator:
        parent = self._parents[0]._iter()
        if self._num_parallel_calls is None:
            return _MapIterator(parent, self._fn)
        from parafeed.parallel.runner import ParallelMapIterator

        element_fn = _element_fn(self._fn, f"map(): the result of {fn_name(self._fn)}")
        if (self._executor or current_options().resolve("executor")) == "process":
            from parafeed.parallel.processes import process_executor_factory

            make, target, serial, depth = process_executor_factory(self, element_fn), PROCESS_TASK_SECONDS, None, 2
        else:
            from parafeed.parallel.threads import ThreadExecutor

            def make(workers: int, results: Any) -> ThreadExecutor:
                return ThreadExecutor(element_fn, workers, results)

            target, serial, depth = THREAD_TASK_SECONDS, self._serial_iterator, 8
        return ParallelMapIterator(
            parent, element_fn, self._fn, "map()", self._num_parallel_calls, self._deterministic, make, target, serial,
            depth,
        )  # fmt: skip

    def _serial_iterator(self, parent: DatasetIterator, index: int) -> DatasetIterator:
        it = _MapIterator(parent, self._fn)
        it._index = index
        return it

    def _sample_element(self) -> Any:
        return to_result(
            call(self._fn, self._parents[0]._sample_element()), f"map(): the result of {fn_name(self._fn)}"
        )

    def _cardinality(self) -> int:
        return self._parents[0]._cardinality()


THREAD_TASK_SECONDS = 0.005  # target duration of one task: amortises the hand-off, keeps workers balanced
PROCESS_TASK_SECONDS = 0.01


def _element_fn(fn: Callable[..., Any], what: str) -> Callable[[Any], Any]:
    """``fn`` applied to one element as map does: tuples spread into arguments, the result converted."""

    def apply(x: Any) -> Any:
        y = fn(*x) if type(x) is tuple else fn(x)
        return y if type(y) in SCALAR_TYPES else to_result(y, what)

    return apply


class _MapIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, fn: Callable[..., Any]):
        super().__init__(parent)
        self._parent = parent
        self._fn = fn
        self._index = 0
        self._what = f"map(): the result of {fn_name(fn)}"

    def __next__(self) -> Any:
        x = next(self._parent)
        try:
            y = self._fn(*x) if type(x) is tuple else self._fn(x)
        except Exception as err:
            raise user_error(err, "map()", self._fn, self._index)
        self._index += 1
        return y if type(y) in SCALAR_TYPES else to_result(y, self._what)

    def skip(self, n: int) -> int:
        done = self._parent.skip(n)  # skipped elements are not mapped: their results would be dropped anyway
        self._index += done
        return done

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "index": self._index}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._index = int(state["index"])

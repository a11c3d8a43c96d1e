"""``map``: apply a user function to every element."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parafeed.arguments import callable_arg, deterministic_arg, parallelism_arg
from parafeed.dataset import Dataset, DatasetIterator
from parafeed.elements import SCALAR_TYPES
from parafeed.functions import call, fn_name, to_result, user_error


class MapDataset(Dataset):
    """Elements ``map_func(element)``, in input order."""

    def __init__(
        self,
        parent: Dataset,
        map_func: Callable[..., Any],
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ):
        super().__init__((parent,), name=name)
        self._fn = callable_arg("map()", "map_func", map_func)
        self._num_parallel_calls = parallelism_arg("map()", num_parallel_calls)
        self._deterministic = deterministic_arg("map()", deterministic)

    def _make_iterator(self) -> DatasetIterator:
        return _MapIterator(self._parents[0]._make_iterator(), self._fn)

    def _sample_element(self) -> Any:
        return to_result(
            call(self._fn, self._parents[0]._sample_element()), f"map(): the result of {fn_name(self._fn)}"
        )

    def _cardinality(self) -> int:
        return self._parents[0]._cardinality()


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

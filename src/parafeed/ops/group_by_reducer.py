"""``group_by_reducer``: fold the elements of each key into a state, and output every key's finalized state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.arguments import callable_arg
from parafeed.core.dataset import UNKNOWN, Dataset
from parafeed.core.functions import call, fn_name, to_result, user_error
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.ops.scan import NOT_RUN, check_state, decode_value, encode_value, sample_of, try_call

_STEP = "group_by_reducer()"


class Reducer:
    """How ``group_by_reducer`` reduces each group: ``init_func(key) -> state``, ``reduce_func(state, element) ->
    state`` and ``finalize_func(state) -> output`` (a tuple state is passed to it as arguments).

    Example:
        >>> reducer = pf.experimental.Reducer(lambda key: np.int64(0), lambda s, x: s + x, lambda s: s)
        >>> ds = pf.Dataset.range(6).apply(pf.experimental.group_by_reducer(lambda x: x % 2, reducer))
        >>> [int(x) for x in ds]
        [6, 9]
    """

    def __init__(self, init_func: Callable[[Any], Any], reduce_func: Callable[[Any, Any], Any],
                 finalize_func: Callable[..., Any]):  # fmt: skip
        self._init_func = callable_arg("Reducer()", "init_func", init_func)
        self._reduce_func = callable_arg("Reducer()", "reduce_func", reduce_func)
        self._finalize_func = callable_arg("Reducer()", "finalize_func", finalize_func)

    @property
    def init_func(self) -> Callable[[Any], Any]:
        return self._init_func

    @property
    def reduce_func(self) -> Callable[[Any, Any], Any]:
        return self._reduce_func

    @property
    def finalize_func(self) -> Callable[..., Any]:
        return self._finalize_func


class GroupByReducerDataset(Dataset):
    """One element per key: ``finalize_func`` of the key's state after all its elements, in increasing key order
    (tf.data's kernel keeps the states in a sorted map and outputs them once the input has ended)."""

    def __init__(self, parent: Dataset, key_func: Callable[..., Any], reducer: Reducer, name: str | None = None):
        super().__init__((parent,), name=name)
        self._key_func = callable_arg(_STEP, "key_func", key_func)
        if not isinstance(reducer, Reducer):
            raise ArgumentTypeError(
                f"{_STEP}: `reducer` must be a pf.experimental.Reducer, got {type(reducer).__name__}"
            )
        self._reducer = reducer
        # try the functions on a sample, as tf.data's tracing does: a bad key or a state that changes dtype is
        # refused now (a function that fails on the sample meets its error while iterating)
        sample = sample_of(parent)
        key = try_call(call, key_func, sample)
        if key is not NOT_RUN:
            key = self._check_key(key)
            state = try_call(reducer.init_func, key)
            if state is not NOT_RUN:
                state = to_result(state, f"{_STEP}: the state from init_func {fn_name(reducer.init_func)}")
                new = try_call(reducer.reduce_func, state, sample)
                if new is not NOT_RUN:
                    new = to_result(new, f"{_STEP}: the state from reduce_func {fn_name(reducer.reduce_func)}")
                    check_state(_STEP, reducer.reduce_func, new, state)

    def _key(self, element: Any, index: int | None) -> np.int64:
        try:
            key = call(self._key_func, element)
        except Exception as err:
            raise user_error(err, _STEP, self._key_func, index)
        return self._check_key(key)

    def _check_key(self, key: Any) -> np.int64:
        key = to_result(key, f"{_STEP}: the key from {fn_name(self._key_func)}")
        if not isinstance(key, (np.int64, np.ndarray)) or np.asarray(key).dtype != np.int64 or np.size(key) != 1:
            raise InvalidArgumentError(
                f"{_STEP}: Invalid `key_func`. Expected `key_func` {fn_name(self._key_func)} to return a scalar int64, "
                f"got {key!r:.60}; cast it, e.g. np.int64(...)"
            )
        return np.int64(np.asarray(key).reshape(()))

    def _init(self, key: np.int64) -> Any:
        fn = self._reducer.init_func
        try:
            state = fn(key)
        except Exception as err:
            raise user_error(err, _STEP, fn, None)
        return to_result(state, f"{_STEP}: the state from init_func {fn_name(fn)}")

    def _reduce(self, state: Any, element: Any, index: int | None) -> Any:
        fn = self._reducer.reduce_func
        try:
            new = fn(state, element)
        except Exception as err:
            raise user_error(err, _STEP, fn, index)
        new = to_result(new, f"{_STEP}: the state from reduce_func {fn_name(fn)}")
        check_state(_STEP, fn, new, state)
        return new

    def _finalize(self, state: Any) -> Any:
        fn = self._reducer.finalize_func
        try:
            out = call(fn, state)
        except Exception as err:
            raise user_error(err, _STEP, fn, None)
        return to_result(out, f"{_STEP}: the output of finalize_func {fn_name(fn)}")

    def _make_iterator(self) -> DatasetIterator:
        return _GroupByReducerIterator(self._parents[0]._iter(), self)

    def _sample_element(self) -> Any:
        sample = self._parents[0]._sample_element()
        key = self._key(sample, None)
        return self._finalize(self._reduce(self._init(key), sample, None))

    def _cardinality(self) -> int:
        return UNKNOWN

    def _static_shapes(self) -> bool:
        return False


class _GroupByReducerIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, ds: GroupByReducerDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._states: dict[int, Any] = {}
        self._index = 0  # input elements reduced
        self._keys: list[int] | None = None  # sorted, once the input has ended
        self._emitted = 0

    def __next__(self) -> Any:
        ds = self._ds
        while self._keys is None:
            try:
                element = next(self._parent)
            except StopIteration:
                self._keys = sorted(self._states)
                break
            key = ds._key(element, self._index)
            k = int(key)
            state = self._states[k] if k in self._states else ds._init(key)
            self._states[k] = ds._reduce(state, element, self._index)
            self._index += 1
        if self._emitted >= len(self._keys):
            raise StopIteration
        k = self._keys[self._emitted]
        self._emitted += 1
        return ds._finalize(self._states[k])

    def _get_state(self) -> dict:
        """Size: one state per key seen (their values: the data this step holds) and the input's state."""
        return {
            "parent": self._parent.get_state(), "index": self._index, "ended": self._keys is not None,
            "emitted": self._emitted, "states": [[k, encode_value(v)] for k, v in self._states.items()],
        }  # fmt: skip

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._index, self._emitted = int(state["index"]), int(state["emitted"])
        self._states = {}
        for k, leaves in state["states"]:
            self._states[int(k)] = decode_value(leaves, self._ds._init(np.int64(k)))
        self._keys = sorted(self._states) if state["ended"] else None

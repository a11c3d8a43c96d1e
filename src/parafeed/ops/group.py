"""``group_by_window`` and ``bucket_by_sequence_length``: batching elements that share a key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.arguments import callable_arg, positive_int
from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset
from parafeed.core.functions import as_int64_scalar, call, fn_name, user_error
from parafeed.core.iterator import DatasetIterator, build_in, current_scope
from parafeed.core.positions import Snapshots
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.sources.memory import ElementsDataset
from parafeed.values.structure import TensorSpec, as_shape, map_structure, map_structure_up_to, pack_as

_STEP = "group_by_window()"


class GroupByWindowDataset(Dataset):
    """Elements grouped by ``key_func``; each full group (or, at the end, each remaining group in key order) is
    passed as a dataset to ``reduce_func(key, window)``, whose dataset's elements are the output."""

    order_fixed = False  # the datasets come from reduce_func

    def __init__(
        self,
        parent: Dataset,
        key_func: Callable[..., Any],
        reduce_func: Callable[[Any, Dataset], Dataset],
        window_size: int | None = None,
        window_size_func: Callable[[Any], Any] | None = None,
        name: str | None = None,
    ):
        super().__init__((parent,), name=name)
        self._key_func = callable_arg(_STEP, "key_func", key_func)
        self._reduce_func = callable_arg(_STEP, "reduce_func", reduce_func)
        if (window_size is None) == (window_size_func is None):
            raise InvalidArgumentError(f"{_STEP}: give exactly one of `window_size` and `window_size_func`")
        if window_size is not None:
            size = positive_int(_STEP, "window_size", window_size)
            self._window_size_func: Callable[[Any], Any] = lambda key: size
        else:
            self._window_size_func = callable_arg(_STEP, "window_size_func", window_size_func)

    def _make_iterator(self) -> DatasetIterator:
        return _GroupByWindowIterator(self._parents[0]._iter(), self)

    def _element_spec(self) -> Any:
        sample = self._parents[0]._sample_element()
        return self._reduce(np.int64(0), [sample]).element_spec

    def _cardinality(self) -> int:
        return INFINITE if self._parents[0]._cardinality() == INFINITE else UNKNOWN  # as tf.data counts

    def _static_shapes(self) -> bool:
        return False

    def _key(self, element: Any, index: int) -> np.int64:
        try:
            key = call(self._key_func, element)
        except Exception as err:
            raise user_error(err, _STEP, self._key_func, index)
        return as_int64_scalar(_STEP, "key_func", self._key_func, key)

    def _window_size(self, key: np.int64) -> int:
        size = self._window_size_func(key)
        n = as_int64_scalar(_STEP, "window_size_func", self._window_size_func, size)
        if n <= 0:
            raise InvalidArgumentError(
                f"{_STEP}: window size must be > 0, but `window_size_func` gave {n} for key {key}"
            )
        return int(n)

    def _reduce(self, key: np.int64, elements: list) -> Dataset:
        window = ElementsDataset(elements)
        try:
            out = self._reduce_func(key, window)
        except Exception as err:
            raise user_error(err, _STEP, self._reduce_func, None)
        if not isinstance(out, Dataset):
            raise ElementTypeError(
                f"{_STEP}: `reduce_func` {fn_name(self._reduce_func)} must return a Dataset, got {type(out).__name__}"
            )
        return out


SNAPSHOT_EVERY = 256  # input elements between saved input states (restoring re-reads at most this many more)


class _GroupByWindowIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, ds: GroupByWindowDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._scope = current_scope()
        self._groups: dict[int, list] = {}
        self._held: dict[int, list[int]] = {}  # per key, the input index of each element of its group
        self._sizes: dict[int, int] = {}  # window size per key, asked once per key as tf.data does
        self._current: DatasetIterator | None = None
        self._current_window: tuple = (0, [])  # the key and input indices of the window being reduced
        self._input_done = False
        self._index = 0
        self._snapshots = Snapshots(parent, SNAPSHOT_EVERY)

    def __next__(self) -> Any:
        while True:
            if self._current is not None:
                try:
                    return next(self._current)
                except StopIteration:
                    self._current.close()
                    self._current = None
            if self._input_done:
                if not self._groups:
                    raise StopIteration
                self._flush(min(self._groups))
                continue
            try:
                element = next(self._parent)
            except StopIteration:
                self._input_done = True
                continue
            key = self._ds._key(element, self._index)
            k = int(key)
            if k not in self._sizes:
                self._sizes[k] = self._ds._window_size(key)
            group = self._groups.setdefault(k, [])
            group.append(element)
            self._held.setdefault(k, []).append(self._index)
            self._index += 1
            self._snapshots.note(self._index, self._oldest)
            if len(group) == self._sizes[k]:
                self._flush(k)

    def _flush(self, key: int) -> None:
        self._current_window = (key, self._held.pop(key))
        self._current = build_in(self._scope, self._ds._reduce(np.int64(key), self._groups.pop(key)))

    def _all_held(self) -> list[int]:
        held = [i for indices in self._held.values() for i in indices]
        return held + self._current_window[1] if self._current is not None else held

    def _oldest(self) -> int:
        return min(self._all_held(), default=self._index)

    def _get_state(self) -> dict:
        """Size: the input indices of the elements held in open windows, plus the input's state."""
        current = None
        if self._current is not None:
            current = [self._current_window[0], self._current_window[1], self._current.get_state()]
        return {
            "groups": [[k, list(v)] for k, v in self._held.items()], "sizes": [[k, n] for k, n in self._sizes.items()],
            "current": current, "input_done": self._input_done,
            "input": self._snapshots.state(self._all_held(), self._index),
        }  # fmt: skip

    def _set_state(self, state: dict) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        current = state["current"]
        held = [i for _, indices in state["groups"] for i in indices] + (current[1] if current else [])
        found = self._snapshots.restore(state["input"], held)
        self._index, self._input_done = int(state["input"]["pulled"]), bool(state["input_done"])
        self._sizes = {int(k): int(n) for k, n in state["sizes"]}
        self._held = {int(k): [int(i) for i in v] for k, v in state["groups"]}
        self._groups = {k: [found[i] for i in v] for k, v in self._held.items()}
        if current is not None:
            key, indices, sub = int(current[0]), [int(i) for i in current[1]], current[2]
            self._current_window = (key, indices)
            window = [found[i] for i in indices]
            self._current = build_in(self._scope, self._ds._reduce(np.int64(key), window))
            self._current.set_state(sub)

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        super().close()


def bucket_by_sequence_length(
    ds: Dataset,
    element_length_func: Callable[..., Any],
    bucket_boundaries: list[int],
    bucket_batch_sizes: list[int],
    padded_shapes: Any = None,
    padding_values: Any = None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
    name: str | None = None,
) -> Dataset:
    """Batches of elements whose lengths fall in the same bucket, as ``tf.data``'s bucket_by_sequence_length."""
    step = "bucket_by_sequence_length()"
    element_length_func = callable_arg(step, "element_length_func", element_length_func)
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [positive_int(step, "bucket_batch_sizes", b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise InvalidArgumentError(
            f"{step}: len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1, but "
            f"len(bucket_batch_sizes)={len(sizes)} and len(bucket_boundaries)={len(boundaries)}"
        )
    lows = [np.iinfo(np.int32).min, *boundaries]
    highs = [*boundaries, np.iinfo(np.int32).max]

    def bucket_id(*args: Any) -> np.int64:
        length = element_length_func(*args)
        for i, (lo, hi) in enumerate(zip(lows, highs)):
            if lo <= length < hi:
                return np.int64(i)
        raise InvalidArgumentError(f"{step}: element length {length!r} is outside every bucket")

    def batch_bucket(bucket: np.int64, window: Dataset) -> Dataset:
        batch_size = sizes[int(bucket)]
        if no_padding:
            return window.batch(batch_size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            if bucket >= len(sizes) - 1:
                raise InvalidArgumentError(
                    f"{step}: When pad_to_bucket_boundary=True, elements must have length < max(bucket_boundaries) "
                    f"= {max(boundaries)}; raise the last boundary or drop longer elements with filter()"
                )
            filler = boundaries[int(bucket)] - 1
        shapes = padded_shapes
        if filler is not None:  # unknown dimensions (of padded_shapes, else of the element spec) pad to the boundary
            shapes = _fill_unknown(_sequence_spec(ds) if shapes is None else shapes, filler, ds)
        return window.padded_batch(batch_size, shapes, padding_values, drop_remainder=drop_remainder)

    return ds.group_by_window(bucket_id, batch_bucket, window_size_func=lambda bucket: sizes[int(bucket)], name=name)


def _sequence_spec(ds: Dataset) -> Any:
    """The element spec, with the first dimension unknown when the spec was read off a sample (a user function's
    result): that is the sequence dimension whose length varies."""
    spec = ds.element_spec
    if ds._static_shapes():
        return spec

    def relax_first(s: Any) -> Any:
        if isinstance(s, TensorSpec) and s.shape:
            return TensorSpec((None, *s.shape[1:]), s.dtype)
        return s

    return map_structure(relax_first, spec)


def _fill_unknown(shapes: Any, filler: int | None, ds: Dataset) -> Any:
    """Padded shapes with every unknown dimension set to ``filler`` (``None`` keeps it unknown)."""

    def fill(shape: Any) -> Any:
        dims = shape.shape if isinstance(shape, TensorSpec) else as_shape(shape)
        if dims is None:
            raise InvalidArgumentError("bucket_by_sequence_length(): padded shapes need a known rank")
        return tuple(filler if d is None else d for d in dims)

    flat: list = []
    map_structure_up_to(ds.element_spec, lambda s: flat.append(fill(s)), shapes)
    return pack_as(ds.element_spec, flat)

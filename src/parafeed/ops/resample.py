"""``rejection_resample``: reshape a dataset's class distribution to a target one.

Built as tf.data builds it. With the classes' initial distribution ``p`` (given, or estimated on the fly from the
classes seen so far) and the target ``t``, the ratios ``r = t / p`` give ``m = min(r)``: each output element comes
from a plain pass over the input with probability ``m`` and otherwise from a second pass that accepts an element of
class ``i`` with probability ``(r[i] - m) / (max(r) - m)``. So elements may be dropped or taken twice. When ``m`` is
1 (the input already has the target distribution) the result is the plain pass alone, and when it is 0 the filtered
pass alone. The two passes are mixed by ``sample_from_datasets(stop_on_empty_dataset=True)``.

The estimate, as tf.data's: class counts start at 10 each and take in the classes 32 elements at a time; every
element of a group of 32 uses the counts that include the whole group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.arguments import callable_arg
from parafeed.core.dataset import UNKNOWN, Dataset, PassThroughDataset
from parafeed.core.functions import call, fn_name, to_result, user_error
from parafeed.core.iterator import DatasetIterator, current_scope
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.sources.draws import UniformDraws, draw_seed
from parafeed.sources.mixture import sample_from_datasets
from parafeed.values.structure import spec_of

ESTIMATE_GROUP = 32  # classes taken into the estimate at a time (tf.data's dist_estimation_batch_size)
SMOOTHING = 10  # the count every class starts with
_TINY = np.finfo(np.float32).tiny
_SALT = 0x616363  # keeps the accept draws apart from the mixture's, which use the same seed

STEP = "rejection_resample()"


def rejection_resample(
    dataset: Dataset,
    class_func: Callable[..., Any],
    target_dist: Any,
    initial_dist: Any = None,
    seed: int | None = None,
    name: str | None = None,
) -> Dataset:
    """See ``Dataset.rejection_resample``."""
    class_func = callable_arg(STEP, "class_func", class_func)
    target = _dist_arg("target_dist", target_dist)
    initial = None if initial_dist is None else _dist_arg("initial_dist", initial_dist)
    if initial is not None and initial.shape != target.shape:
        raise InvalidArgumentError(
            f"{STEP}: Incompatible shapes: `initial_dist` has {initial.shape[0]} classes, `target_dist` "
            f"{target.shape[0]}; give both one probability per class"
        )
    seed_value, _ = draw_seed(STEP, seed)

    def add_class(*x: Any) -> Any:
        return class_func(*x), x[0] if len(x) == 1 else x

    plain = dataset.map(add_class, name=name)
    if initial is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            static_m = np.min(target / initial)  # tf.data decides on the ratios without the tiny offset
        if static_m == 1:
            return plain
        dist: Dataset = Dataset.from_tensors(initial).repeat()
    else:
        dist = ClassDistributionDataset(dataset.map(class_func, name=name), len(target), name=name)
    filtered = AcceptDataset(Dataset.zip((dist, dataset)), class_func, target, seed_value, name=name)
    if initial is not None and static_m == 0:
        return filtered
    weights = dist.map(lambda d: _mixing_weights(d, target), name=name)
    return sample_from_datasets([plain, filtered], weights, seed_value, stop_on_empty_dataset=True)


def _dist_arg(name: str, value: Any) -> np.ndarray:
    try:
        dist = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise ElementTypeError(f"{STEP}: `{name}` must be a list of probabilities, got {value!r:.100}") from None
    if dist.ndim != 1 or not len(dist):
        raise InvalidArgumentError(f"{STEP}: `{name}` must be a 1-D list of probabilities, got {value!r:.100}")
    return dist


def acceptance(dist: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.float32]:
    """Per-class acceptance probabilities of the filtered pass, and the probability of taking the plain pass."""
    ratio = target / (dist + _TINY)
    low, high = ratio.min(), ratio.max()
    with np.errstate(divide="ignore", invalid="ignore"):
        return (ratio - low) / (high - low), low


def _mixing_weights(dist: np.ndarray, target: np.ndarray) -> np.ndarray:
    m = acceptance(dist, target)[1]
    return np.array([m, 1 - m], dtype=np.float32)


def _class_index(value: Any, fn: str) -> int:
    arr = np.asarray(value)
    if arr.shape != () or arr.dtype.kind not in "iu":
        raise ElementTypeError(
            f"{STEP}: `class_func` {fn} must return an integer scalar class, got {arr.dtype} with shape {arr.shape}"
        )
    return int(arr)


class ClassDistributionDataset(PassThroughDataset):
    """The estimated class distribution (float32 vectors) for each element of a dataset of class values."""

    def __init__(self, classes: Dataset, num_classes: int, name: str | None = None):
        super().__init__(classes, name=name)
        self._num_classes = num_classes

    def _make_iterator(self) -> DatasetIterator:
        return _ClassDistributionIterator(self._parent._iter(), self._num_classes)

    def _sample_element(self) -> Any:
        return np.full(self._num_classes, 1 / self._num_classes, np.float32)

    def _element_spec(self) -> Any:
        return spec_of(self._sample_element())


class _ClassDistributionIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, num_classes: int):
        super().__init__(parent)
        self._parent = parent
        self._counts = np.full(num_classes, SMOOTHING, np.int64)
        self._left = 0  # outputs left for the group read last
        self._dist = self._distribution()

    def __next__(self) -> Any:
        if not self._left:
            group = [_class_index(c, "") for _, c in zip(range(ESTIMATE_GROUP), self._parent)]
            if not group:
                raise StopIteration
            seen = np.asarray(group, np.int64)
            seen = seen[(seen >= 0) & (seen < len(self._counts))]  # out-of-range classes count nowhere, as in tf.data
            self._counts += np.bincount(seen, minlength=len(self._counts))
            self._dist = self._distribution()
            self._left = len(group)
        self._left -= 1
        return self._dist

    def _distribution(self) -> np.ndarray:
        return (self._counts / self._counts.sum()).astype(np.float32)

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "counts": self._counts.tolist(), "left": self._left}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._counts = np.asarray(state["counts"], np.int64)
        self._left = int(state["left"])
        self._dist = self._distribution()


class AcceptDataset(PassThroughDataset):
    """``(class, element)`` for the ``(dist, element)`` pairs accepted with their class's probability under
    ``dist`` (the filtered pass)."""

    def __init__(
        self, pairs: Dataset, class_func: Callable[..., Any], target: np.ndarray, seed: int, name: str | None = None
    ):
        super().__init__(pairs, name=name)
        self._class_func = class_func
        self._target = target
        self.seed: int = seed

    def _make_iterator(self) -> DatasetIterator:
        scope = current_scope()
        seed = (scope.run.seed_for(self) if scope.run is not None else self.seed) & (2**63 - 1)
        return _AcceptIterator(self, self._parent._iter(), UniformDraws([seed, _SALT]))

    def _sample_element(self) -> Any:
        _, x = self._parent._sample_element()
        return to_result(call(self._class_func, x), STEP), x

    def _element_spec(self) -> Any:
        c, _ = self._sample_element()
        return spec_of(c), self._parent.element_spec[1]

    def _static_shapes(self) -> bool:
        return False  # the class's spec is read off class_func's result

    def _cardinality(self) -> int:
        return UNKNOWN  # as tf.data's filter, even on an infinite input


class _AcceptIterator(DatasetIterator):
    def __init__(self, node: AcceptDataset, parent: DatasetIterator, draws: UniformDraws):
        super().__init__(parent)
        self._node = node
        self._parent = parent
        self._draws = draws
        self._index = 0
        self._dist: Any = None  # the last distribution seen, and its acceptance probabilities
        self._accept: np.ndarray | None = None

    def __next__(self) -> Any:
        fn, target = self._node._class_func, self._node._target
        for dist, x in self._parent:
            try:
                c = call(fn, x)
            except Exception as err:
                raise user_error(err, STEP, fn, self._index)
            self._index += 1
            i = _class_index(c, fn_name(fn))
            if not 0 <= i < len(target):
                raise InvalidArgumentError(
                    f"{STEP}: `class_func` {fn_name(fn)} returned class {i}, which is not in [0, {len(target)}) "
                    f"(one class per entry of `target_dist`)"
                )
            if dist is not self._dist and (self._dist is None or not np.array_equal(dist, self._dist)):
                self._dist, self._accept = dist, acceptance(dist, target)[0]
            if self._draws.next() < self._accept[i]:  # type: ignore[index]  # set by the first dist (no cast per element)
                return to_result(c, STEP), x
        raise StopIteration

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "draws": self._draws.state(), "index": self._index}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._draws.restore(state["draws"])
        self._index = int(state["index"])

"""Mixtures of datasets: ``sample_from_datasets`` (random picks by weight) and ``choose_from_datasets`` (picks read
from a dataset of indices).

Both build a :class:`MixtureDataset`: each output element is the next element of one of its inputs, the input picked
by a selector. As in tf.data's directed interleave, an input that runs dry ends the mixture with
``stop_on_empty_dataset``; otherwise it is dropped and the picks go on among the others until none is left. The
mixture is a ``MANY_TO_MANY`` step whose parents are the inputs (then the selector dataset, if any), so graph walks
and sharding see through it. Its random picks come from NumPy's generator, not TensorFlow's Philox stream: the same
seed gives the same order in every run and process, but not tf.data's order
(docs/porting.md#mixture-random-streams).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset
from parafeed.core.iterator import DatasetIterator, Scope, current_scope
from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError, StateError
from parafeed.sources.draws import UniformDraws, draw_seed
from parafeed.values.structure import TensorSpec, dtype_name
from parafeed.values.supertype import common_spec

_SALT = 0x6D6978  # keeps a mixture's stream apart from other steps seeded with the same number


DRY_PICKS = 1_000_000  # picks of inputs that ran dry in a row before a mixture stops instead of spinning forever


class MixtureDataset(Dataset):
    """Elements of ``datasets``, each taken from the input a selector picks.

    ``mode``: ``"choose"`` (the selector dataset gives int64 indices), ``"weights"`` (it gives a weight vector per
    pick) or ``"constant"`` (``weights`` is fixed; inputs that run dry leave the draw, the others' weights are
    renormalised).
    """

    def __init__(
        self,
        datasets: tuple[Dataset, ...],
        step: str,
        mode: str,
        selector: Dataset | None = None,
        weights: np.ndarray | None = None,
        stop_on_empty_dataset: bool = False,
        seed: int | None = None,
        rerandomize: bool = False,
        name: str | None = None,
    ):
        super().__init__(tuple(datasets) + ((selector,) if selector is not None else ()), name=name)
        self._n = len(datasets)
        self._step = step
        self._mode = mode
        self._weights = weights
        self._stop = stop_on_empty_dataset
        self.seed = seed
        self._rerandomize = rerandomize
        self._element_spec()  # refuse incompatible inputs now, as tf.data does

    @property
    def inputs(self) -> tuple[Dataset, ...]:
        """The datasets mixed (without the selector)."""
        return self._parents[: self._n]

    def _selector(self) -> Dataset | None:
        return self._parents[self._n] if len(self._parents) > self._n else None

    def order_seed(self, scope: Scope) -> list[int]:
        """The seed words of this run's picks: the seed (as the run knows it), plus the iteration and ``repeat``
        epochs with ``rerandomize_each_iteration``."""
        own = cast(int, self.seed)  # (only mixtures that draw have an order: they have a seed)
        seed = (scope.run.seed_for(self) if scope.run is not None else own) & (2**63 - 1)
        return [seed, _SALT, scope.iteration, *scope.epochs] if self._rerandomize else [seed, _SALT]

    def _make_iterator(self) -> DatasetIterator:
        scope = current_scope()
        inputs = [d._iter() for d in self.inputs]
        selector = self._selector()
        draws = UniformDraws(self.order_seed(scope)) if self.seed is not None else None
        return _MixtureIterator(self, inputs, None if selector is None else selector._iter(), draws)

    def _element_spec(self) -> Any:
        return common_spec(self._step, [d.element_spec for d in self.inputs])

    def _sample_element(self) -> Any:
        return self._parents[0]._sample_element()

    def _cardinality(self) -> int:
        # tf.data's rule: infinite when an input is, else unknown (even when the selector is finite)
        return INFINITE if any(d._cardinality() == INFINITE for d in self.inputs) else UNKNOWN


class _MixtureIterator(DatasetIterator):
    def __init__(
        self, node: MixtureDataset, inputs: list[DatasetIterator], selector: DatasetIterator | None, draws: Any
    ):
        super().__init__(*inputs, *([selector] if selector is not None else []))
        self._node = node
        self._inputs: list[DatasetIterator | None] = list(inputs)
        self._selector = selector
        self._draws = draws
        self._done = False
        self._cumulative: np.ndarray | None = None  # constant mode: cumulative weights of the inputs left
        self._active: list[int] = list(range(len(inputs)))

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        for _ in range(DRY_PICKS):
            i = self._pick()
            it = self._inputs[i]
            if it is None:
                continue  # an input that ran dry: tf.data draws again
            try:
                return next(it)
            except StopIteration:
                if self._node._stop:
                    self._finish()
                    raise
                it.close()
                self._inputs[i] = None
                self._active.remove(i)
                self._cumulative = None
                if not self._active:
                    self._finish()
                    raise
        raise InvalidArgumentError(
            f"{self._node._step}: {DRY_PICKS:,} picks in a row chose inputs that had run dry "
            f"(inputs {sorted(set(range(len(self._inputs))) - set(self._active))}); the choices or weights never pick "
            "the inputs left, so the mixture would never end: give the remaining inputs weight, or set "
            "stop_on_empty_dataset=True"
        )

    def _pick(self) -> int:
        mode = self._node._mode
        if mode == "constant":
            if self._cumulative is None:
                weights = cast(np.ndarray, self._node._weights)  # (given in constant mode)
                self._cumulative = np.cumsum(weights[self._active])
            total = float(self._cumulative[-1])
            k = int(np.searchsorted(self._cumulative, self._draws.next() * total, side="right"))
            return self._active[min(k, len(self._active) - 1)]
        try:
            chosen = next(self._selector)  # type: ignore[arg-type]  # given in these modes (no cast per element)
        except StopIteration:
            self._finish()
            raise
        if mode == "choose":
            return self._index(chosen)
        return self._weighted(chosen)

    def _index(self, chosen: Any) -> int:
        i = int(chosen)
        if not 0 <= i < len(self._inputs):
            raise InvalidArgumentError(
                f"{self._node._step}: selector index out of range: {i} >= {len(self._inputs)} (the choice dataset "
                f"must give indices in [0, {len(self._inputs)}), one per element to take)"
            )
        return i

    def _weighted(self, weights: Any) -> int:
        w = np.asarray(weights, dtype=np.float64)
        n = len(self._inputs)
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InvalidArgumentError(
                f"{self._node._step}: each element of the `weights` dataset must be {n} finite weights >= 0 (one "
                f"per dataset), got {weights!r:.100}"
            )
        cumulative = np.cumsum(w)
        total = float(cumulative[-1])
        if total <= 0:
            raise InvalidArgumentError(
                f"{self._node._step}: selector index out of range: {n} >= {n} (an element of the `weights` dataset "
                f"is all zeros: {weights!r:.100}; give at least one dataset a positive weight)"
            )
        k = int(np.searchsorted(cumulative, self._draws.next() * total, side="right"))
        return k if k < n else int(np.flatnonzero(w)[-1])

    def _finish(self) -> None:
        self._done = True
        for i, it in enumerate(self._inputs):
            if it is not None:
                it.close()
                self._inputs[i] = None
        self._active = []

    def _get_state(self) -> dict:
        return {
            "inputs": [None if it is None else it.get_state() for it in self._inputs],
            "selector": None if self._selector is None else self._selector.get_state(),
            "draws": None if self._draws is None else self._draws.state(),
            "done": self._done,
        }

    def _set_state(self, state: dict) -> None:
        for i, s in enumerate(state["inputs"]):
            it = self._inputs[i]
            if s is None:
                if it is not None:
                    it.close()
                self._inputs[i] = None
            elif it is None:
                raise StateError(
                    f"set_state(): {self._node._step} input {i} has run dry in this iterator; restore the state into "
                    "a new iterator (iter(ds))"
                )
            else:
                it.set_state(s)
        if self._selector is not None:
            self._selector.set_state(state["selector"])
        if self._draws is not None:
            self._draws.restore(state["draws"])
        self._active = [i for i, it in enumerate(self._inputs) if it is not None]
        self._cumulative = None
        self._done = bool(state["done"])


# ---------------------------------------------------------------------------------------------- the builders


def sample_from_datasets(
    datasets: Any,
    weights: Any = None,
    seed: int | None = None,
    stop_on_empty_dataset: bool = False,
    rerandomize_each_iteration: bool | None = None,
) -> Dataset:
    """See ``Dataset.sample_from_datasets``."""
    step = "sample_from_datasets()"
    datasets = _datasets_arg(step, datasets)
    seed_value, _ = draw_seed(step, seed)
    common: dict[str, Any] = {"stop_on_empty_dataset": _bool_arg(step, "stop_on_empty_dataset", stop_on_empty_dataset),
              "seed": seed_value, "rerandomize": bool(rerandomize_each_iteration)}  # fmt: skip
    if isinstance(weights, Dataset):
        _check_weights_spec(step, weights.element_spec, len(datasets))
        return MixtureDataset(datasets, step, "weights", selector=weights, **common)
    w: np.ndarray | None
    if weights is None:
        w = np.ones(len(datasets))
    else:
        w = _weights_arg(step, weights, len(datasets))
        kept = [(d, x) for d, x in zip(datasets, w) if x > 0]  # tf.data drops datasets of weight 0
        datasets, w = (tuple(d for d, _ in kept), w[[x > 0 for x in w]]) if kept else ((datasets[0].take(0),), None)
        if w is not None and w.dtype not in (np.float32, np.float64):
            raise ArgumentTypeError(
                f"{step}: `weights` must be float32 or float64 numbers, got {dtype_name(w.dtype)} {weights!r:.100}; "
                "write them as floats, e.g. [1.0, 2.0]"
            )
    if len(datasets) == 1:
        return datasets[0]  # as tf.data: the dataset itself, unchecked against the dropped ones
    return MixtureDataset(datasets, step, "constant", weights=np.asarray(w, np.float64), **common)


def choose_from_datasets(datasets: Any, choice_dataset: Any, stop_on_empty_dataset: bool = True) -> Dataset:
    """See ``Dataset.choose_from_datasets``."""
    step = "choose_from_datasets()"
    datasets = _datasets_arg(step, datasets)
    if not isinstance(choice_dataset, Dataset):
        raise ArgumentTypeError(
            f"{step}: `choice_dataset` should be a Dataset of int64 indices but is {type(choice_dataset).__name__}"
        )
    spec = choice_dataset.element_spec
    if not (isinstance(spec, TensorSpec) and spec.dtype == np.int64 and spec.shape in (None, ())):
        raise ElementTypeError(
            f"{step}: elements of `choice_dataset` must be scalar int64 values but are {spec!r}; convert them, e.g. "
            "choice_dataset.map(lambda i: np.int64(i))"
        )
    stop = _bool_arg(step, "stop_on_empty_dataset", stop_on_empty_dataset)
    return MixtureDataset(datasets, step, "choose", selector=choice_dataset, stop_on_empty_dataset=stop)


def _datasets_arg(step: str, datasets: Any) -> tuple[Dataset, ...]:
    if isinstance(datasets, Dataset) or not isinstance(datasets, (list, tuple)):
        raise ArgumentTypeError(f"{step}: `datasets` must be a list of Datasets, got {type(datasets).__name__}")
    if not datasets:
        raise InvalidArgumentError(f"{step}: Invalid `datasets`. `datasets` should not be empty.")
    bad = [type(d).__name__ for d in datasets if not isinstance(d, Dataset)]
    if bad:
        raise ArgumentTypeError(f"{step}: `datasets` must be a list of Datasets, got a {bad[0]} in it")
    return tuple(datasets)


def _bool_arg(step: str, name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{step}: `{name}` must be True or False, got {value!r}")
    return bool(value)


def _weights_arg(step: str, weights: Any, n: int) -> np.ndarray:
    w = np.asarray(weights)
    if w.ndim != 1 or len(w) != n:
        raise InvalidArgumentError(
            f"{step}: Invalid `weights`. `weights` should have the same length as `datasets` but got "
            f"`len(weights)={w.size if w.ndim else 'scalar'}` vs. `len(datasets)={n}`."
        )
    return w


def _check_weights_spec(step: str, spec: Any, n: int) -> None:
    if not isinstance(spec, TensorSpec) or spec.dtype not in (np.float32, np.float64):
        raise ElementTypeError(
            f"{step}: a `weights` dataset must give float32 or float64 vectors, one weight per dataset; its elements "
            f"are {spec!r}"
        )
    if spec.shape is not None and (len(spec.shape) != 1 or spec.shape[0] not in (None, n)):
        raise InvalidArgumentError(
            f"{step}: a `weights` dataset must give vectors of {n} weights (one per dataset); its elements have "
            f"shape {spec.shape}"
        )

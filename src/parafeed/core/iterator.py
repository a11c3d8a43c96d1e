"""Iterators and their run context: all run-time state of a pipeline lives here, never on its nodes.

``iter(ds)`` starts a *run*: one :class:`RunContext` and a tree of :class:`DatasetIterator`, one per node. The run
holds what every step of the tree shares: the merged options, which iteration of the dataset this is (it drives
reshuffling), restored seeds, where a resumed pass begins, the RAM budget and the stats collector. Steps read it
while their iterators are built, through the current :class:`Scope`; steps that build iterators later (``repeat``,
``interleave``) keep the scope they were built in and build inside it again (:func:`build_in`). Two runs of one
dataset share nothing: saving or restoring one never changes what another yields.
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from parafeed.core.options import Options, input_cores
from parafeed.errors import DataLossError, OutOfRangeError, StateError
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor, densify
from parafeed.values.structure import flatten, map_structure
from parafeed.values.tensor import ScalarString, Tensor, as_tensor

if TYPE_CHECKING:
    from parafeed.core.dataset import Dataset
    from parafeed.core.stats import StageStats, StatsCollector


class IterationCounter:
    """How many runs of a dataset have started: the k-th is iteration k, which picks its reshuffle order (as the
    k-th ``iter()`` of a tf.data dataset draws the k-th seed from its shuffle's seed generator)."""

    def __init__(self) -> None:
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            self._next += 1
            return self._next - 1

    def give_back(self, iteration: int) -> None:
        """Undo :meth:`take` of ``iteration`` when no later run has started (a restored run goes on with another
        run's iteration, so it must not count as a new one)."""
        with self._lock:
            if self._next == iteration + 1:
                self._next = iteration


class RamBudget:
    """Bytes that one run's AUTOTUNE'd buffers may hold, shared by its steps."""

    def __init__(self, limit: int):
        self.limit = limit
        self._used = 0
        self._lock = threading.Lock()

    def reserve(self, n: int) -> bool:
        """Take ``n`` more bytes if the budget allows; False (and nothing taken) otherwise."""
        with self._lock:
            if self._used + n > self.limit:
                return False
            self._used += n
            return True

    def release(self, n: int) -> None:
        with self._lock:
            self._used = max(0, self._used - n)


@dataclass(frozen=True)
class ResumePoint:
    """Where a resumed iterator begins in its epoch: the samples of the global order and the training steps taken
    before it (counters for ``pf.distribute.save_state``), and how its pass's replica split was dealt: from the start,
    ``start`` samples into the global order, or the ids ``rest`` (an epoch's rest resumed on another number of
    replicas, which began after ``begun`` training steps)."""

    samples: int = 0
    steps: int = 0
    start: int = 0
    rest: Any = None  # an int array: the ids of the epoch's rest, dealt by the split (pf.distribute.resume)
    begun: int = 0

    @property
    def elastic(self) -> bool:
        """Whether the pass's split is not the epoch's own (it begins at ``start`` or deals ``rest``)."""
        return bool(self.start) or self.rest is not None


@dataclass
class RunContext:
    """What all iterators of one run share (see the module docs)."""

    dataset: Dataset  # the dataset iterated
    options: Options
    iteration: int = 0  # which iteration of the dataset this run is
    counter: IterationCounter | None = None  # the dataset's counter, when this run took its iteration from it
    seeds: dict[int, int] = field(default_factory=dict)  # id(random step) -> seed restored from a state
    resumed: ResumePoint = ResumePoint()
    stats: StatsCollector | None = None
    share: tuple[int, int, int] = (1, 0, 0)  # input worker k of K, from block j (``offload``): (K, k, j)
    stopped: threading.Event | None = None  # set when the trainer no longer wants this input worker's run (it ends)
    cores: int = 0  # an input worker's share of its host's cores, where its AUTOTUNE steps start (0: input_cores())
    tracking: Any = None  # a positions.Consumption while a state is restored to find what it consumed (elastic)
    block_shard: Any = None  # an input worker's block shard iterator, once built (``offload``)
    _ram: RamBudget | None = None

    @property
    def input_worker(self) -> bool:
        """Whether this run is an input worker's share of another (``offload``): it runs its steps itself, with no
        worker processes of its own."""
        return self.stopped is not None

    @property
    def start(self) -> int:
        """Samples of the global order this pass's replica split skips (an elastic resume), else 0."""
        return self.resumed.start

    @property
    def ram(self) -> RamBudget:
        """The run's :class:`RamBudget`."""
        if self._ram is None:
            self._ram = RamBudget(self.options.budget)
        return self._ram

    def seed_for(self, node: Dataset) -> int:
        """The seed a random step draws from in this run: restored from a state, else its own."""
        return cast(int, self.seeds.get(id(node), node.seed))  # random steps have a seed (see _random_steps)

    def _random_steps(self, dataset: Dataset | None = None) -> list[Dataset]:
        from parafeed.core import graph

        return graph.find(self.dataset if dataset is None else dataset, lambda n: n.seed is not None)

    def shared(self, dataset: Dataset) -> dict[str, Any]:
        """What another process needs to run ``dataset`` (a part of this run's pipeline) as part of this run: the
        options, the iteration, the seeds of its random steps and the resume point (see :meth:`joined`)."""
        seeds = [self.seed_for(n) for n in self._random_steps(dataset)]
        return {"options": self.options, "iteration": self.iteration, "seeds": seeds, "resumed": self.resumed}

    @classmethod
    def joined(
        cls, dataset: Dataset, shared: dict[str, Any], share: tuple[int, int, int], stopped: threading.Event
    ) -> RunContext:
        """A run of ``dataset`` in another process that goes on as part of the run that :meth:`shared` it, as input
        worker ``share`` (see ``share``), until ``stopped`` is set."""
        cores = int(shared.get("cores", 0))  # (an input worker's share of its host's cores: see ``cores``)
        context = cls(dataset, shared["options"], resumed=shared["resumed"], share=share, stopped=stopped, cores=cores)
        context.restore(shared)
        return context

    def state(self) -> dict[str, Any]:
        """The run's part of the root iterator's state: its iteration and every random step's seed (so that an
        unseeded shuffle orders its later passes the same way after a restore in another process)."""
        return {"iteration": self.iteration, "seeds": [self.seed_for(n) for n in self._random_steps()]}

    def restore(self, state: dict[str, Any]) -> None:
        nodes = self._random_steps()
        if len(nodes) != len(state["seeds"]):
            raise StateError(
                f"set_state(): the state was saved from a pipeline with {len(state['seeds'])} random steps "
                f"(shuffles), this one has {len(nodes)}; restore a state into the same pipeline it was saved from"
            )
        iteration = int(state["iteration"])
        if self.counter is not None and iteration != self.iteration:
            self.counter.give_back(self.iteration)
        self.iteration = iteration
        self.seeds = {id(n): int(s) for n, s in zip(nodes, state["seeds"])}


@dataclass(frozen=True)
class Scope:
    """Where an iterator is being built: its run, the epochs of the ``repeat`` steps above it (outermost first), and
    the iteration it replays when that is not the run's (a cache refilling a pass saved in a state)."""

    run: RunContext | None = None
    epochs: tuple[int, ...] = ()
    replay: int | None = None

    @property
    def iteration(self) -> int:
        if self.replay is not None:
            return self.replay
        return self.run.iteration if self.run is not None else 0

    @property
    def options(self) -> Options:
        return self.run.options if self.run is not None else Options()

    @property
    def top_level(self) -> bool:
        """Whether this is the run's own pass (not a ``repeat``'s later pass nor a replayed one): a resume's
        offsets apply here only."""
        return not self.epochs and self.replay is None


_scope: ContextVar[Scope | None] = ContextVar("parafeed_scope", default=None)
_NO_RUN = Scope()


def current_scope() -> Scope:
    """The scope of the iterator being built (steps that build iterators later keep it for :func:`build_in`)."""
    return _scope.get() or _NO_RUN


@contextlib.contextmanager
def building(scope: Scope) -> Iterator[None]:
    """Build iterators in ``scope`` inside this block."""
    token = _scope.set(scope)
    try:
        yield
    finally:
        _scope.reset(token)


def build_in(scope: Scope, dataset: Dataset, epoch: int | None = None, replay: int | None = None) -> DatasetIterator:
    """``dataset``'s iterator built in ``scope`` (kept from when a step was built), in pass ``epoch`` of a
    ``repeat`` or replaying iteration ``replay``."""
    epochs = scope.epochs if epoch is None else (*scope.epochs, epoch)
    with building(Scope(scope.run, epochs, scope.replay if replay is None else replay)):
        return dataset._iter()


def current_options() -> Options:
    return current_scope().options


def start_cores() -> int:
    """Where AUTOTUNE starts a parallel step of the run being built: an input worker's share of its host's cores
    (``offload``: its worker processes, or its Ray actor's CPUs; ``shared["cores"]``), else
    :func:`~parafeed.core.options.input_cores`."""
    run = current_scope().run
    return run.cores if run is not None and run.cores > 0 else input_cores()


def resolve_deterministic(value: bool | None) -> bool:
    """A step's ``deterministic`` argument, or the pipeline's default when it is None."""
    return current_options().resolve("deterministic") if value is None else value


class DatasetIterator:
    """Run-time state of one node: iterate it with ``next()``; ``close()`` releases threads, processes and files.

    Iterators keep raising ``StopIteration`` once exhausted. The root iterator of a run (the one ``iter(ds)``
    returns) also carries the run: its state includes the run's, and ``stats()`` reports the run's counters.
    """

    stage: StageStats | None = None  # this step's counters, when the run collects stats (set by the collector)
    _run: RunContext | None = None  # set on the root iterator of a run

    def __init__(self, *parents: DatasetIterator):
        self._parents = parents

    @property
    def run(self) -> RunContext | None:
        """The run this is the root iterator of (None for the iterators inside a tree)."""
        return self._run

    def stats(self) -> list[StageStats]:
        """Per-step counters of the running pipeline (with ``Options(stats=True)``), upstream steps first."""
        if self._run is None or self._run.stats is None:
            return []
        return self._run.stats.stages()

    def __iter__(self) -> DatasetIterator:
        return self

    def __next__(self) -> Any:
        raise NotImplementedError

    def get_next(self) -> Any:
        """The next element; at the end an :class:`~parafeed.errors.OutOfRangeError` (tf.data's ``get_next``), where
        ``next()`` raises StopIteration."""
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError("get_next(): End of sequence") from None

    def get_next_as_optional(self) -> Any:
        """The next element as an :class:`~parafeed.values.optional.Optional`, empty at the end."""
        from parafeed.values.optional import Optional

        try:
            return Optional.from_value(next(self))
        except StopIteration:
            spec = self._run.dataset.element_spec if self._run is not None else None
            return Optional.empty(spec)

    @property
    def element_spec(self) -> Any:
        """The spec of the elements of the dataset this run iterates (a root iterator's)."""
        if self._run is None:
            raise AttributeError("element_spec: only the iterator iter(ds) returns knows its dataset's spec")
        return self._run.dataset.element_spec

    def skip(self, n: int) -> int:
        """Move past up to ``n`` elements without returning them; returns how many were skipped.

        Steps that can skip cheaply (a TFRecord reader seeking with its index, ``map`` not running its function on
        skipped elements) override this; the default takes them with ``next``.
        """
        done = 0
        for _ in range(n):
            try:
                next(self)
            except StopIteration:
                break
            done += 1
        return done

    lends = False  # whether it has lend()

    def lend(self) -> Iterator[Any]:
        """(Only where ``lends``.) An iterator over elements this one has ready, the same ones ``next()`` would give
        next: taking from it moves this iterator on as ``next()`` would (its position and state follow), at the
        speed of a plain Python iterator. A step reading this iterator takes from the lent one while it lasts, then
        calls ``next()`` and borrows again; it stops using it after any other call on this iterator (``skip``,
        ``set_state``, ``close``)."""
        raise NotImplementedError

    reads_files = False  # whether it reads files: flat_map then opens the input after it ahead (open_ahead)

    def open_ahead(self) -> None:
        """Start opening the files this iterator reads before its first element is asked for (remote files: their
        first requests in flight). ``flat_map`` calls it on the input after the one it reads."""

    # ------------------------------------------------------------------ checkpointing

    def get_state(self) -> dict[str, Any]:
        """This iterator's position as a small JSON-serialisable dict: restore it with ``set_state``.

        The state holds positions, indices, seeds and RNG states, never element data (except ``unique``'s seen
        values). Restore it into a new iterator of the same pipeline, in this process or another one; taking a
        state changes nothing in this iterator or any other.

        Example:
            >>> it = iter(ds); next(it); state = it.get_state()
            >>> it2 = iter(ds); it2.set_state(state)  # it2 goes on where `it` stood
        """
        state = {"step": self._step_name(), **self._get_state()}
        if self._run is not None:
            state["run"] = self._run.state()
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        """Move this iterator to a position saved by ``get_state`` (on a new iterator, before taking elements)."""
        if not isinstance(state, dict) or state.get("step") != self._step_name():
            got = state.get("step") if isinstance(state, dict) else type(state).__name__
            raise StateError(
                f"set_state(): the state was saved by a {got!r} step where this pipeline has {self._step_name()!r}; "
                "restore a state into the same pipeline it was saved from"
            )
        if self._run is not None and "run" in state:
            self._run.restore(state["run"])
        self._set_state(state)

    def _step_name(self) -> str:
        return type(self).__name__.strip("_").removesuffix("Iterator")

    def _steps_forward(self, position: int, at: int) -> int:
        """How many elements a step that cannot seek takes again to get from ``at`` to a restored ``position``."""
        if position < at:
            raise StateError(
                f"set_state(): the {self._step_name()} step cannot go back (from element {at} to {position}); "
                "restore the state into a new iterator (iter(ds))"
            )
        return position - at

    def _get_state(self) -> dict[str, Any]:
        raise StateError(f"get_state(): the {self._step_name()} step cannot save its position")

    def _set_state(self, state: dict[str, Any]) -> None:
        raise StateError(f"set_state(): the {self._step_name()} step cannot restore a position")

    def close(self) -> None:
        """Release resources held by this iterator and its parents; idempotent."""
        for parent in self._parents:
            parent.close()

    def __enter__(self) -> DatasetIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def take(it: DatasetIterator, n: int) -> list[Any]:
    """Up to ``n`` elements of ``it`` (fewer at its end), as ``list(islice(it, n))`` gives them, taken from what it
    lends while it lends."""
    if not it.lends:
        return list(islice(it, n))
    got = list(islice(it.lend(), n))
    while len(got) < n:
        try:
            got.append(next(it))
        except StopIteration:
            break
        if it.lends:
            got += islice(it.lend(), n - len(got))
    return got


class PositionIterator(DatasetIterator):
    """The items ``0 .. length - 1`` of a source reached by position. State: ``{"index"}``, the next item's; skipping
    and restoring move the index without reading. Subclasses give ``__next__``, ``_tell`` and ``_seek`` where the
    position is not ``_index``."""

    def __init__(self, length: int, what: str):
        super().__init__()
        self._length = length
        self._what = what  # (for errors) the source and its items: "x.array_record has 10 records"
        self._index = 0

    def _tell(self) -> int:
        return self._index

    def _seek(self, index: int) -> None:
        self._index = index

    def skip(self, n: int) -> int:
        at = self._tell()
        done = max(0, min(n, self._length - at))
        self._seek(at + done)
        return done

    def _get_state(self) -> dict[str, Any]:
        return {"index": self._tell()}

    def _set_state(self, state: dict[str, Any]) -> None:
        index = int(state["index"])
        if not 0 <= index <= self._length:
            raise StateError(f"set_state(): {self._what}, no position {index}")
        self._seek(index)


class ChunkIterator(PositionIterator):
    """A :class:`PositionIterator` that reads ``chunk`` items at a time with ``_read(start, end)`` (a list), and lends
    the rest of its chunk. A chunk that cannot be read (DataLossError) is passed after its error, so that
    ``ignore_errors()`` goes on."""

    lends = True

    def __init__(self, length: int, what: str, chunk: int):
        super().__init__(length, what)
        self._chunk_size = chunk
        self._chunk: list[Any] = []  # items _index, _index + 1, ... (_index is the chunk's first item's position)
        self._rest: Iterator[Any] = iter(self._chunk)  # what is left of it

    def _read(self, start: int, end: int) -> list[Any]:
        raise NotImplementedError

    def __next__(self) -> Any:
        try:
            return next(self._rest)
        except StopIteration:
            pass
        start = self._tell()
        if start >= self._length:
            raise StopIteration
        end = min(start + self._chunk_size, self._length)
        try:
            chunk = self._read(start, end)
        except DataLossError:
            self._seek(end)
            raise
        self._index, self._chunk, self._rest = start, chunk, iter(chunk)
        return next(self._rest)

    def lend(self) -> Iterator[Any]:
        return self._rest

    def _tell(self) -> int:
        return self._index + len(self._chunk) - operator.length_hint(self._rest)

    def _seek(self, index: int) -> None:
        self._index, self._chunk = index, []
        self._rest = iter(self._chunk)


class ElementView(DatasetIterator):
    """The run's root iterator with its elements converted on the way out: ``iter(ds)`` hands them out as Tensors
    (:func:`eager`), ``as_numpy_iterator()`` with SparseTensors as dense arrays. Position, state and everything else
    are the root's."""

    def __init__(self, root: DatasetIterator, convert: Callable[[Any], Any]):
        super().__init__(root)
        self._root = root
        self._run = root.run
        self._convert = convert

    def __next__(self) -> Any:
        return self._convert(next(self._root))

    def skip(self, n: int) -> int:
        return self._root.skip(n)

    def get_state(self) -> dict[str, Any]:
        return self._root.get_state()

    def set_state(self, state: dict[str, Any]) -> None:
        self._root.set_state(state)

    def close(self) -> None:
        self._root.close()

    def __getattr__(self, name: str) -> Any:  # (what the root step's iterator has besides: an offload's workers)
        root = self.__dict__.get("_root")
        if root is None:  # (not set yet, as while unpickling: no endless lookup through _root)
            raise AttributeError(name)
        return getattr(root, name)


def eager(element: Any) -> Any:
    """``element`` as TensorFlow's eager iteration hands it out: arrays and NumPy scalars as
    :class:`~parafeed.values.tensor.Tensor` views (no copy), a scalar string as a
    :class:`~parafeed.values.tensor.ScalarString`, SparseTensors and RaggedTensors with Tensor components, in the same
    structure. ``x.numpy()`` gives the plain value back."""
    kind = type(element)
    if kind is np.ndarray:  # (the common cases first: this runs on every element a loop takes)
        return element.view(Tensor)
    if kind is tuple:
        return tuple([eager(v) for v in element])
    if kind is dict:
        return {k: eager(v) for k, v in element.items()}
    if kind is bytes:
        return ScalarString(element)
    if isinstance(element, np.generic):  # (a NumPy scalar)
        return np.asarray(element).view(Tensor)
    if kind is SparseTensor:
        parts = (element.indices, element.values, element.dense_shape)
        return SparseTensor._trusted(*(p.view(Tensor) for p in parts))
    if kind is RaggedTensor:
        return RaggedTensor(eager(element.values), element.row_splits.view(Tensor))
    if isinstance(element, np.ndarray):
        return ScalarString(element[()]) if element.dtype == object and element.ndim == 0 else as_tensor(element)
    if isinstance(element, (tuple, dict)):  # (named tuples, other mappings)
        return map_structure(eager, element)
    return element


class Densify:
    """``as_numpy_iterator()``'s conversion: every SparseTensor as its dense array (whether there are any is read
    off the first element when the spec is not static: ``sparse`` None)."""

    def __init__(self, sparse: bool | None):
        self._sparse = sparse

    def __call__(self, element: Any) -> Any:
        if self._sparse is None:
            self._sparse = any(type(leaf) is SparseTensor for leaf in flatten(element))
        return densify(element) if self._sparse else element

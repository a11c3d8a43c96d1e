"""What steps use to save their positions: positions of iterators that read ahead, buffers re-read on restore.

Iterators save their position with ``get_state()`` (see :class:`parafeed.core.iterator.DatasetIterator`). Steps that
read ahead on threads (``prefetch``, parallel ``map`` and ``interleave``) save the state their input had *before*
a hand-over plus how many of its elements the consumer took (a :func:`position`). Steps that buffer elements
(``shuffle``, ``group_by_window``, ``window``) save the input indices of what they hold and re-read those elements
on restore from a saved input state (:class:`Snapshots`), so no element data goes into a state.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from parafeed.core import graph
from parafeed.core.iterator import Scope, build_in, current_options
from parafeed.errors import StateError

if TYPE_CHECKING:
    from parafeed.core.dataset import Dataset


Mark = tuple[dict[str, Any] | None, BaseException | None, int]
"""A :class:`PositionMarks` mark: an input's state (None, with the error, where it cannot save one) and the elements it
produced since."""


def position(at: dict[str, Any] | None, skip: int, error: BaseException | None = None) -> dict[str, Any]:
    """A position taken after ``skip`` elements from the input state ``at``."""
    if at is None:
        raise StateError(f"get_state(): the input of this step cannot save its position: {error}") from error
    return {"at": at, "skip": skip}


def seek(it: Any, pos: dict[str, Any]) -> None:
    """Move a new iterator to a :func:`position`."""
    it.set_state(pos["at"])
    skip = int(pos["skip"])
    if skip and it.skip(skip) != skip:
        raise StateError(f"set_state(): the input ended before the saved position ({skip} elements past a state)")


def element_at(scope: Scope, dataset: Dataset, state: dict[str, Any], epoch: int | None = None) -> Any:
    """The element of ``dataset`` (pass ``epoch`` of a repeat) at a saved position: read again by a new iterator."""
    it = build_in(scope, dataset, epoch)
    try:
        it.set_state(state)
        return next(it)
    finally:
        it.close()


def snapshot(it: Any) -> tuple[dict[str, Any] | None, BaseException | None]:
    """``(it.get_state(), None)``, or ``(None, error)`` where the input cannot save its position: a pipeline that is
    never checkpointed must not fail because one of its steps could not be."""
    try:
        return it.get_state(), None
    except StateError as err:
        return None, err


def order_fixed(root: Dataset) -> bool:
    """Whether the pipeline up to ``root`` gives its elements in an order fixed by its steps' states: every step's
    ``order_fixed``, and deterministic options. Read-ahead steps then mark positions cheaply
    (:class:`PositionMarks`)."""
    return current_options().resolve("deterministic") and all(n.order_fixed for n in graph.walk(root))


SNAPSHOT_SECONDS = 0.05  # a read-ahead step takes its input's state at most this often (see PositionMarks)


class PositionMarks:
    """The input positions a read-ahead step pairs with its hand-overs, taken cheaply.

    Taking an input's state for every hand-over would cost a ``get_state()`` of the whole upstream tree each time,
    checkpointed or not. Instead a state is taken at most every :data:`SNAPSHOT_SECONDS`, and a hand-over is
    marked with the last state plus the number of elements produced since (a :func:`position` skips them on
    restore): restoring re-reads at most that much work, and a pipeline nobody checkpoints pays almost nothing.

    That holds only where the input's order follows from its state (``throttled``, see
    :func:`order_fixed`); otherwise a state is taken for every hand-over, as a skip could not replay it.
    """

    def __init__(self, source: Any, throttled: bool = True):
        self._source = source
        self._every = SNAPSHOT_SECONDS if throttled else 0.0  # 0: a state for every hand-over
        self._state = snapshot(source)
        self._since = 0
        self._taken_at = time.perf_counter()

    @property
    def first(self) -> tuple[dict[str, Any] | None, BaseException | None]:
        """The source's position as it was when the marks began: ``(state, error)``."""
        return self._state

    def mark(self, produced: int) -> Mark:
        """The position before the next hand-over, ``produced`` elements after the last one's mark:
        ``(state, error, elements produced since that state)``."""
        since = self._since = self._since + produced
        if since and (not self._every or time.perf_counter() - self._taken_at >= self._every):
            return self.reset()
        return (*self._state, since)

    def reset(self) -> Mark:
        """Take the source's state now (after an error, which a restore cannot skip over): ``(state, error, 0)``."""
        if self._state[0] is not None:
            self._state = snapshot(self._source)
        self._since = 0
        if self._every:
            self._taken_at = time.perf_counter()
        return (*self._state, 0)


class Snapshots:
    """Input states kept every ``every`` elements, so that elements still buffered can be re-read on restore.

    The owner numbers the elements it pulls (0, 1, ...) and calls :meth:`note` after each pull; it passes the
    smallest index it still holds so that states older than needed are dropped.
    """

    def __init__(self, parent: Any, every: int):
        self._parent = parent
        self._every = max(1, every)
        state, self._error = snapshot(parent)
        self._kept: deque[tuple[int, dict[str, Any] | None]] = deque([(0, state)])

    def note(self, pulled: int, oldest: Callable[[], int]) -> None:
        """Called with the number of elements pulled so far; keeps a state every ``every`` elements."""
        if pulled % self._every or self._error is not None:
            return
        state, self._error = snapshot(self._parent)
        self._kept.append((pulled, state))
        low = oldest()
        while len(self._kept) > 1 and self._kept[1][0] <= low:
            self._kept.popleft()

    def state(self, held: list[int], pulled: int) -> dict[str, Any]:
        """A state to re-read the elements at indices ``held`` from, and to go on after ``pulled`` elements."""
        if self._error is not None:
            position(None, 0, self._error)
        low = min(held, default=pulled)
        start, state = next((i, s) for i, s in reversed(self._kept) if i <= low)
        return {"from": start, "at": state, "pulled": pulled}

    def restore(self, state: dict[str, Any], held: list[int]) -> dict[int, Any]:
        """Re-read the elements at indices ``held`` and leave the input after ``state["pulled"]`` elements."""
        start, pulled = int(state["from"]), int(state["pulled"])
        self._parent.set_state(state["at"])
        self._kept = deque([(start, state["at"])])
        found: dict[int, Any] = {}
        here = start
        for i in sorted(set(held)):
            if i < here or self._parent.skip(i - here) != i - here:
                raise StateError("set_state(): the input ended before a buffered element could be read again")
            found[i] = next(self._parent)
            here = i + 1
        if pulled > here and self._parent.skip(pulled - here) != pulled - here:
            raise StateError("set_state(): the input ended before the saved position")
        return found


class Consumption:
    """While a replica's saved state is restored to find which of its split's elements it had consumed (an elastic
    resume, :mod:`parafeed.distribute.elastic`): the iterators of the steps that drop or hold elements, by node, and
    the ids of the replica's share."""

    def __init__(self) -> None:
        self.iterators: dict[int, Any] = {}  # id(node) -> its iterator
        self.share: Any = None  # (ids, ranks) of the replica's share, set by the split's iterator

    def __getitem__(self, node: Dataset) -> Any:
        return self.iterators[id(node)]


def tracking() -> Consumption | None:
    """The :class:`Consumption` being recorded in the current run, if any."""
    from parafeed.core.iterator import current_scope

    run = current_scope().run
    return None if run is None else run.tracking

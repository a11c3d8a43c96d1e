"""Checkpoint helpers: positions of iterators that read ahead, buffers re-read on restore, and a restore check.

Iterators save their position with ``get_state()`` (see :class:`parafeed.iterator.DatasetIterator`). Steps that
read ahead on threads (``prefetch``, parallel ``map`` and ``interleave``) save the state their input had *before*
a hand-over plus how many of its elements the consumer took (a :func:`position`). Steps that buffer elements
(``shuffle``, ``group_by_window``, ``window``) save the input indices of what they hold and re-read those elements
on restore from a saved input state (:class:`Snapshots`), so no element data goes into a state.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

from parafeed.errors import StateError


def position(at: dict | None, skip: int, error: BaseException | None = None) -> dict:
    """A position taken after ``skip`` elements from the input state ``at``."""
    if at is None:
        raise StateError(f"get_state(): the input of this step cannot save its position: {error}") from error
    return {"at": at, "skip": skip}


def seek(it: Any, pos: dict) -> None:
    """Move a new iterator to a :func:`position`."""
    it.set_state(pos["at"])
    skip = int(pos["skip"])
    if skip and it.skip(skip) != skip:
        raise StateError(f"set_state(): the input ended before the saved position ({skip} elements past a state)")


def snapshot(it: Any) -> tuple[dict | None, BaseException | None]:
    """``(it.get_state(), None)``, or ``(None, error)`` where the input cannot save its position: a pipeline that is
    never checkpointed must not fail because one of its steps could not be."""
    try:
        return it.get_state(), None
    except StateError as err:
        return None, err


class Snapshots:
    """Input states kept every ``every`` elements, so that elements still buffered can be re-read on restore.

    The owner numbers the elements it pulls (0, 1, ...) and calls :meth:`note` after each pull; it passes the
    smallest index it still holds so that states older than needed are dropped.
    """

    def __init__(self, parent: Any, every: int):
        self._parent = parent
        self._every = max(1, every)
        state, self._error = snapshot(parent)
        self._kept: deque = deque([(0, state)])

    def note(self, pulled: int, oldest: Callable[[], int]) -> None:
        """Called with the number of elements pulled so far; keeps a state every ``every`` elements."""
        if pulled % self._every or self._error is not None:
            return
        state, self._error = snapshot(self._parent)
        self._kept.append((pulled, state))
        low = oldest()
        while len(self._kept) > 1 and self._kept[1][0] <= low:
            self._kept.popleft()

    def state(self, held: list[int], pulled: int) -> dict:
        """A state to re-read the elements at indices ``held`` from, and to go on after ``pulled`` elements."""
        if self._error is not None:
            position(None, 0, self._error)
        low = min(held, default=pulled)
        start, state = next((i, s) for i, s in reversed(self._kept) if i <= low)
        return {"from": start, "at": state, "pulled": pulled}

    def restore(self, state: dict, held: list[int]) -> dict[int, Any]:
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


def _shuffles(dataset: Any) -> list:
    """The shuffle steps of a pipeline, in a fixed order (depth first from the last step)."""
    from parafeed.ops.shuffle import ShuffleDataset

    found, seen, todo = [], set(), [dataset]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ShuffleDataset):
            found.append(node)
        todo.extend(reversed(node._parents))
    return found


def with_seeds(pipeline: Any, state: dict) -> dict:
    """A root iterator's state plus every shuffle's seed and iteration number, so that shuffles that have not
    begun yet (in a ``repeat``'s next pass) shuffle as they would have, even without seeds."""
    if pipeline is None or pipeline.dataset is None:
        return state
    return {
        **state,
        "shuffles": [[s._seed, s.iteration_in(pipeline), s.iterations] for s in _shuffles(pipeline.dataset)],
    }


def restore_seeds(pipeline: Any, state: dict) -> None:
    if pipeline is None or pipeline.dataset is None or "shuffles" not in state:
        return
    nodes = _shuffles(pipeline.dataset)
    if len(nodes) != len(state["shuffles"]):
        raise StateError(
            f"set_state(): the state was saved from a pipeline with {len(state['shuffles'])} shuffle steps, this one "
            f"has {len(nodes)}; restore a state into the same pipeline it was saved from"
        )
    for node, (seed, iteration, iterations) in zip(nodes, state["shuffles"]):
        node._seed = int(seed)
        node.iterations = max(node.iterations, int(iterations))
        pipeline.iterations[id(node)] = int(iteration)


def next_seeds(dataset: Any) -> list:
    """Every shuffle's seed and count of iterators so far: saved at an epoch's end, so that the next epoch (a new
    iterator) shuffles as it would have in the run that saved them."""
    return [[s._seed, s.iterations] for s in _shuffles(dataset)]


def restore_next_seeds(dataset: Any, seeds: list) -> None:
    nodes = _shuffles(dataset)
    if len(nodes) != len(seeds):
        raise StateError(f"restore: the state has {len(seeds)} shuffle steps, this pipeline {len(nodes)}")
    for node, (seed, iterations) in zip(nodes, seeds):
        node._seed, node.iterations = int(seed), int(iterations)


def check_restores(dataset: Any, stops: list[int] | None = None, limit: int = 10_000) -> int:
    """Check that ``dataset`` resumes exactly: for each stop, the elements after restoring a state saved (and sent
    through JSON) there equal those of an uninterrupted pass. Returns the number of elements compared.

    Raises AssertionError naming the first stop and element that differ.

    Example:
        >>> pf.checkpoint.check_restores(pf.Dataset.range(100).shuffle(10, seed=1).batch(8), stops=[0, 3, 7])
    """
    from parafeed.structure import flatten

    wanted = None if stops is None else set(stops)
    expected, states = [], {}
    it = iter(dataset)
    try:  # one pass that saves states on the way (taking a state must not disturb the iteration)
        while len(expected) < limit:
            if wanted is None or len(expected) in wanted:
                states[len(expected)] = json.loads(json.dumps(it.get_state()))
            try:
                expected.append(next(it))
            except StopIteration:
                break
        else:
            if wanted is None or len(expected) in wanted:
                states[len(expected)] = json.loads(json.dumps(it.get_state()))
    finally:
        it.close()
    compared = 0
    for stop, state in sorted(states.items()):
        resumed = iter(dataset)
        try:
            resumed.set_state(state)
            got = [x for _, x in zip(range(len(expected) - stop), resumed)]
            if len(expected) < limit and next(resumed, _END) is not _END:
                raise AssertionError(f"restored at {stop}: more elements followed than the {len(expected)} expected")
        finally:
            resumed.close()
        if len(got) != len(expected) - stop:
            raise AssertionError(f"restored at {stop}: {len(got)} elements followed, expected {len(expected) - stop}")
        for k, (a, b) in enumerate(zip(got, expected[stop:])):
            fa, fb = flatten(a), flatten(b)
            if len(fa) != len(fb) or any(not _same(x, y) for x, y in zip(fa, fb)):
                raise AssertionError(f"restored at {stop}: element {stop + k} differs: {a!r} != {b!r}")
            compared += 1
    return compared


_END = object()


def _same(a: Any, b: Any) -> bool:
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))

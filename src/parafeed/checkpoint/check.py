"""``check_restores``: check that a pipeline resumes exactly from a state saved at any position."""

from __future__ import annotations

import json
from typing import Any


def check_restores(dataset: Any, stops: list[int] | None = None, limit: int = 10_000) -> int:
    """Check that ``dataset`` resumes exactly: for each stop, the elements after restoring a state saved (and sent
    through JSON) there equal those of an uninterrupted pass. Returns the number of elements compared.

    Raises AssertionError naming the first stop and element that differ.

    Example:
        >>> pf.checkpoint.check_restores(pf.Dataset.range(100).shuffle(10, seed=1).batch(8), stops=[0, 3, 7])

    The reference pass is one iteration of ``dataset``; the restored iterators go on with its run and do not count
    as new iterations.
    """
    from parafeed.values.structure import flatten

    wanted = None if stops is None else set(stops)
    expected: list[Any] = []
    states: dict[int, Any] = {}
    it = dataset.as_numpy_iterator()
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
        resumed = dataset.as_numpy_iterator()
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

    if hasattr(a, "_leaf_spec") or hasattr(b, "_leaf_spec"):  # sparse and ragged leaves compare whole
        return type(a) is type(b) and bool(a == b)
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))

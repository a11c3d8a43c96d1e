"""Resume of a data-parallel run: exact on the same replicas, elastic (no sample repeated or skipped) on others."""

import json

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError, StateError
from tests.adapters.data import write_files

pytestmark = pytest.mark.timeout(120)


def _arrays(n, start=0, replicas=2, replica=0):
    x = np.arange(n)
    return (
        pf.Dataset.from_tensor_slices((x, x % 5))
        .shuffle(16, seed=7)
        .distribute(replicas, replica, policy="DATA", start=start)
        .map(lambda v, y: (v, y))
        .batch(4)
        .prefetch(2)
        .equal_steps()
    )


def _real(batch):
    x, _, w = batch
    return [int(v) for v, wt in zip(x, w) if wt > 0]


@pytest.mark.parametrize(("before", "after", "steps"), [(2, 3, 5), (4, 2, 3), (3, 1, 4), (2, 2, 6)])
def test_elastic_resume_finishes_the_epoch_with_every_sample_once(before, after, steps):
    n = 103
    seen, states = [], []
    for r in range(before):
        it = iter(_arrays(n, replicas=before, replica=r))
        for _ in range(steps):
            seen += _real(next(it))
        states.append(json.loads(json.dumps(pf.distribute.save_state(it, steps))))
        it.close()
    assert len({s["samples"] for s in states}) == 1 and states[0]["samples"] == steps * 4 * before
    resumed_steps = set()
    for r in range(after):
        it = pf.distribute.resume(_arrays(n, start=states[0]["samples"], replicas=after, replica=r), states[r % before])
        batches = list(it)
        resumed_steps.add(len(batches))
        for batch in batches:
            seen += _real(batch)
    assert sorted(seen) == list(range(n))  # every sample exactly once
    assert len(resumed_steps) == 1  # equal steps on the new replicas too


def test_elastic_resume_by_record_on_files(tmp_path):
    files = write_files(tmp_path, [30, 7, 19])
    total = 56

    def pipeline(replicas, replica, start=0):
        ds = pf.TFRecordDataset(files).distribute(replicas, replica, policy="RECORD", start=start)
        return ds.batch(3)

    seen = []
    its = [iter(pipeline(3, r)) for r in range(3)]
    for it in its:
        for _ in range(4):
            seen += list(next(it))
    state = pf.distribute.save_state(its[0], 4)
    for it in its:
        it.close()
    for r in range(2):
        for batch in pf.distribute.resume(pipeline(2, r, start=state["samples"]), state):
            seen += list(batch)
    assert len(seen) == total and len(set(seen)) == total


def test_same_replicas_resume_exactly():
    it = iter(_arrays(50, replicas=2, replica=1))
    for _ in range(3):
        next(it)
    state = pf.distribute.save_state(it, 3)
    rest = [_real(b) for b in it]
    resumed = pf.distribute.resume(_arrays(50, replicas=2, replica=1), state)
    assert [_real(b) for b in resumed] == rest


def test_elastic_resume_errors_name_the_fix():
    it = iter(_arrays(50, replicas=2, replica=0))
    next(it)
    state = pf.distribute.save_state(it, 1)
    with pytest.raises(StateError, match=r"distribute\(\.\.\., start=8\)"):
        pf.distribute.resume(_arrays(50, replicas=3, replica=0), state)
    with pytest.raises(StateError, match="starts at sample 4"):
        pf.distribute.resume(_arrays(50, start=4, replicas=3, replica=0), state)
    shuffled_after = pf.Dataset.range(50).distribute(3, 0, policy="DATA", start=8).shuffle(4).batch(4)
    with pytest.raises(StateError, match="move it before distribute"):
        pf.distribute.resume(shuffled_after, state)
    with pytest.raises(InvalidArgumentError, match="RECORD or DATA"):
        pf.Dataset.range(50).distribute(2, 0, balance="labels", label_fn=lambda x: x % 2, start=4)

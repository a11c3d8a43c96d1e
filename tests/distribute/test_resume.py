"""Resume of a data-parallel run: exact on the same replica, elastic (no sample repeated or skipped) on others, and
whole epochs again after the resumed one."""

import json

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import StateError
from tests.adapters.data import write_files

pytestmark = pytest.mark.timeout(120)


def _arrays(n, replicas=2, replica=0):
    x = np.arange(n)
    return (
        pf.Dataset.from_tensor_slices((x, x % 5))
        .shuffle(16, seed=7)
        .distribute(replicas, replica, policy="DATA")
        .map(lambda v, y: (v, y))
        .batch(4)
        .prefetch(2)
        .equal_steps()
    )


def _real(batch):
    x, w = batch[0], batch[-1]
    return [int(v) for v, wt in zip(x, w) if wt > 0]


def _saved(make, replicas, steps):
    """Every replica of ``make(replicas, r)`` takes ``steps`` batches; returns what they took and their states."""
    seen, states = [], []
    for r in range(replicas):
        it = iter(make(replicas, r))
        for _ in range(steps):
            seen += _real(next(it))
        states.append(json.loads(json.dumps(pf.distribute.save_state(it, steps))))
        it.close()
    return seen, states


@pytest.mark.parametrize(("before", "after", "steps"), [(2, 3, 5), (4, 2, 3), (3, 1, 4), (2, 2, 6)])
def test_elastic_resume_finishes_the_epoch_with_every_sample_once(before, after, steps):
    n = 103
    seen, states = _saved(lambda k, r: _arrays(n, k, r), before, steps)
    assert len({s["samples"] for s in states}) == 1 and states[0]["samples"] == steps * 4 * before
    resumed_steps = set()
    for r in range(after):  # replica r resumes from any replica's state: the global position is the same
        it = pf.distribute.resume(_arrays(n, after, r), states[(r + 1) % before])
        batches = list(it)
        resumed_steps.add(len(batches))
        for batch in batches:
            seen += _real(batch)
    assert sorted(seen) == list(range(n))  # every sample exactly once
    assert len(resumed_steps) == 1  # equal steps on the new replicas too


def test_the_pass_after_an_elastic_resume_is_whole_again():
    """Bug: the resume offset applied to every later pass of the resumed pipelines (80 of 100 samples, silently)."""

    def make(k, r):
        return pf.Dataset.range(100).shuffle(100, seed=1).distribute(k, r, policy="DATA").batch(5)

    _, states = _saved(lambda k, r: make(k, r).equal_steps(), 4, 1)
    pipelines = [make(2, r).equal_steps() for r in range(2)]
    resumed = [x for p in pipelines for b in pf.distribute.resume(p, states[0]) for x in _real(b)]
    assert len(resumed) == 80 and len(set(resumed)) == 80
    for epoch in range(2):  # the same two pipelines, iterated again: whole epochs
        whole = [x for p in pipelines for b in p for x in _real(b)]
        assert sorted(whole) == list(range(100)), epoch
    # the epoch after the resumed one shuffles as the uninterrupted run's epoch 1 did
    epochs = [pf.checkpoint.Epochs(p, states[0]) for p in pipelines]
    for e in epochs:
        list(e.next())
    after = [[x for b in e.next() for x in _real(b)] for e in epochs]
    uninterrupted = make(1, 0)
    list(uninterrupted)
    order = [int(x) for b in uninterrupted for x in b]  # the second iteration: epoch 1
    assert after[0] == order[0::2][: len(after[0])] and after[1] == order[1::2][: len(after[1])]


def test_record_split_under_a_seeded_shuffle_takes_one_global_order(tmp_path):
    """Bug: RECORD pushed the split under the shuffle, so every replica shuffled its own share with the same seed."""
    files = write_files(tmp_path, [30, 7, 19, 44])

    def make(k, r, **kwargs):
        return pf.TFRecordDataset(files, **kwargs).shuffle(25, seed=3).distribute(k, r, policy="RECORD")

    for kwargs in ({}, {"num_parallel_reads": 2}):
        whole = [bytes(x) for x in pf.TFRecordDataset(files, **kwargs).shuffle(25, seed=3)]
        for k in (1, 3, 4):
            shares = [[bytes(x) for x in make(k, r, **kwargs)] for r in range(k)]
            for r in range(k):
                assert shares[r] == whole[r::k], (kwargs, k, r)
            assert make(k, 0, **kwargs).plan.global_order
    # each epoch reshuffles, the same way on every replica
    ds = [make(2, r) for r in range(2)]
    one, two = ([bytes(x) for x in d] for d in ds), ([bytes(x) for x in d] for d in ds)
    reference = pf.TFRecordDataset(files).shuffle(25, seed=3)
    first, second = [bytes(x) for x in reference], [bytes(x) for x in reference]
    assert first != second
    assert next(one) == first[0::2] and next(one) == first[1::2]
    assert next(two) == second[0::2] and next(two) == second[1::2]


def test_elastic_resume_by_record_under_a_seeded_shuffle(tmp_path):
    files = write_files(tmp_path, [30, 7, 19])
    total = 56

    def pipeline(replicas, replica):
        ds = pf.TFRecordDataset(files).shuffle(16, seed=5).distribute(replicas, replica, policy="RECORD")
        return ds.batch(3)

    seen = []
    its = [iter(pipeline(3, r)) for r in range(3)]
    for it in its:
        for _ in range(4):
            seen += next(it).numpy().tolist()
    state = pf.distribute.save_state(its[0], 4)
    for it in its:
        it.close()
    for r in range(2):
        for batch in pf.distribute.resume(pipeline(2, r), state):
            seen += batch.numpy().tolist()
    assert len(seen) == total and len(set(seen)) == total


def test_a_data_split_of_shuffled_files_counts_its_steps(tmp_path):
    """Bug: equal_steps() asked for steps= after a shuffle of a TFRecordDataset split by DATA."""
    files = write_files(tmp_path, [30, 7, 19])
    ds = pf.TFRecordDataset(files).shuffle(10, seed=1).distribute(3, 2, policy="DATA").map(len).batch(4)
    assert pf.distribute.replica_counts(ds) == [5, 5, 5]  # 19, 19, 18 records
    assert len(list(ds.equal_steps())) == 5


def test_same_replicas_resume_exactly():
    it = iter(_arrays(50, replicas=2, replica=1))
    for _ in range(3):
        next(it)
    state = pf.distribute.save_state(it, 3)
    rest = [_real(b) for b in it]
    resumed = pf.distribute.resume(_arrays(50, replicas=2, replica=1), state)
    assert [_real(b) for b in resumed] == rest
    again = pf.distribute.save_state(resumed, len(rest))  # counted from the epoch's start
    assert again["steps"] == 3 + len(rest) and again["samples"] == state["samples"] + len(rest) * 8


def test_resume_refusals_name_the_fix():
    it = iter(_arrays(50, replicas=2, replica=0))
    next(it)
    state = pf.distribute.save_state(it, 1)
    it.close()
    shuffled_after = pf.Dataset.range(50).distribute(3, 0, policy="DATA").shuffle(4, seed=1).batch(4)
    with pytest.raises(StateError, match="move it before distribute"):
        pf.distribute.resume(shuffled_after, state)
    unseeded = pf.Dataset.range(50).shuffle(8).distribute(3, 0, policy="DATA").batch(4)
    with pytest.raises(StateError, match="seeded"):
        pf.distribute.resume(unseeded, state)
    balanced = pf.Dataset.from_tensor_slices(np.arange(50)).distribute(3, 0, balance="labels", label_fn=lambda x: x % 2)
    with pytest.raises(StateError, match="LABELS split"):
        pf.distribute.resume(balanced.batch(4), state)

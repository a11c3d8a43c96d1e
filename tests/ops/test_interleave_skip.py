"""``skip`` on the interleave: whole rounds skipped by the inputs' own skips (a TFRecord reader seeks), exactly the
elements ``next`` would have given, across inputs that end mid-round, refills, short and empty inputs; a state taken
after a skip restores."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.ops.interleave_cycle import InterleaveIterator

pytestmark = pytest.mark.timeout(120)


def interleaved(counts, cycle, block):
    """Input ``k`` is the range of its ``counts[k]`` numbers (all numbers distinct), interleaved."""
    starts = [sum(counts[:k]) for k in range(len(counts))]
    inputs = pf.Dataset.from_tensor_slices([[s, c] for s, c in zip(starts, counts)] or [[0, 0]]).take(len(counts))
    return inputs.interleave(lambda sc: pf.Dataset.range(sc[0], sc[0] + sc[1]), cycle_length=cycle,
                             block_length=block)  # fmt: skip


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    counts=st.lists(st.integers(0, 9), max_size=8),
    cycle=st.integers(1, 4),
    block=st.integers(1, 3),
    data=st.data(),
)
def test_skip_gives_what_next_would_have_and_a_state_after_it_restores(counts, cycle, block, data):
    ds = interleaved(counts, cycle, block)
    everything = [int(x) for x in ds]
    before = data.draw(st.integers(0, len(everything)))
    n = data.draw(st.integers(0, len(everything) + 3))
    it = iter(ds)
    assert [int(next(it)) for _ in range(before)] == everything[:before]
    skipped = it.skip(n)
    assert skipped == min(n, len(everything) - before)
    state = json.loads(json.dumps(it.get_state()))
    assert [int(x) for x in it] == everything[before + skipped :]
    again = iter(ds)
    again.set_state(state)
    assert [int(x) for x in again] == everything[before + skipped :]


def test_whole_rounds_are_skipped_by_the_inputs_not_element_by_element(monkeypatch):
    want = [int(x) for x in interleaved([1000, 1000, 3, 1000], cycle=2, block=2)][2500]
    taken = []
    original = InterleaveIterator.__next__

    def counting(self):
        taken.append(1)
        return original(self)

    monkeypatch.setattr(InterleaveIterator, "__next__", counting)
    it = iter(interleaved([1000, 1000, 3, 1000], cycle=2, block=2))
    assert it.skip(2500) == 2500 and int(next(it)) == want
    assert len(taken) < 50  # (the skip, then one element: not 2,500 calls)

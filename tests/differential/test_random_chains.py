"""Random chains of dataset steps through tf.data and through parafeed, compared element by element.

Hypothesis draws a source (``range`` with any start, stop and step, or ``from_tensor_slices``) and up to five steps,
each one that suits the elements at that point (scalars, vectors or matrices of int64): batching and unbatching,
windows, grouping, interleaving, filtering, skipping and taking, sharding, repeating, zipping and concatenating. Both
libraries must give the same elements (dtype, shape, value) and the same ``cardinality()`` where both know it
(parafeed reads no shape off a function, so a cardinality that needs one is unknown: docs/porting.md), or both fail.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.differential.libs import pf_lib, tf_lib
from tests.helpers import assert_elements_equal

tf = pytest.importorskip("tensorflow", reason="the differential suite needs TensorFlow (make test installs it)")

TF, PF = tf_lib(), pf_lib()
UNKNOWN = -2
TF_MIXTURE_BUG = "Incompatible shapes at component 0: expected [?] but got []"
small = st.integers(1, 4)

# name -> (the ranks it takes, how it changes the rank, its arguments, how it is applied)
ANY = (0, 1, 2)
STEPS = {
    "skip": (ANY, 0, st.tuples(st.integers(-1, 6)), lambda L, ds, n: ds.skip(n)),
    "take": (ANY, 0, st.tuples(st.integers(-1, 6)), lambda L, ds, n: ds.take(n)),
    "repeat": (ANY, 0, st.tuples(st.integers(0, 2)), lambda L, ds, n: ds.repeat(n)),
    "repeat, take": (ANY, 0, st.tuples(st.integers(0, 8)), lambda L, ds, n: ds.repeat().take(n)),
    "map": (ANY, 0, st.tuples(st.integers(-3, 3)), lambda L, ds, a: ds.map(lambda x: x * 2 + a)),
    "shard": (ANY, 0, st.tuples(small, st.integers(0, 3)), lambda L, ds, n, i: ds.shard(n, i % n)),
    "cache": (ANY, 0, st.tuples(), lambda L, ds: ds.cache()),
    "enumerate": (ANY, 0, st.tuples(), lambda L, ds: ds.enumerate().map(lambda i, x: x + i)),
    "zip": (ANY, 0, st.tuples(small), lambda L, ds, n: L.Dataset.zip((ds, ds.skip(n))).map(lambda a, b: b - a)),
    "concatenate": (ANY, 0, st.tuples(small), lambda L, ds, n: ds.concatenate(ds.take(n))),
    "choose": (
        ANY,
        0,
        st.tuples(small, st.booleans()),
        lambda L, ds, n, stop: L.Dataset.choose_from_datasets(
            [ds, ds.skip(1)], L.Dataset.range(2).repeat(n), stop_on_empty_dataset=stop
        ),
    ),
    "batch": ((0, 1), 1, st.tuples(small, st.booleans()), lambda L, ds, n, drop: ds.batch(n, drop_remainder=drop)),
    "padded_batch": (
        (0, 1),
        1,
        st.tuples(small, st.booleans()),
        lambda L, ds, n, drop: ds.padded_batch(n, drop_remainder=drop),
    ),
    "unbatch": ((1, 2), -1, st.tuples(), lambda L, ds: ds.unbatch()),
    "rebatch": ((1,), 0, st.tuples(small), lambda L, ds, n: ds.rebatch(n)),
    "filter": ((0,), 0, st.tuples(st.integers(2, 3)), lambda L, ds, m: ds.filter(lambda x: x % m != 0)),
    "take_while": ((0,), 0, st.tuples(st.integers(-2, 20)), lambda L, ds, t: ds.take_while(lambda x: x < t)),
    "unique": ((0,), 0, st.tuples(), lambda L, ds: ds.unique()),
    "scan": ((0,), 0, st.tuples(), lambda L, ds: ds.scan(L.cast(0, L.int64), lambda s, x: (s + x, s - x))),
    "window": (
        (0,),
        1,
        st.tuples(small, small, st.integers(1, 2), st.booleans()),
        lambda L, ds, size, shift, stride, drop: ds.window(size, shift, stride, drop).flat_map(lambda w: w.batch(size)),
    ),
    "interleave": (
        (0,),
        0,
        st.tuples(small, st.integers(1, 2)),
        lambda L, ds, cycle, block: ds.interleave(
            lambda x: L.Dataset.range(x % 4), cycle_length=cycle, block_length=block
        ),
    ),
    "flat_map": ((0,), 0, st.tuples(), lambda L, ds: ds.flat_map(lambda x: L.Dataset.range(x % 3))),
    "group_by_window": (
        (0,),
        1,
        st.tuples(st.integers(2, 3), small),
        lambda L, ds, m, n: ds.group_by_window(lambda x: x % m, lambda key, w: w.batch(n), window_size=n),
    ),
}


@st.composite
def chains(draw):
    start, length, step = draw(st.integers(-5, 10)), draw(st.integers(0, 20)), draw(st.sampled_from([1, 2, -1, -3, 0]))
    stop = start + length * (step or 1) + draw(st.integers(0, 1)) * (step // 2)  # (and a stop between two steps)
    rank, steps = 0, []
    for _ in range(draw(st.integers(1, 5))):
        name = draw(st.sampled_from(sorted(n for n, (ranks, *_) in STEPS.items() if rank in ranks)))
        steps.append((name, draw(STEPS[name][2])))
        rank += STEPS[name][1]
    return (start, stop, step), steps


def build(L, source, steps):
    start, stop, step = source
    ds = (
        L.Dataset.range(start, stop, step)
        if step
        else L.Dataset.from_tensor_slices(L.cast(list(range(start, stop)), L.int64))
    )
    for name, args in steps:
        ds = STEPS[name][3](L, ds, *args)
    return ds


def outcome(L, source, steps):
    try:
        ds = build(L, source, steps)
        return "ok", list(ds.as_numpy_iterator()), int(ds.cardinality())
    except Exception as err:  # (the two libraries' errors differ in type; both must fail)
        return "error", f"{type(err).__name__}: {err}", None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_a_random_chain_of_steps_matches_tf_data(chain):
    source, steps = chain
    expected, actual = outcome(TF, source, steps), outcome(PF, source, steps)
    assume(not (expected[0] == "error" and TF_MIXTURE_BUG in expected[1]))  # (TensorFlow's: see the test below)
    assert expected[0] == actual[0], f"tf.data: {expected[:2]}, parafeed: {actual[:2]}"
    if expected[0] == "ok":
        assert_elements_equal(expected[1], actual[1], repr(chain))
        if UNKNOWN not in (expected[2], actual[2]):
            assert actual[2] == expected[2], "cardinality differs"


@pytest.mark.parametrize("vectors", [True, False], ids=["of vectors", "batched"])
def test_a_mixture_concatenates_where_tensorflow_fails(vectors):
    """TensorFlow 2.21 cannot make the iterator of a mixture of vectors, or of a batched mixture, concatenated with a
    dataset (docs/porting.md#mixture-random-streams); parafeed gives the mixture's elements, then the dataset's, each
    as tf.data gives them apart."""

    def parts(L, vectors):
        ds = L.Dataset.range(5).batch(2) if vectors else L.Dataset.range(5)
        mixed = L.Dataset.choose_from_datasets([ds, ds.skip(1)], L.Dataset.range(2).repeat(2))
        return (mixed, ds) if vectors else (mixed.batch(2), ds.batch(1))

    (tf_mixed, tf_tail), (pf_mixed, pf_tail) = parts(TF, vectors), parts(PF, vectors)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(TF_MIXTURE_BUG)):
        list(tf_mixed.concatenate(tf_tail).as_numpy_iterator())
    expected = list(tf_mixed.as_numpy_iterator()) + list(tf_tail.as_numpy_iterator())
    assert_elements_equal(expected, list(pf_mixed.concatenate(pf_tail).as_numpy_iterator()), "concatenate")

"""``cardinality()`` of every kind of step against tf.data's, over inputs of each kind of cardinality: empty, known,
infinite and unknown, and an empty input after a function (whose element spec parafeed cannot read off an element).
"""

from __future__ import annotations

import pytest

from tests.differential.libs import pf_lib, tf_lib

tf = pytest.importorskip("tensorflow", reason="the differential suite needs TensorFlow (make test installs it)")

TF, PF = tf_lib(), pf_lib()

INPUTS = {
    "empty": lambda L: L.Dataset.range(0),
    "known": lambda L: L.Dataset.range(6),
    "infinite": lambda L: L.Dataset.range(6).repeat(),
    "unknown": lambda L: L.Dataset.range(6).filter(lambda x: x > 2),
    "empty, after a function": lambda L: L.Dataset.range(0).map(lambda x: x + 1),
}

STEPS = {
    "batch": lambda L, ds: ds.batch(4),
    "batch, drop_remainder": lambda L, ds: ds.batch(4, drop_remainder=True),
    "padded_batch": lambda L, ds: ds.padded_batch(4),
    "padded_batch, drop_remainder": lambda L, ds: ds.padded_batch(4, drop_remainder=True),
    "ragged_batch": lambda L, ds: ds.ragged_batch(4),
    "unbatch": lambda L, ds: ds.batch(2).unbatch(),
    "unbatch, drop_remainder": lambda L, ds: ds.batch(2, drop_remainder=True).unbatch(),
    "unbatch after a function": lambda L, ds: ds.batch(2).map(lambda x: x).unbatch(),
    "unbatch after a function, drop_remainder": lambda L, ds: ds.map(lambda x: x).batch(2, drop_remainder=True).unbatch(),
    "rebatch": lambda L, ds: ds.batch(2).rebatch(3),
    "rebatch, drop_remainder": lambda L, ds: ds.batch(2, drop_remainder=True).rebatch(3, drop_remainder=True),
    "window": lambda L, ds: ds.window(2),
    "window, drop_remainder": lambda L, ds: ds.window(2, 1, 1, True),
    "window, shift 3": lambda L, ds: ds.window(2, 3),
    "flat_map": lambda L, ds: ds.flat_map(lambda x: L.Dataset.range(2)),
    "interleave": lambda L, ds: ds.interleave(lambda x: L.Dataset.range(2), cycle_length=2),
    "group_by_window": lambda L, ds: ds.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=2),
    "bucket_by_sequence_length": lambda L, ds: ds.map(lambda x: L.fill(x % 3 + 1, x)).bucket_by_sequence_length(
        lambda x: L.length(x), [2], [2, 2]
    ),
    "scan": lambda L, ds: ds.scan(L.cast(0, L.int64), lambda s, x: (s + x, x)),
    "unique": lambda L, ds: ds.unique(),
    "take_while": lambda L, ds: ds.take_while(lambda x: x < 3),
    "filter": lambda L, ds: ds.filter(lambda x: x > 0),
    "map": lambda L, ds: ds.map(lambda x: x),
    "shard": lambda L, ds: ds.shard(4, 1),
    "skip 2": lambda L, ds: ds.skip(2),
    "skip -1": lambda L, ds: ds.skip(-1),
    "take 2": lambda L, ds: ds.take(2),
    "take -1": lambda L, ds: ds.take(-1),
    "repeat 0": lambda L, ds: ds.repeat(0),
    "repeat 3": lambda L, ds: ds.repeat(3),
    "repeat": lambda L, ds: ds.repeat(),
    "cache": lambda L, ds: ds.cache(),
    "prefetch": lambda L, ds: ds.prefetch(2),
    "enumerate": lambda L, ds: ds.enumerate(),
    "ignore_errors": lambda L, ds: ds.ignore_errors(),
    "zip": lambda L, ds: L.Dataset.zip((ds, L.Dataset.range(3))),
    "zip with an infinite one": lambda L, ds: L.Dataset.zip((ds, L.Dataset.range(3).repeat())),
    "concatenate": lambda L, ds: ds.concatenate(L.Dataset.range(3)),
    "concatenate to an infinite one": lambda L, ds: L.Dataset.range(3).repeat().concatenate(ds),
    "choose_from_datasets": lambda L, ds: L.Dataset.choose_from_datasets([ds, L.Dataset.range(3)],
                                                                         L.Dataset.range(2).repeat(2)),
    "choose_from_datasets, stop_on_empty_dataset": lambda L, ds: L.Dataset.choose_from_datasets(
        [ds, L.Dataset.range(3)], L.Dataset.range(2).repeat(), stop_on_empty_dataset=True
    ),
    "sample_from_datasets": lambda L, ds: L.Dataset.sample_from_datasets([ds, L.Dataset.range(3)], seed=1),
    "sample_from_datasets, stop_on_empty_dataset": lambda L, ds: L.Dataset.sample_from_datasets(
        [ds, L.Dataset.range(3)], seed=1, stop_on_empty_dataset=True
    ),
    "sample_from_datasets with an infinite one": lambda L, ds: L.Dataset.sample_from_datasets(
        [ds, L.Dataset.range(3).repeat()], seed=1
    ),
    "rejection_resample": lambda L, ds: ds.rejection_resample(lambda x: x % 2, [0.5, 0.5], seed=1),
}  # fmt: skip


def cardinality(L, step: str, source: str) -> int | str:
    try:
        return int(STEPS[step](L, INPUTS[source](L)).cardinality())
    except Exception:  # (the two libraries' errors differ in type: both must fail)
        return "error"


@pytest.mark.parametrize("step", STEPS)
def test_a_steps_cardinality_is_tf_datas_for_every_kind_of_input(step):
    got = {source: cardinality(PF, step, source) for source in INPUTS}
    assert got == {source: cardinality(TF, step, source) for source in INPUTS}

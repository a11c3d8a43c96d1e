"""Iterator state: every step saves its position with get_state() and a new iterator resumes there exactly."""

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.checkpoint import check_restores
from parafeed.errors import StateError

pytestmark = pytest.mark.timeout(300)


def _records(tmp_path, files=3, per_file=20):
    paths = []
    for i in range(files):
        path = str(tmp_path / f"part-{i}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for j in range(per_file):
                w.write(bytes([i, j]) * (j + 1))
        paths.append(path)
    return paths


def _slow(x):
    return x * 3 + 1


STEPS = {
    "map": lambda ds: ds.map(lambda x: x + 1),
    "parallel map": lambda ds: ds.map(_slow, num_parallel_calls=2),
    "filter": lambda ds: ds.filter(lambda x: x % 3 != 0),
    "shuffle": lambda ds: ds.shuffle(7, seed=5),
    "unseeded shuffle": lambda ds: ds.shuffle(4),
    "batch+unbatch": lambda ds: ds.batch(4).unbatch(),
    "rebatch": lambda ds: ds.batch(3).rebatch(5).unbatch(),
    "prefetch": lambda ds: ds.prefetch(2),
    "repeat": lambda ds: ds.repeat(2),
    "take": lambda ds: ds.take(25),
    "skip": lambda ds: ds.skip(3),
    "shard": lambda ds: ds.shard(2, 1),
    "flat_map": lambda ds: ds.flat_map(lambda x: pf.Dataset.range(x % 3).map(lambda y: x * 10 + y)),
    "interleave": lambda ds: ds.interleave(lambda x: pf.Dataset.range(x % 4).map(lambda y: x * 10 + y), 3, 2),
    "parallel interleave": lambda ds: ds.interleave(
        lambda x: pf.Dataset.from_tensors(x).repeat(x % 3), cycle_length=2, num_parallel_calls=2
    ),
    "window": lambda ds: ds.window(3, shift=2).flat_map(lambda w: w),
    "group_by_window": lambda ds: ds.group_by_window(lambda x: x % 3, lambda k, w: w.batch(2), 3).unbatch(),
    "cache": lambda ds: ds.cache(),
    "ignore_errors": lambda ds: ds.ignore_errors(),
    "enumerate": lambda ds: ds.enumerate().map(lambda i, x: x + i),
    "concatenate": lambda ds: ds.concatenate(pf.Dataset.range(5)),
    "scan": lambda ds: ds.scan(np.int64(0), lambda s, x: (s + x, s * 2 + x)),
    "sparse_batch": lambda ds: ds.map(lambda x: np.full(x % 3, x)).sparse_batch(2, [3]).map(lambda s: s.values.sum()),
    "ragged_batch": lambda ds: (  # rows of 1 and 2 values in turn: every batch of 2 is ragged
        ds.enumerate().map(lambda i, x: np.full(i % 2 + 1, x)).ragged_batch(2).map(lambda r: r.flat_values.sum())
    ),
    "group_by_reducer": lambda ds: ds.apply(
        pf.experimental.group_by_reducer(
            lambda x: x % 3, pf.experimental.Reducer(lambda k: np.int64(0), lambda s, x: s + x, lambda s: s)
        )
    ),
    "zip counter": lambda ds: pf.Dataset.zip((ds, pf.Dataset.counter(5, 2))).map(lambda x, c: x + c),
    "zip random": lambda ds: pf.Dataset.zip((ds, pf.Dataset.random(seed=3))).map(lambda x, r: x + r % 7),
    "sample_from_datasets": lambda ds: pf.Dataset.sample_from_datasets([ds, ds.map(lambda x: -x)], [0.3, 0.7], seed=4),
    "choose_from_datasets": lambda ds: pf.Dataset.choose_from_datasets(
        [ds, ds.map(lambda x: x * 100)], pf.Dataset.range(100).map(lambda i: i % 3 % 2)
    ),
    "rejection_resample": lambda ds: ds.rejection_resample(lambda x: x % 2, [0.8, 0.2], seed=2).map(lambda c, x: x),
}


@pytest.mark.parametrize("name", sorted(STEPS))
def test_every_step_resumes_at_every_position(name):
    ds = STEPS[name](pf.Dataset.range(40))
    assert check_restores(ds) > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5),
    stops=st.lists(st.integers(0, 120), min_size=1, max_size=4),
)
@example(steps=["shard", "rejection_resample", "batch+unbatch", "rejection_resample"], stops=[0])  # (an empty input)
@example(steps=["shard", "rejection_resample", "ragged_batch", "rejection_resample"], stops=[0])
def test_random_pipelines_resume_exactly(steps, stops):
    """Property: for random pipelines and stop points, the elements after a restore equal the uninterrupted ones."""
    ds = pf.Dataset.range(30)
    for name in steps:
        ds = STEPS[name](ds)
    check_restores(ds.take(150), stops=stops, limit=150)


def test_batches_and_padded_batches_resume():
    ds = pf.Dataset.range(30).map(lambda x: np.arange(x % 5)).padded_batch(4)
    assert check_restores(ds) > 0
    assert check_restores(pf.Dataset.range(30).batch(7, drop_remainder=True)) > 0


def test_sources_resume(tmp_path):
    x = {"a": np.arange(20), "b": np.ones((20, 2))}
    assert check_restores(pf.Dataset.from_tensor_slices(x)) > 0
    assert check_restores(pf.Dataset.range(5, 9000, 3), stops=[0, 1, 4095, 4096, 4097, 2998, 2999]) > 0

    def gen():
        yield from range(12)

    assert check_restores(pf.Dataset.from_generator(gen, output_signature=pf.TensorSpec((), np.int64))) > 0
    text = tmp_path / "a.csv"
    text.write_text("x,y\n" + "\n".join(f"{i},{i * 2}" for i in range(30)))
    assert check_restores(pf.TextLineDataset([str(text), str(text)])) > 0
    assert check_restores(pf.CsvDataset(str(text), [0, 0], header=True)) > 0


def test_a_text_reader_refuses_to_go_back_and_a_cache_reopens_its_pass(tmp_path):
    """A text file reader takes lines again up to a restored position, so going back names the step. A cache (filling
    or replaying) reopens the saved pass on restore, so it can go back. (Datasets over files open a new reader on
    restore, so they can go back too.)"""
    from parafeed.io.text import TextLineReader

    text = tmp_path / "a.txt"
    text.write_text("\n".join(str(i) for i in range(10)))
    reader = TextLineReader(str(text))
    next(reader)
    state = reader.get_state()
    rest = list(reader)
    with pytest.raises(StateError, match="the TextLineReader step cannot go back"):
        reader.set_state(state)
    again = TextLineReader(str(text))
    again.set_state(state)
    assert list(again) == rest and len(rest) == 9
    cached = pf.Dataset.range(10).cache(str(tmp_path / "c"))
    for _ in range(2):  # filling, then replaying the file
        it = iter(cached)
        next(it)
        state = it.get_state()
        rest = [int(x) for x in it]
        it.set_state(state)
        assert [int(x) for x in it] == rest == list(range(1, 10))


def test_tfrecord_readers_resume(tmp_path):
    files = _records(tmp_path)
    assert check_restores(pf.TFRecordDataset(files, buffer_size=64)) == sum(range(61))
    assert check_restores(pf.TFRecordDataset(files, num_parallel_reads=2).shuffle(8, seed=1)) > 0
    listed = pf.Dataset.list_files(str(tmp_path / "*.tfrecord"))  # shuffled without a seed
    assert check_restores(listed.interleave(pf.TFRecordDataset, cycle_length=2, num_parallel_calls=2)) > 0
    gz = str(tmp_path / "c.tfrecord.gz")
    with pf.io.TFRecordWriter(gz, "GZIP") as w:
        for j in range(30):
            w.write(b"z" * j)
    assert check_restores(pf.TFRecordDataset(gz, compression_type="GZIP", buffer_size=50)) > 0


def test_tfrecord_state_is_a_byte_offset(tmp_path):
    files = _records(tmp_path, files=1)
    it = iter(pf.TFRecordDataset(files))
    for _ in range(3):
        next(it)
    state = it.get_state()
    assert json.loads(json.dumps(state)) == state
    from parafeed.io.index import record_offsets

    assert state["current"]["offset"] == record_offsets(files[0])[3]


def test_corrupt_record_is_reported_again_after_a_restore(tmp_path):
    path = _records(tmp_path, files=1)[0]
    data = bytearray(open(path, "rb").read())
    from parafeed.io.index import record_offsets

    offsets = record_offsets(path)
    data[int(offsets[5]) + 13] ^= 0xFF  # damage record 5's data
    open(path, "wb").write(bytes(data))
    it = iter(pf.TFRecordDataset(path))
    for _ in range(5):
        next(it)
    state = it.get_state()
    it.close()
    resumed = iter(pf.TFRecordDataset(path))
    resumed.set_state(state)
    with pytest.raises(pf.errors.DataLossError, match="corrupted record"):
        next(resumed)
    assert len(list(resumed)) == 14  # the rest, after the corrupt one


def test_file_cache_resumes_while_filling_and_replaying(tmp_path):
    ds = pf.Dataset.range(30).map(lambda x: (x, np.full(2, x))).cache(str(tmp_path / "c")).repeat(2)
    assert check_restores(ds) > 0
    assert os.path.exists(tmp_path / "c.pfcache")


def test_replica_splits_and_equal_steps_resume(tmp_path):
    x, y = np.arange(23), np.arange(23) % 3
    for replica in range(3):
        for policy, steps in (("pad", None), ("drop", 2), ("repeat", 5)):
            ds = pf.Dataset.from_tensor_slices((x, y)).distribute(3, replica).shuffle(4, seed=1).batch(3)
            assert check_restores(ds.equal_steps(policy, steps=steps)) > 0
    labelled = pf.Dataset.from_tensor_slices((x, y)).distribute(3, 1, balance="labels").batch(3).equal_steps()
    assert check_restores(labelled) > 0
    files = _records(tmp_path)
    for policy in ("FILE", "RECORD", "DATA"):
        assert check_restores(pf.TFRecordDataset(files).distribute(2, 1, policy=policy).batch(3).equal_steps()) > 0
    by_label = pf.TFRecordDataset(files).distribute(2, 0, balance="labels", label_fn=lambda r: len(r) % 2)
    assert check_restores(by_label.batch(4)) > 0


def test_process_map_resumes():
    ds = pf.Dataset.range(200).map(_slow, num_parallel_calls=2, executor="process").batch(8)
    assert check_restores(ds, stops=[0, 1, 7, 24, 25]) > 0


def test_states_are_small_and_hold_no_elements():
    images = pf.Dataset.range(1000).map(lambda x: np.full((64, 64, 3), x % 255, np.uint8))
    it = iter(images.shuffle(100, seed=1).prefetch(4).batch(16))
    for _ in range(20):
        next(it)
    size = len(json.dumps(it.get_state()))
    it.close()
    assert size < 100 * 12 + 2000  # the shuffle's 100 input indices and a few positions, not 116 images


def test_set_state_checks_the_pipeline():
    it = iter(pf.Dataset.range(10).shuffle(3, seed=1))
    state = it.get_state()
    other = iter(pf.Dataset.range(10).map(lambda x: x))
    with pytest.raises(StateError, match="saved by a 'Shuffle' step where this pipeline has 'Map'"):
        other.set_state(state)


def test_started_prefetch_refuses_a_restore():
    ds = pf.Dataset.range(10).prefetch(2)
    it = iter(ds)
    next(it)
    state = it.get_state()
    with pytest.raises(StateError, match="restore a state into a new iterator"):
        it.set_state(state)
    it.close()


def test_nondeterministic_parallel_map_cannot_checkpoint():
    it = iter(pf.Dataset.range(100).map(_slow, num_parallel_calls=2, deterministic=False))
    next(it)
    with pytest.raises(StateError, match="deterministic=True"):
        it.get_state()
    it.close()


def test_a_step_that_cannot_checkpoint_does_not_break_iteration():
    # nondeterministic map under a shuffle: iterating works, asking for a state says why not
    ds = pf.Dataset.range(50).map(_slow, num_parallel_calls=2, deterministic=False).prefetch(1).shuffle(5)
    it = iter(ds)
    assert len(list(it)) == 50
    it = iter(ds)
    next(it)
    next(it)
    with pytest.raises(StateError):
        it.get_state()
    it.close()


def test_reshuffled_epochs_resume_in_a_new_process_without_seeds(tmp_path):
    """An unseeded shuffle gets a new seed in a new process; the state carries it, so the order still matches."""
    script = tmp_path / "job.py"
    script.write_text(
        "import json, sys\n"
        "import parafeed as pf\n"
        "ds = pf.Dataset.range(20).shuffle(5).repeat(3).shuffle(3).batch(4)\n"
        "if sys.argv[1] == 'save':\n"
        "    it = iter(ds)\n"
        "    for _ in range(4): next(it)\n"
        "    state = it.get_state()\n"
        "    print(json.dumps({'state': state, 'rest': [b.tolist() for b in it]}))\n"
        "else:\n"
        "    it = iter(ds)\n"
        "    it.set_state(json.loads(sys.stdin.read())['state'])\n"
        "    print(json.dumps([b.tolist() for b in it]))\n"
    )
    import subprocess
    import sys

    saved = subprocess.run([sys.executable, str(script), "save"], capture_output=True, text=True, check=True).stdout
    resumed = subprocess.run(
        [sys.executable, str(script), "load"], input=saved, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(resumed) == json.loads(saved)["rest"]


def test_a_state_taken_from_one_iterator_changes_no_other():
    """Bug: get_state() on an unstarted iterator drew a shuffle order, which changed another iterator's order."""

    def orders(touch):
        ds = pf.Dataset.range(10).shuffle(10, seed=1)
        a, b = iter(ds), iter(ds)
        if touch:
            a.get_state()
        return [int(x) for x in a], [int(x) for x in b]

    assert orders(True) == orders(False)
    first, second = orders(False)
    assert first != second  # two iterators: two iterations, two orders (as tf.data's reshuffle_each_iteration)


def test_a_restored_iterator_is_not_a_new_iteration():
    ds = pf.Dataset.range(10).shuffle(10, seed=1)
    a = iter(ds)
    head = [int(next(a)) for _ in range(3)]
    state = a.get_state()
    restored = iter(ds)
    restored.set_state(state)
    assert head + [int(x) for x in restored] == [int(x) for x in pf.Dataset.range(10).shuffle(10, seed=1)]
    fresh = pf.Dataset.range(10).shuffle(10, seed=1)
    list(fresh)
    assert [int(x) for x in iter(ds)] == [int(x) for x in fresh]  # the second iteration, as if no restore happened


def test_a_cache_restore_replays_its_own_pass():
    """Bug: a restore replayed the pass another iterator had cached meanwhile (4 twice, 2 missing)."""
    ds = pf.Dataset.range(8).shuffle(8, seed=1).cache()
    a, b = iter(ds), iter(ds)
    first = int(next(a))
    state = a.get_state()
    b_pass = [int(x) for x in b]  # b's pass is cached
    restored = iter(ds)
    restored.set_state(state)
    rest = [int(x) for x in restored]
    assert [first, *rest] == [first, *(int(x) for x in a)]
    assert sorted([first, *rest]) == list(range(8)) and [first, *rest] != b_pass
    assert [int(x) for x in ds] == b_pass  # later runs replay the cached pass
    replaying = iter(ds)
    next(replaying)
    state = json.loads(json.dumps(replaying.get_state()))
    elsewhere = pf.Dataset.range(8).shuffle(8, seed=1).cache()  # as in a new process: nothing cached yet
    resumed = iter(elsewhere)
    resumed.set_state(state)
    assert [int(x) for x in resumed] == b_pass[1:]  # the same pass, computed again from its iteration


@pytest.mark.timeout(300)
@pytest.mark.parametrize("cache", ["memory", "file"])
def test_restoring_one_iterator_never_changes_another(tmp_path, cache):
    """Two iterators of one pipeline (shuffles, a parallel map on processes, a cache): one is saved and restored at
    random points, into new iterators, while the other runs; the other's elements are those it yields alone, and
    every restore goes on exactly where its state was saved."""
    import random

    def make(name):
        ds = pf.Dataset.range(48).shuffle(16, seed=3).map(_slow, num_parallel_calls=2, executor="process")
        return ds.cache(str(tmp_path / name) if cache == "file" else "").shuffle(8, seed=4).batch(4)

    alone = make("alone")
    first, second = iter(alone), iter(alone)  # both made before either caches a pass, as below
    expected_a, expected_b = [x.tolist() for x in first], [x.tolist() for x in second]
    assert expected_a != expected_b
    ds = make("together")
    a, b = iter(ds), iter(ds)
    rng = random.Random(7)
    got_b, position, saved = [], 0, []
    while len(got_b) < len(expected_b) or position < len(expected_a):
        move = rng.random()
        if move < 0.4 and len(got_b) < len(expected_b):
            got_b.append(next(b).tolist())
        elif move < 0.7 and position < len(expected_a):
            assert next(a).tolist() == expected_a[position], f"a at {position}"
            position += 1
        elif move < 0.85:
            saved.append((position, json.loads(json.dumps(a.get_state()))))
        elif saved:  # restore a from one of its saved states, into a new iterator
            position, state = rng.choice(saved)
            a.close()
            a = iter(ds)
            a.set_state(state)
    assert got_b == expected_b
    assert next(a, None) is None and next(b, None) is None
    a.close()
    b.close()


def _counting_snapshots(monkeypatch) -> list:
    from parafeed.core import positions

    calls: list = []
    original = positions.snapshot

    def counted(it):
        calls.append(1)
        return original(it)

    monkeypatch.setattr(positions, "snapshot", counted)
    return calls


def test_read_ahead_steps_mark_positions_cheaply_where_the_order_is_fixed(monkeypatch):
    """prefetch and parallel map take their input's state now and then, not for every hand-over, when the input's
    order follows from its state; a state saved between two snapshots restores by skipping."""
    from parafeed.core import positions

    monkeypatch.setattr(positions, "SNAPSHOT_SECONDS", 3600.0)
    calls = _counting_snapshots(monkeypatch)
    ds = pf.Dataset.range(5000).map(lambda x: x * 2, num_parallel_calls=2).prefetch(4)
    assert [int(x) for x in ds] == list(range(0, 10000, 2))
    assert len(calls) <= 4  # the first state of each read-ahead step, not one per hand-over
    assert check_restores(ds, stops=[0, 1, 777, 4999, 5000]) > 0


@pytest.mark.parametrize("seconds", [0.0, 3600.0])
def test_positions_restore_whether_states_are_taken_often_or_rarely(monkeypatch, seconds):
    from parafeed.core import positions

    monkeypatch.setattr(positions, "SNAPSHOT_SECONDS", seconds)
    ds = pf.Dataset.range(300).shuffle(20, seed=3).prefetch(3).map(_slow, num_parallel_calls=2).batch(7).prefetch(2)
    assert check_restores(ds, stops=[0, 5, 20, 42, 43]) > 0


def test_an_order_parafeed_cannot_vouch_for_keeps_a_state_per_hand_over(monkeypatch):
    """Datasets made by user functions (interleave) may hide a deterministic=False map: a position relative to an
    older state could not be replayed, so every hand-over keeps its own state, and a state that cannot be taken
    says so."""
    from parafeed.core import positions

    monkeypatch.setattr(positions, "SNAPSHOT_SECONDS", 3600.0)
    calls = _counting_snapshots(monkeypatch)
    ds = pf.Dataset.range(4).interleave(lambda x: pf.Dataset.range(50).map(lambda y: x * 100 + y), 2).prefetch(2)
    assert not positions.order_fixed(ds) and positions.order_fixed(pf.Dataset.range(3).map(abs).prefetch(1))
    it = iter(ds)
    for _ in range(60):
        next(it)
    assert len(calls) >= 60  # one per hand-over (prefetch hands over one element at a time)
    it.close()

    def hidden(x):
        return pf.Dataset.range(50).map(lambda y: x * 100 + y, num_parallel_calls=2, deterministic=False)

    it = iter(pf.Dataset.range(4).interleave(hidden, cycle_length=2).prefetch(2))
    for _ in range(60):
        next(it)
    with pytest.raises(StateError):
        it.get_state()
    it.close()

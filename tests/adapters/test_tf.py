import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from tests import host
from tests.adapters.data import write_files
from tests.helpers import assert_elements_equal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = [50, 7, 23, 2, 31]  # uneven files, 113 records


def tf_elements(ds):
    return list(ds.as_numpy_iterator())


def test_to_tf_gives_the_pipeline_elements():
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    names = np.array([f"n{i}".encode() for i in range(10)], dtype=object)
    cases = [
        pf.Dataset.from_tensor_slices((x, np.arange(10))).batch(4),
        pf.Dataset.from_tensor_slices({"x": x, "name": names}).map(lambda e: {**e, "y": e["x"].sum()}).batch(3),
        pf.Dataset.range(5),
        pf.Dataset.from_tensor_slices(names),
    ]
    for ds in cases:
        assert_elements_equal(list(ds), tf_elements(ds.to_tf()), repr(ds))


def test_to_tf_signature_and_epochs():
    ds = pf.Dataset.range(10).map(lambda x: np.full(3, x, np.float32)).shuffle(10).batch(4)
    out = ds.to_tf()
    assert out.element_spec == tf.TensorSpec((None, 3), tf.float32)  # the last batch may be shorter
    first, second = (np.concatenate(tf_elements(out))[:, 0] for _ in range(2))
    assert sorted(first) == sorted(second) == list(range(10))
    assert list(first) != list(second)  # a new parafeed iterator per epoch: reshuffled
    assert int(out.cardinality()) == len(ds) == 3  # Keras knows the steps of an epoch
    assert int(pf.Dataset.range(5).filter(lambda x: x > 1).to_tf().cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert pf.Dataset.range(8).batch(4, drop_remainder=True).to_tf().element_spec == tf.TensorSpec((4,), tf.int64)


def tf_ops(ds) -> list[str]:
    """The kinds of TensorFlow dataset steps ``ds`` is made of, outermost first."""
    kinds = []
    while ds is not None:
        kinds.append(type(ds).__name__)
        inputs = ds._inputs()
        ds = inputs[0] if inputs else None
    return kinds


def test_to_tf_buffers_only_when_the_pipeline_does_not():
    """A pipeline that ends with prefetch has batches ready: a TensorFlow prefetch on top would hold more of them."""
    buffered = pf.Dataset.range(8).batch(2).prefetch(pf.AUTOTUNE).with_options(pf.Options())
    assert "_PrefetchDataset" not in tf_ops(buffered.to_tf())
    assert "_PrefetchDataset" in tf_ops(pf.Dataset.range(8).batch(2).to_tf())
    assert [list(b) for b in tf_elements(buffered.to_tf())] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def context(workers=1, worker=0, replicas=2):
    return tf.distribute.InputContext(
        num_input_pipelines=workers, input_pipeline_id=worker, num_replicas_in_sync=replicas
    )


def test_dataset_fn_hands_each_replica_its_pipeline_in_turn():
    def make(num_replicas, replica_id, batch_size):
        return pf.Dataset.range(20).distribute(num_replicas, replica_id).batch(batch_size).equal_steps()

    batches = tf_elements(
        pf.adapters.tf.dataset_fn(make, global_batch_size=8)(context(workers=2, worker=1, replicas=4))
    )
    # worker 1 of 2 holds replicas 2 and 3 of 4: their batches alternate
    assert [b[0].tolist() for b in batches] == [[2, 6], [3, 7], [10, 14], [11, 15], [18, 18], [19, 19]]
    assert [b[1].tolist() for b in batches][-2:] == [[1.0, 0.0], [1.0, 0.0]]


def test_dataset_fn_replicas_agree_on_the_steps_after_a_filter():
    """No `steps=` after a filter: the worker's replicas vote each step (on threads of their own), so both yield as
    many batches as the longer share has; the shorter pads with weight 0. A second epoch votes again."""

    def make(num_replicas, replica_id, batch_size):
        ds = pf.Dataset.range(40).distribute(num_replicas, replica_id, policy="DATA")
        return ds.filter(lambda x: x < 10 if replica_id else True).batch(batch_size).equal_steps()

    dataset = pf.adapters.tf.dataset_fn(make, global_batch_size=8)(context())
    for _ in range(2):
        batches = tf_elements(dataset)
        assert len(batches) == 2 * 5  # replica 0: 20 ids in 5 batches of 4; replica 1: 5 ids, then padding
        ids = [[i for b in batches[r::2] for i in b[0][b[1] == 1.0].tolist()] for r in range(2)]
        assert sorted(ids[0]) == list(range(0, 40, 2))
        assert sorted(ids[1]) == [1, 3, 5, 7, 9]


def test_dataset_fn_refuses_uneven_replicas():
    def uneven(num_replicas, replica_id, batch_size):
        return pf.Dataset.range(9 if replica_id else 20).batch(4)

    with pytest.raises(InvalidArgumentError, match=r"would yield \[5, 3\] batches.*equal_steps"):
        pf.adapters.tf.dataset_fn(uneven)(context())

    def unknowable(num_replicas, replica_id, batch_size):
        return pf.Dataset.range(9 if replica_id else 20).filter(lambda x: x >= 0).batch(4)

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"replica\(s\) \[1\] ended after 3 batches"):
        tf_elements(pf.adapters.tf.dataset_fn(unknowable)(context()))

    def no_equal_steps(num_replicas, replica_id, batch_size):  # 4 elements, 1 batch each here; but replica 0 ...
        return pf.Dataset.range(17).distribute(4, replica_id + 2).batch(4)  # ... (on another worker) has 2 batches

    with pytest.raises(InvalidArgumentError, match=r"all replicas would yield \[2, 1, 1, 1\] batches"):
        pf.adapters.tf.dataset_fn(no_equal_steps)(context())
    with pytest.raises(InvalidArgumentError, match="must return a pf.Dataset"):
        pf.adapters.tf.dataset_fn(lambda n, r, b: [1, 2])(context())


def run_job(args):
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.Popen(
        [sys.executable, "-m", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def finish(process, timeout):
    try:
        out, _ = process.communicate(timeout=host.seconds(timeout))
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
        pytest.fail(f"the job hung:\n{out[-3000:]}")
    assert process.returncode == 0, out[-3000:]


@pytest.mark.timeout(300)
def test_keras_fit_under_mirrored_strategy(tmp_path):
    files = write_files(tmp_path, SIZES)
    out = tmp_path / "result.json"
    finish(run_job(["tests.adapters.jobs.mirrored", str(out), *files]), 240)
    result = json.loads(out.read_text())
    assert result["replicas"] == 2
    assert [d[-5:] for d in result["devices_ahead_2"]] == ["CPU:0", "CPU:1"]  # each replica's batch on its device
    assert [d[-5:] for d in result["devices_ahead_0"]] == ["CPU:0", "CPU:0"]  # left in host memory
    ids = result["ids"][0] + result["ids"][1]
    assert sorted(ids) == list(range(sum(SIZES)))  # every sample exactly once per epoch
    labels = [np.bincount(y, minlength=3) for y in result["labels"]]
    assert np.abs(labels[0] - labels[1]).max() <= 1  # label-stratified: every class within 1 between replicas
    assert result["fit_steps"] == [result["steps"]] * 8  # every epoch: the equal step count
    # a filter after the split, no steps=: the replicas agree; each id kept once, the same steps on both
    files = [list(range(a, b)) for a, b in zip(np.cumsum([0, *SIZES[:-1]]), np.cumsum(SIZES))]
    share = [[i for f in files[r::2] for i in f] for r in range(2)]
    kept = [[i for i in share[0] if i % 5 == 0], [i for i in share[1] if i % 3 != 0]]
    for agreed in result["agreed"]:
        assert sorted(agreed[0]) == kept[0] and sorted(agreed[1]) == kept[1]
        assert agreed[2] == -(-max(map(len, kept)) // 8)  # steps: the longer share's batches (the other pads)
    assert result["agreed_fit_steps"] == [-(-max(map(len, kept)) // 8)] * 2
    assert result["finite"] and result["loss"][-1] < 0.5 * result["loss"][0]
    assert result["accuracy"][-1] > 0.85


class FakeClock:
    """A clock that only moves when someone sleeps on it: timings are exact whatever else the machine is doing."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_feed_stats_count_the_time_tensorflow_spent_waiting_for_batches():
    clock = FakeClock()

    def make(delay):
        def pipeline(num_replicas, replica_id, batch_size):
            work = pf.Dataset.range(8).map(lambda x: clock.sleep(delay) or x)  # serial: inside each batch request
            return work.distribute(num_replicas, replica_id).batch(batch_size).equal_steps()

        return pipeline

    slow, ready = pf.adapters.tf.FeedStats(clock), pf.adapters.tf.FeedStats(clock)
    assert tf_elements(pf.adapters.tf.dataset_fn(make(0.05), 4, stats=slow)(context()))
    assert tf_elements(pf.adapters.tf.dataset_fn(make(0.0), 4, stats=ready)(context()))
    assert slow.batches == ready.batches == 4
    assert slow.waited == pytest.approx(8 * 0.05)  # every element's work, on both replicas' pipelines
    assert ready.waited == 0.0


def _fit_through_feed(path, stop_after=None, epochs=3):
    """Keras fit over a CheckpointedFeed up to ``epochs``; returns the batches trained on (first column of x)."""
    import keras

    produced, trained = [], []

    def record(x, y):  # the last step: batches in the order TensorFlow receives (and trains on) them
        produced.append(x[:, 0].astype(int).tolist())
        return x, y

    feed = pf.adapters.tf.CheckpointedFeed(_feed_pipeline().map(record), str(path), save_freq=3)

    class Record(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            produced.clear()

        def on_train_batch_end(self, batch, logs=None):
            trained.append(produced[batch])
            if stop_after is not None and len(trained) >= stop_after:
                self.model.stop_training = True

    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(2)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(feed.dataset, epochs=epochs, initial_epoch=feed.epoch, callbacks=[Record(), feed.callback], verbose=0)
    return trained


def _feed_pipeline():
    x = np.arange(64, dtype=np.float32).reshape(-1, 1)
    return pf.Dataset.from_tensor_slices((x, (x[:, 0] % 2).astype(np.int64))).shuffle(16, seed=1).batch(8)


def test_checkpointed_feed_keeps_each_position_before_handing_the_batch_over(tmp_path):
    """Bug: the state after batch k was kept only when TensorFlow asked for batch k + 1, so on a busy machine Keras
    could report batch k before its position existed (StateError in fit)."""
    feed = pf.adapters.tf.CheckpointedFeed(_feed_pipeline(), str(tmp_path / "feed.json"), save_freq=1)
    for k, _ in enumerate(feed.elements(), 1):  # nothing else runs: the position is there as the batch is
        assert feed.position(0, k)["steps"] == k
    assert k == 8 and feed.last == 8


@pytest.mark.parametrize("trained, read_to_the_end", [(8, False), (5, True)])
def test_an_epochs_end_saves_the_next_epoch_only_where_its_last_batch_was_trained(tmp_path, trained, read_to_the_end):
    """Bug: it went by whether TensorFlow had asked past the epoch's last batch: training stopped at the last batch
    before it had (a busy machine) saved a position after every batch, and its resume trained an empty epoch; one
    stopped before the last where TensorFlow had read to the end saved the next epoch, and lost the rest."""
    path = tmp_path / "feed.json"
    feed = pf.adapters.tf.CheckpointedFeed(_feed_pipeline(), str(path))
    elements = feed.elements()  # (as TensorFlow reads them)
    handed = [next(elements) for _ in range(8)]
    if read_to_the_end:
        assert next(elements, None) is None
    feed.callback.on_epoch_begin(0)
    for k in range(trained):  # (Keras's batches)
        feed.callback.on_train_batch_end(k)
    feed.callback.on_epoch_end(0)
    saved = json.loads(path.read_text())
    assert len(handed) == 8 and feed.last == 8
    if trained == 8:
        assert saved["epoch"] == 1 and saved["state"] is None
    else:
        assert saved["epoch"] == 0 and saved["state"]["steps"] == trained


@pytest.mark.timeout(300)
def test_checkpointed_feed_saves_where_keras_training_stopped(tmp_path):
    full = _fit_through_feed(tmp_path / "full.json")
    assert len(full) == 24
    # pre-empted at the end of epoch 0: the next run trains epochs 1 and 2 exactly as the uninterrupted run did
    path = tmp_path / "epoch.json"
    first = _fit_through_feed(path, stop_after=8)
    assert json.loads(path.read_text())["epoch"] == 1
    assert first + _fit_through_feed(path) == full
    # pre-empted after epoch 1's 3rd batch (TensorFlow had read further ahead): the state is the trained position
    path = tmp_path / "step.json"
    first = _fit_through_feed(path, stop_after=11)
    saved = json.loads(path.read_text())
    assert saved["epoch"] == 1 and saved["state"]["steps"] == 3
    same = _feed_pipeline().map(lambda x, y: (x, y))  # as the feed's, with its last step
    rest = [b[0][:, 0].astype(int).tolist() for b in pf.distribute.resume(same, saved["state"])]
    assert first + rest == full[:16]

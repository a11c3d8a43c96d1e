"""The parts of the MultiWorkerMirroredStrategy job (tests/adapters/jobs/multiworker.py) whose replicas agree on
their steps at run time, and the part where a worker dies.

One replica per worker (CPU). Each replica's pipeline filters after ``distribute()`` and keeps very different amounts
on the two replicas, then ``equal_steps()`` without ``steps=``: the batch counts are not known before the epoch, so
the workers vote every step whether each still has a batch (``pf.adapters.tf.worker_votes``: TensorFlow's collective
ops, beside the strategy's own all-reduces of the training step).

- :func:`run`, for each policy of POLICIES: two epochs of one distributed dataset in a custom loop (``strategy.run`` of
  a small tf_keras model's train step, which returns the ids and weights the replica trained on), then a
  ``model.fit`` of 2 epochs on a new, repeated one (tf_keras needs ``steps_per_epoch`` with a distributed dataset),
  steps counted by a callback;
- :func:`die`: worker 1 exits (``os._exit(DIE_EXIT)``) after the first step of the second epoch; worker 0 returns the
  error it got and how long after its last step it came (or ``"error": None`` if training went on).
"""

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

POLICIES = ("FILE", "RECORD")
GLOBAL_BATCH = 8  # 4 per replica
DIE_EXIT = 3  # worker 1's exit code


def keeps(replica_id: int, i: int) -> bool:
    """Which ids replica ``replica_id``'s filter keeps: nearly all on replica 0, one in 7 on replica 1."""
    return i % 9 != 0 if replica_id == 0 else i % 7 == 0


def make(files: list[str], policy: str, with_ids: bool = True):
    import parafeed as pf
    from tests.adapters.data import SPEC

    def pipeline(num_replicas, replica_id, batch_size):
        ds = pf.TFRecordDataset(files).distribute(num_replicas, replica_id, policy=policy)
        ds = ds.map(lambda record: pf.io.parse_single_example(record, SPEC))
        ds = ds.filter(lambda e: keeps(replica_id, int(e["id"])))
        ds = ds.map(lambda e: (e["id"], e["x"], e["label"]) if with_ids else (e["x"], e["label"]))
        return ds.batch(batch_size).equal_steps()  # (..., weights): 0 on the rows of padding batches

    return pipeline


def model_and_step(strategy, keras):
    """A small tf_keras model and a custom-loop train step returning (ids, weights, loss) of the replica."""
    import tensorflow as tf

    from tests.adapters.data import CLASSES

    with strategy.scope():
        model = keras.Sequential(
            [keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(CLASSES)]
        )
        optimizer = keras.optimizers.SGD(0.1)

    def replica_step(ids, x, labels, weights):
        with tf.GradientTape() as tape:
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, model(x, training=True))
            loss = tf.reduce_sum(losses * weights) / GLOBAL_BATCH
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))  # all-reduced over the workers
        return ids, weights, loss

    @tf.function
    def train_step(batch):
        return strategy.run(replica_step, args=batch)

    return model, train_step


def run(strategy, keras, policy: str, files: list[str]) -> dict:
    """Two custom-loop epochs and a 2-epoch fit under ``strategy``; returns what the test checks."""
    import numpy as np

    import parafeed as pf

    model, train_step = model_and_step(strategy, keras)
    feed = pf.adapters.tf.distribute(strategy, make(files, policy), GLOBAL_BATCH)
    result: dict = {"replicas": strategy.num_replicas_in_sync, "epochs": [], "losses": []}
    for _ in range(2):  # two passes over one distributed dataset: each its own votes
        epoch: dict = {"ids": [], "padded": 0, "steps": 0}
        for batch in feed:
            ids, weights, loss = (strategy.experimental_local_results(t)[0].numpy() for t in train_step(batch))
            epoch["ids"] += ids[weights == 1.0].tolist()
            epoch["padded"] += int((weights == 0.0).sum())
            epoch["steps"] += 1
            result["losses"].append(float(loss))
        result["epochs"].append(epoch)

    with strategy.scope():
        model.compile(keras.optimizers.SGD(0.1), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    steps: list[int] = []

    class CountSteps(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            steps.append(0)

        def on_train_batch_end(self, batch, logs=None):
            steps[-1] += 1

    # each repetition of the feed is an epoch of its own votes, as long as the custom loop's
    fit_feed = pf.adapters.tf.distribute(strategy, make(files, policy, with_ids=False), GLOBAL_BATCH, repeat=True)
    per_epoch = result["epochs"][0]["steps"]
    history = model.fit(fit_feed, epochs=2, steps_per_epoch=per_epoch, verbose=0, callbacks=[CountSteps()])
    result["fit_steps"] = steps
    result["fit_loss"] = history.history["loss"]
    result["finite"] = bool(np.all(np.isfinite(result["losses"] + result["fit_loss"])))
    return result


def die(strategy, keras, index: int, files: list[str]) -> dict:
    """Worker 1 exits after the first step of the second epoch; worker 0 reports what stopped it and when."""
    import parafeed as pf

    _, train_step = model_and_step(strategy, keras)
    feed = pf.adapters.tf.distribute(strategy, make(files, "RECORD"), GLOBAL_BATCH)
    last = time.monotonic()
    steps = 0
    try:
        for epoch in range(2):
            for batch in feed:
                train_step(batch)
                steps += 1
                last = time.monotonic()
                print(f"worker {index}: epoch {epoch} step {steps}", flush=True)
                if index == 1 and epoch == 1:
                    os._exit(DIE_EXIT)
    except Exception as err:  # what the survivor sees
        error = f"{type(err).__module__}.{type(err).__name__}: {err}"
        return {"error": error, "seconds": time.monotonic() - last, "steps": steps}
    return {"error": None, "seconds": time.monotonic() - last, "steps": steps}

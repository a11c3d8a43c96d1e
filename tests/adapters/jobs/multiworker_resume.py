"""One worker of a MultiWorkerMirroredStrategy job that is pre-empted and resumed on fewer workers (run by
tests/adapters/test_tf_resume.py: a job of 3 workers, killed, then a job of 2 from its checkpoint).

Usage: python -m tests.adapters.jobs.multiworker_resume INDEX PORTS WORKDIR STOP_AT FILE...

One replica per worker (CPU). Each replica reads the TFRecord files in one global shuffled order (a seeded shuffle
before ``distribute(policy="RECORD")``), batched with equal steps, through ``pf.adapters.tf.distribute``; a custom loop
trains a small tf_keras model with ``strategy.run``, whose replica function returns the ids of the rows it trained on
(so the log holds what each replica really trained on, in order). Every step goes to
``WORKDIR/trained-{workers}-{index}.jsonl``.

- ``STOP_AT`` > 0 (the first job): worker 0 checkpoints after step STOP_AT of epoch 0 (the model's weights and
  ``pf.distribute.save_state``) to ``WORKDIR/checkpoint.json``; every worker trains one step more (lost with the
  pre-emption: it is not in the checkpoint), writes ``WORKDIR/stopped-{index}`` and waits to be killed.
- ``STOP_AT`` = 0 (the second job): starts from ``WORKDIR/restart-from.json`` (the first job's checkpoint, moved
  there by the test) with ``resume_from=``, finishes that epoch and trains the next one whole, then writes
  ``WORKDIR/result-{index}.json``.

The checkpoint's input state is the adapter's (``pf.adapters.tf.FeedPositions``: the replica's state after each
batch, kept before TensorFlow reads it). An iterator of this replica's own pipeline (``pf.checkpoint.Epochs``, as the
adapter makes them) runs beside the strategy, one batch per training step: the log keeps its ids next to the trained
ones and the test checks they are the same (the strategy trains each replica on its own pipeline's batches, in order).
"""

import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

GLOBAL_BATCH = 12  # the same in both jobs: 4 per replica on 3 workers, 6 on 2
EPOCHS = 2
SHUFFLE_SEED = 5


def pipeline(files: list[str], num_replicas: int, replica_id: int, batch_size: int):
    """Replica ``replica_id``'s batches of (ids, x, labels, weights) of one global order, whatever the replica count."""
    import parafeed as pf
    from tests.adapters.data import SPEC

    def parse(record):
        e = pf.io.parse_single_example(record, SPEC)
        return e["id"], e["x"], e["label"]

    return (
        pf.TFRecordDataset(files)
        .shuffle(64, seed=SHUFFLE_SEED)  # before the split, seeded: one global order on every worker
        .distribute(num_replicas, replica_id, policy="RECORD")
        .map(parse)
        .batch(batch_size)
        .equal_steps()
        .prefetch(2)
    )


def write_json(path: str, data: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def main(index: int, ports: str, workdir: str, stop_at: int, files: list[str]) -> None:
    workers = [f"127.0.0.1:{p}" for p in ports.split(",")]
    os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras

    import parafeed as pf
    from tests.adapters.data import CLASSES

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    replicas = strategy.num_replicas_in_sync  # one per worker
    saved = None
    if not stop_at:
        with open(os.path.join(workdir, "restart-from.json")) as f:
            saved = json.load(f)
    state = saved["state"] if saved else None

    def make(num_replicas, replica_id, batch_size):
        return pipeline(files, num_replicas, replica_id, batch_size)

    positions = pf.adapters.tf.FeedPositions()
    feed = pf.adapters.tf.distribute(strategy, make, GLOBAL_BATCH, resume_from=state, positions=positions)
    beside = pf.checkpoint.Epochs(make(replicas, index, GLOBAL_BATCH // replicas), state)  # the order trained in

    with strategy.scope():
        model = keras.Sequential(
            [keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(CLASSES)]
        )
        optimizer = keras.optimizers.SGD(0.1)
    if saved:
        model.set_weights([np.array(w, np.float32) for w in saved["weights"]])

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

    log = open(os.path.join(workdir, f"trained-{replicas}-{index}.jsonl"), "a")
    epoch_steps = []
    for epoch in range(saved["epoch"] if saved else 0, EPOCHS):
        expected = beside.next()
        step = 0
        for batch in feed:  # a new pass over the distributed dataset: the adapter's next epoch
            ids, weights, loss = (strategy.experimental_local_results(t)[0].numpy() for t in train_step(batch))
            step += 1
            ahead = next(expected, None)  # the same pipeline's batch, beside the strategy (None: it had ended)
            line = {"epoch": epoch, "step": step, "ids": ids.tolist(), "weights": weights.tolist()}
            line.update(pipeline_ids=None if ahead is None else ahead[0].tolist(), loss=float(loss))
            log.write(json.dumps(line) + "\n")
            log.flush()
            if stop_at and step == stop_at and index == 0:  # the chief's checkpoint: weights and input position
                (mine,) = positions.states(step)  # (one replica per worker)
                checkpoint = {"epoch": epoch, "state": mine}
                checkpoint["weights"] = [w.tolist() for w in model.get_weights()]
                write_json(os.path.join(workdir, "checkpoint.json"), checkpoint)
            if stop_at and step == stop_at + 1:  # pre-empted: wait (serving the peers' requests) to be killed
                open(os.path.join(workdir, f"stopped-{index}"), "w").close()
                time.sleep(600)
        epoch_steps.append({"epoch": epoch, "steps": step, "pipeline_ended": next(expected, None) is None})
    log.close()
    weights_sum = float(sum(float(np.abs(w).sum()) for w in model.get_weights()))
    write_json(os.path.join(workdir, f"result-{index}.json"), {"epochs": epoch_steps, "weights": weights_sum})


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:])

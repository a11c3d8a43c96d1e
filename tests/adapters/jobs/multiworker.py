"""One worker of the MultiWorkerMirroredStrategy job fed by parafeed (tests/adapters/test_tf_multi_worker.py starts
two): one TensorFlow start and cluster for every check, which cost more than the checks' own training.

Usage: python -m tests.adapters.jobs.multiworker INDEX PORTS OUT.json FILE...

Under one strategy, each part with a new model and new pipelines, it writes to OUT.json:
- ``"uneven"``: for each policy of UNEVEN_POLICIES, uneven files made equal by ``equal_steps()`` (known counts) and a
  Keras fit (:func:`run`);
- ``"agreed"``: for each policy of tests/adapters/jobs/multiworker_agreed.py, replicas that agree on their steps at
  run time after a filter;
- ``"die"``: last, worker 1 exits with DIE_EXIT mid-epoch and worker 0 reports what stopped it.

Keras 3 cannot fit under MultiWorkerMirroredStrategy (keras-team/keras#20585), so this uses tf_keras, the Keras 2 that
``tf.keras`` is with ``TF_USE_LEGACY_KERAS=1``: it needs ``steps_per_epoch`` and a repeated dataset.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


UNEVEN_POLICIES = ("FILE", "AUTO")


def main(index: int, ports: str, out: str, files: list[str]) -> None:
    workers = [f"127.0.0.1:{p}" for p in ports.split(",")]
    os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})
    import tensorflow as tf
    import tf_keras as keras

    from tests.adapters.jobs import multiworker_agreed as agreed

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    results = {
        "uneven": {policy: run(strategy, keras, index, policy, files) for policy in UNEVEN_POLICIES},
        "agreed": {policy: agreed.run(strategy, keras, policy, files) for policy in agreed.POLICIES},
    }
    write_json(out, results)  # (worker 1 dies next)
    results["die"] = agreed.die(strategy, keras, index, files)
    write_json(out, results)
    os._exit(0)  # (a vote left in flight on a daemon thread must not hold the exit)


def write_json(path: str, data: dict) -> None:
    with open(path, "w") as f:
        json.dump(data, f)
    sys.stdout.flush()


def run(strategy, keras, index: int, policy: str, files: list[str]) -> dict:
    """One policy's checks and training under ``strategy``; returns what the test checks."""
    import numpy as np

    import parafeed as pf
    from tests.adapters.data import CLASSES, parse, parse_with_id

    def make(fn):
        def pipeline(num_replicas, replica_id, batch_size):
            # uneven files (with FILE: whole files per worker, very uneven shares): equal_steps() evens the steps
            return (
                pf.TFRecordDataset(files)
                .distribute(num_replicas, replica_id, policy=policy)
                .map(fn)
                .shuffle(32, seed=replica_id)
                .batch(batch_size)
                .equal_steps()
                .prefetch(pf.AUTOTUNE)
            )

        return pipeline

    result: dict = {"replicas": strategy.num_replicas_in_sync, "ids": [], "padded": 0}
    finite = pf.adapters.tf.distribute(strategy, make(parse_with_id), 16)
    # TensorFlow's batch dimension under this strategy (docs/distribution.md says what it is and why); a
    # PerReplicaSpec keeps its replicas' specs in _value_specs
    repeated = pf.adapters.tf.distribute(strategy, make(parse), 16, repeat=True)
    result["batch_dims"] = {
        "finite": finite.element_spec[0]._value_specs[0].shape[0],
        "repeat": repeated.element_spec[0]._value_specs[0].shape[0],
    }
    for batch in finite:
        ids, _, weights = (strategy.experimental_local_results(t)[0].numpy() for t in batch)  # one replica here
        real = weights == 1.0
        result["ids"] += ids[real].tolist()
        result["padded"] += int((~real).sum())
    steps = len(make(parse)(strategy.num_replicas_in_sync, index, 8))
    result["steps"] = steps

    with strategy.scope():
        model = keras.Sequential(
            [keras.layers.Dense(16, activation="relu", input_shape=(4,)), keras.layers.Dense(CLASSES)]
        )
        model.compile(
            keras.optimizers.Adam(0.02),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            weighted_metrics=["accuracy"],
        )
    history = model.fit(
        pf.adapters.tf.distribute(strategy, make(parse), 16, repeat=True), epochs=6, steps_per_epoch=steps, verbose=0
    )
    result["loss"] = history.history["loss"]
    result["accuracy"] = history.history["accuracy"]
    result["finite"] = bool(np.all(np.isfinite(result["loss"])))
    result["weights"] = float(sum(float(np.abs(w).sum()) for w in model.get_weights()))  # same on every worker
    return result


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:])

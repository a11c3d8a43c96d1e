"""NVIDIA ELECTRA (TF2) pretraining dataset: seeded file/record shuffles, deterministic interleave.

Repository: https://github.com/NVIDIA/DeepLearningExamples
Path: TensorFlow2/LanguageModeling/ELECTRA/pretrain_utils.py
Commit: 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): get_dataset, _decode_record
Changes from the original:
  - only get_dataset and _decode_record are kept (the module also holds masking and model-input helpers that use the
    sibling modules utils and tokenization)
Harness notes:
  - config is a harness namespace (max_seq_length 16, the pretrain-*.tfrecord pattern, seed 1); the dataset repeats
    forever, so the harness takes 3 batches.
"""
import tensorflow as tf

DATA = "bert"
DETERMINISTIC = True


# >>> verbatim: NVIDIA/DeepLearningExamples/TensorFlow2/LanguageModeling/ELECTRA/pretrain_utils.py @ 729963dd47e7
def get_dataset(config, batch_size, num_cpu_threads=4, world_size=1, rank=0):
    """Creates an `input_fn` closure to be passed to TPUEstimator."""

    name_to_features = {
        "input_ids": tf.io.FixedLenFeature([config.max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([config.max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([config.max_seq_length], tf.int64),
    }

    input_files = []
    for input_pattern in config.pretrain_tfrecords.split(","):
        input_files.extend(tf.io.gfile.glob(input_pattern))

    d = tf.data.Dataset.from_tensor_slices(tf.constant(input_files))
    d = d.shard(num_shards=world_size, index=rank)
    d = d.repeat()
    d = d.shuffle(buffer_size=len(input_files), seed=config.seed, reshuffle_each_iteration=False)

    cycle_length = min(num_cpu_threads, len(input_files))
    d = d.interleave(
        tf.data.TFRecordDataset,
        cycle_length=cycle_length,
        deterministic=True)
    d = d.shuffle(buffer_size=100, seed=config.seed, reshuffle_each_iteration=False)

    d = d.map(lambda record: _decode_record(record, name_to_features))
    d = d.batch(batch_size)

    return d

def _decode_record(record, name_to_features):
    """Decodes a record to a TensorFlow example."""
    example = tf.io.parse_single_example(record, name_to_features)

    # tf.Example only supports tf.int64, but the TPU only supports tf.int32.
    # So cast all int64 to int32.
    for name in list(example.keys()):
        t = example[name]
        if t.dtype == tf.int64:
            t = tf.cast(t, tf.int32)
        example[name] = t

    return example
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os
    import types

    config = types.SimpleNamespace(
        max_seq_length=16, pretrain_tfrecords=os.path.join(data_dir, "pretrain-*.tfrecord"), seed=1
    )
    return get_dataset(config, batch_size=3).take(3)

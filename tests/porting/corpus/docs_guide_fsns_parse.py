"""TensorFlow guide "tf.data": parsing tf.train.Example records with tf.io.parse_example.

Repository: https://github.com/tensorflow/docs
Path: site/en/guide/data.ipynb (code cells with ids y2X1dQNfC8Lu)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): tf_parse
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
Harness notes:
  - fsns_test_file points at the synthetic fsns.tfrec.
"""
import tensorflow as tf

DATA = "docs_tfrecord"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/guide/data.ipynb (code cells with ids y2X1dQNfC8Lu) @ 7c3650212740
def tf_parse(eg):
  example = tf.io.parse_example(
      eg[tf.newaxis], {
          'image/encoded': tf.io.FixedLenFeature(shape=(), dtype=tf.string),
          'image/text': tf.io.FixedLenFeature(shape=(), dtype=tf.string)
      })
  return example['image/encoded'][0], example['image/text'][0]
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    fsns_test_file = os.path.join(data_dir, "fsns.tfrec")
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell e2WV5d7DRUA-)
    dataset = tf.data.TFRecordDataset(filenames = [fsns_test_file])
    # (cell 8vFIUFzD5qIC)
    decoded = dataset.map(tf_parse)
    # <<< verbatim
    return decoded.batch(10)

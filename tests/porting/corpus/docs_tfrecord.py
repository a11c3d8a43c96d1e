"""TensorFlow tutorial "TFRecord and tf.train.Example": reading the records back.

Repository: https://github.com/tensorflow/docs
Path: site/en/tutorials/load_data/tfrecord.ipynb (code cells with ids zQjbIR1nleiy, M6Cnfd3cTKHN)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): feature_description, _parse_function,
image_feature_description, _parse_image_function
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
  - from cell M6Cnfd3cTKHN the feature description and the parse function are kept at module level, its two dataset
    lines are pasted into build()
Harness notes:
  - build() changes the working directory to data_dir (the notebook reads "test.tfrecord" and "images.tfrecords" by
    relative path); run_tf.py restores it.
"""
import tensorflow as tf
import os

DATA = "docs_tfrecord"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/tutorials/load_data/tfrecord.ipynb (code cells with ids zQjbIR1nleiy, M6Cnfd3cTKHN) @ 7c3650212740
# Create a description of the features.
feature_description = {
    'feature0': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    'feature1': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    'feature2': tf.io.FixedLenFeature([], tf.string, default_value=''),
    'feature3': tf.io.FixedLenFeature([], tf.float32, default_value=0.0),
}

def _parse_function(example_proto):
  # Parse the input `tf.train.Example` proto using the dictionary above.
  return tf.io.parse_single_example(example_proto, feature_description)


# Create a dictionary describing the features.
image_feature_description = {
    'height': tf.io.FixedLenFeature([], tf.int64),
    'width': tf.io.FixedLenFeature([], tf.int64),
    'depth': tf.io.FixedLenFeature([], tf.int64),
    'label': tf.io.FixedLenFeature([], tf.int64),
    'image_raw': tf.io.FixedLenFeature([], tf.string),
}

def _parse_image_function(example_proto):
  # Parse the input tf.train.Example proto using the dictionary above.
  return tf.io.parse_single_example(example_proto, image_feature_description)
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    os.chdir(data_dir)
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/load_data/tfrecord.ipynb @ 7c3650212740
    # (cell gxB_cwlN0DLy)
    filename = 'test.tfrecord'
    # (cell 6OjX6UZl-bHC)
    filenames = [filename]
    raw_dataset = tf.data.TFRecordDataset(filenames)
    # (cell 6Ob7D-zmBm1w)
    parsed_dataset = raw_dataset.map(_parse_function)
    # (cell M6Cnfd3cTKHN)
    raw_image_dataset = tf.data.TFRecordDataset('images.tfrecords')
    # (cell M6Cnfd3cTKHN)
    parsed_image_dataset = raw_image_dataset.map(_parse_image_function)
    # <<< verbatim
    return tf.data.Dataset.zip((parsed_dataset.batch(3), parsed_image_dataset))

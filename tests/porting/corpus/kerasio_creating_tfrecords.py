"""keras.io recipe "Creating TFRecords" (COCO annotations): the reading side.

Repository: https://github.com/keras-team/keras-io
Path: examples/keras_recipes/creating_tfrecords.py
Commit: 078fe3679040492491d4f24124cc272ad5ad7242
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): parse_tfrecord_fn, prepare_sample, get_dataset
Changes from the original:
  - only the reading functions are kept (the script downloads COCO and writes/plots at module level)
Harness notes:
  - tf.random.set_seed fixes the unseeded shuffle.
"""
import tensorflow as tf

DATA = "kerasio"
DETERMINISTIC = True


# >>> verbatim: keras-team/keras-io/examples/keras_recipes/creating_tfrecords.py @ 078fe3679040
def parse_tfrecord_fn(example):
    feature_description = {
        "image": tf.io.FixedLenFeature([], tf.string),
        "path": tf.io.FixedLenFeature([], tf.string),
        "area": tf.io.FixedLenFeature([], tf.float32),
        "bbox": tf.io.VarLenFeature(tf.float32),
        "category_id": tf.io.FixedLenFeature([], tf.int64),
        "id": tf.io.FixedLenFeature([], tf.int64),
        "image_id": tf.io.FixedLenFeature([], tf.int64),
    }
    example = tf.io.parse_single_example(example, feature_description)
    example["image"] = tf.io.decode_jpeg(example["image"], channels=3)
    example["bbox"] = tf.sparse.to_dense(example["bbox"])
    return example


def prepare_sample(features):
    image = tf.image.resize(features["image"], size=(224, 224))
    return image, features["category_id"]


def get_dataset(filenames, batch_size):
    """Return a Tensorflow dataset ready for training or inference."""
    dataset = (
        tf.data.TFRecordDataset(
            filenames, num_parallel_reads=tf.data.experimental.AUTOTUNE
        )
        .map(parse_tfrecord_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)
        .map(prepare_sample, num_parallel_calls=tf.data.experimental.AUTOTUNE)
        .shuffle(batch_size * 10)
        .batch(batch_size)
        .prefetch(tf.data.experimental.AUTOTUNE)
    )
    return dataset
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    return get_dataset([os.path.join(data_dir, "tfrecords", "file_00-3.tfrec")], batch_size=2)

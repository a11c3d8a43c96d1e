"""keras.io recipe "How to train a Keras model on TFRecord files" (melanoma TFRecords).

Repository: https://github.com/keras-team/keras-io
Path: examples/keras_recipes/tfrecord.py
Commit: 39c1ef25d453788de5f3855a18d16697f4ed0130
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): AUTOTUNE, BATCH_SIZE, IMAGE_SIZE, decode_image,
read_tfrecord, load_dataset, get_dataset
Changes from the original:
  - only the module constants and the four dataset functions are kept (the script also builds, trains and plots a
    model at module level)
Harness notes:
  - the images are 1024x1024 because decode_image reshapes to IMAGE_SIZE; tf.random.set_seed fixes get_dataset's
    unseeded shuffle; the source sets experimental_deterministic=False, so the order within the (single) batch may
    vary. The unlabeled path (labeled=False) is zipped in as well.
  - NOT DETERMINISTIC (DETERMINISTIC = False): the source sets experimental_deterministic=False on a parallel map, so
    the order of the two records within the batch may vary
"""
import tensorflow as tf
from functools import partial

DATA = "kerasio"
DETERMINISTIC = False


# >>> verbatim: keras-team/keras-io/examples/keras_recipes/tfrecord.py @ 39c1ef25d453
AUTOTUNE = tf.data.AUTOTUNE


BATCH_SIZE = 64
IMAGE_SIZE = [1024, 1024]


def decode_image(image):
    image = tf.image.decode_jpeg(image, channels=3)
    image = tf.cast(image, tf.float32)
    image = tf.reshape(image, [*IMAGE_SIZE, 3])
    return image


def read_tfrecord(example, labeled):
    tfrecord_format = (
        {
            "image": tf.io.FixedLenFeature([], tf.string),
            "target": tf.io.FixedLenFeature([], tf.int64),
        }
        if labeled
        else {
            "image": tf.io.FixedLenFeature([], tf.string),
        }
    )
    example = tf.io.parse_single_example(example, tfrecord_format)
    image = decode_image(example["image"])
    if labeled:
        label = tf.cast(example["target"], tf.int32)
        return image, label
    return image


def load_dataset(filenames, labeled=True):
    ignore_order = tf.data.Options()
    ignore_order.experimental_deterministic = False  # disable order, increase speed
    dataset = tf.data.TFRecordDataset(
        filenames
    )  # automatically interleaves reads from multiple files
    dataset = dataset.with_options(
        ignore_order
    )  # uses data as soon as it streams in, rather than in its original order
    dataset = dataset.map(
        partial(read_tfrecord, labeled=labeled), num_parallel_calls=AUTOTUNE
    )
    # returns a dataset of (image, label) pairs if labeled=True or just images if labeled=False
    return dataset


def get_dataset(filenames, labeled=True):
    dataset = load_dataset(filenames, labeled=labeled)
    dataset = dataset.shuffle(2048)
    dataset = dataset.prefetch(buffer_size=AUTOTUNE)
    dataset = dataset.batch(BATCH_SIZE)
    return dataset
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    files = [os.path.join(data_dir, "tfrecords", "train00-2.tfrec")]
    return tf.data.Dataset.zip((get_dataset(files), get_dataset(files, labeled=False)))

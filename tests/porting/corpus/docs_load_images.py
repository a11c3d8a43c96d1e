"""TensorFlow tutorial "Load and preprocess images": the tf.data pipeline over image files.

Repository: https://github.com/tensorflow/docs
Path: site/en/tutorials/load_data/images.ipynb (code cells with ids qJdpyqK541ty, Ea3kbMe-pGDw, arSQzIey-4D4,
MGlq4IP4Aktb, -xhBRgvNqRRe, uZmZJx8ePw_5)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): batch_size, img_height, img_width, AUTOTUNE,
get_label, decode_img, process_path, configure_for_performance
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
  - from cell Ea3kbMe-pGDw only the AUTOTUNE line is kept at module level (the rest refers to the keras-utility
    datasets of an earlier section)
Harness notes:
  - data_dir points at the synthetic flower_photos folder; tf.random.set_seed fixes the unseeded shuffles; `global
    class_names` makes the cell's class_names the module global that get_label reads, as in the notebook.
"""
import tensorflow as tf
import os
import numpy as np

DATA = "image_dir"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/tutorials/load_data/images.ipynb (code cells with ids qJdpyqK541ty, Ea3kbMe-pGDw, arSQzIey-4D4, MGlq4IP4Aktb, -xhBRgvNqRRe, uZmZJx8ePw_5) @ 7c3650212740
batch_size = 32
img_height = 180
img_width = 180


AUTOTUNE = tf.data.AUTOTUNE


def get_label(file_path):
  # Convert the path to a list of path components
  parts = tf.strings.split(file_path, os.path.sep)
  # The second to last is the class-directory
  one_hot = parts[-2] == class_names
  # Integer encode the label
  return tf.argmax(one_hot)


def decode_img(img):
  # Convert the compressed string to a 3D uint8 tensor
  img = tf.io.decode_jpeg(img, channels=3)
  # Resize the image to the desired size
  return tf.image.resize(img, [img_height, img_width])


def process_path(file_path):
  label = get_label(file_path)
  # Load the raw data from the file as a string
  img = tf.io.read_file(file_path)
  img = decode_img(img)
  return img, label


def configure_for_performance(ds):
  ds = ds.cache()
  ds = ds.shuffle(buffer_size=1000)
  ds = ds.batch(batch_size)
  ds = ds.prefetch(buffer_size=AUTOTUNE)
  return ds
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import pathlib

    global class_names
    tf.random.set_seed(0)
    data_dir = pathlib.Path(data_dir) / "flower_photos"
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/load_data/images.ipynb @ 7c3650212740
    # (cell QhewYCxhXQBX)
    image_count = len(list(data_dir.glob('*/*.jpg')))
    # (cell lAkQp5uxoINu)
    list_ds = tf.data.Dataset.list_files(str(data_dir/'*/*'), shuffle=False)
    list_ds = list_ds.shuffle(image_count, reshuffle_each_iteration=False)
    # (cell uRPHzDGhKACK)
    class_names = np.array(sorted([item.name for item in data_dir.glob('*') if item.name != "LICENSE.txt"]))
    # (cell GWHNPzXclpVr)
    val_size = int(image_count * 0.2)
    train_ds = list_ds.skip(val_size)
    val_ds = list_ds.take(val_size)
    # (cell 3SDhbo8lOBQv)
    # Set `num_parallel_calls` so multiple images are loaded/processed in parallel.
    train_ds = train_ds.map(process_path, num_parallel_calls=AUTOTUNE)
    val_ds = val_ds.map(process_path, num_parallel_calls=AUTOTUNE)
    # (cell uZmZJx8ePw_5)
    train_ds = configure_for_performance(train_ds)
    val_ds = configure_for_performance(val_ds)
    # <<< verbatim
    return train_ds.concatenate(val_ds)

"""TensorFlow guide "tf.data": image files, and an arbitrary Python function (scipy rotation) applied with
tf.py_function.

Repository: https://github.com/tensorflow/docs
Path: site/en/guide/data.ipynb (code cells with ids -xhBRgvNqRRe, fZObC0debDcr, tBUmbERt7Czz, Cn2nIu92BMp0)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): process_path, parse_image, random_rotate_image,
tf_random_rotate_image
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
  - the `import scipy.ndimage as ndimage` line of cell tBUmbERt7Czz is moved to the module imports
Harness notes:
  - flowers_root points at the synthetic flower_photos folder; tf.random.set_seed and np.random.seed fix the file
    shuffle and the rotation angles.
"""
import tensorflow as tf
import os
import numpy as np
import scipy.ndimage as ndimage

DATA = "image_dir"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/guide/data.ipynb (code cells with ids -xhBRgvNqRRe, fZObC0debDcr, tBUmbERt7Czz, Cn2nIu92BMp0) @ 7c3650212740
def process_path(file_path):
  label = tf.strings.split(file_path, os.sep)[-2]
  return tf.io.read_file(file_path), label


# Reads an image from a file, decodes it into a dense tensor, and resizes it
# to a fixed shape.
def parse_image(filename):
  parts = tf.strings.split(filename, os.sep)
  label = parts[-2]

  image = tf.io.read_file(filename)
  image = tf.io.decode_jpeg(image)
  image = tf.image.convert_image_dtype(image, tf.float32)
  image = tf.image.resize(image, [128, 128])
  return image, label


@tf.py_function(Tout=tf.float32)
def random_rotate_image(image):
  image = ndimage.rotate(image, np.random.uniform(-30, 30), reshape=False)
  return image


def tf_random_rotate_image(image, label):
  im_shape = image.shape
  image = random_rotate_image(image)
  image.set_shape(im_shape)
  return image, label
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import pathlib

    tf.random.set_seed(0)
    np.random.seed(0)
    flowers_root = pathlib.Path(data_dir) / "flower_photos"
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell lAkQp5uxoINu)
    list_ds = tf.data.Dataset.list_files(str(flowers_root/'*/*'))
    # (cell -xhBRgvNqRRe)
    labeled_ds = list_ds.map(process_path)
    # (cell rMGlj8V-u-NH)
    list_ds = tf.data.Dataset.list_files(str(flowers_root/'*/*'))
    # (cell SzO8LI_H5Sk_)
    images_ds = list_ds.map(parse_image)
    # (cell bWPqKbTnbDct)
    rot_ds = images_ds.map(tf_random_rotate_image)
    # <<< verbatim
    return tf.data.Dataset.zip((labeled_ds, rot_ds))

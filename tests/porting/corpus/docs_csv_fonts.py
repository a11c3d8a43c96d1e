"""TensorFlow tutorial "Load CSV data": many CSV files with make_csv_dataset, columns packed into images.

Repository: https://github.com/tensorflow/docs
Path: site/en/tutorials/load_data/csv.ipynb (code cells with ids hct5EMEWNyfH)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): make_images
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
  - the `import re` line of cell hct5EMEWNyfH is moved to the module imports
Harness notes:
  - build() changes the working directory to data_dir (the notebook reads "fonts/*.csv"); tf.random.set_seed fixes the
    make_csv_dataset shuffle.
"""
import tensorflow as tf
import re

DATA = "text"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/tutorials/load_data/csv.ipynb (code cells with ids hct5EMEWNyfH) @ 7c3650212740
def make_images(features):
  image = [None]*400
  new_feats = {}

  for name, value in features.items():
    match = re.match('r(\d+)c(\d+)', name)
    if match:
      image[int(match.group(1))*20+int(match.group(2))] = value
    else:
      new_feats[name] = value

  image = tf.stack(image, axis=0)
  image = tf.reshape(image, [20, 20, -1])
  new_feats['image'] = image

  return new_feats
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    os.chdir(data_dir)
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/load_data/csv.ipynb @ 7c3650212740
    # (cell 6TSUNdT6iG58)
    fonts_ds = tf.data.experimental.make_csv_dataset(
        file_pattern = "fonts/*.csv",
        batch_size=10, num_epochs=1,
        num_parallel_reads=20,
        shuffle_buffer_size=10000)
    # (cell DJnnfIW9baE4)
    fonts_image_ds = fonts_ds.map(make_images)
    # <<< verbatim
    return fonts_image_ds

"""TensorFlow tutorial "Load text": labelled lines from several text files (a lambda that closes over the loop variable).

Repository: https://github.com/tensorflow/docs
Path: site/en/tutorials/load_data/text.ipynb (code cells with ids YIIWIdPXgk7I, 6jAeYkTIi9-2)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): labeler, BUFFER_SIZE, BATCH_SIZE, VALIDATION_SIZE
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
Harness notes:
  - parent_dir and FILE_NAMES point at the synthetic Iliad files; tf.random.set_seed fixes the shuffle. The labels
    depend on the lambda seeing the loop variable i at trace time (TensorFlow traces map functions when map() is
    called).
"""
import tensorflow as tf

DATA = "text"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/tutorials/load_data/text.ipynb (code cells with ids YIIWIdPXgk7I, 6jAeYkTIi9-2) @ 7c3650212740
def labeler(example, index):
  return example, tf.cast(index, tf.int64)


BUFFER_SIZE = 50000
BATCH_SIZE = 64
VALIDATION_SIZE = 5000
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import pathlib

    tf.random.set_seed(0)
    FILE_NAMES = ['cowper.txt', 'derby.txt', 'butler.txt']
    parent_dir = pathlib.Path(data_dir)
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/load_data/text.ipynb @ 7c3650212740
    # (cell 8Ajx7AmZnEg3)
    labeled_data_sets = []

    for i, file_name in enumerate(FILE_NAMES):
      lines_dataset = tf.data.TextLineDataset(str(parent_dir/file_name))
      labeled_dataset = lines_dataset.map(lambda ex: labeler(ex, i))
      labeled_data_sets.append(labeled_dataset)
    # (cell Qd544E-Sh63L)
    all_labeled_data = labeled_data_sets[0]
    for labeled_dataset in labeled_data_sets[1:]:
      all_labeled_data = all_labeled_data.concatenate(labeled_dataset)

    all_labeled_data = all_labeled_data.shuffle(
        BUFFER_SIZE, reshuffle_each_iteration=False)
    # <<< verbatim
    return all_labeled_data

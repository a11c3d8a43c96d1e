"""TensorFlow guide "tf.data": class resampling (make_csv_dataset, reduce, sample_from_datasets, rejection_resample).

Repository: https://github.com/tensorflow/docs
Path: site/en/guide/data.ipynb (code cells with ids a8-Ss69XlzXD, zC_Cuzw8lhI5)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): count, class_func
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
Harness notes:
  - csv_path points at the synthetic creditcard.csv (12 rows, 3 of class 1); make_csv_dataset and the resampled
    datasets repeat forever, so the harness takes 2 batches of each; tf.random.set_seed fixes the shuffles and the
    sampling.
  - NOT DETERMINISTIC (DETERMINISTIC = False): make_csv_dataset, sample_from_datasets and rejection_resample draw from
    random streams in parallel readers/maps; the sampled rows differ from run to run
"""
import tensorflow as tf
import numpy as np

DATA = "text"
DETERMINISTIC = False


# >>> verbatim: tensorflow/docs/site/en/guide/data.ipynb (code cells with ids a8-Ss69XlzXD, zC_Cuzw8lhI5) @ 7c3650212740
def count(counts, batch):
  features, labels = batch
  class_1 = labels == 1
  class_1 = tf.cast(class_1, tf.int32)

  class_0 = labels == 0
  class_0 = tf.cast(class_0, tf.int32)

  counts['class_0'] += tf.reduce_sum(class_0)
  counts['class_1'] += tf.reduce_sum(class_1)

  return counts


def class_func(features, label):
  return label
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    csv_path = os.path.join(data_dir, "creditcard.csv")
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell EhkkM4Wx75S_)
    creditcard_ds = tf.data.experimental.make_csv_dataset(
        csv_path, batch_size=1024, label_name="Class",
        # Set the column types: 30 floats and an int.
        column_defaults=[float()]*30+[int()])
    # (cell O1a3t_B4l_f6)
    counts = creditcard_ds.take(10).reduce(
        initial_state={'class_0': 0, 'class_1': 0},
        reduce_func = count)

    counts = np.array([counts['class_0'].numpy(),
                       counts['class_1'].numpy()]).astype(np.float32)

    fractions = counts/counts.sum()
    # (cell 6YKfCPa-nioA)
    negative_ds = (
      creditcard_ds
        .unbatch()
        .filter(lambda features, label: label==0)
        .repeat())
    positive_ds = (
      creditcard_ds
        .unbatch()
        .filter(lambda features, label: label==1)
        .repeat())
    # (cell vjdPVIFCngOb)
    balanced_ds = tf.data.Dataset.sample_from_datasets(
        [negative_ds, positive_ds], [0.5, 0.5]).batch(10)
    # <<< verbatim
    sampled = balanced_ds
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell fY6VIhr3oGHG)
    resample_ds = (
        creditcard_ds
        .unbatch()
        .rejection_resample(class_func, target_dist=[0.5,0.5],
                            initial_dist=fractions)
        .batch(10))
    # (cell KpfCGU6BiaZq)
    balanced_ds = resample_ds.map(lambda extra_label, features_and_label: features_and_label)
    # <<< verbatim
    return tf.data.Dataset.zip((sampled.take(2), balanced_ds.take(2)))

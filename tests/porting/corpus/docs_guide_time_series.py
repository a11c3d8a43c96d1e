"""TensorFlow guide "tf.data": time series windowing (batch, window, flat_map).

Repository: https://github.com/tensorflow/docs
Path: site/en/guide/data.ipynb (code cells with ids 47XfwPhetkIN, FMmkQB1Gqo6x, ZEI2W_EBw2OX, 5j_y84rmyVQa,
LdFRv_0D4FqW)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): dense_1_step, label_next_5_steps, window_size,
sub_to_batch, make_window_dataset
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
Harness notes:
  - every dataset is cut with take(3) by the harness and the results are zipped.
"""
import tensorflow as tf

DATA = "none"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/guide/data.ipynb (code cells with ids 47XfwPhetkIN, FMmkQB1Gqo6x, ZEI2W_EBw2OX, 5j_y84rmyVQa, LdFRv_0D4FqW) @ 7c3650212740
def dense_1_step(batch):
  # Shift features and labels one step relative to each other.
  return batch[:-1], batch[1:]


def label_next_5_steps(batch):
  return (batch[:-5],   # Inputs: All except the last 5 steps
          batch[-5:])   # Labels: The last 5 steps


window_size = 5


def sub_to_batch(sub):
  return sub.batch(window_size, drop_remainder=True)


def make_window_dataset(ds, window_size=5, shift=1, stride=1):
  windows = ds.window(window_size, shift=shift, stride=stride)

  def sub_to_batch(sub):
    return sub.batch(window_size, drop_remainder=True)

  windows = windows.flat_map(sub_to_batch)
  return windows
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell kTQgo49skjuY)
    range_ds = tf.data.Dataset.range(100000)
    # (cell pSs9XqwQpvIN)
    batches = range_ds.batch(10, drop_remainder=True)
    # (cell 47XfwPhetkIN)
    predict_dense_1_step = batches.map(dense_1_step)
    # <<< verbatim
    first = predict_dense_1_step
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell FMmkQB1Gqo6x)
    batches = range_ds.batch(15, drop_remainder=True)


    predict_5_steps = batches.map(label_next_5_steps)
    # (cell 11dF3wyFjk2J)
    feature_length = 10
    label_length = 3

    features = range_ds.batch(feature_length, drop_remainder=True)
    labels = range_ds.batch(feature_length).skip(1).map(lambda labels: labels[:label_length])

    predicted_steps = tf.data.Dataset.zip((features, labels))
    # (cell ZEI2W_EBw2OX)
    windows = range_ds.window(window_size, shift=1)
    # (cell -iVxcVfEdf5b)
    ds = make_window_dataset(range_ds, window_size=10, shift = 5, stride=3)
    # (cell F0fPfZkZw6j_)
    dense_labels_ds = ds.map(dense_1_step)
    # <<< verbatim
    return tf.data.Dataset.zip(
        (
            first.take(3),
            predict_5_steps.take(3),
            predicted_steps.take(3),
            windows.flat_map(lambda x: x).take(3),
            windows.flat_map(sub_to_batch).take(3),
            dense_labels_ds.take(3),
        )
    )

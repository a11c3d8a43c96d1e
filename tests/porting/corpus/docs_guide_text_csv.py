"""TensorFlow guide "tf.data: Build TensorFlow input pipelines": text lines and CSV files.

Repository: https://github.com/tensorflow/docs
Path: site/en/guide/data.ipynb (code cells with ids dEIP95cibDcf)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): survived
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
Harness notes:
  - the keras get_file downloads are replaced by the synthetic files (file_paths, titanic_file); build() changes the
    working directory to data_dir (the notebook reads "missing.csv" by relative path); make_csv_dataset repeats
    forever, so the harness takes 2 batches; tf.random.set_seed fixes its shuffle.
"""
import tensorflow as tf

DATA = "text"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/guide/data.ipynb (code cells with ids dEIP95cibDcf) @ 7c3650212740
def survived(line):
  return tf.not_equal(tf.strings.substr(line, 0, 1), "0")
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    os.chdir(data_dir)
    file_paths = [os.path.join(data_dir, name) for name in ["cowper.txt", "derby.txt", "butler.txt"]]
    titanic_file = os.path.join(data_dir, "titanic", "train.csv")
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell il4cOjiVwj95)
    dataset = tf.data.TextLineDataset(file_paths)
    # (cell 1UCveWOt7fDE)
    files_ds = tf.data.Dataset.from_tensor_slices(file_paths)
    lines_ds = files_ds.interleave(tf.data.TextLineDataset, cycle_length=3)
    # <<< verbatim
    text_lines = dataset
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell X6b20Gua2jPO)
    titanic_lines = tf.data.TextLineDataset(titanic_file)
    # (cell dEIP95cibDcf)
    survivors = titanic_lines.skip(1).filter(survived)
    # (cell zHUDrM_s_brq)
    titanic_batches = tf.data.experimental.make_csv_dataset(
        titanic_file, batch_size=4,
        label_name="survived")
    # <<< verbatim
    csv_all_columns = titanic_batches
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell H9KNHyDwF2Sc)
    titanic_batches = tf.data.experimental.make_csv_dataset(
        titanic_file, batch_size=4,
        label_name="survived", select_columns=['class', 'fare', 'survived'])
    # (cell wP1Y_NXA8bYl)
    titanic_types  = [tf.int32, tf.string, tf.float32, tf.int32, tf.int32, tf.float32, tf.string, tf.string, tf.string, tf.string]
    dataset = tf.data.experimental.CsvDataset(titanic_file, titanic_types , header=True)
    # <<< verbatim
    csv_rows = dataset
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell d5_hbiE9bDck)
    record_defaults = [999,999,999,999]
    dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults)
    dataset = dataset.map(lambda *items: tf.stack(items))
    # <<< verbatim
    missing_all = dataset
    # >>> verbatim cells: tensorflow/docs/site/en/guide/data.ipynb @ 7c3650212740
    # (cell p2IF_K0obDcm)
    # Creates a dataset that reads all of the records from two CSV files with
    # headers, extracting float data from columns 2 and 4.
    record_defaults = [999, 999] # Only provide defaults for the selected columns
    dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults, select_cols=[1, 3])
    dataset = dataset.map(lambda *items: tf.stack(items))
    # <<< verbatim
    return tf.data.Dataset.zip(
        {
            "text_lines": text_lines.take(3),
            "interleaved": lines_ds.take(3),
            "survivors": survivors.take(3),
            "csv_all_columns": csv_all_columns.take(2),
            "csv_selected": titanic_batches.take(2),
            "csv_rows": csv_rows.take(3),
            "missing_all": missing_all.take(3),
            "missing_selected": dataset.take(3),
        }
    )

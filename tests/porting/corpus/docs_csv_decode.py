"""TensorFlow tutorial "Load CSV data": low-level CSV reading (CsvDataset, TextLineDataset + tf.io.decode_csv,
interleave).

Repository: https://github.com/tensorflow/docs
Path: site/en/tutorials/load_data/csv.ipynb (code cells with ids 7sPTunxwoeWU, E5O5d69Yq7gG, QWp4rH0Q4uPh)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): titanic_types, decode_titanic_line, make_font_csv_ds
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
  - font_column_types, which make_font_csv_ds reads as a global, is computed by the pasted cells in build() (cells
    3tlFOTjCvAI5, crgZZn0BzkSB) and stored as the module global by the harness
Harness notes:
  - titanic_file_path and font_csvs point at the synthetic files; build() changes the working directory to data_dir
    (the notebook reads "fonts/*.csv"); make_csv_dataset repeats per num_epochs=1; tf.random.set_seed fixes the
    shuffles.
"""
import tensorflow as tf

DATA = "text"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/tutorials/load_data/csv.ipynb (code cells with ids 7sPTunxwoeWU, E5O5d69Yq7gG, QWp4rH0Q4uPh) @ 7c3650212740
titanic_types = [int(), str(), float(), int(), int(), float(), str(), str(), str(), str()]


def decode_titanic_line(line):
  return tf.io.decode_csv(line, titanic_types)


def make_font_csv_ds(path):
  return tf.data.experimental.CsvDataset(
    path, 
    record_defaults=font_column_types, 
    header=True)
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os
    import pathlib

    global font_column_types
    tf.random.set_seed(0)
    os.chdir(data_dir)
    titanic_file_path = os.path.join(data_dir, "titanic", "train.csv")
    font_csvs = sorted(str(p) for p in pathlib.Path("fonts").glob("*.csv"))
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/load_data/csv.ipynb @ 7c3650212740
    # (cell yIbUscB9sqha)
    titanic_csv_ds = tf.data.experimental.make_csv_dataset(
        titanic_file_path,
        batch_size=5, # Artificially small to make examples easier to show.
        label_name='survived',
        num_epochs=1,
        ignore_errors=True,)
    # (cell 9OzZLp3krP-t)
    simple_titanic = tf.data.experimental.CsvDataset(titanic_file_path, record_defaults=titanic_types, header=True)
    # (cell E5O5d69Yq7gG)
    manual_titanic = (
        # Load the lines of text
        tf.data.TextLineDataset(titanic_file_path)
        # Skip the header row.
        .skip(1)
        # Decode the line.
        .map(decode_titanic_line)
    )
    # (cell 3tlFOTjCvAI5)
    font_line = pathlib.Path(font_csvs[0]).read_text().splitlines()[1]
    print(font_line)
    # (cell crgZZn0BzkSB)
    num_font_features = font_line.count(',')+1
    font_column_types = [str(), str()] + [float()]*(num_font_features-2)
    # (cell Gtr1E66VmBqj)
    simple_font_ds = tf.data.experimental.CsvDataset(
        font_csvs, 
        record_defaults=font_column_types, 
        header=True)
    # (cell t9dS3SNb23W8)
    font_files = tf.data.Dataset.list_files("fonts/*.csv")
    # (cell OePMNF_x1_Cc)
    font_rows = font_files.interleave(make_font_csv_ds,
                                      cycle_length=3)
    # (cell ieUVAPryjpJS)
    BATCH_SIZE=2048
    # (cell 4XbPZV1okVF9)
    fonts_files = tf.data.Dataset.list_files("fonts/*.csv")
    fonts_lines = fonts_files.interleave(
        lambda fname:tf.data.TextLineDataset(fname).skip(1), 
        cycle_length=100).batch(BATCH_SIZE)

    fonts_fast = fonts_lines.map(lambda x: tf.io.decode_csv(x, record_defaults=font_column_types))
    # <<< verbatim
    return tf.data.Dataset.zip(
        {
            "titanic_csv_ds": titanic_csv_ds.take(2),
            "simple_titanic": simple_titanic.take(3),
            "manual_titanic": manual_titanic.take(3),
            "simple_font_ds": simple_font_ds.take(3),
            "font_rows": font_rows.take(3),
            "fonts_fast": fonts_fast.take(1),
        }
    )

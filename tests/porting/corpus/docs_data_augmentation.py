"""TensorFlow tutorial "Data augmentation": tf.image stateless random ops in tf.data (Counter-zipped seeds, and a
tf.random.Generator).

Repository: https://github.com/tensorflow/docs
Path: site/en/tutorials/images/data_augmentation.ipynb (code cells with ids jMM3b85e3yhd, R5fGVMqlFxF7, 1JKmx06lfcFr,
KitLdvlpVxPa, BQDvedZ33eAy, eDEkO1nt2ta0)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): IMG_SIZE, batch_size, AUTOTUNE, resize_and_rescale,
augment, rng, f
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
  - from cell jMM3b85e3yhd only IMG_SIZE is kept (the cell also builds a keras Sequential that the tutorial later
    replaces by the resize_and_rescale function kept here); from cell R5fGVMqlFxF7 only batch_size and AUTOTUNE (the
    keras-layer prepare() is left out)
Harness notes:
  - train_datasets/val_ds (tfds tf_flowers in the tutorial) are (uint8 image, int64 label) pairs decoded from the
    synthetic flower_photos files by the harness; tf.random.set_seed fixes the shuffles.
  - NOT DETERMINISTIC (DETERMINISTIC = False): the tutorial draws seeds from a module-level tf.random.Generator inside
    a map with num_parallel_calls=AUTOTUNE, so which element gets which seed depends on scheduling (and the generator
    state carries over between builds in one process)
"""
import tensorflow as tf

DATA = "image_dir"
DETERMINISTIC = False


# >>> verbatim: tensorflow/docs/site/en/tutorials/images/data_augmentation.ipynb (code cells with ids jMM3b85e3yhd, R5fGVMqlFxF7, 1JKmx06lfcFr, KitLdvlpVxPa, BQDvedZ33eAy, eDEkO1nt2ta0) @ 7c3650212740
IMG_SIZE = 180


batch_size = 32
AUTOTUNE = tf.data.AUTOTUNE


def resize_and_rescale(image, label):
  image = tf.cast(image, tf.float32)
  image = tf.image.resize(image, [IMG_SIZE, IMG_SIZE])
  image = (image / 255.0)
  return image, label


def augment(image_label, seed):
  image, label = image_label
  image, label = resize_and_rescale(image, label)
  image = tf.image.resize_with_crop_or_pad(image, IMG_SIZE + 6, IMG_SIZE + 6)
  # Make a new seed.
  new_seed = tf.random.split(seed, num=1)[0, :]
  # Random crop back to the original size.
  image = tf.image.stateless_random_crop(
      image, size=[IMG_SIZE, IMG_SIZE, 3], seed=seed)
  # Random brightness.
  image = tf.image.stateless_random_brightness(
      image, max_delta=0.5, seed=new_seed)
  image = tf.clip_by_value(image, 0, 1)
  return image, label


# Create a generator.
rng = tf.random.Generator.from_seed(123, alg='philox')


# Create a wrapper function for updating seeds.
def f(x, y):
  seed = rng.make_seeds(1)[:, 0]
  image, label = augment((x, y), seed)
  return image, label
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    classes = sorted(d for d in os.listdir(os.path.join(data_dir, "flower_photos")) if not d.endswith(".txt"))
    files = sorted(tf.io.gfile.glob(os.path.join(data_dir, "flower_photos", "*", "*.jpg")))
    labels = [classes.index(os.path.basename(os.path.dirname(f))) for f in files]
    train_datasets = tf.data.Dataset.from_tensor_slices((files, tf.constant(labels, tf.int64))).map(
        lambda f, y: (tf.io.decode_jpeg(tf.io.read_file(f), channels=3), y)
    )
    val_ds = train_datasets
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/images/data_augmentation.ipynb @ 7c3650212740
    # (cell SZ6Qq0IWznfi)
    # Create a `Counter` object and `Dataset.zip` it together with the training set.
    counter = tf.data.experimental.Counter()
    train_ds = tf.data.Dataset.zip((train_datasets, (counter, counter)))
    # (cell wQK9BDKk1_3N)
    train_ds = (
        train_ds
        .shuffle(1000)
        .map(augment, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )
    # (cell 3AQoyA-k3ELk)
    val_ds = (
        val_ds
        .map(resize_and_rescale, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )
    # <<< verbatim
    counter_train_ds = train_ds
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/images/data_augmentation.ipynb @ 7c3650212740
    # (cell Pu2uB7k12xKw)
    train_ds = (
        train_datasets
        .shuffle(1000)
        .map(f, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )
    # <<< verbatim
    return tf.data.Dataset.zip((counter_train_ds, train_ds, val_ds))

"""Vision Transformer fine-tuning input pipeline over an image directory (vit_jax).

Repository: https://github.com/google-research/vision_transformer
Path: vit_jax/input_pipeline.py
Commit: c6de1e5378c9831a8477feb30994971bdc409e46
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): get_directory_info, get_data_from_directory, get_data
Changes from the original:
  - `import jax` is replaced by a stub (jax.local_device_count() == 1); the flax, tensorflow_datasets and resource
    imports are dropped with the functions that use them
Harness notes:
  - config is a harness namespace (batch 2, crop 32); the "test" mode (repeats=1, no shuffle) is followed by 2 batches
    of the "train" mode (repeats forever, random crop and flip); tf.random.set_seed fixes the list_files and shuffle
    orders and the random ops.
  - NOT DETERMINISTIC (DETERMINISTIC = False): the source calls tf.image.sample_distorted_bounding_box without a seed
    (its default seed=0 means a random seed, whatever tf.random.set_seed says), so the random crops differ from run to
    run; the element count and element_spec do not (train mode)
"""
import tensorflow as tf
import glob
import os

from absl import logging
import numpy as np

DATA = "image_dir"
DETERMINISTIC = False

# --- stubs (not from the source; listed under "Changes from the original") ---
import types as _types

jax = _types.SimpleNamespace(local_device_count=lambda: 1)
# --- end of stubs ---


# >>> verbatim: google-research/vision_transformer/vit_jax/input_pipeline.py @ c6de1e5378c9
def get_directory_info(directory):
  """Returns information about directory dataset -- see `get_dataset_info()`."""
  examples_glob = f'{directory}/*/*.jpg'
  paths = glob.glob(examples_glob)
  get_classname = lambda path: path.split('/')[-2]
  class_names = sorted(set(map(get_classname, paths)))
  return dict(
      num_examples=len(paths),
      num_classes=len(class_names),
      int2str=lambda id_: class_names[id_],
      examples_glob=examples_glob,
  )


def get_data_from_directory(*, config, directory, mode):
  """Returns dataset as read from specified `directory`."""

  dataset_info = get_directory_info(directory)
  data = tf.data.Dataset.list_files(dataset_info['examples_glob'])
  class_names = [
      dataset_info['int2str'](id_) for id_ in range(dataset_info['num_classes'])
  ]

  def _pp(path):
    return dict(
        image=path,
        label=tf.where(
            tf.strings.split(path, '/')[-2] == class_names
        )[0][0],
    )

  image_decoder = lambda path: tf.image.decode_jpeg(tf.io.read_file(path), 3)

  return get_data(
      data=data,
      mode=mode,
      num_classes=dataset_info['num_classes'],
      image_decoder=image_decoder,
      repeats=None if mode == 'train' else 1,
      batch_size=config.batch_eval if mode == 'test' else config.batch,
      image_size=config.pp['crop'],
      shuffle_buffer=min(dataset_info['num_examples'], config.shuffle_buffer),
      preprocess=_pp)


def get_data(*,
             data,
             mode,
             num_classes,
             image_decoder,
             repeats,
             batch_size,
             image_size,
             shuffle_buffer,
             preprocess=None):
  """Returns dataset for training/eval.

  Args:
    data: tf.data.Dataset to read data from.
    mode: Must be "train" or "test".
    num_classes: Number of classes (used for one-hot encoding).
    image_decoder: Applied to `features['image']` after shuffling. Decoding the
      image after shuffling allows for a larger shuffle buffer.
    repeats: How many times the dataset should be repeated. For indefinite
      repeats specify None.
    batch_size: Global batch size. Note that the returned dataset will have
      dimensions [local_devices, batch_size / local_devices, ...].
    image_size: Image size after cropping (for training) / resizing (for
      evaluation).
    shuffle_buffer: Number of elements to preload the shuffle buffer with.
    preprocess: Optional preprocess function. This function will be applied to
      the dataset just after repeat/shuffling, and before the data augmentation
      preprocess step is applied.
  """

  def _pp(data):
    im = image_decoder(data['image'])
    if mode == 'train':
      channels = im.shape[-1]
      begin, size, _ = tf.image.sample_distorted_bounding_box(
          tf.shape(im),
          tf.zeros([0, 0, 4], tf.float32),
          area_range=(0.05, 1.0),
          min_object_covered=0,  # Don't enforce a minimum area.
          use_image_if_no_bounding_boxes=True)
      im = tf.slice(im, begin, size)
      # Unfortunately, the above operation loses the depth-dimension. So we
      # need to restore it the manual way.
      im.set_shape([None, None, channels])
      im = tf.image.resize(im, [image_size, image_size])
      if tf.random.uniform(shape=[]) > 0.5:
        im = tf.image.flip_left_right(im)
    else:
      im = tf.image.resize(im, [image_size, image_size])
    im = (im - 127.5) / 127.5
    label = tf.one_hot(data['label'], num_classes)  # pylint: disable=no-value-for-parameter
    return {'image': im, 'label': label}

  data = data.repeat(repeats)
  if mode == 'train':
    data = data.shuffle(shuffle_buffer)
  if preprocess is not None:
    data = data.map(preprocess, tf.data.experimental.AUTOTUNE)
  data = data.map(_pp, tf.data.experimental.AUTOTUNE)
  data = data.batch(batch_size, drop_remainder=True)

  # Shard data such that it can be distributed accross devices
  num_devices = jax.local_device_count()

  def _shard(data):
    data['image'] = tf.reshape(data['image'],
                               [num_devices, -1, image_size, image_size,
                                data['image'].shape[-1]])
    data['label'] = tf.reshape(data['label'],
                               [num_devices, -1, num_classes])
    return data

  if num_devices is not None:
    data = data.map(_shard, tf.data.experimental.AUTOTUNE)

  return data.prefetch(1)
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import types

    tf.random.set_seed(0)
    config = types.SimpleNamespace(batch=2, batch_eval=2, pp={"crop": 32}, shuffle_buffer=10)
    directory = os.path.join(data_dir, "flower_photos")
    test = get_data_from_directory(config=config, directory=directory, mode="test")
    train = get_data_from_directory(config=config, directory=directory, mode="train")
    return test.concatenate(train.take(2))

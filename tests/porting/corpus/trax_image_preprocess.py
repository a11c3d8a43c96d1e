"""Trax tf.data preprocessing functions for image datasets (CIFAR-10 augmentation, flattening).

Repository: https://github.com/google/trax
Path: trax/data/tf_inputs.py
Commit: 7c189c2c3a37851df7fc641b322a99bbe9f8aa10
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): cifar10_no_augmentation_preprocess,
_cifar_augment_image, cifar10_augmentation_preprocess, cifar10_augmentation_flatten_preprocess,
downsampled_imagenet_flatten_bare_preprocess
Changes from the original:
  - `import gin` is replaced by a stub whose configurable() decorator returns the function unchanged
Harness notes:
  - the TFDS cifar10 dataset (({"image": uint8 [32, 32, 3]}, label) pairs in Trax) is decoded from the synthetic PNG
    records by the harness; tf.random.set_seed fixes the random crops and flips; the four preprocessed datasets are
    zipped.
"""
import tensorflow as tf

DATA = "cifar"
DETERMINISTIC = True

# --- stubs (not from the source; listed under "Changes from the original") ---
class _GinStub:
  """Stands in for `gin`: configurable() leaves the function as it is."""
  REQUIRED = object()

  @staticmethod
  def configurable(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
      return args[0]
    return lambda fn: fn


gin = _GinStub()
# --- end of stubs ---


# >>> verbatim: google/trax/trax/data/tf_inputs.py @ 7c189c2c3a37
# Makes the function accessible in gin configs, even with all args denylisted.
@gin.configurable(module='trax.data', denylist=['dataset', 'training'])
def cifar10_no_augmentation_preprocess(dataset, training):
  del training

  def cast_image(features, targets):
    features['image'] = tf.cast(features['image'], tf.float32) / 255.0
    return features, targets

  dataset = dataset.map(cast_image)
  return dataset


def _cifar_augment_image(image):
  """Image augmentation suitable for CIFAR-10/100.

  As described in https://arxiv.org/pdf/1608.06993v3.pdf (page 5).

  Args:
    image: a Tensor.

  Returns:
    Tensor of the same shape as image.
  """
  image = tf.image.resize_with_crop_or_pad(image, 40, 40)
  image = tf.image.random_crop(image, [32, 32, 3])
  image = tf.image.random_flip_left_right(image)
  return image


# Makes the function accessible in gin configs, even with all args denylisted.
@gin.configurable(module='trax.data', denylist=['dataset', 'training'])
def cifar10_augmentation_preprocess(dataset, training):
  """Preprocessing for cifar10 with augmentation (see below)."""

  def augment(features, targets):
    features['image'] = _cifar_augment_image(features['image'])
    return features, targets

  def cast_image(features, targets):
    features['image'] = tf.cast(features['image'], tf.float32) / 255.0
    return features, targets

  if training:
    dataset = dataset.map(augment)
  dataset = dataset.map(cast_image)
  return dataset


@gin.configurable(module='trax.data', denylist=['dataset', 'training'])
def cifar10_augmentation_flatten_preprocess(dataset,
                                            training,
                                            predict_image_train_weight=0.01):
  """Preprocessing for cifar10 that flattens it and appends targets."""

  def augment(features, targets):
    features['image'] = _cifar_augment_image(features['image'])
    return features, targets

  def flatten_image(features, targets):
    """Flatten the image."""
    img = features['image']
    flat = tf.cast(tf.reshape(img, [-1]), tf.int64)
    tgt = tf.expand_dims(targets, axis=0)
    flat_with_target = tf.concat([flat, tgt], axis=0)
    new_features = {}
    new_features['image'] = flat_with_target
    predict_image_weight = predict_image_train_weight if training else 0.0
    mask_begin = tf.ones_like(flat)
    mask_begin = tf.cast(mask_begin, tf.float32) * predict_image_weight
    mask_end = tf.cast(tf.ones_like(tgt), tf.float32)
    new_features['mask'] = tf.concat([mask_begin, mask_end], axis=0)
    return new_features, flat_with_target

  if training:
    dataset = dataset.map(augment)
  dataset = dataset.map(flatten_image)

  return dataset


@gin.configurable(module='trax.data', denylist=['dataset', 'training'])
def downsampled_imagenet_flatten_bare_preprocess(dataset, training):
  """Preprocessing for downsampled_imagenet.

  Args:
    dataset: the dataset.
    training: unused option.

  Returns:
    Flattened dataset.

  Preprocessing for downsampled_imagenet 32x32 and 64x64 generation from
  http://arxiv.org/abs/1601.06759 (page 8).
  """
  del training

  def flatten_image(features):
    img = features['image']
    flat = tf.cast(tf.reshape(img, [-1]), tf.int64)

    new_features = {'image': flat}
    return new_features

  return dataset.map(flatten_image)
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

    def decode(record):
        example = tf.io.parse_single_example(record, spec)
        return {"image": tf.io.decode_png(example["image"], channels=3)}, example["label"]

    def dataset():
        return tf.data.TFRecordDataset(os.path.join(data_dir, "cifar-00000-of-00001.tfrecord")).map(decode)

    return tf.data.Dataset.zip(
        (
            cifar10_no_augmentation_preprocess(dataset(), training=False),
            cifar10_augmentation_preprocess(dataset(), training=True),
            cifar10_augmentation_flatten_preprocess(dataset(), training=True),
            downsampled_imagenet_flatten_bare_preprocess(dataset().map(lambda x, y: x), training=False),
        )
    )

"""EfficientNetV2 ImageNet preprocessing (train, eval, fine-tune).

Repository: https://github.com/google/automl
Path: efficientnetv2/preprocessing.py
Commit: 6a54c8741e7c3265d4547c4f35f47a0391122dc5
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): preprocess_for_train, preprocess_for_eval,
preprocess_for_finetune, preprocess_image
Changes from the original:
  - the sibling modules `autoaugment` and `preprocess_legacy` (AutoAugment/RandAugment and the EfficientNet-V1
    preprocessing) are replaced by stubs that raise; the harness never selects them (augname None or "ft_plain")
Harness notes:
  - the encoded images are parsed from the ImageNet-style records by the harness; three paths are zipped: train
    (random crop and flip; tf.random.set_seed), eval (center crop) and fine-tune (augname "ft_plain", which starts
    with "ft" and names no AutoAugment policy).
  - NOT DETERMINISTIC (DETERMINISTIC = False): the source calls tf.image.sample_distorted_bounding_box without a seed
    (its default seed=0 means a random seed, whatever tf.random.set_seed says), so the random crops differ from run to
    run; the element count and element_spec do not
"""
import tensorflow as tf
from absl import logging

DATA = "imagenet"
DETERMINISTIC = False

# --- stubs (not from the source; listed under "Changes from the original") ---
class _Unavailable:
  def __init__(self, name):
    self._name = name

  def __getattr__(self, attr):
    def _raise(*args, **kwargs):
      raise NotImplementedError(f"stub: {self._name}.{attr} is not part of this corpus entry")
    return _raise


autoaugment = _Unavailable("autoaugment")
preprocess_legacy = _Unavailable("preprocess_legacy")
# --- end of stubs ---


# >>> verbatim: google/automl/efficientnetv2/preprocessing.py @ 6a54c8741e7c
def preprocess_for_train(image,
                         image_size,
                         augname=None,
                         ra_num_layers=None,
                         ra_magnitude=None,
                         transformations=None):
  """Preprocesses the given image for train."""
  transformations = transformations or 'crop|flip'
  # crop
  if 'crop' in transformations:
    begin, size, _ = tf.image.sample_distorted_bounding_box(
        tf.shape(image),
        tf.zeros([0, 0, 4], tf.float32),
        area_range=(0.05, 1.0),
        min_object_covered=0,
        use_image_if_no_bounding_boxes=True)
    image = tf.slice(image, begin, size)
  # resize
  image.set_shape([None, None, 3])
  image = tf.image.resize(image, [image_size, image_size])
  # flip
  if 'flip' in transformations:
    image = tf.image.random_flip_left_right(image)

  if augname:
    logging.info('Apply AutoAugment policy %s', augname)
    input_image_type = image.dtype
    image = tf.clip_by_value(image, 0.0, 255.0)
    image = tf.cast(image, dtype=tf.uint8)
    image = autoaugment.distort_image(image, augname, ra_num_layers,
                                      ra_magnitude)
    image = tf.cast(image, dtype=input_image_type)

  return image


def preprocess_for_eval(image, image_size, transformations=None):
  """Process image for eval."""
  transformations = transformations or ('crop' if image_size < 320 else '')
  if 'crop' in transformations:
    shape = tf.shape(image)
    height, width = shape[0], shape[1]
    ratio = image_size / (image_size + 32)  # for imagenet.
    crop_size = tf.cast(
        (ratio * tf.cast(tf.minimum(height, width), tf.float32)), tf.int32)
    y, x = (height - crop_size) // 2, (width - crop_size) // 2
    image = tf.image.crop_to_bounding_box(image, y, x, crop_size, crop_size)
  image.set_shape([None, None, 3])
  return tf.image.resize(image, [image_size, image_size])


def preprocess_for_finetune(image,
                            image_size,
                            is_training,
                            augname=None,
                            ra_num_layers=None,
                            ra_magnitude=None):
  """Preprocessor for finetuning."""
  logging.info('using preprocessing for finetuning.')
  # normalize
  mean, std = 0.5, 0.5
  image = (tf.cast(image, tf.float32) / 255.0 - mean) / std
  image.set_shape([None, None, 3])
  image = tf.image.resize(image, [image_size, image_size])

  if is_training:
    #  Random flip.
    image = tf.image.random_flip_left_right(image)
    if 'autoaug' in augname or 'randaug' in augname:
      # autoaug requires uint8 image values in [0, 255]
      image = ((image * std) + mean) * 255
      image = tf.cast(tf.clip_by_value(image, 0.0, 255.0), dtype=tf.uint8)
      if 'autoaug' in augname:
        image = autoaugment.distort_image(image, 'autoaug', ra_num_layers,
                                          ra_magnitude)
      if 'randaug' in augname:
        image = autoaugment.distort_image(image, 'randaug', ra_num_layers,
                                          ra_magnitude)
      image = (tf.cast(image, tf.float32) / 255.0 - mean) / std

    if augname == 'ft' or 'cutout' in augname:
      # Only apply cutout in default (replacing with random values).
      replace = tf.random.uniform(image.shape, 0.0, 1.0, image.dtype)
      image = autoaugment.cutout(
          image, pad_size=image_size // 4, replace=replace)
  return image


def preprocess_image(image,
                     image_size,
                     is_training,
                     image_dtype=None,
                     augname=None,
                     ra_num_layers=2,
                     ra_magnitude=15):
  """Preprocesses the given image.

  Args:
    image: `Tensor` representing an image binary of arbitrary size.
    image_size: int, image size after cropping or resizing.
    is_training: `bool` for whether the preprocessing is for training.
    image_dtype: image dtype. If None, default to tf.float32.
    augname: `string`, name of augmentation, 'autoaug' or 'randaug'.
    ra_num_layers: 'int', if RandAug is used, what should the number of layers
      be. See autoaugment.py for detailed description.
    ra_magnitude: 'int', if RandAug is used, what should the magnitude be. See
      autoaugment.py for detailed description.

  Returns:
    A preprocessed image `Tensor` with value range of [-1, 1].
  """
  if augname and augname.startswith('effnetv1_'):
    # Legacy efficientnet v1 preprocessing (for compitability and comparison).
    # Difference: (1) mean/stddev; (2) biubic; (3) cropping.
    augname = augname[len('effnetv1_'):]
    return preprocess_legacy.preprocess_image(image, image_size, is_training,
                                              image_dtype, augname,
                                              ra_num_layers, ra_magnitude)

  is_raw = (image.dtype == tf.string)
  image = tf.image.decode_image(image, channels=3) if is_raw else image

  if augname and augname.startswith('ft'):
    image = preprocess_for_finetune(image, image_size, is_training, augname,
                                    ra_num_layers, ra_magnitude)
  else:
    if is_training:
      image = preprocess_for_train(image, image_size, augname, ra_num_layers,
                                   ra_magnitude)
    else:
      image = preprocess_for_eval(image, image_size)
    image = (image - 128.0) / 128.0  # normalize to [-1, 1]
  return tf.cast(image, dtype=image_dtype or tf.float32)
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    files = sorted(tf.io.gfile.glob(os.path.join(data_dir, "train-*")))
    image_bytes = tf.data.TFRecordDataset(files).map(
        lambda r: tf.io.parse_single_example(r, {"image/encoded": tf.io.FixedLenFeature([], tf.string)})["image/encoded"]
    )
    train = image_bytes.map(lambda b: preprocess_image(b, 32, is_training=True))
    evaluation = image_bytes.map(lambda b: preprocess_image(b, 32, is_training=False))
    finetune = image_bytes.map(lambda b: preprocess_image(b, 32, is_training=True, augname="ft_plain"))
    return tf.data.Dataset.zip((train, evaluation, finetune)).batch(2)

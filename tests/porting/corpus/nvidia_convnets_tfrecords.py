"""NVIDIA ConvNets (ResNet-50 v1.5; the TensorFlow/ tree, written with tf.io names) TFRecord input function and ImageNet
preprocessing.

Repository: https://github.com/NVIDIA/DeepLearningExamples
Path: TensorFlow/Classification/ConvNets/utils/image_processing.py
Commit: 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd
Path: TensorFlow/Classification/ConvNets/utils/data_utils.py
Commit: 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): _RESIZE_MIN, _DEFAULT_IMAGE_SIZE,
_deserialize_image_record, _decode_jpeg, _crop_and_filp, _central_crop, _smallest_size_at_least,
_aspect_preserving_resize, _resize_image, preprocess_image_record, _R_MEAN, _G_MEAN, _B_MEAN, _CHANNEL_MEANS,
_CHANNEL_STDS, _NUM_CHANNELS, get_tfrecords_input_fn
Changes from the original:
  - `from utils import hvd_wrapper as hvd` (Horovod) is replaced by a stub with rank() == 0 and size() == 1
  - `from utils import image_processing` is replaced by a namespace holding image_processing.preprocess_image_record,
    kept verbatim above it
  - preprocess_image_file (which calls the TF1-only tf.read_file and an undefined bbox) and the DALI, synthetic and
    serving input functions of data_utils.py are left out
Harness notes:
  - training=True with deterministic=True (shuffle seed 13 * rank = 0) and training=False; both repeat forever, so the
    harness takes 2 batches of each and concatenates them.
  - NOT DETERMINISTIC (DETERMINISTIC = False): the source calls tf.image.sample_distorted_bounding_box without a seed
    (its default seed=0 means a random seed, whatever tf.random.set_seed says), so the random crops differ from run to
    run; the element count and element_spec do not
"""
import tensorflow as tf

DATA = "imagenet"
DETERMINISTIC = False

# --- stubs (not from the source; listed under "Changes from the original") ---
import types as _types

hvd = _types.SimpleNamespace(rank=lambda: 0, size=lambda: 1)
# --- end of stubs ---


# >>> verbatim: NVIDIA/DeepLearningExamples/TensorFlow/Classification/ConvNets/utils/image_processing.py @ 729963dd47e7
_RESIZE_MIN = 256
_DEFAULT_IMAGE_SIZE = 224


def _deserialize_image_record(record):
    feature_map = {
        'image/encoded': tf.io.FixedLenFeature([], tf.string, ''),
        'image/class/label': tf.io.FixedLenFeature([], tf.int64, -1),
        'image/class/text': tf.io.FixedLenFeature([], tf.string, ''),
        'image/object/bbox/xmin': tf.io.VarLenFeature(dtype=tf.float32),
        'image/object/bbox/ymin': tf.io.VarLenFeature(dtype=tf.float32),
        'image/object/bbox/xmax': tf.io.VarLenFeature(dtype=tf.float32),
        'image/object/bbox/ymax': tf.io.VarLenFeature(dtype=tf.float32)
    }
    with tf.name_scope('deserialize_image_record'):
        obj = tf.io.parse_single_example(record, feature_map)
        imgdata = obj['image/encoded']
        label = tf.cast(obj['image/class/label'], tf.int32)
        bbox = tf.stack([obj['image/object/bbox/%s' % x].values for x in ['ymin', 'xmin', 'ymax', 'xmax']])
        bbox = tf.transpose(tf.expand_dims(bbox, 0), [0, 2, 1])
        text = obj['image/class/text']
        return imgdata, label, bbox, text


def _decode_jpeg(imgdata, channels=3):
    return tf.image.decode_jpeg(imgdata, channels=channels, fancy_upscaling=False, dct_method='INTEGER_FAST')


def _crop_and_filp(image, bbox, num_channels):
    sample_distorted_bounding_box = tf.image.sample_distorted_bounding_box(
        tf.shape(image),
        bounding_boxes=bbox,
        min_object_covered=0.1,
        aspect_ratio_range=[0.75, 1.33],
        area_range=[0.05, 1.0],
        max_attempts=100,
        use_image_if_no_bounding_boxes=True
    )

    bbox_begin, bbox_size, _ = sample_distorted_bounding_box
    offset_y, offset_x, _ = tf.unstack(bbox_begin)
    target_height, target_width, _ = tf.unstack(bbox_size)
    cropped = tf.image.crop_to_bounding_box(image, offset_y, offset_x, target_height, target_width)
    cropped = tf.image.random_flip_left_right(cropped)
    return cropped


def _central_crop(image, crop_height, crop_width):
    shape = tf.shape(image)
    height, width = shape[0], shape[1]

    amount_to_be_cropped_h = (height - crop_height)
    crop_top = amount_to_be_cropped_h // 2
    amount_to_be_cropped_w = (width - crop_width)
    crop_left = amount_to_be_cropped_w // 2
    return tf.slice(image, [crop_top, crop_left, 0], [crop_height, crop_width, -1])


def _smallest_size_at_least(height, width, resize_min):
    resize_min = tf.cast(resize_min, tf.float32)

    # Convert to floats to make subsequent calculations go smoothly.
    height, width = tf.cast(height, tf.float32), tf.cast(width, tf.float32)

    smaller_dim = tf.minimum(height, width)
    scale_ratio = resize_min / smaller_dim

    # Convert back to ints to make heights and widths that TF ops will accept.
    new_height = tf.cast(height * scale_ratio, tf.int32)
    new_width = tf.cast(width * scale_ratio, tf.int32)

    return new_height, new_width


def _aspect_preserving_resize(image, resize_min):
    """Resize images preserving the original aspect ratio.

    Args:
    image: A 3-D image `Tensor`.
    resize_min: A python integer or scalar `Tensor` indicating the size of
      the smallest side after resize.

    Returns:
    resized_image: A 3-D tensor containing the resized image.
    """
    shape = tf.shape(image)
    height, width = shape[0], shape[1]

    new_height, new_width = _smallest_size_at_least(height, width, resize_min)

    return _resize_image(image, new_height, new_width)


def _resize_image(image, height, width):
    """Simple wrapper around tf.resize_images.

    This is primarily to make sure we use the same `ResizeMethod` and other
    details each time.

    Args:
    image: A 3-D image `Tensor`.
    height: The target height for the resized image.
    width: The target width for the resized image.

    Returns:
    resized_image: A 3-D tensor containing the resized image. The first two
      dimensions have the shape [height, width].
    """
    return tf.image.resize(image, [height, width], method=tf.image.ResizeMethod.BILINEAR, preserve_aspect_ratio=False)


def preprocess_image_record(record, height, width, num_channels, is_training=False):

    imgdata, label, bbox, text = _deserialize_image_record(record)
    label -= 1
    
    try:
        image = _decode_jpeg(imgdata, channels=3)
    except:
        image = tf.image.decode_image(imgdata, channels=3)

    if is_training:
        # For training, we want to randomize some of the distortions.
        image = _crop_and_filp(image, bbox, num_channels)
        image = _resize_image(image, height, width)
    else:
        image = _aspect_preserving_resize(image, _RESIZE_MIN)
        image = _central_crop(image, height, width)

    return image, label
# <<< verbatim


# --- stubs (not from the source; listed under "Changes from the original") ---
image_processing = _types.SimpleNamespace(preprocess_image_record=preprocess_image_record)
# --- end of stubs ---


# >>> verbatim: NVIDIA/DeepLearningExamples/TensorFlow/Classification/ConvNets/utils/data_utils.py @ 729963dd47e7
_R_MEAN = 123.68
_G_MEAN = 116.28
_B_MEAN = 103.53
_CHANNEL_MEANS = [_R_MEAN, _G_MEAN, _B_MEAN]
_CHANNEL_STDS = [58.395, 57.120, 57.385]

_NUM_CHANNELS = 3


def get_tfrecords_input_fn(filenames, batch_size, height, width, training, distort_color, num_threads, deterministic):

    shuffle_buffer_size = 4096

    if deterministic:
        seed = 13 * hvd.rank()
    else:
        seed = None

    ds = tf.data.Dataset.from_tensor_slices(filenames)

    if hvd.size() > 1 and training:
        ds = ds.shard(hvd.size(), hvd.rank())

    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=10, block_length=8)

    def preproc_func(record):
        return image_processing.preprocess_image_record(record, height, width, _NUM_CHANNELS, training)

    if training:
        ds = ds.shuffle(buffer_size=shuffle_buffer_size, seed=seed)

    ds = ds.repeat().map(preproc_func, num_parallel_calls=num_threads)
    ds = ds.batch(batch_size=batch_size, drop_remainder=True)
    ds = ds.prefetch(buffer_size=tf.data.experimental.AUTOTUNE)

    return ds
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    files = [os.path.join(data_dir, "train-%05d-of-00002" % i) for i in range(2)]
    train = get_tfrecords_input_fn(files, batch_size=2, height=32, width=32, training=True, distort_color=False,
                                   num_threads=2, deterministic=True)
    evaluation = get_tfrecords_input_fn(files, batch_size=2, height=32, width=32, training=False, distort_color=False,
                                        num_threads=2, deterministic=True)
    return train.take(2).concatenate(evaluation.take(2))

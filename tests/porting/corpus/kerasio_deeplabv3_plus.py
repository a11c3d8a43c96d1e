"""keras.io example "Multiclass semantic segmentation using DeepLabV3+" (Keras 3 version): image/mask pairs via
tensorflow submodule aliases.

Repository: https://github.com/keras-team/keras-io
Path: examples/vision/deeplabv3_plus.py
Commit: 1152d883930e8ab91a8c16366d5a21c67d771e82
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): IMAGE_SIZE, BATCH_SIZE, NUM_CLASSES, read_image,
load_data, data_generator
Changes from the original:
  - the script builds its datasets at module level; the constants and functions are kept at module level and the
    file-listing and dataset statements are pasted, unchanged but indented, into build() between "# >>> verbatim
    cells" and "# <<< verbatim" markers (count_names.py counts them); the keras, cv2, scipy and matplotlib imports,
    the model, the training and the plotting are left out
  - the source uses no `tf.` prefix: it imports `from tensorflow import image as tf_image` (and data, io); these
    import lines are kept (count_names.py resolves the aliases to tf.image, tf.data, tf.io)
Harness notes:
  - DATA_DIR points at the synthetic CIHP-style folder (8 JPEG images, 8 PNG masks; the source decodes both with
    decode_png, which TensorFlow also accepts for JPEG data); IMAGE_SIZE stays 512 as in the source; NUM_TRAIN_IMAGES
    and NUM_VAL_IMAGES (module constants of the script, 1000 and 50) are set to 4 by the harness so that both splits
    fill one batch of BATCH_SIZE=4 (with an empty list, from_tensor_slices makes float32 elements and read_file
    fails).
"""
import tensorflow as tf
import os
import numpy as np
from glob import glob

# For data preprocessing
from tensorflow import image as tf_image
from tensorflow import data as tf_data
from tensorflow import io as tf_io

DATA = "segmentation"
DETERMINISTIC = True


# >>> verbatim: keras-team/keras-io/examples/vision/deeplabv3_plus.py @ 1152d883930e
IMAGE_SIZE = 512
BATCH_SIZE = 4
NUM_CLASSES = 20


def read_image(image_path, mask=False):
    image = tf_io.read_file(image_path)
    if mask:
        image = tf_image.decode_png(image, channels=1)
        image.set_shape([None, None, 1])
        image = tf_image.resize(images=image, size=[IMAGE_SIZE, IMAGE_SIZE])
    else:
        image = tf_image.decode_png(image, channels=3)
        image.set_shape([None, None, 3])
        image = tf_image.resize(images=image, size=[IMAGE_SIZE, IMAGE_SIZE])
    return image


def load_data(image_list, mask_list):
    image = read_image(image_list)
    mask = read_image(mask_list, mask=True)
    return image, mask


def data_generator(image_list, mask_list):
    dataset = tf_data.Dataset.from_tensor_slices((image_list, mask_list))
    dataset = dataset.map(load_data, num_parallel_calls=tf_data.AUTOTUNE)
    dataset = dataset.batch(BATCH_SIZE, drop_remainder=True)
    return dataset
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    DATA_DIR = os.path.join(data_dir, "Training")
    NUM_TRAIN_IMAGES = 4
    NUM_VAL_IMAGES = 4
    # >>> verbatim cells: keras-team/keras-io/examples/vision/deeplabv3_plus.py @ 1152d883930e (script statements)
    train_images = sorted(glob(os.path.join(DATA_DIR, "Images/*")))[:NUM_TRAIN_IMAGES]
    train_masks = sorted(glob(os.path.join(DATA_DIR, "Category_ids/*")))[:NUM_TRAIN_IMAGES]
    val_images = sorted(glob(os.path.join(DATA_DIR, "Images/*")))[
        NUM_TRAIN_IMAGES : NUM_VAL_IMAGES + NUM_TRAIN_IMAGES
    ]
    val_masks = sorted(glob(os.path.join(DATA_DIR, "Category_ids/*")))[
        NUM_TRAIN_IMAGES : NUM_VAL_IMAGES + NUM_TRAIN_IMAGES
    ]


    def read_image(image_path, mask=False):
        image = tf_io.read_file(image_path)
        if mask:
            image = tf_image.decode_png(image, channels=1)
            image.set_shape([None, None, 1])
            image = tf_image.resize(images=image, size=[IMAGE_SIZE, IMAGE_SIZE])
        else:
            image = tf_image.decode_png(image, channels=3)
            image.set_shape([None, None, 3])
            image = tf_image.resize(images=image, size=[IMAGE_SIZE, IMAGE_SIZE])
        return image


    def load_data(image_list, mask_list):
        image = read_image(image_list)
        mask = read_image(mask_list, mask=True)
        return image, mask


    def data_generator(image_list, mask_list):
        dataset = tf_data.Dataset.from_tensor_slices((image_list, mask_list))
        dataset = dataset.map(load_data, num_parallel_calls=tf_data.AUTOTUNE)
        dataset = dataset.batch(BATCH_SIZE, drop_remainder=True)
        return dataset


    train_dataset = data_generator(train_images, train_masks)
    val_dataset = data_generator(val_images, val_masks)
    # <<< verbatim
    return train_dataset.concatenate(val_dataset)

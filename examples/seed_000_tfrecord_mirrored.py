"""Seed article 000 ported to parafeed: TFRecord -> parse tf.Example -> decode JPEG -> preprocess -> MirroredStrategy.

The article ("TensorFlow 数据并行流程与数据加载优化实践") loads ``train.tfrecords`` with ``tf.data.TFRecordDataset``,
parses each record with ``tf.io.parse_single_example`` and ``tf.io.decode_jpeg``, normalises and resizes the images,
then batches, caches and maps with ``AUTOTUNE`` and trains a Keras model under ``tf.distribute.MirroredStrategy``.
Here the same code runs with ``tf.data`` renamed to ``pf``: the pipeline is parafeed's (NumPy elements, no
TensorFlow in it), and ``.to_tf()`` hands its batches to Keras.

The data is made on the spot from scikit-learn's bundled handwritten digits (no download): each 8x8 digit is
upscaled, JPEG-encoded with OpenCV and written to ``train.tfrecords`` / ``test.tfrecords`` with
``pf.io.TFRecordWriter`` and ``pf.io.serialize_example``. Without a GPU, MirroredStrategy runs on two logical CPU
devices, so the data-parallel path (a global batch split between two replicas) really runs.

Run:
    python examples/seed_000_tfrecord_mirrored.py            # about 1-2 minutes on 2 CPU cores
    python examples/seed_000_tfrecord_mirrored.py --quick    # smaller images, fewer epochs
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from typing import Any

import numpy as np

import parafeed as pf

DIGIT_SIZE = 32  # the digits are stored as 32x32 grayscale JPEGs
# The article resizes to 224x224 for an ImageNet-sized model; on 2 CPU cores that makes training slow, so the
# default is 64x64 (the same code path; pass --image-size 224 for the article's size).
IMAGE_SIZE = 64


def write_digit_tfrecords(workdir: str, seed: int = 0) -> tuple[str, str]:
    """scikit-learn's digits as tf.Examples {'image': JPEG bytes, 'label': int64} in train/test TFRecord files."""
    import cv2
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images * (255.0 / 16.0)).astype(np.uint8)
    train_ids, test_ids = train_test_split(
        np.arange(len(images)), test_size=0.2, stratify=digits.target, random_state=seed
    )
    paths = []
    for name, ids in (("train.tfrecords", train_ids), ("test.tfrecords", test_ids)):
        path = os.path.join(workdir, name)
        with pf.io.TFRecordWriter(path) as writer:
            for i in ids:
                big = cv2.resize(images[i], (DIGIT_SIZE, DIGIT_SIZE), interpolation=cv2.INTER_CUBIC)
                ok, jpeg = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 95])
                if not ok:
                    raise RuntimeError(f"cv2.imencode failed for digit {i}")
                writer.write(pf.io.serialize_example({"image": jpeg.tobytes(), "label": int(digits.target[i])}))
        paths.append(path)
    return paths[0], paths[1]


# ---------------------------------------------------------------------------------------------- the article's code


def load_data(file_path: str) -> pf.Dataset:
    dataset = pf.TFRecordDataset(file_path)

    def _parse_function(serialized_example: bytes) -> tuple[np.ndarray, np.int64]:
        feature_description = {
            "image": pf.io.FixedLenFeature((), "string"),
            "label": pf.io.FixedLenFeature((), "int64"),
        }
        example = pf.io.parse_single_example(serialized_example, feature_description)
        # tf.io.decode_jpeg is pf.image.decode_jpeg (TensorFlow has both names, parafeed only the tf.image one)
        image = pf.image.decode_jpeg(example["image"])  # (32, 32, 1) uint8: the file's single channel
        label = example["label"]
        return image, label

    dataset = dataset.map(_parse_function)
    return dataset


def make_preprocess(image_size: int) -> Any:
    def preprocess_data(image: np.ndarray, label: np.int64) -> tuple[np.ndarray, np.int64]:
        image = image.astype(np.float32) / 255.0  # tf.cast(image, tf.float32) / 255.0
        image = pf.image.resize(image, [image_size, image_size])
        return image, label

    return preprocess_data


def build_model(keras: Any, image_size: int) -> Any:
    return keras.Sequential(
        [
            keras.Input((image_size, image_size, 1)),
            keras.layers.Conv2D(16, 3, activation="relu", padding="same"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(32, 3, activation="relu", padding="same"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )


def mirrored_strategy(tf: Any, replicas: int = 2) -> Any:
    """MirroredStrategy over the GPUs, or over ``replicas`` logical CPU devices when there is no GPU."""
    if tf.config.list_physical_devices("GPU"):
        return tf.distribute.MirroredStrategy()
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="where to write the TFRecord files (default: a temporary directory)")
    parser.add_argument("--epochs", type=int, help="training epochs (default 10, --quick 3)")
    parser.add_argument("--image-size", type=int, help=f"resize target (default {IMAGE_SIZE}, --quick 32)")
    parser.add_argument("--quick", action="store_true", help="smaller images and fewer epochs (used by the tests)")
    args = parser.parse_args()
    epochs = args.epochs or (3 if args.quick else 10)
    image_size = args.image_size or (32 if args.quick else IMAGE_SIZE)

    with tempfile.TemporaryDirectory(prefix="seed000-") as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        run(workdir, epochs, image_size)


def run(workdir: str, epochs: int, image_size: int) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    started = time.perf_counter()
    train_path, test_path = write_digit_tfrecords(workdir)
    print(f"data: {train_path} and {test_path} (JPEG digits, written by pf.io.TFRecordWriter)")

    preprocess_data = make_preprocess(image_size)
    # The article's steps, in the order that makes them pay off: parse + preprocess in parallel once, cache the
    # results in memory, then shuffle (a new order every epoch) and batch the cached elements.
    train_dataset = load_data(train_path)
    train_dataset = train_dataset.map(preprocess_data, num_parallel_calls=pf.AUTOTUNE)
    train_dataset = train_dataset.cache()
    train_dataset = train_dataset.shuffle(2048, seed=0)
    train_dataset = train_dataset.batch(32)
    train_dataset = train_dataset.prefetch(pf.AUTOTUNE)

    with iter(train_dataset) as iterator:  # closing it stops the prefetch and map threads at once
        images, labels = next(iterator)
    print(
        f"first batch: images {images.shape} {images.dtype} in [{images.min():.2f}, {images.max():.2f}], "
        f"labels {labels.shape} {labels.dtype}"
    )
    if images.shape[1:] != (image_size, image_size, 1) or not 0.0 <= images.min() <= images.max() <= 1.0:
        raise SystemExit(f"unexpected first batch: {images.shape}, [{images.min()}, {images.max()}]")

    import keras
    import tensorflow as tf

    # the "shuffle" notice is about Keras' own shuffling, which does not apply to a dataset
    warnings.filterwarnings("ignore", message="`shuffle=True` was passed")
    strategy = mirrored_strategy(tf)
    print(f"MirroredStrategy: {strategy.num_replicas_in_sync} replicas ({', '.join(strategy.extended.worker_devices)})")
    with strategy.scope():
        model = build_model(keras, image_size)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(train_dataset.to_tf(), epochs=epochs, verbose=2)

    test_dataset = load_data(test_path).map(preprocess_data, num_parallel_calls=pf.AUTOTUNE).batch(64)
    test_loss, test_accuracy = model.evaluate(test_dataset.to_tf(), verbose=0)
    seconds = time.perf_counter() - started
    print(f"train accuracy (last epoch): {history.history['accuracy'][-1]:.3f}")
    print(
        f"test accuracy: {test_accuracy:.3f} (test loss {test_loss:.3f}; {epochs} epochs, {image_size}x{image_size} "
        f"images, {seconds:.0f} s)"
    )
    if not np.isfinite(test_loss) or test_accuracy < 0.5:
        raise SystemExit(f"training failed: test accuracy {test_accuracy:.3f}, loss {test_loss}")


if __name__ == "__main__":
    main()

"""An input-only module ports by its import line alone: the seed articles' map functions (``tf.cast`` included), with
``import parafeed as tf`` instead of ``import tensorflow as tf``, give TensorFlow's elements exactly, on files
TensorFlow wrote."""

from __future__ import annotations

import types

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="compared with TensorFlow (make test installs it)")

# seed 000's load_data / _parse_function / preprocess_data, and seed 003's decoding with TF1's names (through
# tf.compat.v1, as TF1 code runs under TensorFlow 2), as a module that holds only input code
SOURCE = """
import {framework} as tf


def load_data(file_path):
    dataset = tf.data.TFRecordDataset(file_path)

    def _parse_function(serialized_example):
        feature_description = {
            'image': tf.io.FixedLenFeature((), tf.string),
            'label': tf.io.FixedLenFeature((), tf.int64),
        }
        example = tf.io.parse_single_example(serialized_example, feature_description)
        image = tf.io.decode_jpeg(example['image'])
        label = example['label']
        return image, label

    dataset = dataset.map(_parse_function)
    return dataset


def preprocess_data(image, label):
    image = tf.cast(image, tf.float32) / 255.0
    image = tf.image.resize(image, [224, 224])
    return image, label


def tf1_decode(serialized_example):
    features = tf.compat.v1.parse_single_example(serialized_example, features={
        'image': tf.compat.v1.FixedLenFeature([], tf.string),
        'label': tf.compat.v1.FixedLenFeature([], tf.int64)
    })
    image = tf.image.decode_jpeg(features['image'], channels=3)
    image = tf.compat.v1.image.resize_images(image, [64, 64])
    label = tf.cast(features['label'], tf.int32)
    return image, label


def build(path):
    train = load_data(path).map(preprocess_data, num_parallel_calls=tf.data.AUTOTUNE).batch(2)
    tf1 = tf.data.TFRecordDataset(path).map(tf1_decode).batch(2)
    return tf.data.Dataset.zip((train, tf1))
"""


def module(framework: str) -> types.ModuleType:
    out = types.ModuleType(f"input_{framework}")
    exec(compile(SOURCE.replace("{framework}", framework), f"<input module, {framework}>", "exec"), out.__dict__)
    return out


def write_records(path: str) -> None:
    rng = np.random.default_rng(0)
    with tf.io.TFRecordWriter(path) as writer:
        for label in range(5):
            image = rng.integers(0, 256, (30 + label, 41, 3), dtype=np.uint8)
            feature = {
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[tf.io.encode_jpeg(image).numpy()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def leaves(element):
    return [np.asarray(x.numpy() if hasattr(x, "numpy") else x) for x in tf.nest.flatten(element)]


def test_an_input_module_ports_by_its_import_line(tmp_path):
    path = str(tmp_path / "train.tfrecords")
    write_records(path)
    want = [leaves(e) for e in module("tensorflow").build(path)]
    got = [leaves(e) for e in module("parafeed").build(path)]
    assert len(got) == len(want) == 3
    for w, g in zip(want, got):
        assert [(x.dtype, x.shape) for x in g] == [(x.dtype, x.shape) for x in w]
        for a, b in zip(w, g):
            np.testing.assert_array_equal(b, a)  # decode_jpeg and the resizes are bit-exact

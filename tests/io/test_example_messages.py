"""pf.train: tf.train's Example messages without TensorFlow, byte-compatible with TensorFlow's."""

from __future__ import annotations

import numpy as np
import pytest

import parafeed as pf


def _example(t):
    return t.Example(features=t.Features(feature={
        "label": t.Feature(int64_list=t.Int64List(value=[3, -1])),
        "score": t.Feature(float_list=t.FloatList(value=[0.5])),
        "name": t.Feature(bytes_list=t.BytesList(value=[b"cat"])),
    }))  # fmt: skip


def test_pf_train_examples_parse_in_parafeed():
    data = _example(pf.train).SerializeToString()
    parsed = pf.io.parse_single_example(data, {"label": pf.io.FixedLenFeature([2], np.int64),
                                               "name": pf.io.FixedLenFeature([], "string")})  # fmt: skip
    assert parsed["label"].tolist() == [3, -1] and parsed["name"] == b"cat"
    seq = pf.train.SequenceExample(feature_lists=pf.train.FeatureLists(feature_list={
        "f": pf.train.FeatureList(feature=[pf.train.Feature(int64_list=pf.train.Int64List(value=[1]))])}))  # fmt: skip
    assert pf.train.SequenceExample.FromString(seq.SerializeToString()) == seq
    with pytest.raises(AttributeError):
        pf.train.Nope  # noqa: B018


def test_bytes_match_and_parse_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _example(pf.train), _example(tf.train)
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
    spec = {"label": tf.io.FixedLenFeature([2], tf.int64), "score": tf.io.FixedLenFeature([], tf.float32)}
    parsed = tf.io.parse_single_example(ours.SerializeToString(), spec)
    assert parsed["label"].numpy().tolist() == [3, -1] and parsed["score"].numpy() == 0.5
    back = pf.train.Example.FromString(theirs.SerializeToString())
    assert back.features.feature["name"].bytes_list.value == [b"cat"]

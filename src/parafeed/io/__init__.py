"""File formats: TFRecord files, tf.train.Example / SequenceExample, record indexes, the cache file format."""

from parafeed.io.example import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
    parse_single_sequence_example,
)
from parafeed.io.example_proto import serialize_example, serialize_sequence_example
from parafeed.io.index import TFRecordIndex
from parafeed.io.tfrecord import TFRecordOptions, TFRecordWriter, tf_record_iterator

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "TFRecordIndex",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "parse_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "serialize_example",
    "serialize_sequence_example",
    "tf_record_iterator",
]

"""File formats: TFRecord files, tf.train.Example / SequenceExample, record indexes, the cache file format.

The image decoders are here too (``pf.io.decode_jpeg`` ...), as TensorFlow has them in both ``tf.io`` and
``tf.image``: code ported by renaming finds them in either place.
"""

from parafeed.io.example import parse_example, parse_single_example, parse_single_sequence_example
from parafeed.io.example_proto import serialize_example, serialize_sequence_example
from parafeed.io.feature_specs import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from parafeed.io.index import TFRecordIndex
from parafeed.io.ragged_feature import RaggedFeature
from parafeed.io.storage import read_file
from parafeed.io.text import decode_csv
from parafeed.io.tfrecord import TFRecordOptions, TFRecordWriter, tf_record_iterator
from parafeed.tensor_ops.image import decode_image, decode_jpeg, decode_png

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "TFRecordIndex",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "decode_csv",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "parse_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "read_file",
    "serialize_example",
    "serialize_sequence_example",
    "tf_record_iterator",
]

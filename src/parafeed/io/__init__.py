"""File formats: TFRecord files, tf.train.Example / SequenceExample, record indexes, the cache file format; tensors
in bytes (``decode_raw``, base64, ``serialize_tensor`` / ``parse_tensor``, ``decode_compressed``); ``pf.io.gfile``
(``tf.io.gfile`` over local paths and fsspec URLs).

The image decoders are here too (``pf.io.decode_jpeg`` ...), as TensorFlow has them in both ``tf.io`` and
``tf.image``: code ported by renaming finds them in either place.
"""

from parafeed.io import gfile
from parafeed.io.example import parse_example, parse_single_example, parse_single_sequence_example
from parafeed.io.example_proto import serialize_example, serialize_sequence_example
from parafeed.io.feature_specs import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from parafeed.io.index import TFRecordIndex
from parafeed.io.ragged_feature import RaggedFeature
from parafeed.io.storage import read_file
from parafeed.io.tensor_proto import parse_tensor, serialize_tensor
from parafeed.io.tensors import decode_base64, decode_compressed, decode_raw, encode_base64
from parafeed.io.text import decode_csv
from parafeed.io.tfrecord import TFRecordOptions, TFRecordWriter, tf_record_iterator
from parafeed.tensor_ops.image import (
    decode_and_crop_jpeg,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from parafeed.values.tensor import export_tensor_results

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "TFRecordIndex",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "decode_base64",
    "decode_compressed",
    "decode_csv",
    "decode_and_crop_jpeg",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_raw",
    "encode_jpeg",
    "encode_png",
    "extract_jpeg_shape",
    "is_jpeg",
    "encode_base64",
    "gfile",
    "parse_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "parse_tensor",
    "read_file",
    "serialize_example",
    "serialize_sequence_example",
    "serialize_tensor",
    "tf_record_iterator",
]

export_tensor_results(globals())  # (results as Tensors, as TensorFlow's operations return them)

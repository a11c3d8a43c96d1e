"""File formats: TFRecord reading and writing, tf.train.Example, and the cache file format."""

from parafeed.io.tfrecord import TFRecordOptions, TFRecordWriter, tf_record_iterator

__all__ = ["TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]

"""File formats: the cache file format here; TFRecord, tf.Example, CSV and text readers and writers."""

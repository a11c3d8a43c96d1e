"""``pf.lookup``: TensorFlow's lookup tables for input code (``StaticHashTable``, ``StaticVocabularyTable`` and their
initializers), as Python dicts: keys and values from tensors (``KeyValueTensorInitializer``) or from a text file
(``TextFileInitializer``, local or any URL ``pf.io.gfile`` reads). ``table.lookup(keys)`` maps a tensor of keys to
a tensor of values of the same shape.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.convert import array, out
from parafeed.values.structure import STRING, as_dtype, dtype_name
from parafeed.values.tensor import Tensor


class TextFileIndex:
    """Where a key or value comes from in a line of a text file: the whole line, its number, or a column index."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _key(value: Any) -> Any:
    return value.encode() if isinstance(value, str) else value.item() if isinstance(value, np.generic) else value


class KeyValueTensorInitializer:
    """Keys and values given as tensors (or lists) of the same length."""

    def __init__(self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None, name: str | None = None):
        k, v = array(keys, "KeyValueTensorInitializer()"), array(values, "KeyValueTensorInitializer()")
        self.key_dtype = as_dtype(key_dtype) if key_dtype is not None else k.dtype
        self.value_dtype = as_dtype(value_dtype) if value_dtype is not None else v.dtype
        if k.shape != v.shape or k.ndim != 1:
            raise InvalidArgumentError(
                f"KeyValueTensorInitializer(): keys and values must be 1-D of one length, got {k.shape} and {v.shape}"
            )
        self.pairs = {_key(a): b for a, b in zip(k.astype(self.key_dtype).tolist(), v.astype(self.value_dtype))}


class TextFileInitializer:
    """Keys and values read from a text file, one entry per line: a column (split at ``delimiter``), the whole line
    (:attr:`TextFileIndex.WHOLE_LINE`) or the line number (:attr:`TextFileIndex.LINE_NUMBER`)."""

    def __init__(self, filename: Any, key_dtype: Any, key_index: int, value_dtype: Any, value_index: int,
                 vocab_size: int | None = None, delimiter: str = "\t", name: str | None = None,
                 value_index_offset: int = 0):  # fmt: skip
        from parafeed.io.gfile import GFile

        self.key_dtype, self.value_dtype = as_dtype(key_dtype), as_dtype(value_dtype)
        self.delimiter = delimiter.encode()
        name_value = filename if isinstance(filename, (str, bytes)) else np.asarray(filename).reshape(()).item()
        path = name_value.decode() if isinstance(name_value, bytes) else str(name_value)
        with GFile(path, "rb") as f:
            lines = cast(bytes, f.read()).split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if vocab_size is not None:
            lines = lines[: int(vocab_size)]
        self.pairs = {}
        for number, line in enumerate(lines):
            key = self._field(line.rstrip(b"\r"), number, key_index, self.key_dtype, path)
            self.pairs[key] = self._field(line.rstrip(b"\r"), number, value_index, self.value_dtype, path)

    def _field(self, line: bytes, number: int, index: int, dtype: np.dtype, path: str) -> Any:
        if index == TextFileIndex.LINE_NUMBER:
            return number
        columns = [line] if index == TextFileIndex.WHOLE_LINE else line.split(self.delimiter)
        if index >= len(columns):
            raise InvalidArgumentError(f"TextFileInitializer: {path}, line {number + 1} has no column {index}")
        text = columns[max(index, 0)]
        if dtype == STRING:
            return text
        try:
            return dtype.type(text.decode())
        except ValueError:
            raise InvalidArgumentError(
                f"TextFileInitializer: {path}, line {number + 1}: {text!r:.60} is not a {dtype_name(dtype)}"
            ) from None


class StaticHashTable:
    """A table that does not change: ``lookup`` gives each key's value, ``default_value`` for unknown keys."""

    def __init__(self, initializer: Any, default_value: Any, name: str | None = None, experimental_is_anonymous: bool =
                 False):  # fmt: skip
        self._pairs = dict(initializer.pairs)
        self.key_dtype, self.value_dtype = initializer.key_dtype, initializer.value_dtype
        self.default_value = np.asarray(default_value, dtype=self.value_dtype)

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:
        k = array(keys, "lookup()")
        flat = [self._pairs.get(_key(key), self.default_value) for key in k.reshape(-1).tolist()]
        return out(np.asarray(flat, dtype=self.value_dtype).reshape(k.shape))

    def size(self, name: str | None = None) -> Tensor:
        return out(np.int64(len(self._pairs)))

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        keys = np.asarray(list(self._pairs), dtype=self.key_dtype)
        return out(keys), out(np.asarray(list(self._pairs.values()), dtype=self.value_dtype))

    def __getitem__(self, keys: Any) -> Tensor:
        return self.lookup(keys)


class StaticVocabularyTable(StaticHashTable):
    """A vocabulary: known keys give their (int64) ids, unknown keys one of ``num_oov_buckets`` ids after them, by
    TensorFlow's hash of the key (``pf.strings.to_hash_bucket_fast``), so the ids are TensorFlow's."""

    def __init__(self, initializer: Any, num_oov_buckets: int, lookup_key_dtype: Any = None, name: str | None = None,
                 experimental_is_anonymous: bool = False):  # fmt: skip
        super().__init__(initializer, -1)
        self._buckets = int(num_oov_buckets)
        self.value_dtype = np.dtype(np.int64)

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:
        k = array(keys, "lookup()")
        flat = k.reshape(-1).tolist()
        ids = np.asarray([self._pairs.get(_key(key), -1) for key in flat], dtype=np.int64)
        unknown = np.flatnonzero(ids < 0)
        if unknown.size:
            if not self._buckets:
                raise InvalidArgumentError("StaticVocabularyTable: a key is not in the vocabulary and there are no "
                                           "out-of-vocabulary buckets (num_oov_buckets=0)")  # fmt: skip
            from parafeed.tensor_ops.strings import to_hash_bucket_fast

            keys_out = np.asarray([flat[i] for i in unknown], dtype=object)
            ids[unknown] = len(self._pairs) + np.asarray(to_hash_bucket_fast(keys_out, self._buckets), np.int64)
        return out(ids.reshape(k.shape))


__all__ = [
    "KeyValueTensorInitializer",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
]

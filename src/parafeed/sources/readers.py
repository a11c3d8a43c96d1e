"""Dataset makers for files, as tf.data.experimental has them: ``make_csv_dataset``, ``make_batched_features_dataset``
and ``parse_example_dataset``.

They build the same pipelines tf.data builds (file list, per-file readers interleaved, shuffle, repeat, batch, parse,
prefetch), so element order and batch shapes are tf.data's whenever no random shuffle is involved.
"""

from __future__ import annotations

import collections
import csv
import glob
import gzip
import os
from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np

from parafeed.core.dataset import AUTOTUNE, Dataset
from parafeed.core.graph import ONE_TO_ONE
from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.values.structure import STRING, TensorSpec


def file_names(file_pattern: Any) -> list[str]:
    """The files matching a glob pattern or a list of them, sorted (tf.data's ``_get_file_names``)."""
    patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    if not patterns:
        raise InvalidArgumentError("Argument `file_pattern` should not be empty.")
    names: list[str] = []
    for pattern in patterns:
        names.extend(glob.glob(os.fsdecode(pattern)))
    if not names:
        raise InvalidArgumentError(f"No files match `file_pattern` {file_pattern}.")
    return sorted(names)


# ---------------------------------------------------------------------------------------------- make_csv_dataset


def _valid_int(text: str, dtype: Any) -> bool:
    try:
        value = int(text)
    except ValueError:
        return False
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def _valid_float(text: str, dtype: Any) -> bool:
    try:
        with np.errstate(over="ignore"):
            return bool(dtype(text) < np.inf)
    except (ValueError, OverflowError):
        return False


_INFERENCE: list[tuple[Any, Callable[[str], bool]]] = [
    (np.int32, lambda s: _valid_int(s, np.int32)),
    (np.int64, lambda s: _valid_int(s, np.int64)),
    (np.float32, lambda s: _valid_float(s, np.float32)),
    (np.float64, lambda s: _valid_float(s, np.float64)),
    (STRING, lambda s: True),
]


def _infer_type(text: str, na_value: str, prev: int | None) -> int | None:
    """The index in ``_INFERENCE`` of the least permissive type that fits ``text`` and the column so far."""
    if text in ("", na_value):
        return prev
    for i, (_, valid) in enumerate(_INFERENCE):
        if valid(text) and (prev is None or prev <= i):
            return i
    return len(_INFERENCE) - 1


def _open_text(path: str, compression: str, encoding: str) -> Any:
    if compression == "GZIP":
        return gzip.open(path, "rt", encoding=encoding, newline="")
    if compression == "ZLIB":
        raise InvalidArgumentError(f"`compression_type` {compression} is not supported for probing columns.")
    return open(path, encoding=encoding, newline="")


def _csv_rows(path: str, compression: str, encoding: str, delim: str, quote: bool) -> Any:
    with _open_text(path, compression, encoding) as f:
        yield from csv.reader(f, delimiter=delim, quoting=csv.QUOTE_MINIMAL if quote else csv.QUOTE_NONE)


def _column_names(files: list[str], compression: str, encoding: str, delim: str, quote: bool) -> list[str]:
    names = None
    for path in files:
        row = next(_csv_rows(path, compression, encoding, delim, quote), None)
        if row is None:
            raise InvalidArgumentError(f"Failed when reading the header line of {path}. Is it an empty file?")
        if names is None:
            names = row
        elif row != names:
            raise InvalidArgumentError(
                f"All input CSV files should have the same column names in the header row. File {path} has "
                "different column names."
            )
    return cast("list[str]", names)  # (file_names gives one file at least)


def _infer_defaults(files: list[str], n: int, select: list[int] | None, args: dict) -> list:
    cols = list(range(n)) if select is None else select
    types: list[int | None] = [None] * len(cols)
    seen = 0
    for path in files:
        rows = _csv_rows(path, args["compression"], args["encoding"], args["delim"], args["quote"])
        if args["header"]:
            next(rows, None)
        for number, row in enumerate(rows, start=2 if args["header"] else 1):
            if args["limit"] is not None and seen >= args["limit"]:
                break
            if len(row) != n:
                raise InvalidArgumentError(
                    f"Problem inferring types: CSV row {number} has {len(row)} number of fields. Expected: {n}."
                )
            types = [_infer_type(row[c], args["na_value"], t) for c, t in zip(cols, types)]
            seen += 1
    dtypes = [STRING if t is None else np.dtype(_INFERENCE[t][0]) for t in types]
    return [[b""] if d == STRING else np.zeros(1, d) for d in dtypes]


def _select_indices(select_columns: list, names: list[str]) -> list[int]:
    index = {n: i for i, n in enumerate(names)}
    out = []
    for v in select_columns:
        if isinstance(v, (int, np.integer)):
            if not 0 <= v < len(names):
                raise InvalidArgumentError(
                    f"Column index {v} specified in `select_columns` should be > 0 and <= {len(names)}, which is the "
                    "number of columns."
                )
            out.append(int(v))
        elif v not in index:
            raise InvalidArgumentError(
                f"Column {v} specified in `select_columns` must be of one of the columns: {list(index)}."
            )
        else:
            out.append(index[v])
    if len(set(out)) != len(out):
        raise InvalidArgumentError(f"The `select_columns` argument contains duplicate columns: {select_columns}.")
    return sorted(out)


def _interleave_files(files: Dataset, open_file: Callable, n: int, sloppy: bool) -> Dataset:
    """tf.data's reader interleave: ``n`` files at a time, one element from each in turn."""
    return files.interleave(open_file, cycle_length=None if n == AUTOTUNE else n, block_length=1,
                            num_parallel_calls=n, deterministic=not sloppy)  # fmt: skip


def make_csv_dataset(
    file_pattern: Any, batch_size: int, column_names: list[str] | None = None, column_defaults: list | None = None,
    label_name: str | None = None, select_columns: list | None = None, field_delim: str = ",",
    use_quote_delim: bool = True, na_value: str = "", header: bool = True, num_epochs: int | None = None,
    shuffle: bool = True, shuffle_buffer_size: int = 10000, shuffle_seed: int | None = None,
    prefetch_buffer_size: int | None = None, num_parallel_reads: int | None = None, sloppy: bool = False,
    num_rows_for_inference: int = 100, compression_type: str | None = None, ignore_errors: bool = False,
    encoding: str = "utf-8",
) -> Dataset:  # fmt: skip
    """Batches of CSV records as ``OrderedDict`` of columns (and a label), like
    ``tf.data.experimental.make_csv_dataset``; column names come from the header and types from the first
    ``num_rows_for_inference`` rows when not given.

    Example:
        >>> ds = pf.experimental.make_csv_dataset("train-*.csv", 32, label_name="y", num_epochs=1, shuffle=False)
    """
    from parafeed.io.streams import compression_type_of
    from parafeed.sources.files import CsvDataset

    compression = compression_type_of(compression_type)
    files = file_names(file_pattern)
    names_ds = Dataset.from_tensor_slices(np.array([os.fsencode(f) for f in files], dtype=object))
    if shuffle:
        names_ds = names_ds.shuffle(len(files), shuffle_seed)
    args = {"compression": compression, "encoding": encoding, "delim": field_delim, "quote": use_quote_delim,
            "header": header, "na_value": na_value, "limit": num_rows_for_inference}  # fmt: skip
    if column_names is None:
        if not header:
            raise InvalidArgumentError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = _column_names(files, compression, encoding, field_delim, use_quote_delim)
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        raise InvalidArgumentError(
            f"Either `column_names` argument or CSV header row contains duplicate column names: {column_names}."
        )
    select = None if select_columns is None else _select_indices(list(select_columns), column_names)
    if column_defaults is None:
        column_defaults = _infer_defaults(files, len(column_names), select, args)
    if select is not None and len(column_defaults) != len(select):
        raise InvalidArgumentError(
            "If specified, `column_defaults` and `select_columns` must have the same length: `column_defaults` has "
            f"length {len(column_defaults)}, `select_columns` has length {len(select)}."
        )
    if select is not None and len(column_names) > len(select):
        column_names = [column_names[i] for i in select]
    if label_name is not None and label_name not in column_names:
        raise InvalidArgumentError(
            f"`label_name` provided must be one of the columns: {column_names}. Received: {label_name}."
        )

    def open_file(filename: bytes) -> Dataset:
        ds = CsvDataset(filename, column_defaults, compression_type=compression, header=header,
                        field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                        select_cols=select)  # fmt: skip
        return ds.ignore_errors() if ignore_errors else ds

    def to_dict(*columns: Any) -> Any:
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            return features, features.pop(label_name)
        return features

    ds = _interleave_files(names_ds, open_file, 1 if num_parallel_reads is None else num_parallel_reads, sloppy)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None).map(to_dict)
    return ds.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


# ---------------------------------------------------------------------------------------------- tf.Example datasets


class ParseExampleDataset(Dataset):
    """Batches (vectors) of serialized tf.train.Example parsed into dicts; the element spec comes from the features
    (as tf.data derives it), so nothing is parsed before iterating."""

    kind = ONE_TO_ONE

    def __init__(self, parent: Dataset, features: Mapping[str, Any], num_parallel_calls: Any, deterministic: Any):
        from parafeed.io.example import as_feature_spec, parse_example

        super().__init__((parent,))
        spec = parent.element_spec
        if not (isinstance(spec, TensorSpec) and spec.dtype == STRING and (spec.shape is None or len(spec.shape) == 1)):
            raise ArgumentTypeError(f"Input dataset should be a dataset of vectors of strings. Instead it is `{spec}`.")
        self._features = dict(features)
        self._specs = {k: as_feature_spec(k, v) for k, v in self._features.items()}
        self._calls, self._deterministic = num_parallel_calls, deterministic
        self._parsed = parent.map(lambda s: parse_example(s, self._features), num_parallel_calls=num_parallel_calls,
                                  deterministic=deterministic)  # fmt: skip

    def with_parents(self, *parents: Dataset) -> ParseExampleDataset:
        return ParseExampleDataset(parents[0], self._features, self._calls, self._deterministic)

    def _element_spec(self) -> Any:
        from parafeed.io.feature_specs import FixedLenFeature, VarLenFeature
        from parafeed.values.sparse import SparseTensorSpec

        out: dict[str, Any] = {}
        for key in sorted(self._specs):
            spec = self._specs[key]
            dtype = spec.dtype
            if isinstance(spec, FixedLenFeature):
                out[key] = TensorSpec((None, *spec.shape), dtype)
            elif isinstance(spec, VarLenFeature):
                out[key] = SparseTensorSpec((None, None), dtype)
            else:
                return self._parsed.element_spec  # sequences, ragged: read off a parsed batch
        return out

    def _cardinality(self) -> int:
        return self._parents[0]._cardinality()

    def _make_iterator(self) -> Any:
        return self._parsed._iter()


def parse_example_dataset(
    features: Mapping[str, Any], num_parallel_calls: int = 1, deterministic: bool | None = None
) -> Callable[[Dataset], Dataset]:
    """A transformation (for ``ds.apply``) that parses batches (vectors) of serialized tf.train.Example into dicts,
    like ``tf.data.experimental.parse_example_dataset``."""
    if features is None:
        raise InvalidArgumentError("Argument `features` is required, but not specified.")
    return lambda ds: ParseExampleDataset(ds, features, num_parallel_calls, deterministic)


def make_batched_features_dataset(
    file_pattern: Any, batch_size: int, features: Mapping[str, Any], reader: Callable[..., Dataset] | None = None,
    label_key: str | None = None, reader_args: list | None = None, num_epochs: int | None = None,
    shuffle: bool = True, shuffle_buffer_size: int = 10000, shuffle_seed: int | None = None,
    prefetch_buffer_size: int | None = None, reader_num_threads: int | None = None,
    parser_num_threads: int | None = None, sloppy_ordering: bool = False, drop_final_batch: bool = False,
) -> Dataset:  # fmt: skip
    """Batches of parsed tf.train.Example records read from files, like
    ``tf.data.experimental.make_batched_features_dataset``: ``{feature: batch}`` (and the label popped out of it
    with ``label_key``)."""
    if reader is None:
        from parafeed.sources.files import TFRecordDataset

        reader = TFRecordDataset
    files = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    extra = list(reader_args or [])
    threads = 1 if reader_num_threads is None else reader_num_threads
    ds = _interleave_files(files, lambda name: reader(name, *extra), threads, sloppy_ordering)
    spec = ds.element_spec
    if isinstance(spec, tuple) and len(spec) == 2 and all(getattr(s, "dtype", None) == STRING for s in spec):
        ds = ds.map(lambda _, value: value)  # (key, value) readers
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    ds = ds.apply(parse_example_dataset(features, 2 if parser_num_threads is None else parser_num_threads))
    if label_key:
        if label_key not in features:
            raise InvalidArgumentError(
                f"The `label_key` provided ({label_key}) must be one of the `features` keys: {list(features)}."
            )
        ds = ds.map(lambda x: (x, x.pop(label_key)))
    return ds.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)

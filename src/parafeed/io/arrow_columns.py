"""Arrow columns as tf.data values: what Parquet files and Hugging Face datasets give, one dict per row.

What maps to what (docs/formats.md#parquet):
* integers, floats and booleans: NumPy scalars of the stored type; timestamps, dates, times and durations: their
  stored integers (int64, or int32 for date32/time32);
* strings and binary (dictionary-encoded or not): ``bytes``;
* a list column: a 1-D array per row (strings: an object array of ``bytes``); a list of lists: a
  :class:`~parafeed.values.ragged_tensor.RaggedTensor` per row; a struct: a dict of its fields.

A null is an error naming where the row is (a file, or a dataset), the row and the column, unless ``defaults`` gives
the column's value for it. Errors name ``step``, the source that reads the columns.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.values.ragged_spec import RaggedTensorSpec
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.structure import STRING, TensorSpec

Convert = Callable[[Any, str, int], Sequence[Any]]  # (pyarrow array, where, first row) -> a value per row


def pyarrow_modules(step: str) -> tuple[Any, Any, Any]:
    """``pyarrow``, ``pyarrow.compute`` and ``pyarrow.parquet``, or an ImportError that says how to install them."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"{step}: needs pyarrow: pip install 'parafeed[parquet]'") from None
    return pa, pc, pq


def _null_error(step: str, path: str, row: int, column: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"{step}: {path}, row {row}: column {column!r} is null; give its value for nulls with "
        f"{step}(..., defaults={{{column!r}: ...}}) or fill the column when writing the file"
    )


def _scalar_dtype(pa: Any, t: Any) -> np.dtype:
    """The NumPy dtype of a column of numbers, booleans or times (their stored integers) of type ``t``."""
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_time64(t) or pa.types.is_date64(t):
        return np.dtype(np.int64)
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return np.dtype(np.int32)
    return np.dtype(t.to_pandas_dtype())


def _is_list(pa: Any, t: Any) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


def _is_bytes(pa: Any, t: Any) -> bool:
    """Strings and binary: given as ``bytes``."""
    kinds = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)
    return any(kind(t) for kind in kinds) or bool(pa.types.is_fixed_size_binary(t))


def column_reader(field: Any, default: Any, name: str, step: str) -> tuple[Any, Convert]:
    """The spec of a column and the function that turns a pyarrow array of it into one value per row."""
    pa, pc, _ = pyarrow_modules(step)
    t = field.type
    if pa.types.is_dictionary(t):
        spec, inner = column_reader(pa.field(field.name, t.value_type), default, name, step)
        return spec, lambda a, path, first: inner(a.dictionary_decode(), path, first)
    if _is_bytes(pa, t):
        filled = None if default is None else (default.encode() if isinstance(default, str) else bytes(default))

        def strings(a: Any, path: str, first: int) -> Sequence[Any]:
            a = _fill(step, pc, a, filled, path, first, name)
            return a.cast(pa.large_binary()).to_pylist()

        return TensorSpec((), STRING), strings
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_temporal(t):
        dtype = _scalar_dtype(pa, t)
        storage = pa.from_numpy_dtype(dtype)

        def numbers(a: Any, path: str, first: int) -> Sequence[Any]:
            if pa.types.is_temporal(a.type):
                a = a.view(storage) if a.type.bit_width == storage.bit_width else a.cast(storage)
            a = _fill(step, pc, a, None if default is None else pa.scalar(default, storage), path, first, name)
            return a.to_numpy(zero_copy_only=False)

        return TensorSpec((), dtype), numbers
    if _is_list(pa, t):
        return _list_reader(pa, pc, field, default, name, step)
    if pa.types.is_struct(t):
        children = [t.field(i) for i in range(t.num_fields)]
        parts = [(f.name, column_reader(f, None, f"{name}.{f.name}", step)) for f in children]

        def fields(a: Any, path: str, first: int) -> Sequence[Any]:
            if a.null_count:
                raise _null_error(step, path, first + _first_null(pc, a), name)
            values = [convert(a.field(k), path, first) for k, (_, (_, convert)) in enumerate(parts)]
            keys = [key for key, _ in parts]
            return [dict(zip(keys, row)) for row in zip(*values)]

        return {key: spec for key, (spec, _) in parts}, fields
    raise InvalidArgumentError(
        f"{step}: column {name!r} has type {t}, which has no tf.data counterpart; leave it out with `columns=` "
        "or write it as numbers, strings or lists of them"
    )


def _first_null(pc: Any, a: Any) -> int:
    return int(pc.index(pc.is_null(a), True).as_py())


def _fill(step: str, pc: Any, a: Any, default: Any, path: str, first: int, name: str) -> Any:
    if not a.null_count:
        return a
    if default is None:
        raise _null_error(step, path, first + _first_null(pc, a), name)
    return pc.fill_null(a, default)


def _list_reader(pa: Any, pc: Any, field: Any, default: Any, name: str, step: str) -> tuple[Any, Convert]:
    """A list column: a 1-D array per row, or a RaggedTensor per row for a list of lists."""
    t = field.type
    inner = t.value_field
    nested = _is_list(pa, inner.type)
    leaf = inner.type.value_field if nested else inner
    if not (pa.types.is_primitive(leaf.type) or _is_bytes(pa, leaf.type)):
        raise InvalidArgumentError(
            f"{step}: column {name!r} is a list of {leaf.type}: parafeed reads lists of numbers or strings, and "
            "lists of such lists; leave it out with `columns=`"
        )
    leaf_spec, leaf_convert = column_reader(leaf, None, f"{name}[]", step)
    dtype = leaf_spec.dtype
    size = t.list_size if pa.types.is_fixed_size_list(t) else None
    empty = None if default is None else _default_list(default, dtype, nested, name, step)

    def values_of(a: Any, path: str, first: int) -> np.ndarray:
        out = leaf_convert(a, path, first)
        return np.array(out, dtype=object) if dtype == STRING else np.asarray(out)

    def lists(a: Any, path: str, first: int) -> Sequence[Any]:
        nulls = a.is_null().to_numpy(zero_copy_only=False) if a.null_count else None
        if nulls is not None and empty is None:
            raise _null_error(step, path, first + int(np.argmax(nulls)), name)
        splits = _splits(pc, a)
        flat = a.flatten()
        _no_null_items(step, pc, flat, splits, path, first, name)
        if not nested:
            rows = _split(values_of(flat, path, first), splits)
        else:
            inner_splits = _splits(pc, flat)
            _no_null_items(step, pc, flat.flatten(), inner_splits[splits], path, first, name)
            values = values_of(flat.flatten(), path, first)
            rows = [
                RaggedTensor(values[inner_splits[s] : inner_splits[e]], inner_splits[s : e + 1] - inner_splits[s])
                for s, e in itertools.pairwise(splits.tolist())
            ]
        if nulls is not None:
            for i in np.flatnonzero(nulls).tolist():
                rows[i] = empty
        return rows

    if nested:
        return RaggedTensorSpec((None, None), dtype, ragged_rank=1), lists
    return TensorSpec((size,), dtype), lists


def _split(values: np.ndarray, splits: np.ndarray) -> list[Any]:
    """Row ``r``'s values, ``values[splits[r]:splits[r + 1]]``, for every row: the rows of a 2-D view when all rows
    have as many values (fixed-size lists, embeddings: views made in C, twice as fast as slicing), slices otherwise."""
    lengths = np.diff(splits)
    if len(lengths) and (lengths == lengths[0]).all():
        return list(values.reshape(len(lengths), int(lengths[0])))
    return [values[s:e] for s, e in itertools.pairwise(splits.tolist())]


def _no_null_items(step: str, pc: Any, items: Any, splits: np.ndarray, path: str, first: int, name: str) -> None:
    """A null among the items of the rows' lists (row ``r``'s are ``items[splits[r]:splits[r + 1]]``) is an error
    naming its row."""
    if items.null_count:
        row = int(np.searchsorted(splits, _first_null(pc, items), side="right")) - 1
        raise InvalidArgumentError(
            f"{step}: {path}, row {first + row}: column {name!r} holds a null item in its list; fill it when writing "
            "the file (defaults= replaces a null list, not a null in one)"
        )


def _default_list(default: Any, dtype: Any, nested: bool, name: str, step: str) -> Any:
    """A list column's value for nulls: an array, or for a list of lists a RaggedTensor."""
    kind = object if dtype == STRING else dtype
    if not nested:
        return np.asarray(default, dtype=kind).reshape(-1)
    try:
        parts = [np.asarray(row, dtype=kind).reshape(-1) for row in default]
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{step}: the default of column {name!r} must be a list of lists") from None
    splits = np.cumsum([0, *map(len, parts)], dtype=np.int64)
    return RaggedTensor(np.concatenate(parts) if parts else np.zeros(0, kind), splits)


def _splits(pc: Any, a: Any) -> np.ndarray:
    """Where each row's values begin and end in ``a.flatten()`` (a null row has none)."""
    lengths = pc.fill_null(pc.list_value_length(a), 0).to_numpy(zero_copy_only=False)
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])


class Columns:
    """What is read of rows: the columns (all by default), their specs and converters, and nulls' defaults. Built
    from one schema (a file's, at ``path``); every other file must have the chosen columns with the same types.
    Errors name ``step``."""

    def __init__(self, schema: Any, columns: Sequence[str] | None, defaults: dict | None, path: str, step: str):
        self.step = step
        names = list(schema.names)
        chosen = names if columns is None else list(columns)
        missing = [c for c in chosen if c not in names]
        if missing:
            raise InvalidArgumentError(f"{step}: {path} has no column(s) {missing}; its columns are {names}")
        defaults = dict(defaults or {})
        unknown = sorted(set(defaults) - set(chosen))
        if unknown:
            raise InvalidArgumentError(f"{step}: `defaults` names column(s) {unknown} that are not read ({chosen})")
        self.names = chosen
        self.types = [schema.field(c).type for c in chosen]
        readers = [column_reader(schema.field(c), defaults.get(c), c, step) for c in chosen]
        self.spec = {c: spec for c, (spec, _) in zip(chosen, readers)}
        self.converters = [convert for _, convert in readers]

    def check(self, schema: Any, path: str) -> None:
        """``schema`` (another file's) has the chosen columns with the types of the first file."""
        step = self.step
        for name, t in zip(self.names, self.types):
            if name not in schema.names:
                raise InvalidArgumentError(f"{step}: {path} has no column {name!r} (the first file has it)")
            if schema.field(name).type != t:
                raise InvalidArgumentError(
                    f"{step}: column {name!r} is {schema.field(name).type} in {path} but {t} in the first file"
                )

    def rows(self, batch: Any, path: str, first: int) -> list[dict]:
        """The rows of a record batch (whose first row is row ``first`` at ``path``) as dicts."""
        return list(self.iter_rows(batch, path, first)[0])

    def iter_rows(self, batch: Any, path: str, first: int) -> tuple[Iterator[dict], Iterator[Any]]:
        """The rows of a record batch as dicts made as they are taken (the columns are converted, and checked, now),
        and an iterator whose ``length_hint`` is the number of rows not taken yet."""
        values = [convert(batch.column(k), path, first) for k, convert in enumerate(self.converters)]
        left = iter(values[0] if values else range(batch.num_rows))
        return map(dict, map(zip, itertools.repeat(self.names), zip(left, *values[1:]))), left

"""``RaggedFeature``: a tf.train.Example feature parsed into a :class:`~parafeed.RaggedTensor`, optionally
partitioned into more ragged dimensions by other features (like ``tf.io.RaggedFeature``).

``parse_example`` reads the value and partition features as columns (``example_columns.py``); this module turns each
example's values into a ragged row and stacks the rows of a batch, as tf.io does.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.io.feature_specs import feature_dtype
from parafeed.values.ragged_build import stack
from parafeed.values.ragged_spec import splits_dtype
from parafeed.values.ragged_tensor import RaggedTensor

RowSplits = namedtuple("RowSplits", ["key"])
RowLengths = namedtuple("RowLengths", ["key"])
RowStarts = namedtuple("RowStarts", ["key"])
RowLimits = namedtuple("RowLimits", ["key"])
ValueRowIds = namedtuple("ValueRowIds", ["key"])
UniformRowLength = namedtuple("UniformRowLength", ["length"])
_PARTITIONS = {t.__name__: t for t in (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength)}


def _partition(p: Any) -> Any:
    """Ours from ours or from tf.io.RaggedFeature's (matched by class name, so ported code keeps working)."""
    kind = _PARTITIONS.get(type(p).__name__)
    if kind is None:
        raise InvalidArgumentError(
            f"RaggedFeature: each partition must be RaggedFeature.RowSplits/RowLengths/RowStarts/RowLimits/"
            f"ValueRowIds(key) or UniformRowLength(length), got {p!r}"
        )
    return kind(*p)


@dataclass(frozen=True)
class RaggedFeature:
    """A feature with any number of values, parsed into a :class:`~parafeed.RaggedTensor` (like
    ``tf.io.RaggedFeature``): one ragged row per example, partitioned further by ``partitions`` (outermost first).

    Args:
        dtype: int64, float32 or string.
        value_key: the feature holding the values (default: this feature's key).
        partitions: ``RaggedFeature.RowSplits(key)``, ``RowLengths(key)``, ``RowStarts(key)``, ``RowLimits(key)``,
            ``ValueRowIds(key)`` or ``UniformRowLength(length)``.
        row_splits_dtype: int32 (the default, as in tf.io) or int64.

    Example:
        >>> out = pf.io.parse_example(records, {"tokens": pf.io.RaggedFeature("int64")})
        >>> out["tokens"].to_list()
        [[3, 1, 4], [1, 5]]
    """

    dtype: Any
    value_key: str | None = None
    partitions: Any = ()
    row_splits_dtype: Any = np.int32
    validate: bool = False

    RowSplits = RowSplits
    RowLengths = RowLengths
    RowStarts = RowStarts
    RowLimits = RowLimits
    ValueRowIds = ValueRowIds
    UniformRowLength = UniformRowLength

    def __post_init__(self) -> None:
        if self.value_key is not None and (not isinstance(self.value_key, str) or not self.value_key):
            raise InvalidArgumentError(f"RaggedFeature: `value_key` must be a non-empty string, got {self.value_key!r}")
        if not isinstance(self.partitions, (list, tuple)):
            raise InvalidArgumentError(f"RaggedFeature: `partitions` must be a list or tuple, got {self.partitions!r}")
        if not isinstance(self.validate, bool):
            raise InvalidArgumentError(f"RaggedFeature: `validate` must be a bool, got {self.validate!r}")
        object.__setattr__(self, "dtype", feature_dtype(self.dtype))
        object.__setattr__(self, "partitions", tuple(_partition(p) for p in self.partitions))
        object.__setattr__(
            self, "row_splits_dtype", splits_dtype(self.row_splits_dtype, "RaggedFeature: row_splits_dtype")
        )

    def columns(self, key: str) -> list[tuple[str, str]]:
        """The (feature key, dtype) columns this feature reads: its values, then its partitions."""
        out = [(self.value_key or key, self.dtype)]
        return out + [(p.key, "int64") for p in self.partitions if not isinstance(p, UniformRowLength)]


def from_tf(spec: Any) -> RaggedFeature:
    return RaggedFeature(spec.dtype, spec.value_key, spec.partitions, spec.row_splits_dtype, spec.validate)


def parse_ragged(key: str, spec: RaggedFeature, columns: dict, batch: int) -> RaggedTensor:
    """The batch's RaggedTensor for ``spec`` from the columns read (``{feature key: (row splits, values)}``)."""
    dtype = spec.row_splits_dtype
    splits, values = columns[spec.value_key or key]
    rows = []
    for i in range(batch):
        row: Any = values[splits[i] : splits[i + 1]]
        for p in reversed(spec.partitions):
            row = _partitioned(key, row, p, columns, i, dtype)
        rows.append(row)
    if not rows:
        return RaggedTensor(np.zeros(0, values.dtype), np.zeros(1, dtype))
    return stack(rows, dtype, f"parse_example (feature {key!r})")


def _partitioned(key: str, row: Any, p: Any, columns: dict, i: int, dtype: np.dtype) -> Any:
    try:
        if isinstance(p, UniformRowLength):
            n = len(row)
            if p.length <= 0 or n % p.length:
                raise InvalidArgumentError(f"{n} values do not split into rows of {p.length}")
            if isinstance(row, RaggedTensor):
                return RaggedTensor.from_row_splits(row, np.arange(n // p.length + 1, dtype=dtype) * p.length)
            return row.reshape((-1, p.length, *row.shape[1:]))
        splits, values = columns[p.key]
        part = values[splits[i] : splits[i + 1]].astype(dtype)
        makers: dict[type, Callable[[Any, Any], RaggedTensor]] = {
            RowSplits: RaggedTensor.from_row_splits, RowLengths: RaggedTensor.from_row_lengths,
            RowStarts: RaggedTensor.from_row_starts, RowLimits: RaggedTensor.from_row_limits,
            ValueRowIds: RaggedTensor.from_value_rowids,
        }  # fmt: skip
        return makers[type(p)](row, part)
    except InvalidArgumentError as err:
        raise InvalidArgumentError(
            f"Feature {key}: example {i}: the values and partition {p} do not fit: {err}"
        ) from None


def output_order(specs: dict) -> list[str]:
    """The keys of ragged features in tf.io's output order: those named like a column read, in the order the columns
    were added (features by sorted key), then the others by key."""
    added: list[str] = []
    for key in sorted(specs):
        if isinstance(specs[key], RaggedFeature):
            added += [c for c, _ in specs[key].columns(key) if c not in added]
    ragged = {k for k, s in specs.items() if isinstance(s, RaggedFeature)}
    return [k for k in added if k in ragged] + sorted(ragged - set(added))

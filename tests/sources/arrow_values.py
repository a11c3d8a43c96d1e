"""Arrow columns of every kind tf.data has a counterpart for, and their values as parafeed gives them: shared by the
tests of the sources that read Arrow (Parquet files, Hugging Face datasets)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

import parafeed as pf

# column type -> (pyarrow type, a value of row i)
TYPES = {
    "int8": (pa.int8(), lambda i: i % 100 - 50),
    "uint16": (pa.uint16(), lambda i: i * 7),
    "int32": (pa.int32(), lambda i: -i),
    "int64": (pa.int64(), lambda i: i * 10**10),
    "float32": (pa.float32(), lambda i: i / 4),
    "float64": (pa.float64(), lambda i: i / 3),
    "bool": (pa.bool_(), lambda i: i % 2 == 0),
    "string": (pa.string(), lambda i: f"s{i}é" * (i % 3)),
    "binary": (pa.binary(), lambda i: bytes([i % 256]) * (i % 4)),
    "dictionary": (pa.dictionary(pa.int8(), pa.string()), lambda i: ["a", "bb", "c"][i % 3]),
    "timestamp": (pa.timestamp("ms"), lambda i: i * 1000),
    "list_int32": (pa.list_(pa.int32()), lambda i: list(range(i % 4))),
    "list_string": (pa.list_(pa.string()), lambda i: [f"w{j}" for j in range(i % 3)]),
    "fixed_list": (pa.list_(pa.float32(), 2), lambda i: [i, -i]),
    "list_of_lists": (pa.list_(pa.list_(pa.int64())), lambda i: [list(range(j)) for j in range(i % 3)]),
    "struct": (pa.struct([("a", pa.int64()), ("b", pa.string())]), lambda i: {"a": i, "b": str(i)}),
}


def table(names, first, count):
    return pa.table({n: pa.array([TYPES[n][1](i) for i in range(first, first + count)], TYPES[n][0]) for n in names})


def expected(value, t):
    """What pyarrow's ``to_pylist()`` value is as a parafeed element's (tf.data's types)."""
    if pa.types.is_dictionary(t):
        return expected(value, t.value_type)
    if pa.types.is_struct(t):
        return {t.field(k).name: expected(value[t.field(k).name], t.field(k).type) for k in range(t.num_fields)}
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        inner = t.value_type
        if pa.types.is_list(inner):
            return ("ragged", [[expected(v, inner.value_type) for v in row] for row in value])
        return [expected(v, inner) for v in value]
    if isinstance(value, str):
        return value.encode()
    if pa.types.is_timestamp(t):
        return int(value.timestamp() * 1000)
    return value


def plain(value):
    """A parafeed element's value in the form of :func:`expected` (dtype checked on the way)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, pf.RaggedTensor):
        return ("ragged", [[plain(v) for v in row] for row in value.to_list()])
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value

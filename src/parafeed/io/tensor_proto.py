"""TensorFlow's TensorProto, without TensorFlow: ``serialize_tensor`` and ``parse_tensor`` byte-compatible with
``tf.io.serialize_tensor`` / ``tf.io.parse_tensor``.

The messages of ``tensorflow/core/framework/{tensor,tensor_shape}.proto`` are described with protobuf's descriptor
API in a private pool (as ``example_proto.py`` does for tf.train.Example), so they never clash with TensorFlow's
classes. parafeed writes what TensorFlow writes: the dtype, the shape (present for a scalar too), and numbers as
``tensor_content`` (little-endian, row-major), strings as ``string_val``. It reads every encoding TensorFlow reads:
``tensor_content``, or the typed ``*_val`` fields (``float_val``, ``int_val``, ``half_val`` ...) with TensorFlow's
rule that a field holding fewer values than the shape repeats its last value (and none gives zeros).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.values.byte_strings import scalar_bytes
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor
from parafeed.values.structure import STRING, as_dtype, dtype_name

_PACKAGE = "tensorflow"

# dtype name -> (TensorFlow's DataType number, the typed field that holds its values)
_DTYPES: dict[str, tuple[int, str]] = {
    "float32": (1, "float_val"),
    "float64": (2, "double_val"),
    "int32": (3, "int_val"),
    "uint8": (4, "int_val"),
    "int16": (5, "int_val"),
    "int8": (6, "int_val"),
    "string": (7, "string_val"),
    "complex64": (8, "scomplex_val"),
    "int64": (9, "int64_val"),
    "bool": (10, "bool_val"),
    "bfloat16": (14, "half_val"),
    "uint16": (17, "int_val"),
    "complex128": (18, "dcomplex_val"),
    "float16": (19, "half_val"),
    "uint32": (22, "uint32_val"),
    "uint64": (23, "uint64_val"),
}
_BY_NUMBER = {number: (name, field) for name, (number, field) in _DTYPES.items()}
_UNSUPPORTED = {
    11: "qint8", 12: "quint8", 13: "qint32", 15: "qint16", 16: "quint16", 20: "resource", 21: "variant",
    24: "float8_e5m2", 25: "float8_e4m3fn", 26: "float8_e4m3fnuz", 27: "float8_e4m3b11fnuz", 28: "float8_e5m2fnuz",
    29: "int4", 30: "uint4", 31: "int2", 32: "uint2", 33: "float4_e2m1fn",
}  # fmt: skip


@functools.cache
def message_classes() -> dict[str, Any]:
    """The message classes by name: TensorShapeProto, TensorProto."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="parafeed/tf_tensor.proto", package=_PACKAGE, syntax="proto3")

    def add_field(msg: Any, name: str, number: int, ftype: int, repeated: bool = False, type_name: str = "") -> None:
        field = msg.field.add(name=name, number=number, type=ftype)
        field.label = F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL
        if type_name:
            field.type_name = f".{_PACKAGE}.{type_name}"
        if repeated and ftype not in (F.TYPE_BYTES, F.TYPE_STRING, F.TYPE_MESSAGE):
            field.options.packed = True

    shape = file.message_type.add(name="TensorShapeProto")
    dim = shape.nested_type.add(name="Dim")
    add_field(dim, "size", 1, F.TYPE_INT64)
    add_field(dim, "name", 2, F.TYPE_STRING)
    add_field(shape, "dim", 2, F.TYPE_MESSAGE, repeated=True, type_name="TensorShapeProto.Dim")
    add_field(shape, "unknown_rank", 3, F.TYPE_BOOL)

    tensor = file.message_type.add(name="TensorProto")
    add_field(tensor, "dtype", 1, F.TYPE_INT32)  # (an enum on the wire is a varint: the DataType number)
    add_field(tensor, "tensor_shape", 2, F.TYPE_MESSAGE, type_name="TensorShapeProto")
    add_field(tensor, "version_number", 3, F.TYPE_INT32)
    add_field(tensor, "tensor_content", 4, F.TYPE_BYTES)
    for name, number, ftype in [
        ("float_val", 5, F.TYPE_FLOAT), ("double_val", 6, F.TYPE_DOUBLE), ("int_val", 7, F.TYPE_INT32),
        ("string_val", 8, F.TYPE_BYTES), ("scomplex_val", 9, F.TYPE_FLOAT), ("int64_val", 10, F.TYPE_INT64),
        ("bool_val", 11, F.TYPE_BOOL), ("dcomplex_val", 12, F.TYPE_DOUBLE), ("half_val", 13, F.TYPE_INT32),
        ("uint32_val", 16, F.TYPE_UINT32), ("uint64_val", 17, F.TYPE_UINT64),
    ]:  # fmt: skip
        add_field(tensor, name, number, ftype, repeated=True)
    # (resource_handle_val 14, variant_val 15 and float8_val 18 are not read: parafeed has no such dtypes)

    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{m.name}"))
        for m in file.message_type
    }


def _dtype_key(dtype: np.dtype) -> str:
    return "string" if dtype == STRING else dtype.name


def out_dtype(out_type: Any) -> np.dtype:
    """An ``out_type`` as a NumPy dtype: parafeed's dtypes, plus bfloat16 (``tf.bfloat16`` or ml_dtypes')."""
    try:
        dtype = np.dtype(getattr(out_type, "as_numpy_dtype", out_type))
    except (TypeError, ValueError):
        dtype = None
    if dtype is not None and dtype.name == "bfloat16":
        return dtype
    if out_type == "bfloat16":
        raise InvalidArgumentError("bfloat16 needs the ml_dtypes package (pip install ml_dtypes)")
    return as_dtype(out_type)


def _as_array(tensor: Any, step: str) -> np.ndarray:
    """A dense value as an array, with the dtypes TensorFlow gives Python values."""
    if isinstance(tensor, (SparseTensor, RaggedTensor)):
        raise ElementTypeError(f"{step}: a {type(tensor).__name__} cannot be serialized as one tensor; serialize "
                               "its component arrays (values, indices ...)")  # fmt: skip
    if hasattr(tensor, "numpy") and not isinstance(tensor, np.ndarray):  # an eager tf.Tensor
        tensor = tensor.numpy()
    if isinstance(tensor, (bytes, str)):
        out = np.empty((), dtype=STRING)
        out[()] = tensor.encode() if isinstance(tensor, str) else bytes(tensor)
        return out
    if isinstance(tensor, np.ndarray) and tensor.dtype.name == "bfloat16":  # (ml_dtypes')
        return tensor
    from parafeed.values.elements import to_leaf

    try:
        leaf = to_leaf(tensor, f"{step}: `tensor`")
    except Exception as err:
        raise ElementTypeError(f"{step}: cannot serialize {type(tensor).__name__}: {err}") from None
    if isinstance(leaf, bytes):
        return _as_array(leaf, step)
    array = np.asarray(leaf)
    if array.dtype.kind in "SU":
        array = array.astype(object)
    if array.dtype == STRING:
        encoded = np.empty(array.shape, dtype=STRING)
        flat = encoded.reshape(-1)
        for i, item in enumerate(array.reshape(-1).tolist()):
            if not isinstance(item, (bytes, str)):
                raise ElementTypeError(f"{step}: a string tensor holds {type(item).__name__} at flat index {i}")
            flat[i] = item.encode() if isinstance(item, str) else item
        return encoded
    return array


def serialize_tensor(tensor: Any, name: str | None = None) -> bytes:
    """A dense tensor as a serialized TensorProto, byte for byte what ``tf.io.serialize_tensor`` writes.

    Example:
        >>> blob = pf.io.serialize_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        >>> pf.io.parse_tensor(blob, pf.float32).shape
        (2, 3)
    """
    step = "serialize_tensor"
    array = _as_array(tensor, step)
    key = _dtype_key(array.dtype)
    if key not in _DTYPES:
        raise InvalidArgumentError(f"{step}: dtype {dtype_name(array.dtype)} has no TensorProto encoding")
    proto = message_classes()["TensorProto"]()
    proto.dtype = _DTYPES[key][0]
    proto.tensor_shape.SetInParent()  # (present for a scalar too, as TensorFlow writes it)
    for size in array.shape:
        proto.tensor_shape.dim.add(size=size)
    if key == "string":
        proto.string_val.extend(array.reshape(-1).tolist())
    elif array.size:
        proto.tensor_content = _to_le(array)
    return bytes(proto.SerializeToString(deterministic=True))


def _to_le(array: np.ndarray) -> bytes:
    """The array's values, row-major, little-endian (tensor_content's layout)."""
    if array.dtype.kind in "iufc" and array.dtype.itemsize > 1:
        array = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return np.ascontiguousarray(array).tobytes()


def _from_le(content: bytes, dtype: np.dtype) -> np.ndarray:
    """Values from tensor_content's little-endian bytes, as a writable native array."""
    if dtype == np.bool_:
        return np.frombuffer(content, dtype=np.uint8) != 0
    if dtype.kind in "biufc" and dtype.itemsize > 1:
        return np.frombuffer(content, dtype=dtype.newbyteorder("<")).astype(dtype)
    return np.frombuffer(content, dtype=dtype).copy()


def _values(proto: Any, key: str, field: str, dtype: np.dtype, n: int, step: str) -> np.ndarray:
    """The ``n`` values of a TensorProto from its typed field: the last value repeats to fill the shape, none gives
    zeros (empty strings), more than ``n`` are cut (TensorFlow's rules)."""
    raw = getattr(proto, field)
    if key == "string":
        items = list(raw)
        out = np.empty(n, dtype=STRING)
        if not items:
            out[:] = b""
        else:
            out[: min(n, len(items))] = items[:n]
            out[len(items) :] = items[-1]
        return out
    if key in ("complex64", "complex128"):
        parts = np.asarray(raw, dtype=np.float64)
        count = len(parts) // 2
        values = np.empty(count, dtype=dtype)  # (parts set one by one: 1j * inf would make a NaN)
        values.real = parts[0 : 2 * count : 2]
        values.imag = parts[1 : 2 * count : 2]
    elif key in ("float16", "bfloat16"):
        bits = np.asarray(raw, dtype=np.int64).astype(np.uint16)
        values = bits.view(dtype) if key == "float16" else _bfloat16(bits, dtype, step)
    elif field == "int_val":
        values = np.asarray(raw, dtype=np.int64).astype(dtype)  # (wraps as TensorFlow's cast does: 300 -> 44)
    else:
        values = np.asarray(raw, dtype=dtype)
    if len(values) >= n:
        return np.ascontiguousarray(values[:n])
    out = np.zeros(n, dtype=dtype)
    out[: len(values)] = values
    if len(values):
        out[len(values) :] = values[-1]
    return out


def _bfloat16(bits: np.ndarray, dtype: np.dtype, step: str) -> np.ndarray:
    if dtype.itemsize != 2:
        raise InvalidArgumentError(f"{step}: bfloat16 needs a 2-byte dtype (ml_dtypes.bfloat16), got {dtype}")
    return bits.view(dtype)


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Any:
    """The tensor in a serialized TensorProto (``tf.io.parse_tensor``), checked against ``out_type``; a scalar comes
    back as a NumPy scalar (``bytes`` for a string), as ``tensor.numpy()`` gives it.

    Reads what TensorFlow writes with any of its encodings (``tensor_content`` or the typed value fields).
    InvalidArgumentError for bytes that are not a TensorProto, a tensor of another dtype than ``out_type``, or
    values that do not fit the shape.
    """
    step = "parse_tensor"
    if isinstance(serialized, np.ndarray) and serialized.ndim:
        raise InvalidArgumentError(f"{step}: Expected `serialized` to be a scalar, got shape: {list(serialized.shape)}")
    data = scalar_bytes(step, serialized, "serialized")
    want = out_dtype(out_type)
    proto = message_classes()["TensorProto"]()
    try:
        proto.ParseFromString(data)
    except Exception:
        raise InvalidArgumentError(
            f"{step}: Could not parse `serialized` ({len(data)} bytes) as a TensorProto; pass the bytes "
            "serialize_tensor (or tf.io.serialize_tensor) wrote"
        ) from None
    number = int(proto.dtype)
    if number not in _BY_NUMBER:
        what = _UNSUPPORTED.get(number)
        raise InvalidArgumentError(
            f"{step}: cannot parse the tensor: "
            + (f"parafeed has no dtype {what}" if what else f"its dtype ({number}) is not a valid DataType")
        )
    key, field = _BY_NUMBER[number]
    if key != _dtype_key(want):
        raise InvalidArgumentError(
            f"{step}: Type mismatch between parsed tensor ({key}) and dtype ({_dtype_key(want)}); pass out_type={key}"
        )
    dims = [int(d.size) for d in proto.tensor_shape.dim]
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"{step}: cannot parse the tensor: its shape {dims} has an unknown dimension")
    n = 1
    for d in dims:
        n *= d
    if n >= 1 << 63:
        raise InvalidArgumentError(f"{step}: cannot parse the tensor: its shape {dims} has too many elements")
    dtype = want
    content = proto.tensor_content
    if n == 0:
        flat = np.empty(0, dtype=dtype)
    elif content:
        if key == "string" or len(content) != n * dtype.itemsize:
            raise InvalidArgumentError(
                f"{step}: cannot parse the tensor: tensor_content holds {len(content)} bytes, but shape {dims} of "
                f"{key} needs {n * dtype.itemsize}"
            )
        flat = _from_le(content, dtype)
    else:
        flat = _values(proto, key, field, dtype, n, step)
    array = flat.reshape(dims)
    return array[()] if not dims else array

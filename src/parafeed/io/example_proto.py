"""The tf.train.Example / SequenceExample protobuf messages, built at run time from their schema.

No generated code and no TensorFlow: the message types of ``tensorflow/core/example/{feature,example}.proto`` are
described with protobuf's descriptor API in a private descriptor pool (so they never clash with TensorFlow's own
classes when both are imported), and message classes are made from them on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError

_PACKAGE = "tensorflow"


@functools.cache
def message_classes() -> dict[str, Any]:
    """The message classes by name: BytesList, FloatList, Int64List, Feature, Features, FeatureList, FeatureLists,
    Example, SequenceExample."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="parafeed/tf_example.proto", package=_PACKAGE, syntax="proto3")

    def add_message(name: str, parent: Any = None) -> Any:
        return (parent.nested_type if parent is not None else file.message_type).add(name=name)

    def add_field(msg: Any, name: str, number: int, ftype: int, label: int = F.LABEL_OPTIONAL, type_name: str = "",
                  packed: bool = False, oneof: int | None = None) -> None:  # fmt: skip
        field = msg.field.add(name=name, number=number, type=ftype, label=label)
        if type_name:
            field.type_name = f".{_PACKAGE}.{type_name}"
        if packed:
            field.options.packed = True
        if oneof is not None:
            field.oneof_index = oneof

    def add_map(msg: Any, name: str, value_type: str) -> None:
        entry = add_message(f"{name.title().replace('_', '')}Entry", msg)
        entry.options.map_entry = True
        add_field(entry, "key", 1, F.TYPE_STRING)
        add_field(entry, "value", 2, F.TYPE_MESSAGE, type_name=value_type)
        add_field(msg, name, 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, type_name=f"{msg.name}.{entry.name}")

    add_field(add_message("BytesList"), "value", 1, F.TYPE_BYTES, F.LABEL_REPEATED)
    add_field(add_message("FloatList"), "value", 1, F.TYPE_FLOAT, F.LABEL_REPEATED, packed=True)
    add_field(add_message("Int64List"), "value", 1, F.TYPE_INT64, F.LABEL_REPEATED, packed=True)
    feature = add_message("Feature")
    feature.oneof_decl.add(name="kind")
    for number, kind in enumerate(["BytesList", "FloatList", "Int64List"], start=1):
        add_field(feature, f"{kind[:-4].lower()}_list", number, F.TYPE_MESSAGE, type_name=kind, oneof=0)
    add_map(add_message("Features"), "feature", "Feature")
    add_field(add_message("FeatureList"), "feature", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, type_name="Feature")
    add_map(add_message("FeatureLists"), "feature_list", "FeatureList")
    add_field(add_message("Example"), "features", 1, F.TYPE_MESSAGE, type_name="Features")
    sequence = add_message("SequenceExample")
    add_field(sequence, "context", 1, F.TYPE_MESSAGE, type_name="Features")
    add_field(sequence, "feature_lists", 2, F.TYPE_MESSAGE, type_name="FeatureLists")

    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{m.name}"))
        for m in file.message_type
    }


def _fill_feature(feature: Any, key: str, value: Any) -> None:
    """Set ``feature`` (a Feature message) from a Python / NumPy value, picking the list type from the dtype."""
    if isinstance(value, (bytes, str)):
        feature.bytes_list.value.append(value.encode() if isinstance(value, str) else value)
        return
    arr = np.asarray(value)
    kind = arr.dtype.kind
    if kind in "SUO":
        feature.bytes_list.value.extend(
            v.encode() if isinstance(v, str) else bytes(v) for v in arr.reshape(-1).tolist()
        )
    elif kind == "f":
        feature.float_list.value.extend(arr.astype(np.float32).reshape(-1).tolist())
    elif kind in "iub":
        feature.int64_list.value.extend(arr.astype(np.int64).reshape(-1).tolist())
    else:
        raise InvalidArgumentError(f"serialize_example: feature {key!r}: cannot store dtype {arr.dtype}")


def serialize_example(features: Mapping[str, Any]) -> bytes:
    """A serialized tf.train.Example from ``{name: value}``.

    Bytes and strings become a bytes_list, floats a float_list (as float32), ints and bools an int64_list; NumPy
    arrays and lists are flattened. An empty list needs a NumPy dtype (``np.array([], np.int64)``).

    Example:
        >>> pf.io.serialize_example({"image": jpeg_bytes, "label": 3, "box": np.array([0.1, 0.2, 0.5, 0.9])})
    """
    example = message_classes()["Example"]()
    feature_map = example.features.feature
    for key, value in features.items():
        if not isinstance(key, str):
            raise InvalidArgumentError(f"serialize_example: feature names must be str, got {key!r}")
        if isinstance(value, list) and not value:
            raise InvalidArgumentError(
                f"serialize_example: feature {key!r} is an empty list, whose type is unknown; use e.g. "
                "np.array([], np.float32)"
            )
        _fill_feature(feature_map[key], key, value)
    return example.SerializeToString(deterministic=True)


def serialize_sequence_example(context: Mapping[str, Any], feature_lists: Mapping[str, list]) -> bytes:
    """A serialized tf.train.SequenceExample: context features, and per sequence feature a list of frame values."""
    message = message_classes()["SequenceExample"]()
    for key, value in context.items():
        _fill_feature(message.context.feature[key], key, value)
    for key, frames in feature_lists.items():
        feature_list = message.feature_lists.feature_list[key]
        for frame in frames:
            _fill_feature(feature_list.feature.add(), key, frame)
    return message.SerializeToString(deterministic=True)

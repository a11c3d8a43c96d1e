"""``pf.train``: the tf.train.Example protobuf messages (``tf.train`` → ``pf.train``), built without TensorFlow.

``Example``, ``Features``, ``Feature``, ``BytesList``, ``FloatList``, ``Int64List``, ``FeatureList``,
``FeatureLists`` and ``SequenceExample`` are protobuf message classes with TensorFlow's schema, so their bytes parse
in TensorFlow and TensorFlow's parse here. The classes are made on first use (importing parafeed loads no protobuf).
``SerializeToString()`` orders the feature map as protobuf's runtime does; pass ``deterministic=True`` for bytes that
are the same in every process (TensorFlow's default map order may differ, the parsed values never do).

Example:
    >>> ex = pf.train.Example(features=pf.train.Features(feature={
    ...     "label": pf.train.Feature(int64_list=pf.train.Int64List(value=[3]))}))
    >>> pf.io.parse_single_example(ex.SerializeToString(), {"label": pf.io.FixedLenFeature([], np.int64)})
    {'label': np.int64(3)}
"""

from __future__ import annotations

from typing import Any

MESSAGES = (
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
)


def __getattr__(name: str) -> Any:
    if name in MESSAGES:
        from parafeed.io.example_proto import message_classes

        return message_classes()[name]
    raise AttributeError(f"module 'parafeed.io.example_messages' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *MESSAGES])


__all__ = list(MESSAGES)

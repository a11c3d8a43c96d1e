"""Feeding TensorFlow: ``ds.to_tf()`` and a dataset function for ``strategy.distribute_datasets_from_function``.

The parafeed pipeline runs as it is (threads, processes, AUTOTUNE); TensorFlow receives its elements through
``tf.data.Dataset.from_generator``, one Python crossing per element, so batch before converting and each crossing
carries a whole batch. The signature comes from ``element_spec`` (a leading dimension read off a sample is left
unknown, since the last batch may be shorter). parafeed shards replicas itself (``distribute``), so TensorFlow's own
auto-sharding is turned off on the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parafeed.dataset import Dataset
from parafeed.errors import InvalidArgumentError
from parafeed.structure import STRING, TensorSpec, map_structure


def tf_signature(ds: Dataset) -> Any:
    """``ds.element_spec`` as ``tf.TensorSpec`` structure."""
    import tensorflow as tf

    static = ds._static_shapes()

    def convert(spec: Any) -> Any:
        if not isinstance(spec, TensorSpec):
            raise InvalidArgumentError(f"to_tf(): elements with {spec!r} leaves cannot be given to TensorFlow")
        shape = spec.shape
        if shape and not static:
            shape = (None, *shape[1:])
        return tf.TensorSpec(shape, tf.string if spec.dtype == STRING else tf.as_dtype(spec.dtype))

    return map_structure(convert, ds.element_spec)


def to_tf(ds: Dataset, output_signature: Any = None) -> Any:
    """A ``tf.data.Dataset`` producing ``ds``'s elements (a new parafeed iterator per TensorFlow iteration)."""
    import tensorflow as tf

    signature = output_signature if output_signature is not None else tf_signature(ds)

    def elements() -> Any:
        it = iter(ds)
        try:
            yield from it
        finally:
            it.close()

    out = tf.data.Dataset.from_generator(elements, output_signature=signature)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    return out.with_options(options)


def dataset_fn(make_pipeline: Callable[..., Dataset], global_batch_size: int | None = None) -> Callable[[Any], Any]:
    """A function for ``strategy.distribute_datasets_from_function``: ``make_pipeline(num_replicas, replica_id,
    batch_size)`` builds one input pipeline's parafeed dataset (``batch_size``: the per-replica batch size, from
    ``global_batch_size``), converted with :func:`to_tf`.

    Example:
        >>> def make(num_replicas, replica_id, batch_size):
        ...     return pf.TFRecordDataset(files).distribute(num_replicas, replica_id).map(parse).batch(batch_size)
        >>> dist = strategy.distribute_datasets_from_function(pf.adapters.tf.dataset_fn(make, 64))
    """

    def fn(input_context: Any) -> Any:
        batch = input_context.get_per_replica_batch_size(global_batch_size) if global_batch_size else None
        ds = make_pipeline(input_context.num_input_pipelines, input_context.input_pipeline_id, batch)
        if not isinstance(ds, Dataset):
            raise InvalidArgumentError(f"dataset_fn(): make_pipeline must return a pf.Dataset, got {type(ds).__name__}")
        return to_tf(ds)

    return fn

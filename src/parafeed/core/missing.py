"""tf.data names that parafeed does not have, each with what to use instead (docs/porting.md has the long form).

``pf.X``, ``pf.experimental.X`` and ``ds.X`` for a name below raise an AttributeError that says so, instead of
Python's bare "has no attribute".
"""

from __future__ import annotations

_GUIDE = "docs/porting.md#missing-api"

DATASET = {
    "make_one_shot_iterator": "TF1 API: use `iter(ds)`",
    "make_initializable_iterator": "TF1 API: use `iter(ds)` (every `iter()` starts over)",
    "output_shapes": "TF1 API: use `ds.element_spec` (shapes are `spec.shape`)",
    "output_types": "TF1 API: use `ds.element_spec` (dtypes are `spec.dtype`)",
    "output_classes": "TF1 API: use `ds.element_spec`",
    "map_with_legacy_function": "use `ds.map(...)`: every parafeed function is plain Python",
    "filter_with_legacy_function": "use `ds.filter(...)`: every parafeed function is plain Python",
    "fingerprint": "parafeed has no fingerprint tensor; `snapshot` keys its directory by the pipeline itself",
}

TOP = {
    "Iterator": "iterators are `pf.DatasetIterator`: `it = iter(ds)`, with `get_next()`, `get_state()`",
    "IteratorSpec": "parafeed iterators are not passed to traced functions; use `iter(ds)`",
    "NumpyIterator": "`ds.as_numpy_iterator()` gives NumPy elements (`iter(ds)` gives Tensors, as TensorFlow's)",
    "contrib": "TF1's tf.contrib.data names are in `pf.experimental` (e.g. `pf.experimental.AUTOTUNE`)",
}

EXPERIMENTAL = {
    "service": "parafeed scales preprocessing out with Ray, not the tf.data service",
    "ServiceOptions": "parafeed scales preprocessing out with Ray, not the tf.data service",
    "distributed_save": "use `ds.save(path)` on each worker's share (`ds.distribute(n, i).save(...)`)",
    "DatasetInitializer": "lookup tables are TensorFlow objects: build a dict and look keys up in `map`",
    "table_from_dataset": "lookup tables are TensorFlow objects: `dict(ds.as_numpy_iterator())` and `map`",
    "index_table_from_dataset": "lookup tables are TensorFlow objects: `{k: i for i, k in enumerate(ds)}`",
    "to_variant": "parafeed datasets are Python objects: pass the dataset itself",
    "from_variant": "parafeed datasets are Python objects: pass the dataset itself",
    "make_saveable_from_iterator": "save `it.get_state()` (a JSON-friendly dict) with your checkpoint",
    "get_model_proto": "parafeed's autotuner reports through `Options(stats=True)` and `it.stats()`",
    "copy_to_device": "device copies are the framework's: feed `ds.to_tf()` or `ds.to_torch()`",
    "prefetch_to_device": "device copies are the framework's: `ds.prefetch(n).to_tf()` or `ds.to_torch()`",
    "SHARD_HINT": "use `.shard(num_replicas, replica_id)` where the split belongs and `distribute(policy='OFF')`",
}


def missing(owner: str, table: dict[str, str], name: str) -> AttributeError:
    """The error for ``owner.name``: what to use instead when tf.data has the name, else Python's usual error."""
    if name in table:
        return AttributeError(f"{owner}.{name} is tf.data API that parafeed does not have: {table[name]} ({_GUIDE})")
    return AttributeError(f"{owner!r} has no attribute {name!r}")

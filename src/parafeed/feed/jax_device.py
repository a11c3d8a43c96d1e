"""JAX's side of the device feed: batches of NumPy leaves become ``jax.Array``s laid out by a sharding.

Every array leaf of rank >= 1 is placed with the feed's sharding (by default its first dimension split over every
device of the job: ``NamedSharding(Mesh(jax.devices(), ("batch",)), PartitionSpec("batch"))``) through
``jax.make_array_from_process_local_data``: each process gives the rows of its own share (``distribute()`` split the
data by process) and the array is the global batch of every process's rows, as ``jit`` functions over the whole
mesh expect. 0-d leaves are replicated; strings stay NumPy / ``bytes`` (JAX has no string arrays).

JAX copies to devices asynchronously: placing a batch returns at once, and the copy runs while the model computes.
Run on a thread of the feed ahead of the loop (:class:`parafeed.feed.ahead.Ahead`), the batches ``ahead`` are
device buffers already on their way; JAX's own runtime orders their use after the copy, so the loop's hand-over has
nothing to do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import STRING, map_structure


def batch_sharding() -> Any:
    """The default: the first dimension split over every device of the job, one mesh axis named ``"batch"``."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    return NamedSharding(Mesh(np.array(jax.devices()), ("batch",)), PartitionSpec("batch"))


class JaxTransfer:
    """``ready(batch)`` for the feed's thread: the batch's leaves as ``jax.Array``s laid out by ``sharding`` (a
    ``jax.sharding.Sharding`` or a ``jax.Device``; None: :func:`batch_sharding`)."""

    def __init__(self, sharding: Any = None):
        import jax
        from jax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

        if sharding is None:
            sharding = batch_sharding()
        elif isinstance(sharding, jax.Device):
            sharding = SingleDeviceSharding(sharding)
        if not isinstance(sharding, jax.sharding.Sharding):
            raise InvalidArgumentError(
                f"to_jax(): `sharding` must be a jax.sharding.Sharding or a jax.Device, got {type(sharding).__name__}"
            )
        self.sharding = sharding
        self.replicated = NamedSharding(sharding.mesh, PartitionSpec()) if isinstance(sharding, NamedSharding) else None
        self._make = jax.make_array_from_process_local_data

    def ready(self, batch: Any) -> Any:
        return map_structure(self._place, batch)

    def _place(self, leaf: Any) -> Any:
        if isinstance(leaf, np.generic) and leaf.dtype != STRING:
            leaf = np.asarray(leaf)
        if not isinstance(leaf, np.ndarray) or leaf.dtype == STRING:
            return leaf
        if leaf.ndim == 0:
            return self._make(self.replicated or self.sharding, leaf, leaf.shape)
        try:
            return self._make(self.sharding, leaf)
        except ValueError as err:
            raise InvalidArgumentError(
                f"to_jax(): a batch leaf of shape {leaf.shape} cannot be laid out over the devices ({err}); its "
                "first dimension must split evenly over the devices of this process that the sharding splits it "
                "over: batch a multiple of jax.local_device_count() rows with drop_remainder=True (or "
                "equal_steps(), which fills the last batch)"
            ) from err

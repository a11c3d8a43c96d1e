"""Feeding JAX: ``ds.to_jax()``, an iterable of batches as ``jax.Array``s sharded over the devices.

Each batch's array leaves are laid out by a sharding, by default their first dimension split over every device of
the job (:mod:`parafeed.feed.jax_device`), and placed a few batches ahead of the loop on a thread of the feed, so
device buffers are on their way while the model computes. With ``distribute=True`` the pipeline is split by
``jax.process_index()`` / ``jax.process_count()`` (``ds.distribute()`` finds them once ``jax.distributed`` is
initialised), and every array is the global batch made of every process's rows
(``jax.make_array_from_process_local_data``): a ``jit`` step over the whole mesh takes it as it is. End such a
pipeline with ``.equal_steps()``: every process then runs the same number of steps, so none waits forever in a
collective at the end of an epoch (where counts are not known before the epoch, the processes agree at run time
through ``jax.distributed``'s coordination service).
"""

from __future__ import annotations

from typing import Any

from parafeed.core.dataset import Dataset
from parafeed.feed.ahead import Ahead
from parafeed.feed.jax_device import JaxTransfer
from parafeed.feed.passes import Passes, agrees, check_arguments, on_accelerator, position_after, rows
from parafeed.feed.stats import FeedStats


class JaxFeed(Passes):
    """A parafeed pipeline as batches of ``jax.Array``s, pass after pass (each ``iter()`` one epoch);
    ``state_dict()`` / ``load_state_dict()`` save and restore its position (exact despite the batches read ahead),
    also on another number of processes."""


def to_jax(
    ds: Dataset,
    sharding: Any = None,
    *,
    distribute: bool = False,
    ahead: int = 2,
    stats: FeedStats | None = None,
    **distribute_args: Any,
) -> JaxFeed:
    """``ds`` as an iterable of batches whose arrays are ``jax.Array``s laid out by ``sharding``.

    Args:
        sharding: a ``jax.sharding.Sharding`` for every array leaf of rank >= 1 (0-d leaves are replicated over its
            mesh), or a ``jax.Device``. None (the default): the first dimension split over ``jax.devices()``, every
            device of the job; each process gives its own rows. Strings stay NumPy / ``bytes``. Where it lays
            arrays out on accelerators, AUTOTUNE runs the pipeline's maps that chose no executor on worker processes
            (``Options.autotune.executor``: the loop's Python needs the GIL).
        distribute: split the pipeline by ``jax.process_index()`` and ``jax.process_count()`` (``ds.distribute()``);
            the other keyword arguments go to ``distribute()`` (any other keyword is an error).
        ahead: batches placed on the devices before the loop asks, by a thread of the feed (0: on the loop's thread;
            a pipeline whose processes agree on their steps at run time always is).
        stats: a :class:`parafeed.feed.FeedStats`: the loop's wait for batches and the process's CPU per element.

    Example:
        >>> jax.distributed.initialize()
        >>> ds = pf.TFRecordDataset(files).map(parse).batch(64, drop_remainder=True).equal_steps()
        >>> for x, y, w in ds.to_jax(distribute=True):
        ...     state = train_step(state, x, y, w)   # a jit function over the global batch
    """
    check_arguments("to_jax", "sharding, distribute, ahead, stats", distribute, distribute_args, ahead)
    if distribute:
        import jax

        if "input_context" not in distribute_args:
            distribute_args.setdefault("num_replicas", jax.process_count())
            distribute_args.setdefault("replica_id", jax.process_index())
        ds = ds.distribute(**distribute_args)
    transfer = JaxTransfer(sharding)
    if any(device.platform != "cpu" for device in transfer.sharding.device_set):
        ds = on_accelerator(ds)
    depth = 0 if agrees(ds) else ahead

    def feed(it: Any) -> Ahead:
        return Ahead(it, transfer.ready, depth, size=rows, stats=stats, position=position_after(it))

    return JaxFeed(ds, feed)

"""Feeding PyTorch: ``ds.to_torch()``, an ``IterableDataset`` of tensors that share memory with parafeed's arrays.

Arrays become tensors with ``torch.from_numpy`` (no copy; a read-only array is copied once, since a tensor is
writable), NumPy scalars 0-d tensors; strings stay ``bytes`` (string arrays become lists of ``bytes``). With
``distribute=True`` the pipeline is split by ``torch.distributed``'s rank and world size (``ds.distribute()``).
Use it with ``DataLoader(ds.to_torch(), batch_size=None)`` (or iterate it directly): parafeed already batches and
parallelises, so the DataLoader needs no workers of its own. With ``device=`` (``"cuda"``, ``"cpu"``) batches arrive
on that device, readied ahead on a thread of the feed (:mod:`parafeed.feed`).

Under DDP, build the pipeline with ``.distribute()`` (rank and world size come from ``torch.distributed``) and end
it with ``.equal_steps()``: every rank then runs the same number of steps, so no rank waits forever in an
all-reduce at the end of an epoch.
"""

from __future__ import annotations

from typing import Any

from parafeed.core.dataset import Dataset
from parafeed.feed.ahead import Ahead
from parafeed.feed.passes import Passes, agrees, check_arguments, on_accelerator, position_after, rows
from parafeed.feed.stats import FeedStats
from parafeed.feed.torch_device import TorchTransfer, to_tensor
from parafeed.values.structure import map_structure


def to_torch(
    ds: Dataset,
    distribute: bool = False,
    device: Any = None,
    *,
    ahead: int = 2,
    stats: FeedStats | None = None,
    **distribute_args: Any,
) -> Any:
    """``ds`` as a ``torch.utils.data.IterableDataset`` of tensors (split by rank when ``distribute``).

    Args:
        distribute: split the pipeline by ``torch.distributed``'s rank and world size (``ds.distribute()``); the other
            keyword arguments go to ``distribute()`` (any other keyword is an error).
        device: None (the default): CPU tensors sharing parafeed's memory, handed out on the loop's thread as the
            pipeline makes them. ``"cuda"``, ``"cuda:1"``, ``"cpu"`` or a ``torch.device``: batches readied on a
            thread of the feed ``ahead`` batches before the loop asks (:mod:`parafeed.feed`); on a GPU they are
            copied on a side stream, from the shared memory worker processes wrote them into (page-locked once) or
            through page-locked buffers reused from a ring, and handed over safe to use on the loop's current
            stream; on any device but the CPU, AUTOTUNE runs the pipeline's maps that chose no executor on worker
            processes (``Options.autotune.executor``: the loop's Python needs the GIL).
        ahead: batches readied ahead on a device (0: on the loop's thread; a pipeline whose replicas agree on their
            steps at run time through the loop's process group always is, since its collectives cannot run on a
            second thread).
        stats: a :class:`parafeed.feed.FeedStats`: the loop's wait for batches and the process's CPU per element.

    Example:
        >>> ds = pf.TFRecordDataset(files).distribute().map(parse).batch(64).equal_steps().prefetch(pf.AUTOTUNE)
        >>> for x, y, w in ds.to_torch(device="cuda"):
        ...     loss = (w * F.cross_entropy(model(x), y, reduction="none")).mean()
    """
    import torch
    import torch.utils.data

    check_arguments("to_torch", "distribute, device, ahead, stats", distribute, distribute_args, ahead)
    if distribute:
        ds = ds.distribute(**distribute_args)
    if device is not None and torch.device(device).type != "cpu":
        ds = on_accelerator(ds)
    agreeing = agrees(ds)

    class ParafeedIterable(Passes, torch.utils.data.IterableDataset):
        """A parafeed pipeline, element by element as tensors; ``state_dict()`` / ``load_state_dict()`` save and
        restore its position (use it in the main process: ``DataLoader(it, batch_size=None)``, no workers)."""

        def __init__(self) -> None:
            torch.utils.data.IterableDataset.__init__(self)
            Passes.__init__(self, ds, None if device is None else on_device, lambda e: map_structure(to_tensor, e))

    def on_device(it: Any) -> Ahead:
        transfer = TorchTransfer(device, ahead + 2, stats)
        return Ahead(it, transfer.ready, 0 if agreeing else ahead, transfer.hand_over, size=rows, stats=stats,
                     position=position_after(it))  # fmt: skip

    return ParafeedIterable()


def record_step(balancer: Any, step: int, seconds: float) -> None:
    """Share this rank's compute time for ``step`` with every rank (an all-gather) and record all of them in
    ``balancer`` (a :class:`parafeed.distribute.SpeedBalancer`); call it on every rank after every step."""
    import torch
    import torch.distributed as dist

    mine = torch.tensor([float(seconds)], dtype=torch.float64)
    everyone = [torch.zeros(1, dtype=torch.float64) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    balancer.record(step, [float(t) for t in everyone])

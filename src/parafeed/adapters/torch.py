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

import inspect
from typing import Any

from parafeed.core import graph
from parafeed.core.dataset import Dataset
from parafeed.distribute.resume import Epochs, save_state
from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.feed.ahead import Ahead
from parafeed.feed.stats import FeedStats
from parafeed.feed.torch_device import TorchTransfer, to_tensor
from parafeed.values.structure import flatten, map_structure


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
            copied through page-locked buffers reused from a ring, on a side stream, and handed over safe to use on
            the loop's current stream.
        ahead: batches readied ahead on a device (0: on the loop's thread; a pipeline whose replicas agree on their
            steps at run time through the loop's process group always is, since its collectives cannot run on a
            second thread).
        stats: a :class:`parafeed.feed.FeedStats`: the loop's wait for batches and the process's CPU per element.

    Example:
        >>> ds = pf.TFRecordDataset(files).distribute().map(parse).batch(64).equal_steps().prefetch(pf.AUTOTUNE)
        >>> for x, y, w in ds.to_torch(device="cuda"):
        ...     loss = (w * F.cross_entropy(model(x), y, reduction="none")).mean()
    """
    import torch.utils.data

    _check_arguments(distribute, distribute_args, ahead)
    if distribute:
        ds = ds.distribute(**distribute_args)
    agrees = any(getattr(node, "agrees", False) for node in graph.walk(ds))

    class ParafeedIterable(torch.utils.data.IterableDataset):
        """A parafeed pipeline, element by element as tensors; ``state_dict()`` / ``load_state_dict()`` save and
        restore its position (use it in the main process: ``DataLoader(it, batch_size=None)``, no workers)."""

        def __init__(self) -> None:
            super().__init__()
            self.dataset = ds
            self._it: Any = None
            self._feed: Ahead | None = None
            self._steps = 0
            self._epochs = Epochs(ds)

        def __iter__(self) -> Any:
            it = self._it = self._epochs.next()
            self._steps = 0
            if device is not None:
                yield from self._on_device(it)
                return
            try:
                for element in it:
                    self._steps += 1
                    yield map_structure(to_tensor, element)
            finally:
                self._it = None
                it.close()

        def _on_device(self, it: Any) -> Any:
            transfer = TorchTransfer(device, ahead + 2)
            feed = self._feed = Ahead(it, transfer.ready, 0 if agrees else ahead, transfer.hand_over, size=_rows,
                                      stats=stats, position=lambda k: save_state(it, k))  # fmt: skip
            try:
                yield from feed
            finally:
                self._it = self._feed = None
                feed.close()

        def state_dict(self) -> dict:
            """The position of the pass in progress (elements handed out so far), JSON-serialisable; between
            passes, how the next one starts."""
            if self._feed is not None:
                state: dict = self._feed.position()
                return state
            if self._it is None:
                run = self._epochs.upcoming()
                return {} if run is None else {"run": run}
            return save_state(self._it, self._steps)

        def load_state_dict(self, state: dict) -> None:
            """Make the next pass go on from ``state`` to the end of its epoch, on this or any other world size
            (see ``pf.distribute.resume``); the passes after it are whole epochs again, shuffled as the
            uninterrupted run's would have been."""
            state = state or {}
            self._epochs = Epochs(self.dataset, None if "run" in state else state, state.get("run"))

        def __len__(self) -> int:
            return len(self.dataset)

    return ParafeedIterable()


def _check_arguments(distribute: bool, distribute_args: dict[str, Any], ahead: int) -> None:
    known = [name for name in inspect.signature(Dataset.distribute).parameters if name != "self"]
    unknown = sorted(set(distribute_args) - set(known))
    if unknown:
        raise ArgumentTypeError(
            f"to_torch(): unknown keyword argument(s) {unknown}; it takes distribute, device, ahead, stats and, with "
            f"distribute=True, distribute()'s: {known}"
        )
    if distribute_args and not distribute:
        raise InvalidArgumentError(
            f"to_torch(): {sorted(distribute_args)} are distribute()'s arguments, and distribute is False: pass "
            "distribute=True (or call ds.distribute(...) before to_torch())"
        )
    if not isinstance(ahead, int) or isinstance(ahead, bool) or ahead < 0:
        raise InvalidArgumentError(f"to_torch(): `ahead` must be an int >= 0, got {ahead!r}")


def _rows(batch: Any) -> int:
    """Elements in a batch: the leading dimension of its first array leaf (1 for an unbatched element)."""
    for leaf in flatten(batch):
        shape = getattr(leaf, "shape", None)
        return int(shape[0]) if shape else 1
    return 1


def record_step(balancer: Any, step: int, seconds: float) -> None:
    """Share this rank's compute time for ``step`` with every rank (an all-gather) and record all of them in
    ``balancer`` (a :class:`parafeed.distribute.SpeedBalancer`); call it on every rank after every step."""
    import torch
    import torch.distributed as dist

    mine = torch.tensor([float(seconds)], dtype=torch.float64)
    everyone = [torch.zeros(1, dtype=torch.float64) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    balancer.record(step, [float(t) for t in everyone])

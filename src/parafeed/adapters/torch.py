"""Feeding PyTorch: ``ds.to_torch()``, an ``IterableDataset`` of tensors that share memory with parafeed's arrays.

Arrays become tensors with ``torch.from_numpy`` (no copy; a read-only array is copied once, since a tensor is
writable), NumPy scalars 0-d tensors; strings stay ``bytes`` (string arrays become lists of ``bytes``). With
``distribute=True`` the pipeline is split by ``torch.distributed``'s rank and world size (``ds.distribute()``).
Use it with ``DataLoader(ds.to_torch(), batch_size=None)`` (or iterate it directly): parafeed already batches and
parallelises, so the DataLoader needs no workers of its own.

Under DDP, build the pipeline with ``.distribute()`` (rank and world size come from ``torch.distributed``) and end
it with ``.equal_steps()``: every rank then runs the same number of steps, so no rank waits forever in an
all-reduce at the end of an epoch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.core.dataset import Dataset
from parafeed.distribute.resume import Epochs, save_state
from parafeed.values.structure import STRING, map_structure


def to_tensor(leaf: Any) -> Any:
    """One element leaf as a tensor sharing its memory (strings stay ``bytes``)."""
    import torch

    if isinstance(leaf, np.ndarray):
        if leaf.dtype == STRING:
            return leaf.tolist()
        return torch.from_numpy(leaf if leaf.flags.writeable else leaf.copy())
    if isinstance(leaf, np.generic):
        return torch.from_numpy(np.array(leaf))
    return leaf


def to_torch(ds: Dataset, distribute: bool = False, **distribute_args: Any) -> Any:
    """``ds`` as a ``torch.utils.data.IterableDataset`` of tensors (split by rank when ``distribute``).

    Example:
        >>> ds = pf.TFRecordDataset(files).distribute().map(parse).batch(64).equal_steps().prefetch(pf.AUTOTUNE)
        >>> for x, y, w in ds.to_torch():
        ...     loss = (w * F.cross_entropy(model(x), y, reduction="none")).mean()
    """
    import torch.utils.data

    if distribute:
        ds = ds.distribute(**distribute_args)

    class ParafeedIterable(torch.utils.data.IterableDataset):
        """A parafeed pipeline, element by element as tensors; ``state_dict()`` / ``load_state_dict()`` save and
        restore its position (use it in the main process: ``DataLoader(it, batch_size=None)``, no workers)."""

        def __init__(self) -> None:
            super().__init__()
            self.dataset = ds
            self._it: Any = None
            self._steps = 0
            self._epochs = Epochs(ds)

        def __iter__(self) -> Any:
            it = self._it = self._epochs.next()
            self._steps = 0
            try:
                for element in it:
                    self._steps += 1
                    yield map_structure(to_tensor, element)
            finally:
                self._it = None
                it.close()

        def state_dict(self) -> dict:
            """The position of the pass in progress (elements handed out so far), JSON-serialisable; between
            passes, how the next one starts."""
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


def record_step(balancer: Any, step: int, seconds: float) -> None:
    """Share this rank's compute time for ``step`` with every rank (an all-gather) and record all of them in
    ``balancer`` (a :class:`parafeed.distribute.SpeedBalancer`); call it on every rank after every step."""
    import torch
    import torch.distributed as dist

    mine = torch.tensor([float(seconds)], dtype=torch.float64)
    everyone = [torch.zeros(1, dtype=torch.float64) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    balancer.record(step, [float(t) for t in everyone])

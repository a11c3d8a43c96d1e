"""Feeding PyTorch: ``ds.to_torch()``, an ``IterableDataset`` of tensors that share memory with parafeed's arrays.

Arrays become tensors with ``torch.from_numpy`` (no copy; a read-only array is copied once, since a tensor is
writable), NumPy scalars 0-d tensors; strings stay ``bytes`` (string arrays become lists of ``bytes``). With
``distribute=True`` the pipeline is split by ``torch.distributed``'s rank and world size (``ds.distribute()``).
Use it with ``DataLoader(ds.to_torch(), batch_size=None)``: parafeed already batches and parallelises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.dataset import Dataset
from parafeed.structure import STRING, map_structure


def to_tensor(leaf: Any) -> Any:
    import torch

    if isinstance(leaf, np.ndarray):
        if leaf.dtype == STRING:
            return leaf.tolist()
        return torch.from_numpy(leaf if leaf.flags.writeable else leaf.copy())
    if isinstance(leaf, np.generic):
        return torch.from_numpy(np.array(leaf))
    return leaf


def to_torch(ds: Dataset, distribute: bool = False, **distribute_args: Any) -> Any:
    """``ds`` as a ``torch.utils.data.IterableDataset`` of tensors (split by rank when ``distribute``)."""
    import torch.utils.data

    if distribute:
        ds = ds.distribute(**distribute_args)

    class ParafeedIterable(torch.utils.data.IterableDataset):
        """A parafeed pipeline, element by element as tensors."""

        def __init__(self) -> None:
            super().__init__()
            self.dataset = ds

        def __iter__(self) -> Any:
            it = iter(self.dataset)
            try:
                for element in it:
                    yield map_structure(to_tensor, element)
            finally:
                it.close()

        def __len__(self) -> int:
            return len(self.dataset)

    return ParafeedIterable()

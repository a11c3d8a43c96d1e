"""The input worker's share of an offloaded pipeline: blocks of consecutive elements, dealt round-robin.

``offload`` runs a pipeline on K input workers; each one runs the same pipeline with this step inserted where the
expensive per-element work begins (:func:`split_point`). Its input's elements are cut into blocks of ``block``
consecutive elements; worker ``k`` of ``K`` takes blocks ``first + k``, ``first + k + K`` ... and skips the others (a
skip does not run the steps above it, and seeks in files with an index). Which worker this is comes from the run
(``RunContext.share``), not the node, so one saved state restores into any worker of any number of workers: that is
how a replaced worker, or a new set of workers after a resize, goes on from a block boundary.
"""

from __future__ import annotations

from typing import Any

from parafeed.core.dataset import Dataset, PassThroughDataset
from parafeed.core.graph import ONE_TO_ONE
from parafeed.core.iterator import DatasetIterator, current_scope


class BlockShardDataset(PassThroughDataset):
    """This input worker's blocks of ``block`` consecutive input elements (see the module docs)."""

    def __init__(self, parent: Dataset, block: int):
        super().__init__(parent)
        self.block = block

    def _make_iterator(self) -> DatasetIterator:
        run = current_scope().run
        return _BlockShardIterator(self._parent._iter(), self.block, run.share if run is not None else (1, 0, 0))


class _BlockShardIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, block: int, share: tuple[int, int, int]):
        super().__init__(parent)
        self._parent = parent
        self._block = block
        self._workers, self._worker, self._first = share
        self._next = 0  # the block the input is in
        self._offset = 0  # elements of that block already taken

    def __next__(self) -> Any:
        if self._offset == 0:
            while (self._next - self._first) % self._workers != self._worker or self._next < self._first:
                if self._parent.skip(self._block) < self._block:
                    raise StopIteration
                self._next += 1
        x = next(self._parent)
        self._offset += 1
        if self._offset == self._block:
            self._next, self._offset = self._next + 1, 0
        return x

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state(), "block": self._next, "offset": self._offset}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._next, self._offset = int(state["block"]), int(state["offset"])


def _passes_blocks(node: Dataset) -> bool:
    """Whether a block shard below ``node`` gives the same blocks of ``node``'s output as one above it: one output per
    input element in input order, or fixed-size batches of consecutive elements."""
    from parafeed.ops.batch import BatchDataset
    from parafeed.ops.padded_batch import PaddedBatchDataset

    if len(node.parents) != 1:
        return False
    return (node.kind == ONE_TO_ONE and node.order_fixed) or isinstance(node, (BatchDataset, PaddedBatchDataset))


def split_point(root: Dataset, units: int) -> tuple[Dataset, int]:
    """Where the block shard goes in ``root``'s pipeline for blocks of ``units`` of its elements: the node it reads
    from, and the block size there in that node's elements (batches below multiply it)."""
    node, block = root, units
    while _passes_blocks(node):
        block *= node.batch_size or 1
        node = node.parents[0]
    return node, block

"""Checkpoints of pipelines (public: ``pf.checkpoint``): save where a run stands, resume it exactly, check that.

* Every iterator saves its position with ``get_state()`` and goes on from one with ``set_state()``; the root
  iterator's state also holds its run's (iteration and seeds). Steps use :mod:`parafeed.core.positions` for
  positions of iterators that read ahead and buffers re-read on restore.
* :func:`save_state` / :func:`resume`: a training run's input with the model checkpoint, resumed on the same or on
  another number of replicas (also ``pf.distribute.save_state`` / ``resume``); :class:`Epochs` gives the iterators
  of successive epochs, the first resumed, the next ones as the uninterrupted run's would have been.
* :func:`check_restores`: check that a pipeline resumes exactly from a state saved at any position.

Example:
    >>> pf.checkpoint.check_restores(pf.Dataset.range(100).shuffle(10, seed=1).batch(8))
"""

from parafeed.checkpoint.check import check_restores
from parafeed.core.positions import Snapshots, position, seek, snapshot
from parafeed.distribute.resume import Epochs, next_run, resume, samples_per_step, save_state

__all__ = [
    "Epochs",
    "Snapshots",
    "check_restores",
    "next_run",
    "position",
    "resume",
    "samples_per_step",
    "save_state",
    "seek",
    "snapshot",
]

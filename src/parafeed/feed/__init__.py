"""Feeding accelerators: the concern the framework adapters share (:mod:`parafeed.adapters`).

* :mod:`parafeed.feed.stats`: :class:`FeedStats`, what the feed cost the training loop (time waited for batches, the
  training process's CPU per element).
* :mod:`parafeed.feed.ahead`: a thread that takes batches from a parafeed iterator and readies them for the loop a
  few batches before they are asked for, with the pipeline's state after each.
* :mod:`parafeed.feed.passes`: :class:`~parafeed.feed.passes.Passes`, an adapter's iterable: one pass of the pipeline
  per ``iter()``, its position saved exactly despite the batches read ahead.
* :mod:`parafeed.feed.jax_device`: JAX's side: batches as ``jax.Array``s laid out by a sharding, each process's rows
  in the global batch.
* :mod:`parafeed.feed.torch_device`: PyTorch's side: host batches in page-locked memory allocated once and reused,
  copied to the device on a side CUDA stream, a buffer reused only after the GPU is done with it.

Frameworks are imported inside the functions that need them; ``import parafeed`` loads none of this.
"""

from parafeed.feed.stats import FeedStats

__all__ = ["FeedStats"]

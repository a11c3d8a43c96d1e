"""The weights ``equal_steps(policy="pad")`` adds to batches: 1 for real rows, 0 for the rows that fill a short batch
(its own rows repeated) and for the batches of a replica that has run out."""

from __future__ import annotations

from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import flatten, is_nested, map_structure


def with_weights(element: Any, weights: Any) -> Any:
    """The element with its sample weights added: last in a tuple, ``"sample_weight"`` in a dict."""
    if type(element) is tuple:
        return (*element, weights)
    if isinstance(element, dict):
        return {**element, "sample_weight": weights}
    return (element, weights)


def _rows(element: Any) -> int:
    leaves = flatten(element)
    if not leaves or not all(isinstance(x, np.ndarray) and x.ndim for x in leaves):
        raise InvalidArgumentError(
            "equal_steps(policy='pad'): elements must be batches (arrays with a batch dimension)"
        )
    return leaves[0].shape[0]


def weighted(x: Any, batch_size: int) -> tuple[Any, int, Any]:
    """A batch of ``pad``: ``x`` with its weights (1, and 0 for the rows that fill a short batch up to the largest
    batch size so far, with its own rows); that batch size; and ``x`` filled up (what a replica that runs out pads
    with)."""
    rows = _rows(x)
    batch_size = max(batch_size, rows)
    weights = np.ones(batch_size, np.float32)
    if rows < batch_size:
        x = _pad_rows(x, batch_size)
        weights[rows:] = 0.0
    return with_weights(x, weights), batch_size, x


def _take_rows(element: Any, index: np.ndarray) -> Any:
    return map_structure(lambda leaf: leaf[index], element) if is_nested(element) else element[index]


def _pad_rows(x: Any, size: int) -> Any:
    """A batch of ``size`` rows: ``x`` with its own rows repeated."""
    rows = _rows(x)
    return x if rows >= size else _take_rows(x, np.arange(size) % rows)

"""Adapters that feed parafeed pipelines to TensorFlow (``pf.adapters.tf``), PyTorch (``pf.adapters.torch``) and JAX
(``pf.adapters.jax``).

Each imports its framework only when one of its functions runs, so ``import parafeed`` loads none of them.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (loaded on first use: see __getattr__)
    from parafeed.adapters import jax, tf, torch

__all__ = ["jax", "tf", "torch"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"parafeed.adapters.{name}")
    raise AttributeError(f"module 'parafeed.adapters' has no attribute {name!r}")

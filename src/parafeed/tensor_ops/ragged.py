"""``pf.ragged``: what ``tf.ragged`` holds: :class:`RaggedTensor`, its spec, and ``constant``.

The values live in :mod:`parafeed.values` (``ragged_spec.py``: the spec, ``ragged_tensor.py``: the leaf class,
``ragged_build.py``: building from lists, stacked rows and TensorFlow's RaggedTensors); this module is the ``tf.ragged``
family of operations.

Example:
    >>> pf.ragged.constant([[1, 2], [3]]).to_list()
    [[1, 2], [3]]
"""

from parafeed.values.ragged_build import constant
from parafeed.values.ragged_spec import RaggedTensorSpec
from parafeed.values.ragged_tensor import RaggedTensor

__all__ = ["RaggedTensor", "RaggedTensorSpec", "constant"]

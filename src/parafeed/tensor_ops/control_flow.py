"""TensorFlow's graph control flow as plain Python (``pf.cond``, ``pf.while_loop``, ``pf.map_fn``, ``pf.case``,
``pf.TensorArray``) and the graph-building helpers input code calls that have nothing to do on NumPy
(``pf.name_scope``, ``pf.init_scope``, ``pf.control_dependencies``, ``pf.device``, ``pf.stop_gradient``): they run
eagerly, as TensorFlow's do outside ``tf.function``. ``pf.Assert`` and ``pf.debugging.assert_*`` check at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from parafeed.errors import ArgumentTypeError, InvalidArgumentError
from parafeed.tensor_ops.convert import array, out
from parafeed.values.structure import as_dtype, flatten, map_structure, pack_as
from parafeed.values.tensor import Tensor

newaxis = None


def _predicate(pred: Any, op: str) -> bool:
    value = np.asarray(pred.numpy() if hasattr(pred, "numpy") and not isinstance(pred, np.ndarray) else pred)
    if value.size != 1 or value.dtype != np.bool_:
        raise InvalidArgumentError(
            f"{op}: the predicate must be a scalar bool, got {value.dtype} of shape {value.shape}"
        )
    return bool(value.reshape(()))


def cond(pred: Any, true_fn: Callable[[], Any] | None = None, false_fn: Callable[[], Any] | None = None,
         name: str | None = None) -> Any:  # fmt: skip
    """``tf.cond``: ``true_fn()`` if ``pred`` else ``false_fn()``."""
    if true_fn is None or false_fn is None:
        raise InvalidArgumentError("cond(): give both `true_fn` and `false_fn`")
    return true_fn() if _predicate(pred, "cond()") else false_fn()


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None, exclusive: bool = False,
         strict: bool = False, name: str | None = "case") -> Any:  # fmt: skip
    """``tf.case``: the function of the first true predicate (of the only one with ``exclusive``), else ``default``."""
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    chosen = [fn for pred, fn in pairs if _predicate(pred, "case()")]
    if exclusive and len(chosen) > 1:
        raise InvalidArgumentError(f"case(): {len(chosen)} predicates are true with exclusive=True")
    if chosen:
        return chosen[0]()
    if default is None:
        raise InvalidArgumentError("case(): no predicate is true and there is no `default`")
    return default()


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None) -> Any:  # fmt: skip
    """``tf.while_loop``: ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (at most
    ``maximum_iterations`` times); a list or tuple of loop variables is spread into arguments."""
    spread = isinstance(loop_vars, (list, tuple)) and not hasattr(loop_vars, "_fields")
    values, done = loop_vars, 0
    limit = None if maximum_iterations is None else int(np.asarray(maximum_iterations))
    while (limit is None or done < limit) and _predicate(cond(*values) if spread else cond(values), "while_loop()"):
        values = body(*values) if spread else body(values)
        if spread and (not isinstance(values, (list, tuple)) or len(values) != len(loop_vars)):
            raise ArgumentTypeError(
                f"while_loop(): `body` must return the structure of `loop_vars` ({len(loop_vars)} values), got "
                f"{values!r:.100}"
            )
        done += 1
    return type(loop_vars)(values) if spread else values


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None, parallel_iterations: int | None = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True, name: str | None = None,
           fn_output_signature: Any = None) -> Any:  # fmt: skip
    """``tf.map_fn``: ``fn`` on each row of ``elems`` (a tensor or a structure of them, split on their first
    dimension), the results stacked."""
    leaves = [array(leaf, "map_fn()") for leaf in flatten(elems)]
    if not leaves or any(leaf.ndim == 0 for leaf in leaves) or len({leaf.shape[0] for leaf in leaves}) != 1:
        raise InvalidArgumentError("map_fn(): `elems` must be tensors of rank >= 1 with the same first dimension")
    results = [fn(pack_as(elems, [out(leaf[i]) for leaf in leaves])) for i in range(leaves[0].shape[0])]
    signature = fn_output_signature if fn_output_signature is not None else dtype
    if not results:
        return map_structure(lambda s: out(np.zeros((0,), as_dtype(getattr(s, "dtype", s)))), signature) if (
            signature is not None) else out(np.zeros((0,), leaves[0].dtype))  # fmt: skip
    flat = [flatten(r) for r in results]
    stacked = [out(np.stack([array(f[j], "map_fn()") for f in flat])) for j in range(len(flat[0]))]
    return pack_as(results[0], stacked)


class TensorArray:
    """``tf.TensorArray`` as a Python list of arrays: ``write`` / ``read`` / ``stack`` / ``unstack`` /
    ``gather`` / ``scatter`` / ``concat`` / ``size``. ``write`` returns the array itself (TensorFlow returns a new
    one to rebind, which works the same)."""

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool = False, clear_after_read: bool = True,
                 tensor_array_name: str | None = None, handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True,
                 name: str | None = None):  # fmt: skip
        self.dtype = as_dtype(dtype)
        self._items: list[np.ndarray | None] = [None] * (0 if size is None else int(np.asarray(size)))
        self._dynamic = dynamic_size
        self.element_shape = element_shape

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        i = int(np.asarray(index))
        if i >= len(self._items):
            if not self._dynamic:
                raise InvalidArgumentError(f"TensorArray.write(): index {i} is out of range (size {len(self._items)})")
            self._items.extend([None] * (i + 1 - len(self._items)))
        self._items[i] = np.asarray(array(value, "TensorArray.write()"), dtype=self.dtype)
        return self

    def read(self, index: Any, name: str | None = None) -> Tensor:
        i = int(np.asarray(index))
        if not 0 <= i < len(self._items) or self._items[i] is None:
            raise InvalidArgumentError(f"TensorArray.read(): element {i} was not written (size {len(self._items)})")
        return out(self._items[i])

    def _written(self, op: str) -> list[np.ndarray]:
        missing = [i for i, item in enumerate(self._items) if item is None]
        if missing:
            raise InvalidArgumentError(f"TensorArray.{op}(): element {missing[0]} was not written")
        return [item for item in self._items if item is not None]

    def stack(self, name: str | None = None) -> Tensor:
        items = self._written("stack")
        shape = () if self.element_shape is None else tuple(d or 0 for d in np.atleast_1d(self.element_shape))
        return out(np.stack(items) if items else np.zeros((0, *shape), self.dtype))

    def concat(self, name: str | None = None) -> Tensor:
        items = self._written("concat")
        return out(np.concatenate(items) if items else np.zeros((0,), self.dtype))

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        return out(np.stack([self.read(i) for i in np.asarray(indices).reshape(-1)]))

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        rows = array(value, "TensorArray.unstack()")
        self._items = [np.asarray(r, self.dtype) for r in rows]
        return self

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        for i, row in zip(np.asarray(indices).reshape(-1), array(value, "TensorArray.scatter()")):
            self.write(i, row)
        return self

    def size(self, name: str | None = None) -> Tensor:
        return out(np.int32(len(self._items)))

    def close(self, name: str | None = None) -> None:
        self._items = []


@contextlib.contextmanager
def name_scope(name: str, *args: Any, **kwargs: Any) -> Iterator[str]:
    """``tf.name_scope``: names graph operations, of which there are none here."""
    yield name


@contextlib.contextmanager
def _nothing(*args: Any, **kwargs: Any) -> Iterator[None]:
    yield


init_scope = control_dependencies = device = _nothing


def stop_gradient(input: Any, name: str | None = None) -> Any:
    return input


def no_op(name: str | None = None) -> None:
    return None


def Assert(condition: Any, data: Any, summarize: int | None = None, name: str | None = None) -> None:
    """``tf.Assert``: InvalidArgumentError (with ``data``) when ``condition`` is false."""
    if not bool(np.all(np.asarray(condition))):
        raise InvalidArgumentError(f"assertion failed: {[np.asarray(d).tolist() for d in data]!r:.300}")


__all__ = [
    "Assert",
    "TensorArray",
    "case",
    "cond",
    "control_dependencies",
    "device",
    "init_scope",
    "map_fn",
    "name_scope",
    "newaxis",
    "no_op",
    "stop_gradient",
    "while_loop",
]

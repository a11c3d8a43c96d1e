"""``scan``: a running state through the elements, ``(state, element) -> (new_state, output)``.

Also the helpers that steps holding user states (``scan``, ``group_by_reducer``) share: checking a new state against
the initial one, trying a function on a sample element when the step is built (as tf.data's tracing refuses a state
that changes dtype before the pipeline runs), and writing states into JSON checkpoints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed.core.arguments import callable_arg
from parafeed.core.dataset import Dataset
from parafeed.core.functions import fn_name, to_result, user_error
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import ElementTypeError, StateError
from parafeed.values.elements import to_element
from parafeed.values.structure import dtype_name, flatten, pack_as, same_structure, spec_of

NOT_RUN = object()


def sample_of(ds: Dataset) -> Any:
    """An element of ``ds`` to try user functions on at build time, or ``NOT_RUN`` where none can be had (an empty
    or failing input: the functions then meet their checks while iterating)."""
    try:
        return ds._sample_element()
    except Exception:  # any failure here surfaces again, in order, while iterating
        return NOT_RUN


def try_call(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on sample values at build time, or ``NOT_RUN`` if it raises (it raises again while iterating)."""
    if any(a is NOT_RUN for a in args):
        return NOT_RUN
    try:
        return fn(*args)
    except Exception:  # it raises again, in order, while iterating
        return NOT_RUN


def check_state(step: str, fn: Callable[..., Any], new: Any, old: Any) -> None:
    """Refuse a new state whose structure or dtypes differ from the old one's (tf.data's rule: shapes may change)."""
    if not same_structure(new, old, check_types=False):
        raise ElementTypeError(
            f"{step}: `{fn_name(fn).strip('`')}` must return a new state with the structure of the initial state: "
            f"got {new!r:.100} for {old!r:.100}"
        )
    for j, (a, b) in enumerate(zip(flatten(spec_of(new)), flatten(spec_of(old)))):
        if a.dtype != b.dtype:
            raise ElementTypeError(
                f"{step}: The element types for the new state must match the initial state: {fn_name(fn)} changed "
                f"component {j} from {dtype_name(b.dtype)} to {dtype_name(a.dtype)}; start from a state of the final "
                f"dtype, e.g. np.{dtype_name(a.dtype)}(0), or cast the new state"
            )


def encode_value(value: Any) -> list:
    """A (nested) element's leaves as JSON values, for a checkpoint (``decode_value`` with the structure undoes it)."""
    out = []
    for leaf in flatten(value):
        arr = np.asarray(leaf)
        if arr.dtype.kind in "OSU":
            data = [bytes(v).hex() for v in arr.reshape(-1).tolist()]
            name = "string"
        else:
            data, name = arr.reshape(-1).tolist(), arr.dtype.name
        out.append([name, list(arr.shape), data, isinstance(leaf, np.ndarray)])
    return out


def decode_value(leaves: list, structure: Any) -> Any:
    """The element ``encode_value`` wrote, in ``structure`` (any element of the same structure)."""
    values = []
    for name, shape, data, is_array in leaves:
        if name == "string":
            arr = np.array([bytes.fromhex(v) for v in data] + [None], dtype=object)[:-1].reshape(shape)
        else:
            arr = np.array(data, dtype=name).reshape(shape)
        values.append(arr if is_array else arr[()])
    if len(values) != len(flatten(structure)):
        raise StateError("set_state(): a saved state has another structure than this pipeline's")
    return pack_as(structure, values)


class ScanDataset(Dataset):
    """``scan_func(state, element) -> (new_state, output)`` over the elements, starting from ``initial_state``."""

    def __init__(self, parent: Dataset, initial_state: Any, scan_func: Callable[..., Any], name: str | None = None):
        super().__init__((parent,), name=name)
        self._fn = callable_arg("scan()", "scan_func", scan_func)
        self._initial = to_element(initial_state, "scan() initial_state")
        probe = try_call(scan_func, self._initial, sample_of(parent))
        if probe is not NOT_RUN:
            self._apply(self._initial, probe)  # a state that changes structure or dtype is refused here, as tf.data

    def _apply(self, state: Any, result: Any) -> tuple[Any, Any]:
        """The checked ``(new_state, output)`` of a result of ``scan_func``."""
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise ElementTypeError(
                f"scan(): Invalid `scan_func`. `scan_func` should return a pair consisting of new state and the "
                f"output value, got {type(result).__name__} {result!r:.100}"
            )
        new = to_element(result[0], f"scan(): the new state from {fn_name(self._fn)}")
        check_state("scan()", self._fn, new, state)
        return new, to_result(result[1], f"scan(): the output of {fn_name(self._fn)}")

    def _make_iterator(self) -> DatasetIterator:
        return _ScanIterator(self._parents[0]._iter(), self)

    def _sample_element(self) -> Any:
        result = self._fn(self._initial, self._parents[0]._sample_element())
        return self._apply(self._initial, result)[1]

    def _cardinality(self) -> int:
        return self._parents[0]._cardinality()

    def _static_shapes(self) -> bool:
        return False


class _ScanIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, ds: ScanDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._state = ds._initial
        self._index = 0

    def __next__(self) -> Any:
        element = next(self._parent)
        try:
            result = self._ds._fn(self._state, element)
        except Exception as err:
            raise user_error(err, "scan()", self._ds._fn, self._index)
        self._state, output = self._ds._apply(self._state, result)
        self._index += 1
        return output

    def _get_state(self) -> dict:
        """Size: the input's state and the scan state's values (the one part that is data)."""
        return {"parent": self._parent.get_state(), "index": self._index, "state": encode_value(self._state)}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._index = int(state["index"])
        self._state = decode_value(state["state"], self._ds._initial)

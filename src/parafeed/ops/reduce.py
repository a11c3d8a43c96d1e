"""``reduce``: fold a whole dataset into one value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parafeed.core.arguments import callable_arg
from parafeed.core.dataset import Dataset, iterate
from parafeed.core.functions import fn_name, to_result, user_error
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.values.elements import to_element
from parafeed.values.structure import dtype_name, flatten, same_structure, spec_of
from parafeed.values.tensor import tensor_leaves


def reduce_dataset(ds: Dataset, initial_state: Any, reduce_func: Callable[[Any, Any], Any]) -> Any:
    """``state = reduce_func(state, element)`` over all elements; the state keeps its structure and dtypes. Its
    number and array leaves come back as Tensors (``.numpy()`` works on them, as on TensorFlow's result)."""
    step = "reduce()"
    reduce_func = callable_arg(step, "reduce_func", reduce_func)
    state = to_element(initial_state, f"{step} initial_state")
    dtypes = [s.dtype for s in flatten(spec_of(state))]
    with iterate(ds) as it:
        for index, element in enumerate(it):
            try:
                new = reduce_func(state, element)
            except Exception as err:
                raise user_error(err, step, reduce_func, index)
            new = to_result(new, f"{step}: the result of {fn_name(reduce_func)}")
            if not same_structure(new, state, check_types=False):
                raise ElementTypeError(
                    f"{step}: `reduce_func` {fn_name(reduce_func)} must return a state with the structure of "
                    f"`initial_state`: got {new!r:.100} for {state!r:.100}"
                )
            for j, (leaf, dtype) in enumerate(zip(flatten(spec_of(new)), dtypes)):
                if leaf.dtype != dtype:
                    raise ElementTypeError(
                        f"{step}: `reduce_func` {fn_name(reduce_func)} changed component {j} of the state from "
                        f"{dtype_name(dtype)} to {dtype_name(leaf.dtype)}; start from a state of the final dtype, "
                        f"e.g. np.{dtype_name(leaf.dtype)}(0)"
                    )
            state = new
    return tensor_leaves(state, strings=False)


def single_element(ds: Dataset) -> Any:
    """The only element of ``ds``; InvalidArgumentError (tf.data's kind) when it has none or more than one."""
    with iter(ds) as it:
        try:
            element = next(it)
        except StopIteration:
            raise InvalidArgumentError(
                "get_single_element(): Dataset was empty; it must have exactly one element"
            ) from None
        try:
            next(it)
        except StopIteration:
            return element
    raise InvalidArgumentError(
        "get_single_element(): Dataset had more than one element; take(1) or batch() it to one element first"
    )

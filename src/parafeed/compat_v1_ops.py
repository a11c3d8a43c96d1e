"""TensorFlow 1's operation names (``tf.compat.v1.X``) over parafeed's operations, for ``pf.compat.v1``.

``TOP`` holds the top-level names TF1 input code calls that parafeed has under its TF2 names (``sparse_to_dense``,
``string_join``, ``substr``, ``parse_example``, ``random_crop`` ...); ``SPARSE``, ``STRINGS``, ``IO``, ``RANDOM``,
``MATH`` and ``IMAGE`` hold TF1's forms of ``tf.compat.v1.sparse.X`` ... where they differ from TF2's. Each takes
TF1's arguments: old names of arguments (``keep_dims``, ``reduction_indices``, ``dim``, ``concat_dim``, ``bytes``
...), TF1's positional order (``name`` before ``unit``) and TF1's results (``strings.split`` gives a SparseTensor,
``where`` picks rows with a 1-D condition). ``name`` arguments are accepted and ignored, as everywhere in parafeed.

Example:
    >>> import parafeed.compat.v1 as tf
    >>> tf.reduce_sum([[1, 2], [3, 4]], reduction_indices=1, keep_dims=True).tolist()
    [[3], [7]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from parafeed import io
from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops import array_ops, image, math_ops, random_ops, sparse, strings
from parafeed.values import dtypes
from parafeed.values.ragged_tensor import RaggedTensor
from parafeed.values.sparse import SparseTensor


def _either(op: str, name: str, value: Any, old_name: str, old_value: Any) -> Any:
    """The argument given as ``name`` or as its TF1 name ``old_name`` (not both, as in TensorFlow)."""
    if value is not None and old_value is not None:
        raise InvalidArgumentError(f"{op}: give `{name}` or its old name `{old_name}`, not both")
    return value if old_value is None else old_value


def _reduction(fn: Callable[..., Any]) -> Callable[..., Any]:
    """TF1's form of the reduction ``fn``: ``reduction_indices`` and ``keep_dims`` are old names of ``axis`` and
    ``keepdims``."""

    @functools.wraps(fn)
    def reduce(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Any = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Any:  # fmt: skip
        op = f"{fn.__name__}()"
        axis = _either(op, "axis", axis, "reduction_indices", reduction_indices)
        return fn(input_tensor, axis, bool(_either(op, "keepdims", keepdims, "keep_dims", keep_dims)))

    return reduce


def count_nonzero(input_tensor: Any = None, axis: Any = None, keepdims: Any = None, dtype: Any = "int64",
                  name: Any = None, reduction_indices: Any = None, keep_dims: Any = None,
                  input: Any = None) -> Any:  # fmt: skip
    """TF1's ``count_nonzero``: the number of non-zero entries along ``axis`` (``reduction_indices``)."""
    op = "count_nonzero()"
    values = _either(op, "input_tensor", input_tensor, "input", input)
    axis = _either(op, "axis", axis, "reduction_indices", reduction_indices)
    keep = bool(_either(op, "keepdims", keepdims, "keep_dims", keep_dims))
    return math_ops.count_nonzero(values, axis, keep, dtype)


def _arg(fn: Callable[..., Any]) -> Callable[..., Any]:
    """TF1's form of ``argmax`` / ``argmin``: ``dimension`` is the old name of ``axis``, ``name`` comes third."""

    @functools.wraps(fn)
    def arg(input: Any, axis: Any = None, name: Any = None, dimension: Any = None, output_type: Any = "int64") -> Any:
        return fn(input, _either(f"{fn.__name__}()", "axis", axis, "dimension", dimension), output_type)

    return arg


def _arg_op(fn: Callable[..., Any]) -> Callable[..., Any]:
    """TF1's ``arg_max`` / ``arg_min``: the raw ops, whose axis (``dimension``) must be given."""

    def arg(input: Any, dimension: Any, output_type: Any = "int64", name: Any = None) -> Any:
        return fn(input, dimension, output_type)

    arg.__doc__ = f"TF1's ``arg_{fn.__name__[3:]}``: ``{fn.__name__}`` along ``dimension``."
    return arg


def expand_dims(input: Any, axis: Any = None, name: Any = None, dim: Any = None) -> Any:
    """TF1's ``expand_dims``: ``dim`` is the old name of ``axis``."""
    axis = _either("expand_dims()", "axis", axis, "dim", dim)
    if axis is None:
        raise InvalidArgumentError("expand_dims(): give `axis` (or its old name `dim`)")
    return array_ops.expand_dims(input, axis)


def squeeze(input: Any, axis: Any = None, name: Any = None, squeeze_dims: Any = None) -> Any:
    """TF1's ``squeeze``: ``squeeze_dims`` is the old name of ``axis``."""
    return array_ops.squeeze(input, _either("squeeze()", "axis", axis, "squeeze_dims", squeeze_dims))


def where(condition: Any, x: Any = None, y: Any = None, name: Any = None) -> Any:
    """TF1's ``where``: the coordinates of true entries, or ``x`` where ``condition`` is true and ``y`` elsewhere.

    Unlike TF2's, ``x`` and ``y`` must have one shape and nothing broadcasts, but a 1-D ``condition`` picks whole
    rows (of ``x``'s first dimension)."""
    if x is None and y is None:
        return array_ops.where(condition)
    if x is None or y is None:
        raise InvalidArgumentError("where(): give both `x` and `y`, or neither")
    cond, shape = np.asarray(condition), np.shape(x)
    if shape != np.shape(y):
        raise InvalidArgumentError(f"where(): `x` and `y` must have one shape, got {shape} and {np.shape(y)}")
    if cond.ndim == 1 and len(shape) > 1 and cond.shape[0] == shape[0]:
        cond = cond.reshape(cond.shape + (1,) * (len(shape) - 1))
    elif cond.shape != shape and cond.ndim:
        raise InvalidArgumentError(
            f"where(): `condition` must have the shape of `x` {shape} or be 1-D of its first dimension, got "
            f"{cond.shape}"
        )
    return array_ops.where(cond, x, y)


def _cast_to(dtype: str) -> Callable[..., Any]:
    """TF1's ``to_<dtype>``: ``cast(x, dtype)``."""

    def to(x: Any, name: Any = None) -> Any:
        return array_ops.cast(x, getattr(dtypes, dtype))

    to.__doc__ = f"TF1's ``to_{dtype}``: ``cast(x, {dtype})``."
    return to


# ---------------------------------------------------------------------------- sparse


def sparse_to_dense(sparse_indices: Any, output_shape: Any, sparse_values: Any, default_value: Any = 0,
                    validate_indices: bool = True, name: Any = None) -> Any:  # fmt: skip
    """TF1's ``sparse_to_dense``: a dense array of ``output_shape`` with ``sparse_values`` (one value, or one per
    index) at ``sparse_indices`` (a scalar, a vector of indices into a vector, or one row per index) and
    ``default_value`` elsewhere. With ``validate_indices``, indices must be in row-major order without repeats."""
    shape = np.asarray(output_shape, np.int64).reshape(-1)
    indices = np.asarray(sparse_indices, np.int64)
    indices = indices.reshape(-1, 1) if indices.ndim < 2 else indices
    values = np.asarray(array_ops.convert_to_tensor(sparse_values))
    if values.ndim == 0:
        values = np.full(len(indices), values, values.dtype)
    return sparse.to_dense(SparseTensor(indices, values, shape), default_value, validate_indices)


def sparse_concat(axis: Any, sp_inputs: Any, name: Any = None, expand_nonconcat_dim: bool = False,
                  concat_dim: Any = None, expand_nonconcat_dims: Any = None) -> Any:  # fmt: skip
    """TF1's ``sparse.concat``: ``concat_dim`` is the old name of ``axis``, ``expand_nonconcat_dim`` of
    ``expand_nonconcat_dims``."""
    op = "sparse_concat()"
    axis = _either(op, "axis", axis, "concat_dim", concat_dim)
    expand = expand_nonconcat_dim if expand_nonconcat_dims is None else expand_nonconcat_dims
    return sparse.concat(axis, sp_inputs, bool(expand))


def sparse_add(a: Any, b: Any, threshold: Any = None, thresh: Any = None) -> Any:
    """TF1's ``sparse.add``: ``thresh`` is the old name of ``threshold``."""
    threshold = _either("sparse_add()", "threshold", threshold, "thresh", thresh)
    return sparse.add(a, b, 0 if threshold is None else threshold)


def _sparse_reduce_sum(output_is_sparse: bool) -> Callable[..., Any]:
    """TF1's ``sparse.reduce_sum`` (or ``reduce_sum_sparse``): ``reduction_axes`` and ``keep_dims`` are old names."""

    def reduce(sp_input: Any, axis: Any = None, keepdims: Any = None, reduction_axes: Any = None,
               keep_dims: Any = None) -> Any:  # fmt: skip
        op = "sparse_reduce_sum()"
        axis = _either(op, "axis", axis, "reduction_axes", reduction_axes)
        keep = _either(op, "keepdims", keepdims, "keep_dims", keep_dims)
        return sparse.reduce_sum(sp_input, axis, keep, output_is_sparse)

    reduce.__doc__ = _sparse_reduce_sum.__doc__
    return reduce


# ---------------------------------------------------------------------------- strings


def substr(input: Any, pos: Any, len: Any, name: Any = None, unit: str = "BYTE") -> Any:
    """TF1's ``substr``: ``strings.substr`` with ``name`` before ``unit``."""
    return strings.substr(input, pos, len, unit)


def string_to_number(string_tensor: Any = None, out_type: Any = "float32", name: Any = None,
                     input: Any = None) -> Any:  # fmt: skip
    """TF1's ``string_to_number``: ``input`` is another name of ``string_tensor``."""
    return strings.to_number(_either("string_to_number()", "string_tensor", string_tensor, "input", input),
                                out_type)  # fmt: skip


def reduce_join(inputs: Any, axis: Any = None, keep_dims: Any = None, separator: Any = "", name: Any = None,
                reduction_indices: Any = None, keepdims: Any = None) -> Any:  # fmt: skip
    """TF1's ``reduce_join``: ``keep_dims`` comes third; ``reduction_indices`` is the old name of ``axis``."""
    op = "reduce_join()"
    axis = _either(op, "axis", axis, "reduction_indices", reduction_indices)
    keep = bool(_either(op, "keepdims", keepdims, "keep_dims", keep_dims))
    return strings.reduce_join(inputs, axis, keep, separator)


def strings_split(input: Any = None, sep: Any = None, maxsplit: int = -1, result_type: str = "SparseTensor",
                  source: Any = None, name: Any = None) -> Any:  # fmt: skip
    """TF1's ``strings.split``: TF2's splitting of a vector of strings, as a 2-D SparseTensor unless
    ``result_type="RaggedTensor"``; ``source`` is the old name of ``input``."""
    op = "strings.split()"
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise InvalidArgumentError(f"{op}: result_type must be 'RaggedTensor' or 'SparseTensor', got {result_type!r}")
    tokens = strings.split(_either(op, "input", input, "source", source), sep, maxsplit)
    if result_type == "RaggedTensor" or not isinstance(tokens, RaggedTensor):
        return tokens
    if tokens.ragged_rank != 1:
        raise InvalidArgumentError(f"{op}: a SparseTensor result needs a vector of strings, got {tokens!r:.100}")
    splits, values = np.asarray(tokens.row_splits, np.int64), np.asarray(tokens.values)
    rows = np.repeat(np.arange(len(splits) - 1), np.diff(splits))
    indices = np.stack([rows, np.arange(len(values)) - splits[rows]], axis=1)
    return SparseTensor(indices, values, [len(splits) - 1, int(np.diff(splits).max(initial=0))])


# ---------------------------------------------------------------------------- io


def decode_raw(input_bytes: Any = None, out_type: Any = None, little_endian: bool = True, name: Any = None,
               bytes: Any = None) -> Any:  # fmt: skip
    """TF1's ``decode_raw``: ``bytes`` is the old name of ``input_bytes``."""
    data = _either("decode_raw()", "input_bytes", input_bytes, "bytes", bytes)
    if data is None or out_type is None:
        raise InvalidArgumentError("decode_raw(): give `input_bytes` (or `bytes`) and `out_type`")
    return io.decode_raw(data, out_type, little_endian)


def parse_example(serialized: Any, features: Any, name: Any = None, example_names: Any = None) -> Any:
    """TF1's ``parse_example``: ``io.parse_example`` (``example_names`` only name examples in TF's errors)."""
    return io.parse_example(serialized, features)


def parse_single_example(serialized: Any, features: Any, name: Any = None, example_names: Any = None) -> Any:
    """TF1's ``parse_single_example``: ``io.parse_single_example`` (``example_names`` only names it in errors)."""
    return io.parse_single_example(serialized, features)


def parse_single_sequence_example(serialized: Any, context_features: Any = None, sequence_features: Any = None,
                                  example_name: Any = None, name: Any = None) -> Any:  # fmt: skip
    """TF1's ``parse_single_sequence_example``: ``(context, feature_lists)`` dicts."""
    return io.parse_single_sequence_example(serialized, context_features, sequence_features)


# ---------------------------------------------------------------------------- random and image


def multinomial(logits: Any, num_samples: int, seed: int | None = None, name: Any = None,
                output_dtype: Any = None) -> Any:  # fmt: skip
    """TF1's ``multinomial``: ``random.categorical`` (``output_dtype`` int64 unless given)."""
    return random_ops.categorical(logits, num_samples, "int64" if output_dtype is None else output_dtype, seed)


def sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: int | None = None,
                                  seed2: int | None = None, min_object_covered: Any = 0.1,
                                  aspect_ratio_range: Any = None, area_range: Any = None, max_attempts: Any = None,
                                  use_image_if_no_bounding_boxes: Any = None, name: Any = None) -> Any:  # fmt: skip
    """TF1's ``image.sample_distorted_bounding_box``: seeded when ``seed`` or ``seed2`` is non-zero (the pair picks
    the draws), unseeded otherwise."""
    pair = (int(seed or 0) << 32) | int(seed2 or 0)
    return image.sample_distorted_bounding_box(image_size, bounding_boxes, pair, min_object_covered,
                                                  aspect_ratio_range, area_range, max_attempts,
                                                  use_image_if_no_bounding_boxes)  # fmt: skip


MATH: dict[str, Any] = {
    **{name: _reduction(getattr(math_ops, name)) for name in (
        "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod",
        "reduce_sum")},
    "count_nonzero": count_nonzero, "argmax": _arg(math_ops.argmax), "argmin": _arg(math_ops.argmin),
}  # fmt: skip
SPARSE: dict[str, Any] = {
    "add": sparse_add, "concat": sparse_concat, "reduce_sum": _sparse_reduce_sum(False),
    "reduce_sum_sparse": _sparse_reduce_sum(True),
}  # fmt: skip
STRINGS: dict[str, Any] = {
    "split": strings_split, "substr": substr, "reduce_join": reduce_join, "to_number": string_to_number,
}  # fmt: skip
IO: dict[str, Any] = {
    "decode_raw": decode_raw, "parse_example": parse_example, "parse_single_example": parse_single_example,
    "parse_single_sequence_example": parse_single_sequence_example,
}  # fmt: skip
RANDOM: dict[str, Any] = {"multinomial": multinomial, "set_random_seed": random_ops.set_seed}
IMAGE: dict[str, Any] = {
    "resize_image_with_crop_or_pad": image.resize_with_crop_or_pad, "transpose_image": image.transpose,
    "sample_distorted_bounding_box": sample_distorted_bounding_box,
}  # fmt: skip

TOP: dict[str, Any] = {
    **MATH, **IO, **{f"to_{t}": _cast_to(t) for t in ("bfloat16", "complex64", "complex128")},
    "arg_max": _arg_op(math_ops.argmax), "arg_min": _arg_op(math_ops.argmin), "expand_dims": expand_dims,
    "squeeze": squeeze, "where": where, "where_v2": array_ops.where, "reverse_v2": array_ops.reverse,
    "sparse_tensor_to_dense": sparse.to_dense, "sparse_to_dense": sparse_to_dense,
    "sparse_reshape": sparse.reshape, "sparse_concat": sparse_concat, "sparse_add": sparse_add,
    "sparse_reorder": sparse.reorder, "sparse_retain": sparse.retain, "sparse_slice": sparse.slice,
    "sparse_transpose": sparse.transpose, "sparse_fill_empty_rows": sparse.fill_empty_rows,
    "sparse_to_indicator": sparse.to_indicator, "sparse_reduce_sum": SPARSE["reduce_sum"],
    "sparse_reduce_sum_sparse": SPARSE["reduce_sum_sparse"],
    "string_join": strings.join, "string_strip": strings.strip,
    "string_to_hash_bucket_fast": strings.to_hash_bucket_fast, "string_to_number": string_to_number,
    "substr": substr, "as_string": strings.as_string, "reduce_join": reduce_join,
    "regex_replace": strings.regex_replace,
    "decode_csv": io.decode_csv, "decode_base64": io.decode_base64, "encode_base64": io.encode_base64,
    "decode_compressed": io.decode_compressed, "parse_tensor": io.parse_tensor,
    "serialize_tensor": io.serialize_tensor, "read_file": io.read_file,
    "random_uniform": random_ops.uniform, "random_normal": random_ops.normal,
    "truncated_normal": random_ops.truncated_normal, "random_shuffle": random_ops.shuffle,
    "random_crop": image.random_crop, "multinomial": multinomial, "set_random_seed": random_ops.set_seed,
}  # fmt: skip
"""The top-level names ``pf.compat.v1`` adds to parafeed's (TF1's ``tf.X``)."""

"""Pipelines built once per library from the same code (see libs.py), compared element by element.

Each ``build(L, tmp)`` returns a dataset; ``ordered=False`` compares the elements as a multiset (shuffles, whose random
streams differ between the libraries by design).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tests.differential.libs import Point


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Any, str], Any]
    ordered: bool = True


CASES: list[Case] = []


def case(ordered: bool = True) -> Callable:
    def register(fn: Callable) -> Callable:
        CASES.append(Case(fn.__name__, fn, ordered))
        return fn

    return register


def _files(tmp: str, n: int = 4) -> list[str]:
    paths = []
    for i in range(n):
        path = os.path.join(tmp, f"part-{i}.txt")
        with open(path, "w") as f:
            f.write(str(i))
        paths.append(path)
    return paths


def _variable_lengths(L: Any) -> Any:
    return L.Dataset.range(1, 12).map(lambda n: L.fill(n % 5 + 1, n))


# ---------------------------------------------------------------------------------------------- sources


@case()
def range_stop(L, tmp):
    return L.Dataset.range(10)


@case()
def range_start_stop_step(L, tmp):
    return L.Dataset.range(2, 20, 3)


@case()
def range_negative_step(L, tmp):
    return L.Dataset.range(10, 0, -2)


@case()
def range_empty(L, tmp):
    return L.Dataset.range(5, 2)


@case()
def slices_python_ints(L, tmp):
    return L.Dataset.from_tensor_slices([1, 2, 3])


@case()
def slices_python_floats_2d(L, tmp):
    return L.Dataset.from_tensor_slices([[1.5, 2.0], [3.25, 4.0]])


@case()
def slices_numpy_float64(L, tmp):
    return L.Dataset.from_tensor_slices(np.arange(12, dtype=np.float64).reshape(4, 3))


@case()
def slices_dict_with_strings(L, tmp):
    return L.Dataset.from_tensor_slices({"id": ["a", "bb", "ccc"], "value": np.array([1, 2, 3], np.int64)})


@case()
def slices_nested_tuple(L, tmp):
    return L.Dataset.from_tensor_slices((np.arange(4), (np.ones((4, 2), np.float32), ["w", "x", "y", "z"])))


@case()
def slices_namedtuple(L, tmp):
    return L.Dataset.from_tensor_slices(Point(np.arange(3, dtype=np.int16), np.array([0.5, 1.5, 2.5])))


@case()
def tensors_nested(L, tmp):
    return L.Dataset.from_tensors(([1, 2], "abc", {"f": 2.5, "b": True}))


@case()
def tensors_big_python_int(L, tmp):
    return L.Dataset.from_tensors((2**40, -7, [2**33, 1]))


@case()
def generator_scalars(L, tmp):
    return L.Dataset.from_generator(lambda: iter([3, 1, 2]), output_signature=L.TensorSpec((), L.int64))


@case()
def generator_structure_and_conversion(L, tmp):
    def gen():
        for i in range(4):
            yield {"seq": list(range(i)), "name": f"item{i}"}, float(i) / 2

    sig = ({"seq": L.TensorSpec((None,), L.int64), "name": L.TensorSpec((), L.string)}, L.TensorSpec((), L.float32))
    return L.Dataset.from_generator(gen, output_signature=sig)


@case()
def generator_args(L, tmp):
    return L.Dataset.from_generator(
        lambda n, s: ((i, s) for i in range(n)),
        args=(3, "tag"),
        output_signature=(L.TensorSpec((), L.int32), L.TensorSpec((), L.string)),
    )


@case()
def list_files_sorted(L, tmp):
    _files(tmp)
    return L.Dataset.list_files(os.path.join(tmp, "part-*.txt"), shuffle=False)


@case(ordered=False)
def list_files_shuffled(L, tmp):
    _files(tmp)
    return L.Dataset.list_files(os.path.join(tmp, "part-*.txt"), seed=3)


@case()
def zip_shortest(L, tmp):
    return L.Dataset.zip((L.Dataset.range(5), L.Dataset.range(10, 13)))


@case()
def zip_nested_dict(L, tmp):
    letters = L.Dataset.from_tensor_slices(["x", "y", "z"])
    return L.Dataset.zip({"a": L.Dataset.range(3), "b": (letters, L.Dataset.range(4))})


# ---------------------------------------------------------------------------------------------- map / filter


@case()
def map_python_constants(L, tmp):
    return L.Dataset.range(4).map(lambda x: (x, 1, 2.5, "s", True))


@case()
def map_list_becomes_tuple(L, tmp):
    return L.Dataset.range(3).map(lambda x: [x, x * 2])


@case()
def map_unpacks_tuples(L, tmp):
    ds = L.Dataset.from_tensor_slices(([1, 2, 3], [10.0, 20.0, 30.0]))
    return ds.map(lambda a, b: {"sum": L.cast(a, L.float32) + b, "a": a * 2})


@case()
def map_dict_passed_whole(L, tmp):
    ds = L.Dataset.from_tensor_slices({"x": [1, 2], "y": [3, 4]})
    return ds.map(lambda d: d["x"] + d["y"])


@case()
def map_namedtuple_passed_whole(L, tmp):
    return L.Dataset.from_tensors(Point(1, 2)).map(lambda p: p.x * 10 + p.y)


@case()
def map_parallel_deterministic(L, tmp):
    return L.Dataset.range(50).map(lambda x: x * x, num_parallel_calls=L.AUTOTUNE, deterministic=True)


@case()
def filter_scalar(L, tmp):
    return L.Dataset.range(20).filter(lambda x: x % 3 == 0)


@case()
def filter_tuple(L, tmp):
    ds = L.Dataset.zip((L.Dataset.range(10), L.Dataset.range(10, 20)))
    return ds.filter(lambda a, b: L.logical_and(a % 2 == 0, b > 13))


@case()
def take_while_prefix(L, tmp):
    return L.Dataset.range(10).take_while(lambda x: x < 6)


@case()
def unique_ints_and_strings(L, tmp):
    return L.Dataset.from_tensor_slices([3, 1, 3, 2, 1, 5]).unique()


@case()
def unique_strings(L, tmp):
    return L.Dataset.from_tensor_slices(["b", "a", "b", "c", "a"]).unique()


# ---------------------------------------------------------------------------------------------- batching


@case()
def batch_remainder(L, tmp):
    return L.Dataset.range(10).batch(4)


@case()
def batch_drop_remainder(L, tmp):
    return L.Dataset.range(10).batch(4, drop_remainder=True)


@case()
def batch_dict_strings(L, tmp):
    ds = L.Dataset.from_tensor_slices({"id": ["a", "b", "c"], "x": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]})
    return ds.batch(2)


@case()
def batch_of_batches(L, tmp):
    return L.Dataset.range(12).batch(3).batch(2)


@case()
def padded_batch_default(L, tmp):
    return _variable_lengths(L).padded_batch(3)


@case()
def padded_batch_shapes_values(L, tmp):
    ds = _variable_lengths(L).map(lambda x: (x, L.length(x)))
    return ds.padded_batch(4, padded_shapes=([6], []), padding_values=(np.int64(-1), np.int32(0)))


@case()
def padded_batch_strings_drop(L, tmp):
    ds = L.Dataset.range(1, 8).map(lambda n: (L.fill(n % 3 + 1, "ab"), n))
    return ds.padded_batch(2, drop_remainder=True)


@case()
def unbatch_roundtrip(L, tmp):
    return L.Dataset.range(10).batch(4).unbatch()


@case()
def unbatch_dict(L, tmp):
    return L.Dataset.from_tensors({"a": [[1, 2], [3, 4]], "b": ["x", "y"]}).unbatch()


@case()
def unbatch_of_an_empty_input(L, tmp):  # (its batch dimension unknown: so is the cardinality, though the input has 0)
    return L.Dataset.range(0).batch(4).unbatch()


@case()
def unbatch_after_a_function_of_whole_batches(L, tmp):  # (the batch dimension is known whatever the function gives)
    return L.Dataset.range(10).map(lambda x: x * 2).batch(4, drop_remainder=True).unbatch()


@case()
def rebatch_of_empty_and_of_infinite_inputs(L, tmp):  # (both unknown cardinalities: then take(5) is unknown too)
    return L.Dataset.range(0).batch(2).rebatch(3).concatenate(L.Dataset.range(4).batch(2).repeat().rebatch(3).take(5))


@case()
def rebatch_fixed(L, tmp):
    return L.Dataset.range(11).batch(4).rebatch(3)


@case()
def rebatch_sizes_cycle(L, tmp):
    return L.Dataset.range(13).batch(5).rebatch([2, 3], drop_remainder=True)


@case()
def window_flat_map(L, tmp):
    return L.Dataset.range(7).window(3, 2).flat_map(lambda w: w.batch(3))


@case()
def window_stride_drop_tuple(L, tmp):
    ds = L.Dataset.zip((L.Dataset.range(12), L.Dataset.range(100, 112)))
    windows = ds.window(3, shift=2, stride=2, drop_remainder=True)
    return windows.flat_map(lambda a, b: L.Dataset.zip((a.batch(3), b.batch(3))))


@case()
def window_shift_beyond_size(L, tmp):
    return L.Dataset.range(10).window(2, 4).flat_map(lambda w: w.batch(2))


@case()
def group_by_window_fixed(L, tmp):
    return L.Dataset.range(20).group_by_window(lambda x: x % 3, lambda k, w: w.batch(3), window_size=3)


@case()
def group_by_window_size_func(L, tmp):
    def reduce(key, window):
        return window.batch(10).map(lambda b: (key, b))

    return L.Dataset.range(25).group_by_window(lambda x: x % 4, reduce, window_size_func=lambda k: k + 2)


@case()
def bucket_by_length(L, tmp):
    return _variable_lengths(L).bucket_by_sequence_length(L.length, [2, 4], [3, 2, 2])


@case()
def bucket_by_length_pad_to_boundary(L, tmp):
    def gen():
        for n in range(1, 12):
            yield [n] * (n % 5 + 1), n

    sig = (L.TensorSpec((None,), L.int64), L.TensorSpec((), L.int64))
    ds = L.Dataset.from_generator(gen, output_signature=sig)
    return ds.bucket_by_sequence_length(
        lambda seq, n: L.length(seq), [3, 7], [2, 2, 2], pad_to_bucket_boundary=True,
        padding_values=(np.int64(-1), None),
    )  # fmt: skip


@case()
def bucket_by_length_no_padding(L, tmp):
    ds = L.Dataset.range(1, 10).map(lambda n: L.fill(n % 3 + 1, n))
    return ds.bucket_by_sequence_length(L.length, [2, 3], [2, 2, 2], no_padding=True, drop_remainder=True)


# ---------------------------------------------------------------------------------------------- order and count


@case(ordered=False)
def shuffle_small_buffer(L, tmp):
    return L.Dataset.range(30).shuffle(4, seed=7)


@case(ordered=False)
def shuffle_repeat_batch(L, tmp):
    return L.Dataset.range(10).shuffle(10, seed=1).repeat(3).batch(5).unbatch()


@case()
def repeat_finite(L, tmp):
    return L.Dataset.range(3).repeat(3)


@case()
def repeat_forever_take(L, tmp):
    return L.Dataset.range(3).repeat().take(8)


@case()
def repeat_empty_forever(L, tmp):
    return L.Dataset.range(0).repeat()


@case()
def take_skip_variants(L, tmp):
    a = L.Dataset.range(10).take(4)
    b = L.Dataset.range(10).take(-1).skip(7)
    c = L.Dataset.range(10).skip(-1)
    d = L.Dataset.range(10).take(0)
    return a.concatenate(b).concatenate(c).concatenate(d)


@case()
def concatenate_shapes_merge(L, tmp):
    return L.Dataset.range(5).batch(2).concatenate(L.Dataset.range(10, 20).batch(3))


@case()
def enumerate_start(L, tmp):
    return L.Dataset.from_tensor_slices(["a", "b", "c"]).enumerate(start=5)


@case()
def shard_middle(L, tmp):
    return L.Dataset.range(20).shard(3, 1)


@case()
def shard_more_shards_than_elements(L, tmp):
    return L.Dataset.range(2).shard(5, 3)


# ---------------------------------------------------------------------------------------------- nested datasets


@case()
def flat_map_slices(L, tmp):
    return L.Dataset.range(1, 4).flat_map(lambda n: L.Dataset.from_tensor_slices(L.fill(n, n)))


@case()
def interleave_blocks(L, tmp):
    return L.Dataset.range(1, 6).interleave(
        lambda n: L.Dataset.range(n * 10, n * 10 + n), cycle_length=3, block_length=2
    )


@case()
def interleave_cycle_one_block(L, tmp):
    return L.Dataset.range(4).interleave(lambda n: L.Dataset.range(n).map(lambda x: (n, x)), cycle_length=2)


@case()
def interleave_parallel_deterministic(L, tmp):
    return L.Dataset.range(6).interleave(
        lambda n: L.Dataset.range(n).repeat(2), cycle_length=4, num_parallel_calls=2, deterministic=True
    )


# ---------------------------------------------------------------------------------------------- caching, prefetch


@case()
def cache_memory_repeat(L, tmp):
    return L.Dataset.range(5).map(lambda x: x * 3).cache().repeat(2)


@case()
def cache_file_repeat(L, tmp):
    ds = L.Dataset.from_tensor_slices({"s": ["a", "bc", ""], "v": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]})
    return ds.cache(os.path.join(tmp, f"cache-{L.name}")).repeat(2)


@case()
def prefetch_autotune(L, tmp):
    return L.Dataset.range(30).map(lambda x: x + 1).prefetch(L.AUTOTUNE)


@case()
def apply_chain(L, tmp):
    def double_then_batch(ds):
        return ds.map(lambda x: x * 2).batch(3)

    return L.Dataset.range(7).apply(double_then_batch)


# ---------------------------------------------------------------------------------------------- seed-article flows


@case()
def seed_shard_files_map_batch(L, tmp):
    files = _files(tmp, 6)
    ds = L.Dataset.from_tensor_slices(files).shard(num_shards=2, index=0)
    ds = ds.map(lambda f: (f, L.str_len(f)), num_parallel_calls=L.AUTOTUNE)
    return ds.batch(2)


@case()
def seed_group_by_window_pipeline(L, tmp):
    ds = L.Dataset.range(40).shard(2, 1).map(lambda x: (x % 4, x))
    ds = ds.group_by_window(lambda k, x: k, lambda k, w: w.batch(4), window_size=4)
    return ds.prefetch(2)


@case(ordered=False)
def seed_preprocess_cache_shuffle_batch(L, tmp):
    images = np.arange(8 * 4 * 4 * 3, dtype=np.uint8).reshape(8, 4, 4, 3)
    ds = L.Dataset.from_tensor_slices((images, np.arange(8, dtype=np.int64)))
    ds = ds.map(lambda im, y: (L.cast(im, L.float32) / 255.0, y), num_parallel_calls=L.AUTOTUNE)
    return ds.cache().shuffle(8, seed=2).batch(4).unbatch()


@case()
def seed_enumerate_filter_map_batch_prefetch(L, tmp):
    ds = L.Dataset.range(100, 130).enumerate().filter(lambda i, x: i % 4 != 1)
    return ds.map(lambda i, x: {"i": i, "x": x * 2}).batch(5).prefetch(1)

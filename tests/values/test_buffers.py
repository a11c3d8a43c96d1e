import gc

import numpy as np

from parafeed.values import buffers

SHAPE = (16, 128, 128, 3)


def address(x):
    return x.ctypes.data


def test_memory_is_reused_only_once_nothing_refers_to_it():
    a = buffers.empty(SHAPE, np.float32)
    first = address(a)
    view = a[3]
    del a
    gc.collect()
    assert address(buffers.empty(SHAPE, np.float32)) != first  # a view still uses it
    del view
    gc.collect()
    b = buffers.empty(SHAPE, np.float32)
    assert address(b) == first
    b[:] = 2.0
    assert b.shape == SHAPE and b.dtype == np.float32 and b.flags.writeable and b.flags.c_contiguous


def test_small_and_object_arrays_are_plain():
    assert buffers.empty((4, 4), np.float32).base is None
    assert buffers.empty((1 << 20,), object).dtype == object


def test_batches_use_recycled_memory_with_the_same_values():
    import parafeed as pf

    ds = pf.Dataset.range(64).map(lambda x: np.full((64, 64, 3), x, np.float32)).batch(32)
    first = [b.copy() for b in ds]
    again = list(ds)
    assert all(np.array_equal(x, y) for x, y in zip(first, again))
    mixed = pf.Dataset.range(4).map(lambda x: np.zeros((256, 256), np.float32 if x else np.float64)).batch(4)
    assert next(iter(mixed)).dtype == np.float64  # mixed dtypes are promoted, never silently narrowed

"""Batches in shared memory that worker processes write rows into: the segments' life, the workers' writes, and
``map(executor="process").batch()`` end to end (the same batches as stacking, batch()'s errors, nothing left)."""

import collections
import gc
import os

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.parallel import shared_batches
from parafeed.parallel.batch_rows import BatchRows, Placed, layout_of
from parafeed.parallel.shared_batches import Attachments, SharedBatches
from tests.helpers import assert_elements_equal

pytestmark = pytest.mark.timeout(120)

ROW = (64, 64, 3)  # float32 rows of 48 KiB: a batch of 32 is over buffers.MIN_BYTES


def on_disk(name: str) -> bool:
    return os.path.exists(f"/dev/shm/{name}")


def test_a_segment_returns_to_the_pool_when_its_last_array_goes():
    pool = SharedBatches()
    try:
        memory, name = pool.empty(1 << 20)
        view = memory[10:20]
        del memory
        gc.collect()
        again, other = pool.empty(1 << 20)
        assert other != name  # a view still uses the first one
        del view, again
        gc.collect()
        held = [pool.empty(1 << 20) for _ in range(2)]
        assert {name, other} == {n for _, n in held} and on_disk(name)
        del held
    finally:
        pool.close()
    assert not on_disk(name) and not on_disk(other)


def test_segments_beyond_what_the_pool_keeps_are_removed_and_named_to_the_workers():
    pool = SharedBatches()
    try:
        held = [pool.empty(4096) for _ in range(shared_batches.KEEP_PER_SIZE + 3)]
        names = [name for _, name in held]
        del held
        gc.collect()
        retired = pool.retired()
        assert len(retired) == 3 and set(retired) <= set(names)
        assert not any(on_disk(n) for n in retired) and all(on_disk(n) for n in set(names) - set(retired))
        assert pool.retired() == []  # each name is reported once
    finally:
        pool.close()
    assert not any(on_disk(n) for n in names)


def test_a_worker_writes_rows_that_fit_the_layout_and_returns_the_rest():
    pool, worker = SharedBatches(), Attachments()
    try:
        layout = layout_of([((2, 3), np.float32), ((), np.int64)], size=4)
        assert [part[0] % 64 for part in layout[0]] == [0, 0] and layout[1] >= 4 * (24 + 8)
        memory, name = pool.empty(layout[1])
        placed = worker.place({"x": np.full((2, 3), 7, np.float32), "y": np.int64(5)}, (layout, name, 2))
        assert type(placed) is Placed and placed.remote and placed.skeleton == {"x": None, "y": None}
        x = memory[: 4 * 24].view(np.float32).reshape(4, 2, 3)
        y = memory[layout[0][1][0] : layout[0][1][0] + 32].view(np.int64)
        assert (x[2] == 7).all() and y[2] == 5
        for odd in ({"x": np.zeros((3, 2), np.float32), "y": np.int64(1)},  # another shape
                    {"x": np.zeros((2, 3), np.float64), "y": np.int64(1)},  # another dtype
                    {"x": np.zeros((2, 3), np.float32)},  # another number of leaves
                    {"x": np.zeros((2, 3), np.float32), "y": "text"}):  # fmt: skip
            assert worker.place(odd, (layout, name, 1)) is odd
        worker.forget([name])
        del x, y, memory
    finally:
        pool.close()


def big(x):
    return {"image": np.full(ROW, x, np.float32), "label": np.int64(x), "pair": (np.float64(x), np.arange(3) + x)}


def unfused(ds):
    options = pf.Options()
    options.experimental_optimization.map_and_batch_fusion = False
    return ds.with_options(options)


def input_in_workers(ds, on):
    """Whether the map's workers read its input themselves (an offload, the default), or this process sends it to
    them (what the row counts of this process see)."""
    options = pf.Options()
    options.experimental_optimization.map_input_in_workers = on
    return ds.with_options(options)


def remote_rows(monkeypatch) -> collections.Counter:
    """Counts the rows batches are made of: written by a worker process, by the consumer, or stacked."""
    seen: collections.Counter = collections.Counter()
    take = BatchRows.take

    def counting(self, number, rows, step):
        seen.update(
            "remote" if type(r) is Placed and r.remote else "local" if type(r) is Placed else "raw" for r in rows
        )
        return take(self, number, rows, step)

    monkeypatch.setattr(BatchRows, "take", counting)
    return seen


@pytest.mark.parametrize("drop", [False, True])
def test_process_workers_write_the_batches_stacking_would_make(drop, monkeypatch, leak_check):
    seen = remote_rows(monkeypatch)
    ds = pf.Dataset.range(150).map(big, num_parallel_calls=2, executor="process").batch(32, drop_remainder=drop)
    ds = input_in_workers(ds, False)
    fused = list(ds)
    assert seen["remote"] > 100 and seen["raw"] == 0  # the first results set the layout; workers write the rest
    assert_elements_equal(list(unfused(ds)), fused)
    assert [int(b["label"][0]) for b in fused] == list(range(0, 150 if not drop else 128, 32))
    fused[0]["image"][0, 0, 0, 0] = -1  # the consumer may write its batches
    del ds, fused
    leak_check.assert_clean()


def test_a_result_that_does_not_fit_is_stacked_or_refused_as_batch_does(monkeypatch):
    seen = remote_rows(monkeypatch)

    def odd_structure(x):
        out = big(x)
        if x == 70:
            out["extra"] = np.int64(1)
            del out["label"]
        return out

    def odd_dtype(x):
        return np.full(ROW, x, np.float64 if x == 70 else np.float32)

    def run(fn):
        return list(
            input_in_workers(pf.Dataset.range(100).map(fn, num_parallel_calls=2, executor="process").batch(32), False)
        )

    with pytest.raises(InvalidArgumentError) as fused_error:
        run(odd_structure)
    with pytest.raises(InvalidArgumentError) as stacked_error:
        list(unfused(pf.Dataset.range(100).map(odd_structure, num_parallel_calls=2, executor="process").batch(32)))
    assert str(fused_error.value) == str(stacked_error.value)
    fused = run(odd_dtype)
    assert [b.dtype for b in fused] == [np.float32, np.float32, np.float64, np.float32]  # promoted, as np.stack does
    assert seen["remote"] > 0 and seen["raw"] >= 1


@pytest.mark.parametrize("in_workers", [False, True])
def test_a_namedtuple_result_keeps_its_type_through_shared_batches(in_workers):
    Pair = collections.namedtuple("Pair", "image label")  # (a class pickle cannot find by name: cloudpickle's)
    ds = pf.Dataset.range(64).map(lambda x: Pair(np.full(ROW, x, np.float32), np.int64(x)), num_parallel_calls=2,
                                  executor="process").batch(32)  # fmt: skip
    batches = list(input_in_workers(ds, in_workers))
    assert all(type(b).__name__ == "Pair" for b in batches) and batches[1].label.tolist() == list(range(32, 64))

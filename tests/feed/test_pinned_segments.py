"""Batches sent to the device from the shared memory worker processes wrote them into, with CUDA's calls replaced by
fakes: each recycled segment is page-locked once and unlocked when its memory goes, a batch held for its copy keeps
its segment from being written again, anything else is copied as before."""

import gc
import time

import numpy as np
import pytest

import parafeed as pf
from parafeed.feed.pinned_segments import HeldCopies, PinnedSegments
from parafeed.parallel.shared_batches import SharedBatches
from parafeed.parallel.shm import recycled_segment_of

pytestmark = pytest.mark.timeout(120)

ROW = (64, 64, 3)  # float32 rows of 48 KiB: a batch of 32 is over buffers.MIN_BYTES, so workers write it in place


def image(x):
    time.sleep(0.0005)  # (a function this cheap otherwise runs dozens of batches ahead, each in a segment of its own)
    return {"image": np.full(ROW, float(x), np.float32), "label": np.int64(x)}


class Locks:
    """Fake ``cudaHostRegister`` / ``cudaHostUnregister``: the ranges locked now, and every call."""

    def __init__(self, fail=False):
        self.fail = fail
        self.locked: dict[int, int] = {}
        self.pins: list[int] = []
        self.unpins: list[int] = []

    def pin(self, address, nbytes):
        self.pins.append(address)
        if self.fail:
            return False
        assert address not in self.locked  # (CUDA refuses a range locked twice)
        self.locked[address] = nbytes
        return True

    def unpin(self, address):
        self.unpins.append(address)
        del self.locked[address]


class Copy:
    """A copy to the device: done once the test says so (or once waited for)."""

    def __init__(self):
        self.finished = False


def held_copies():
    def wait(copy):
        copy.finished = True

    return HeldCopies(lambda copy: copy.finished, wait)


def process_batches(n=160, batch=32):
    options = pf.Options()
    options.experimental_optimization.map_input_in_workers = False  # (one pool: the test's own process feeds it)
    ds = pf.Dataset.range(n).map(image, num_parallel_calls=2, executor="process").batch(batch)
    return ds.with_options(options).as_numpy_iterator()


@pytest.mark.parametrize("how", ["process map, input read here", "process map", "AUTOTUNE map on a device"])
def test_a_batch_that_workers_wrote_lies_in_a_recycled_segment_and_other_arrays_do_not(how):
    options = pf.Options()
    options.experimental_optimization.map_input_in_workers = how != "process map, input read here"
    if how == "AUTOTUNE map on a device":  # (what to_torch(device="cuda") sets: feed.passes.on_accelerator)
        options.autotune.executor = "process"
    executor = None if how == "AUTOTUNE map on a device" else "process"
    ds = pf.Dataset.range(320).map(image, num_parallel_calls=pf.AUTOTUNE, executor=executor).batch(32)
    batches = list(ds.with_options(options).as_numpy_iterator())
    inside = [recycled_segment_of(b["image"]) is not None for b in batches]
    assert sum(inside) >= len(batches) - 1  # (the first results set the layout: the workers write the rest)
    memory = recycled_segment_of(batches[-1]["image"])
    assert memory is not None and memory.nbytes >= batches[-1]["image"].nbytes
    assert recycled_segment_of(np.zeros(ROW, np.float32)) is None
    assert recycled_segment_of(pf.Dataset.range(4).map(image).batch(4).get_single_element()["image"]) is None


def test_offload_blocks_lie_in_recycled_segments():
    ds = pf.Dataset.range(96).map(image).batch(32).offload(executor="process", workers=1)
    batches = list(ds.as_numpy_iterator())
    assert [int(b["label"][0]) for b in batches] == [0, 32, 64]
    assert all(recycled_segment_of(b["image"]) is not None for b in batches)


def test_each_segment_is_locked_once_and_unlocked_when_its_memory_goes():
    locks = Locks()
    segments = PinnedSegments(locks.pin, locks.unpin)
    for _ in range(2):  # two passes: a new pool and new segments each
        held = 0
        for b in process_batches():
            held += segments.holds(b["image"])
            assert segments.holds(b["label"]) == segments.holds(b["image"])  # (one segment holds the whole batch)
        assert held >= 4
        assert 1 <= segments.pinned == len(locks.locked) < held  # segments are reused: locked once each
        del b
    gc.collect()
    assert segments.pinned == 0 and locks.locked == {}  # every segment unlocked before it was unmapped
    assert sorted(locks.pins) == sorted(locks.unpins) and len(set(locks.pins)) >= 1


def test_arrays_outside_segments_and_views_that_are_not_contiguous_are_copied_as_before():
    locks = Locks()
    segments = PinnedSegments(locks.pin, locks.unpin)
    batch = list(process_batches(64))[-1]
    assert not segments.holds(np.zeros(ROW, np.float32))
    assert not segments.holds(batch["image"][:, ::2])
    assert locks.pins == []
    assert segments.holds(batch["image"][1:3]) and segments.holds(batch["image"])  # (rows of a batch: contiguous)
    assert len(locks.pins) == 1


def test_a_segment_that_cannot_be_locked_is_copied_and_nothing_more_is_tried():
    locks = Locks(fail=True)
    segments = PinnedSegments(locks.pin, locks.unpin)
    assert not any(segments.holds(b["image"]) for b in process_batches())
    assert len(locks.pins) == 1 and segments.failed and segments.pinned == 0


def test_a_held_batch_keeps_its_segment_from_its_pool_until_its_copy_is_done():
    pool = SharedBatches()
    held = held_copies()
    try:
        memory, name = pool.empty(1 << 20)
        copy = Copy()
        held.hold([memory[:1024]], copy)
        del memory
        gc.collect()
        assert pool.empty(1 << 20)[1] != name  # the copy still reads the first segment
        gc.collect()
        held.release()
        assert len(held) == 1  # (not done yet)
        copy.finished = True
        held.release()
        gc.collect()
        assert len(held) == 0 and name in {pool.empty(1 << 20)[1] for _ in range(2)}
    finally:
        pool.close()


def test_release_all_waits_for_every_copy():
    held = held_copies()
    copies = [Copy() for _ in range(3)]
    for c in copies:
        held.hold([np.zeros(4)], c)
    copies[1].finished = True
    held.release()
    assert len(held) == 3  # (copies finish in order: the first is not done)
    held.release_all()
    assert len(held) == 0 and all(c.finished for c in copies)


@pytest.mark.parametrize("done", [False, True])
def test_while_its_copy_runs_no_worker_writes_into_a_batch_and_after_it_the_segment_is_reused(done):
    locks = Locks()
    segments = PinnedSegments(locks.pin, locks.unpin)
    held = held_copies()
    homes = []  # the segment each batch the workers wrote lies in
    for b in process_batches(1600):  # fifty batches
        if segments.holds(b["image"]):
            homes.append(recycled_segment_of(b["image"]).__array_interface__["data"][0])
            copy = Copy()
            copy.finished = done
            held.hold([b["image"]], copy)
        del b
        held.release()
    assert len(homes) >= 48
    if done:  # copied at once: the pool gives the same segments again (those of the batches in flight)
        assert len(set(homes)) < len(homes) / 2 and len(locks.pins) == len(set(homes))
    else:  # every copy still running: each batch went into a segment of its own
        assert len(set(homes)) == len(homes) == len(held)
    held.release_all()
    gc.collect()
    assert segments.pinned == 0 and locks.locked == {}

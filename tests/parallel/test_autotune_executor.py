"""Where AUTOTUNE runs a map that chose no executor. With ``Options.autotune.executor = "process"`` (what the device
feeds set) it goes to worker processes as soon as its probe finds it worth running in parallel; cheap functions stay
inline, functions that cannot be sent (or that hold more data than every worker should copy) stay on threads, and
a chosen executor wins. In an input worker (``offload``) it never moves to processes of its own."""

import os
import threading

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.feed.passes import on_accelerator
from parafeed.ops.offload import PORTABLE_BYTES
from parafeed.parallel.processes import DataTooLarge, pickled_within

pytestmark = pytest.mark.timeout(120)

reads_here: list = []  # the elements the input step read in this process (workers append to their own copies)


def read_here(x):
    reads_here.append(int(x))
    return x


def costly(x):
    """About a millisecond of NumPy (it releases the GIL: threads would speed it up), and the pid that ran it."""
    a = np.full((200, 200), float(x))
    for _ in range(8):
        a = np.sqrt(a + 1.0)
    return np.array([x, os.getpid()])


def cheap(x):
    return np.array([x, os.getpid()])


def processes_first(**more):
    options = pf.Options(stats=True, **more)
    options.autotune.executor = "process"
    return options


def pids_and_executor(ds):
    """(the rows of every batch, the Map stage's executor) of one pass."""
    it = iter(ds)
    rows = np.concatenate([np.reshape(x, (-1, 2)) for x in it])
    return rows, {s.name: s for s in it.stats()}["Map"].executor


@pytest.mark.parametrize("batched", [False, True])
def test_a_costly_map_goes_to_worker_processes_at_once(batched):
    ds = pf.Dataset.range(300).map(read_here).map(costly, num_parallel_calls=pf.AUTOTUNE)
    ds = (ds.batch(10) if batched else ds).with_options(processes_first())
    reads_here.clear()
    rows, executor = pids_and_executor(ds)
    assert rows[:, 0].tolist() == list(range(300))  # every element once, in order, across the move
    assert executor == "process"
    here = int(np.sum(rows[:, 1] == os.getpid()))
    assert here < 20, f"{here} of 300 elements were mapped in this process"  # (the probe's only: no threads)
    if batched:  # at the next batch the input is read in the workers too
        assert reads_here == list(range(len(reads_here))) and len(reads_here) < 300
    reads_here.clear()
    again = np.concatenate([np.reshape(x, (-1, 2)) for x in ds])
    assert again[:, 0].tolist() == list(range(300)) and os.getpid() not in again[:, 1]  # next passes start there


@pytest.mark.parametrize("taken", [1, 7])  # (before and after the batch at which the input moves to the workers)
def test_a_checkpoint_taken_while_the_map_moves_restores_exactly(taken):
    def feed():
        ds = pf.Dataset.range(300).shuffle(50, seed=4).map(costly, num_parallel_calls=pf.AUTOTUNE).batch(10)
        return ds.with_options(processes_first()).to_torch()

    whole = [b[:, 0].tolist() for b in feed()]
    first = feed()
    it = iter(first)
    got = [next(it)[:, 0].tolist() for _ in range(taken)]
    state = first.state_dict()
    it.close()
    resumed = feed()
    resumed.load_state_dict(state)
    assert got + [b[:, 0].tolist() for b in resumed] == whole


def test_a_cheap_map_stays_inline_and_a_chosen_executor_wins():
    rows, executor = pids_and_executor(
        pf.Dataset.range(300).map(cheap, num_parallel_calls=pf.AUTOTUNE).batch(10).with_options(processes_first())
    )
    assert rows[:, 0].tolist() == list(range(300)) and set(rows[:, 1]) == {os.getpid()} and executor == ""
    for ds in (
        pf.Dataset.range(100).map(costly, num_parallel_calls=pf.AUTOTUNE, executor="thread"),
        pf.Dataset.range(100).map(costly, num_parallel_calls=pf.AUTOTUNE).with_options(pf.Options(executor="thread")),
    ):
        rows, executor = pids_and_executor(ds.batch(10).with_options(processes_first()))
        assert rows[:, 0].tolist() == list(range(100)) and set(rows[:, 1]) == {os.getpid()} and executor == "thread"


def test_a_map_in_a_dataset_an_interleave_makes_is_not_moved_at_once():
    def per_file(i):  # (one map per input element: moved at once, each would borrow a pool of its own)
        return pf.Dataset.range(i * 20, i * 20 + 20).map(costly, num_parallel_calls=pf.AUTOTUNE)

    ds = pf.Dataset.range(5).interleave(per_file, cycle_length=2).batch(10).with_options(processes_first())
    rows = np.concatenate(list(ds))
    assert sorted(rows[:, 0].tolist()) == list(range(100)) and set(rows[:, 1]) == {os.getpid()}


def test_a_function_that_cannot_go_to_a_process_stays_on_threads():
    lock = threading.Lock()  # (cloudpickle cannot send a lock)

    def locked(x):
        with lock:
            pass
        return costly(x)

    ds = pf.Dataset.range(200).map(locked, num_parallel_calls=pf.AUTOTUNE).batch(10).with_options(processes_first())
    rows, executor = pids_and_executor(ds)
    assert rows[:, 0].tolist() == list(range(200)) and set(rows[:, 1]) == {os.getpid()} and executor == "thread"


def test_a_function_holding_more_data_than_every_worker_should_copy_stays_on_threads():
    table = np.zeros(PORTABLE_BYTES + 1, np.uint8)  # (each of the workers would get a copy)

    def looks_up(x):
        return costly(x + int(table[x]))

    ds = pf.Dataset.range(200).map(looks_up, num_parallel_calls=pf.AUTOTUNE).batch(10).with_options(processes_first())
    rows, executor = pids_and_executor(ds)
    assert rows[:, 0].tolist() == list(range(200)) and set(rows[:, 1]) == {os.getpid()} and executor == "thread"
    with pytest.raises(DataTooLarge, match="more than"):
        pickled_within(looks_up, PORTABLE_BYTES)
    assert len(pickled_within(costly, PORTABLE_BYTES)) < 1000  # (a module's function goes by reference)


def test_the_option_takes_threads_or_processes_and_a_feed_sets_it_unless_the_pipeline_does():
    options = pf.Options()
    with pytest.raises(InvalidArgumentError, match="executor must be one of"):
        options.autotune.executor = "ray"
    ds = pf.Dataset.range(8)
    assert on_accelerator(ds).options().autotune.executor == "process"
    mine = pf.Options()
    mine.autotune.executor = "thread"
    assert on_accelerator(ds.with_options(mine)).options().autotune.executor == "thread"


def pure_python(x):
    """About 2 ms of pure Python (it holds the GIL: threads do not speed it up), and the pid that ran it."""
    total = 0
    for i in range(40000):
        total += i % 7
    return np.array([x, os.getpid()])


def test_a_map_in_an_input_worker_starts_no_processes_of_its_own():
    ds = pf.Dataset.range(3000).map(pure_python, num_parallel_calls=pf.AUTOTUNE).batch(10)  # (seconds of threads)
    rows = np.concatenate(list(ds.offload(executor="process", workers=1)))
    assert rows[:, 0].tolist() == list(range(3000))
    assert len(set(rows[:, 1])) == 1 and os.getpid() not in rows[:, 1]  # the worker's own pid: none nested

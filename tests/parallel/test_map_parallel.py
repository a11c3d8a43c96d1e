"""Parallel map on threads and processes: the same results as serial, errors in place, faults and leaks."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import WorkerError
from tests import host
from tests.helpers import assert_elements_equal

EXECUTORS = ["thread", "process"]


def busy(x):
    """A little pure-Python work, so tasks take a while and finish out of order."""
    total = 0
    for i in range(int(x) % 7 * 300):
        total += i
    return {"x": x, "square": np.full((3, int(x) % 4 + 1), x * x), "name": b"e%d" % x, "t": total}


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("parallelism", [1, 2, 3, pf.AUTOTUNE])
def test_deterministic_parallel_map_equals_serial(executor, parallelism):
    serial = list(pf.Dataset.range(300).map(busy))
    ds = pf.Dataset.range(300).map(busy, num_parallel_calls=parallelism, deterministic=True, executor=executor)
    assert_elements_equal(serial, list(ds))
    assert_elements_equal(serial, list(ds))  # a second epoch (the process pool is reused)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_non_deterministic_map_gives_the_same_multiset(executor):
    ds = pf.Dataset.range(200).map(lambda x: x * 3, num_parallel_calls=2, deterministic=False, executor=executor)
    assert sorted(int(v) for v in ds) == [3 * i for i in range(200)]


def test_options_choose_the_executor_and_determinism():
    ds = pf.Dataset.range(50).map(lambda x: os.getpid(), num_parallel_calls=2)
    assert {int(p) for p in ds} == {os.getpid()}
    in_processes = ds.with_options(pf.Options(executor="process"))
    assert os.getpid() not in {int(p) for p in in_processes}
    unordered = (
        pf.Dataset.range(20).map(lambda x: x, num_parallel_calls=2).with_options(pf.Options(deterministic=False))
    )
    assert sorted(int(v) for v in unordered) == list(range(20))


def fail_on_seven(x):
    if x % 10 == 7:
        raise KeyError(f"bad {x}")
    return x


@pytest.mark.parametrize("executor", EXECUTORS)
def test_errors_arrive_in_place_with_traceback_and_position(executor):
    it = iter(pf.Dataset.range(30).map(fail_on_seven, num_parallel_calls=2, executor=executor))
    assert [int(next(it)) for _ in range(7)] == list(range(7))
    with pytest.raises(KeyError, match="bad 7") as info:
        next(it)
    assert "input element 7" in " ".join(info.value.__notes__)
    if executor == "process":
        assert "fail_on_seven" in str(info.value.__cause__)  # the worker's traceback
    else:
        assert "fail_on_seven" in "".join(str(f) for f in info.traceback)
    rest = []
    while True:
        try:
            rest.append(int(next(it)))
        except KeyError:
            continue
        except StopIteration:
            break
    assert rest == [i for i in range(8, 30) if i % 10 != 7]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_input_errors_pass_through_unchanged(executor):
    source = pf.Dataset.range(10).map(lambda x: fail_on_seven(x))
    ds = source.map(lambda x: x + 100, num_parallel_calls=2, executor=executor).ignore_errors()
    assert [int(v) for v in ds] == [100 + i for i in range(10) if i != 7]


def die(x):
    if x == 100:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def exit_hard(x):
    if x == 100:
        os._exit(3)
    return x


@pytest.mark.parametrize("fn, message", [(die, "killed by signal 9"), (exit_hard, "exited with code 3")])
def test_a_dead_worker_raises_worker_error_quickly(fn, message, leak_check):
    ds = pf.Dataset.range(1000).map(fn, num_parallel_calls=2, executor="process")
    it = iter(ds)
    assert int(next(it)) == 0  # the workers have started (a busy machine starts them slowly); they die at 100
    start = time.monotonic()
    with pytest.raises(WorkerError, match=message):
        list(it)
    assert time.monotonic() - start < 60  # noticed through the closed connection (a generous bound: CI is busy)
    it.close()
    assert [int(v) for v in pf.Dataset.range(5).map(lambda x: x, num_parallel_calls=2, executor="process")] == list(
        range(5)
    )
    del ds
    leak_check.assert_clean()


def first_error(ds):
    """The type of the first error iterating ``ds`` raises (the traceback, which holds the iterator, is dropped)."""
    try:
        list(ds)
    except Exception as err:
        return type(err).__name__
    return None


@pytest.mark.parametrize("executor", EXECUTORS)
def test_no_leaks_after_end_error_close_and_garbage_collection(executor, leak_check):
    ds = pf.Dataset.range(100).map(busy, num_parallel_calls=2, executor=executor)
    list(ds)  # normal end
    assert first_error(pf.Dataset.range(20).map(fail_on_seven, num_parallel_calls=2, executor=executor)) == "KeyError"
    it = iter(ds)
    next(it)
    it.close()  # closed early
    it = iter(ds)
    next(it)
    del it  # abandoned half-way
    del ds
    leak_check.assert_clean()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_ctrl_c_while_waiting_leaves_nothing_behind(executor, leak_check):
    def slow(x):
        time.sleep(0.05)
        return x

    ds = pf.Dataset.range(1000).map(slow, num_parallel_calls=2, executor=executor)
    main = threading.main_thread().ident
    # Ctrl-C raises KeyboardInterrupt only under Python's own SIGINT handler: a process started in the background by
    # a non-interactive shell (or a pytest-xdist worker) may inherit SIGINT ignored, so install it for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            for _ in ds:
                pass
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)
    del ds
    leak_check.assert_clean()


def test_arrays_come_back_from_processes_intact_and_writable():
    ds = pf.Dataset.range(6).map(lambda x: (np.full((512, 512), x, np.float32), b"x" * int(x)), num_parallel_calls=2,
                                 executor="process")  # fmt: skip
    out = list(ds)
    assert [float(a[0, 0]) for a, _ in out] == list(range(6)) and out[5][1] == b"xxxxx"
    out[0][0][0, 0] = 7.0  # the consumer owns the memory


def test_map_skip_and_shard_through_parallel_map():
    ds = pf.Dataset.range(100).map(lambda x: x * 2, num_parallel_calls=2).shard(3, 1)
    assert [int(v) for v in ds] == [2 * i for i in range(1, 100, 3)]


def test_an_exception_class_of_the_main_script_keeps_its_type_on_processes(tmp_path):
    """Bug: a class defined in the user's main script came back as RuntimeError("UserError: boom")."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            """
            import parafeed as pf

            class UserError(Exception):
                pass

            def fail(x):
                if x == 3:
                    raise UserError(f"boom {x}")
                return x

            if __name__ == "__main__":
                it = iter(pf.Dataset.range(6).map(fail, num_parallel_calls=2, executor="process"))
                got = []
                try:
                    for x in it:
                        got.append(int(x))
                except UserError as err:
                    print("caught", type(err).__name__, err, type(err.__cause__).__name__, got)
                    got.extend(int(x) for x in it)  # iteration goes on after the error, as in a serial map
                    print("then", got)
                it.close()
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=host.seconds(120))
    assert "caught UserError boom 3 RemoteTraceback [0, 1, 2]" in out.stdout, out.stdout + out.stderr
    assert "then [0, 1, 2, 4, 5]" in out.stdout

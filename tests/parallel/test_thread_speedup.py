"""The warning that threads do not speed a map's function up (it holds the GIL): the verdict on a test clock, then
real maps on threads."""

import os
import threading
import time
import warnings

import numpy as np
import pytest

import parafeed as pf
from parafeed.parallel import thread_speedup
from parafeed.parallel.thread_speedup import WINDOW_SECONDS, ThreadSpeedup

pytestmark = pytest.mark.timeout(60)

INLINE = 0.001  # seconds per element, as the probe measured it


class Host:
    """A test clock, the clock ticks of ``cores`` cores of which ``idle`` stand idle, and a GIL sampler that wakes
    ``gil_wait`` seconds late on average."""

    def __init__(self, cores: int = 2, idle: float = 1.0, gil_wait: float = 0.0001):
        self.now = 0.0
        self.cores, self.idle, self.gil_wait = cores, idle, gil_wait
        self.ticks = [0, 0]
        self.gil_waits = [0.0, 0]

    def clock(self) -> float:
        return self.now

    def cpu(self) -> tuple[int, int]:
        return self.ticks[0], self.ticks[1]

    def gil(self) -> tuple[float, int]:
        return self.gil_waits[0], self.gil_waits[1]

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.ticks[0] += round(100 * seconds * self.idle)
        self.ticks[1] += round(100 * seconds * self.cores)
        wakeups = round(seconds / 0.01)
        self.gil_waits[0] += wakeups * self.gil_wait
        self.gil_waits[1] += wakeups


def window(check, host, threads, speedup, busy=None, starved=0.9):
    """One window of WINDOW_SECONDS: ``threads`` threads ``busy`` (default: all) on tasks whose elements came at
    ``speedup`` times one thread's rate, while the consumer waited ``starved`` of the time."""
    busy = threads if busy is None else busy
    tasks = 10
    elements = round(speedup * WINDOW_SECONDS / INLINE)
    verdicts = []
    for _ in range(tasks):
        host.advance(WINDOW_SECONDS / tasks + 1e-9)  # (ten tenths must reach the window in floats)
        verdicts.append(
            check.record(elements // tasks, busy * WINDOW_SECONDS / tasks, starved * WINDOW_SECONDS / tasks, threads)
        )
    return [v for v in verdicts if v is not None]


def new(host):
    return ThreadSpeedup(INLINE, host.cores, clock=host.clock, ticks=host.cpu, gil=host.gil)


def test_busy_threads_that_give_one_threads_speed_are_held_back_once():
    host = Host(cores=2, idle=1.0)
    check = new(host)
    [(busy, speedup, gil_wait)] = window(check, host, threads=2, speedup=1.0)
    assert busy == pytest.approx(2.0) and speedup == pytest.approx(1.0) and gil_wait is None
    assert check.done and window(check, host, threads=2, speedup=1.0) == []  # once


@pytest.mark.parametrize(
    "threads, speedup, busy, starved",
    [
        (2, 1.9, None, 0.9),  # the GIL released: about one thread's speed per thread
        (8, 7.5, None, 0.9),  # I/O: one per thread, more than the cores
        (2, 1.0, None, 0.1),  # a slow consumer: the map holds (almost) nothing back
        (2, 0.5, 0.5, 0.9),  # threads waiting for their input, not for the GIL
        (1, 1.0, None, 0.9),  # one thread: nothing to compare
    ],
)
def test_no_verdict_where_threads_help_or_something_else_limits(threads, speedup, busy, starved):
    host = Host(cores=2)
    check = new(host)
    assert window(check, host, threads, speedup, busy, starved) == []
    assert not check.done


def test_on_many_cores_the_bar_is_half_of_what_the_threads_could_give():
    host = Host(cores=16, idle=8.0)
    assert window(new(host), host, threads=16, speedup=9.0) == []
    assert window(new(host), host, threads=16, speedup=4.0) != []  # P5's threads on 16 cores ran about 4x one


def test_a_training_loop_that_waits_for_part_of_each_step_still_sees_its_threads_held_back():
    # a loop that takes the map's batches itself (no prefetch between) and trains at 59 % of its free-input speed
    # waits about 41 % of the time (the rest is its own step); 15 busy threads give 6 threads' speed, 9 cores idle
    host = Host(cores=16, idle=9.0)
    assert window(new(host), host, threads=15, speedup=5.9, busy=14.0, starved=0.41) != []


def test_threads_that_wait_for_the_gil_longer_than_the_function_takes_are_held_back_whoever_holds_it():
    # a training loop holding the GIL (launching kernels): the threads' feeder gets it late too, so they look idle
    host = Host(cores=16, idle=9.0, gil_wait=0.005)
    [verdict] = window(new(host), host, threads=15, speedup=5.9, busy=8.0)
    assert verdict.gil_wait == pytest.approx(0.005)
    host = Host(cores=16, idle=9.0, gil_wait=0.0008)  # (a wait under the function's 1 ms, and under GIL_WAIT)
    assert window(new(host), host, threads=15, speedup=5.9, busy=8.0) == []
    host = Host(cores=16, idle=9.0, gil_wait=0.005)
    assert window(new(host), host, threads=15, speedup=5.9, busy=8.0, starved=0.1) == []  # the map held nothing back
    host = Host(cores=2, idle=1.5, gil_wait=0.002)  # a function that sleeps: 3 threads hide the wait (1.7x of 2 cores)
    assert window(new(host), host, threads=3, speedup=1.7) == []


def test_no_verdict_while_the_host_has_no_idle_core():
    host = Host(cores=2, idle=0.2)  # other work took the cores: processes would not help
    assert window(new(host), host, threads=2, speedup=1.0) == []
    host = Host(cores=2, idle=1.0)
    check = ThreadSpeedup(INLINE, 2, clock=host.clock, ticks=lambda: None, gil=host.gil)  # no /proc/stat: judged
    # on the rest
    assert window(check, host, threads=2, speedup=1.0) != []


def test_each_window_logs_its_measures_and_verdict_at_debug(caplog):
    host = Host(cores=16, idle=2.0)
    check = new(host)
    with caplog.at_level("DEBUG", logger="parafeed.parallel.thread_speedup"):
        window(check, host, threads=15, speedup=6.0, busy=8.0)  # (the feeder starved the threads, say)
        window(check, host, threads=15, speedup=6.0, busy=14.0, starved=0.1)
        window(check, host, threads=15, speedup=6.0, busy=14.0)
    assert [r.getMessage() for r in caplog.records] == [
        "thread speedup: 6.0x on 8.0 busy of 15 threads, consumer waited 90%, 2.0 idle cores, GIL wait 0.10 ms: the "
        "threads were not busy",
        "thread speedup: 6.0x on 14.0 busy of 15 threads, consumer waited 10%, 2.0 idle cores, GIL wait 0.10 ms: the "
        "consumer was not starved",
        "thread speedup: 6.0x on 14.0 busy of 15 threads, consumer waited 90%, 2.0 idle cores, GIL wait 0.10 ms: held "
        "back",
    ]


def test_the_probe_times_the_function_by_its_median_call_not_its_cold_ones(monkeypatch):
    from parafeed.parallel import runner

    timed = []

    class Recorded(ThreadSpeedup):
        def __init__(self, inline_seconds, cores, **kwargs):
            timed.append(inline_seconds)
            super().__init__(inline_seconds, cores, **kwargs)

    monkeypatch.setattr(runner, "ThreadSpeedup", Recorded)
    monkeypatch.setattr(runner, "PROBE_SECONDS", 5.0)  # 16 calls, however slow a loaded machine makes them
    took = []

    def cold_then_warm(x):  # the second call (the first timed) 20x the others: a cold one
        start = time.perf_counter()
        time.sleep(0.01 if len(took) == 1 else 0.0005)
        took.append(time.perf_counter() - start)
        return x

    it = iter(pf.Dataset.range(100).map(cold_then_warm, num_parallel_calls=pf.AUTOTUNE))
    assert [next(it) for _ in range(40)] == list(range(40))
    [inline] = timed
    probed = took[1:17]  # (the probe's 16 timed calls)
    assert inline < sum(probed) / len(probed)  # not their mean, which the cold call weighs on
    assert inline == pytest.approx(sorted(probed)[len(probed) // 2], rel=0.5, abs=0.0005)


def test_cpu_ticks_count_the_cores_this_process_may_use():
    ticks = thread_speedup.cpu_ticks()
    assert ticks is not None  # (Linux)
    idle, everything = ticks
    assert 0 <= idle <= everything
    time.sleep(0.05)
    assert thread_speedup.cpu_ticks()[1] >= everything


def pure_python(x):
    total = 0
    for i in range(20_000):
        total += i
    return x


GIL = threading.Lock()  # stands in for the GIL: held for the whole call, so threads run one call at a time


def holds_the_gil(x):
    """A call that threads cannot run in parallel, whatever the machine's load: it holds a lock while it sleeps (a
    busy pure-Python loop measures the load as much as the GIL: on a quiet or a busy host the probe's inline time and
    the threads' times drift apart)."""
    with GIL:
        time.sleep(0.005)
    return x


def waits(x):
    time.sleep(0.002)
    return x


@pytest.fixture
def quick(monkeypatch):
    """Short windows, and no reading of the host's idle cores (the other test worker may use them)."""
    monkeypatch.setattr(thread_speedup, "WINDOW_SECONDS", 0.3)
    monkeypatch.setattr(thread_speedup, "cpu_ticks", lambda: None)


def run(ds, epochs=1):
    """The RuntimeWarnings of ``epochs`` passes over ``ds`` (a map of ``range``, checked for its values)."""
    expected = list(range(int(ds.cardinality())))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(epochs):
            assert [int(x) for x in ds] == expected
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def two_workers():
    options = pf.Options()
    options.max_workers = 2  # two threads, on any number of cores (one core, under taskset, allows one by default)
    return options


def test_a_map_told_to_run_on_threads_that_hold_the_gil_warns_once_naming_the_function_and_the_fix(quick):
    ds = pf.Dataset.range(150).map(holds_the_gil, num_parallel_calls=pf.AUTOTUNE, executor="thread")
    ds = ds.with_options(two_workers())
    messages = run(ds, epochs=2)
    assert len(messages) == 1, messages  # once per step, not per epoch
    assert messages[0].startswith("map(): ") and "`holds_the_gil`" in messages[0]
    assert "GIL" in messages[0] and 'executor="process"' in messages[0]


def test_maps_that_threads_speed_up_or_that_run_elsewhere_do_not_warn(quick):
    assert run(pf.Dataset.range(600).map(waits, num_parallel_calls=pf.AUTOTUNE)) == []
    assert run(pf.Dataset.range(200).map(pure_python, num_parallel_calls=2)) == []  # no probe: nothing to compare
    assert run(pf.Dataset.range(300).map(pure_python, num_parallel_calls=pf.AUTOTUNE, executor="process")) == []


def where(x):
    """``[x, the pid that computed it]``, holding the stand-in GIL as :func:`holds_the_gil` does."""
    with GIL:
        time.sleep(0.005)
    return np.array([x, os.getpid()])


reads_here: list = []  # the elements the input step read in this process (workers append to their own copies)


def read_here(x):
    reads_here.append(int(x))
    return x


@pytest.mark.parametrize("batched", [False, True])
def test_a_map_that_chose_no_executor_moves_to_processes_when_its_threads_hold_the_gil(quick, batched):
    options = two_workers()
    options.stats = True
    ds = pf.Dataset.range(240).map(read_here).map(where, num_parallel_calls=pf.AUTOTUNE)
    ds = (ds.batch(8) if batched else ds).with_options(options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):  # (a loaded machine may judge no window of a pass: the next one judges again)
            reads_here.clear()
            it = iter(ds)
            got = np.concatenate([np.reshape(x, (-1, 2)) for x in it])
            assert got[:, 0].tolist() == list(range(240))  # every element once, in order, across the move
            if {s.name: s for s in it.stats()}["Map"].executor == "process":
                break
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]  # moved, not warned
    pids = got[:, 1]
    assert pids[0] == os.getpid() and pids[-1] != os.getpid()  # threads here first, then worker processes
    if batched:  # ... and at the next batch, the input is read in those workers too (this process reads no more)
        assert reads_here == list(range(len(reads_here))) and len(reads_here) < 240
    reads_here.clear()
    again = np.concatenate([np.reshape(x, (-1, 2)) for x in ds])
    assert again[:, 0].tolist() == list(range(240)) and os.getpid() not in again[:, 1]  # the next pass starts there
    assert reads_here == ([] if batched else list(range(240)))


def test_a_map_moves_to_processes_while_the_loop_it_feeds_does_work_of_its_own(quick):
    options = two_workers()
    options.stats = True
    ds = pf.Dataset.range(400).map(where, num_parallel_calls=pf.AUTOTUNE).with_options(options)
    for _ in range(3):  # (a loaded machine may judge no window of a pass: the next one judges again)
        it = iter(ds)
        pids = []
        for x in it:
            pids.append(int(x[1]))
            time.sleep(0.003)  # the loop's own step: it waits for about 2 of the map's 5 ms per element on threads
        if {s.name: s for s in it.stats()}["Map"].executor == "process":
            break
    assert pids[0] == os.getpid() and pids[-1] != os.getpid()


def sleeps_where(x):
    """``[x, the pid that computed it]`` after 2 ms of sleep (the GIL released: threads would speed it up)."""
    time.sleep(0.002)
    return np.array([x, os.getpid()])


def holding_the_gil(seconds):
    """A call of ``seconds`` that never lets the GIL go (a C loop), as a training loop's kernel launches do."""
    start = time.perf_counter()
    sum(range(100_000))
    count = int(seconds / ((time.perf_counter() - start) / 100_000))
    return lambda: sum(range(count))


def test_a_map_that_chose_no_executor_moves_to_processes_when_the_loop_it_feeds_holds_the_gil(quick, caplog):
    options = two_workers()
    options.stats = True
    ds = pf.Dataset.range(480).map(sleeps_where, num_parallel_calls=pf.AUTOTUNE).batch(16).prefetch(2)
    ds = ds.with_options(options)
    # 2.5 ms of GIL per element against the function's 2: at 20 ms a step (1.25 ms) the verdict is close (1.3-1.5x
    # against the 1.5 bar, a GIL wait of 0.8-1.8 ms against the function's 2 ms, beside two busy loops)
    step = holding_the_gil(0.04)
    pids = []  # the pid that computed each element, pass after pass
    with caplog.at_level("DEBUG", "parafeed.parallel.thread_speedup"):
        for _ in range(3):  # (a loaded machine may judge no window of a pass; a move at its very end shows in the next)
            it = iter(ds)
            for x in it:
                pids += x[:, 1].tolist()
                step()  # the training step: the map's threads, and its prefetch, wait for the GIL meanwhile
            if {s.name: s for s in it.stats()}["Map"].executor == "process" and pids[-1] != os.getpid():
                break
    windows = [r.getMessage() for r in caplog.records]  # (each window's measures and verdict, if it did not move)
    assert pids[0] == os.getpid() and pids[-1] != os.getpid(), windows  # threads here first, then processes
    assert any(w.endswith(HELD_BACK) for w in windows), windows


HELD_BACK = ("held back by the GIL", "held back")  # a window's verdicts that move a map (or warn): beside two busy
# loops and the rest of the suite, a GIL wait of 1.3 ms read under the function's 2 ms, and the threads' 1.3x
# under the bar decided it without the GIL (the GIL's own verdict is tested on model windows above)


def test_a_map_told_to_run_on_threads_beside_a_loop_that_holds_the_gil_warns_as_its_window_judged(quick, caplog):
    ds = pf.Dataset.range(320).map(sleeps_where, num_parallel_calls=pf.AUTOTUNE, executor="thread")
    ds = ds.batch(16).prefetch(2).with_options(two_workers())  # (its first batch, probed, comes before a step)
    step = holding_the_gil(0.04)  # (2.5 ms of GIL per element: see the test above)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level("DEBUG", "parafeed.parallel.thread_speedup"):
        warnings.simplefilter("always")
        for _ in range(3):  # (a loaded machine may judge no window of a pass; the warning comes once per step)
            for _ in ds:
                step()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    windows = [r.getMessage() for r in caplog.records]  # (each window's measures and verdict)
    assert len(messages) == 1, windows
    [message] = messages
    [verdict] = [w for w in windows if w.endswith(HELD_BACK)]
    if verdict.endswith("held back by the GIL"):  # (as in a quiet run)
        assert message.startswith("map(): a thread of this process waited ") and "for the GIL on average" in message
    else:
        assert message.startswith("map(): ") and " busy threads ran `sleeps_where` only " in message, message
    assert "`sleeps_where`" in message and 'executor="process"' in message


def test_the_gil_sampler_runs_while_checks_read_it_and_ends_after():
    def samplers():
        return [t for t in threading.enumerate() if t.name == "parafeed-gil-wait"]

    for x in pf.Dataset.range(400).map(sleeps_where, num_parallel_calls=pf.AUTOTUNE):
        if int(x[0]) == 300:
            assert len(samplers()) == 1  # (one per process, however many maps read it)
    deadline = time.monotonic() + thread_speedup.SAMPLER_IDLE + 10.0
    while samplers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not samplers()
    late, wakeups = thread_speedup._sampler.read()  # (read again: it starts again)
    assert wakeups > 0 and late >= 0.0 and len(samplers()) == 1


def test_a_function_that_cannot_go_to_a_process_stays_on_threads_and_warns(quick):
    lock = threading.Lock()  # (cloudpickle cannot send a lock)

    def holds_a_lock(x):
        with lock:
            time.sleep(0.005)
        return x

    ds = pf.Dataset.range(150).map(holds_a_lock, num_parallel_calls=pf.AUTOTUNE).with_options(two_workers())
    messages = run(ds, epochs=3)  # (a loaded machine may judge no window of a pass; the warning comes once per step)
    assert len(messages) == 1 and "holds_a_lock`" in messages[0] and 'executor="process"' in messages[0]

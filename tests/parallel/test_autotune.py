"""AUTOTUNE's parts on their own: the parallelism hill-climber (on a test clock), task sizing and the RAM budget."""

import time

import pytest

import parafeed as pf
from parafeed.core.iterator import RamBudget
from parafeed.parallel.autotune import (
    GAIN,
    POOL_WINDOW_SECONDS,
    WINDOW_SECONDS,
    ParallelismTuner,
    PoolTuner,
    task_size,
)

pytestmark = pytest.mark.timeout(30)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def window(tuner, clock, elements, waited_share):
    """One window of WINDOW_SECONDS in which the consumer took ``elements`` and waited that share of the time."""
    clock.now += WINDOW_SECONDS
    tuner.record(elements, waited_share * WINDOW_SECONDS)
    return tuner.update()


def test_a_starved_consumer_gets_more_parallelism_while_it_pays():
    clock = Clock()
    tuner = ParallelismTuner(4, start=1, clock=clock)
    rates = {1: 100, 2: 200, 3: 300, 4: 400}  # throughput grows with every worker
    values = [tuner.value]
    for _ in range(8):
        values.append(window(tuner, clock, rates[tuner.value], waited_share=0.5))
    assert values[:4] == [1, 2, 2, 3]  # try one more, keep it when the rate rose, try again
    assert max(values) == 4 == values[-1]  # never past the maximum


def test_an_increase_that_does_not_pay_is_undone_with_growing_back_off():
    clock = Clock()
    tuner = ParallelismTuner(8, start=2, clock=clock)
    history = [window(tuner, clock, 200, waited_share=0.5) for _ in range(12)]  # flat throughput: more never helps
    assert history[0] == 3 and history[1] == 2  # tried, no gain of GAIN: back
    tries = [i for i, v in enumerate(history) if v == 3]
    assert len(tries) >= 2 and tries[1] - tries[0] > 2  # the next try waits longer (back-off doubles)
    assert GAIN > 1


def test_each_increase_adds_half_the_slots_there_are_and_settled_excludes_one_on_trial():
    clock = Clock()
    tuner = ParallelismTuner(16, start=4, clock=clock)
    values = [tuner.value]
    for _ in range(12):
        clock.now += WINDOW_SECONDS * 1.01
        tuner.record(100 * tuner.value, 0.5 * WINDOW_SECONDS)  # throughput grows with the slots
        if tuner.update() != values[-1]:
            values.append(tuner.value)
            assert tuner.settled == values[-2]  # on trial: what has paid is the value before the increase
    assert values == [4, 6, 9, 13, 16]  # 4 steps from 4 to 16 (one at a time: 12)
    assert tuner.settled == 16


def test_autotune_starts_each_epoch_where_the_last_one_settled():
    def wait(x):
        time.sleep(0.004)  # I/O-like: more threads pay even on few cores
        return x

    options = pf.Options(stats=True)
    options.max_workers = 16
    ds = pf.Dataset.range(1000).map(wait, num_parallel_calls=pf.AUTOTUNE, executor="thread").with_options(options)
    first = iter(ds)
    assert len(list(first)) == 1000
    climbed = {s.name: s for s in first.stats()}["Map"].parallelism
    assert climbed >= 4  # climbed from 2 during the epoch
    second = iter(ds)
    assert [next(second) for _ in range(40)] == list(range(40))  # past AUTOTUNE's probe: the workers started
    start = {s.name: s for s in second.stats()}["Map"].parallelism
    assert 4 <= start <= climbed  # where the first epoch settled, not 2 again (3 at most 0.6 s in)
    second.close()


def test_no_change_without_starvation_or_before_a_full_window():
    clock = Clock()
    tuner = ParallelismTuner(8, start=2, clock=clock)
    assert [window(tuner, clock, 500, waited_share=0.0) for _ in range(5)] == [2] * 5  # the consumer never waited
    tuner.record(500, 1.0)
    clock.now += WINDOW_SECONDS / 4
    assert tuner.update() == 2  # a window not over yet changes nothing
    few = ParallelismTuner(8, start=2, clock=clock)
    assert window(few, clock, 3, waited_share=1.0) == 2  # too few elements in the window to judge


def test_task_size_targets_the_task_duration():
    assert task_size(0.001, 0.01) == 10  # 10 elements of 1 ms: a 10 ms task
    assert task_size(0.5, 0.01) == 1  # slow elements: one per task
    assert task_size(1e-9, 0.01) == 256 == task_size(0.0, 0.01)  # cheap (or unmeasured): the limit
    assert task_size(1e-6, 0.01, limit=64) == 64


def test_ram_budget_reserves_within_its_limit():
    budget = RamBudget(100)
    assert budget.reserve(60) and not budget.reserve(50)  # 110 > 100: nothing taken
    assert budget.reserve(40)
    budget.release(60)
    assert budget.reserve(60) and not budget.reserve(1)
    budget.release(10**6)  # releasing more than held cannot go below zero
    assert budget.reserve(100)


def pool_window(tuner, clock, workers, room, waited_share, busy_share):
    """One POOL_WINDOW_SECONDS in which the trainer waited that share of the time and each worker was that busy."""
    clock.now += POOL_WINDOW_SECONDS
    tuner.record(waited_share * POOL_WINDOW_SECONDS, busy_share * workers * POOL_WINDOW_SECONDS)
    return tuner.update(workers, lambda: room)


def test_the_input_worker_pool_grows_while_the_trainer_waits_within_the_room_and_shrinks_when_idle():
    clock = Clock()
    tuner = PoolTuner(clock=clock)
    assert tuner.update(2, lambda: 10) == 2  # (no full window yet)
    assert pool_window(tuner, clock, 2, 10, waited_share=0.8, busy_share=1.0) == 4  # badly starved: doubled
    assert pool_window(tuner, clock, 4, 1, waited_share=0.8, busy_share=1.0) == 5  # as far as the room goes
    assert pool_window(tuner, clock, 5, 0, waited_share=0.8, busy_share=1.0) == 5  # no room: stays
    assert pool_window(tuner, clock, 5, 5, waited_share=0.1, busy_share=1.0) == 6  # waiting a little: one more
    assert pool_window(tuner, clock, 6, 5, waited_share=0.03, busy_share=1.0) == 6  # (under 5 %: enough)
    assert pool_window(tuner, clock, 6, 5, waited_share=0.0, busy_share=0.3) == 6  # one idle window is not enough
    assert pool_window(tuner, clock, 6, 5, waited_share=0.0, busy_share=0.3) == 5  # two: one fewer
    assert pool_window(tuner, clock, 5, 5, waited_share=0.0, busy_share=0.8) == 5  # four would be too busy
    assert pool_window(tuner, clock, 5, 5, waited_share=0.0, busy_share=0.8) == 5
    assert pool_window(tuner, clock, 1, 5, waited_share=0.0, busy_share=0.0) == 1  # never under one


@pytest.mark.parametrize("cores, expected", [(1, 1), (2, 2), (4, 4), (5, 4), (16, 15), (128, 127)])
def test_parallel_steps_start_on_every_core_but_the_training_loops(monkeypatch, cores, expected):
    from parafeed.core import options

    monkeypatch.setattr(options, "schedulable_cpus", lambda: cores)
    assert options.input_cores() == expected


@pytest.mark.parametrize(
    "cores, schedulable, trainers, expected",
    [
        (16, 16, "8", 2),  # 8 GPUs under torchrun on 16 cores: 2 each
        (128, 128, "8", 15),  # 16 each, one for the loop
        (128, 16, "8", 15),  # pinned to its share already: not divided again
        (16, 16, "1", 15),
        (16, 16, "many", 15),  # (not a count: as without it)
    ],
)
def test_training_processes_of_one_host_share_its_cores(monkeypatch, cores, schedulable, trainers, expected):
    from parafeed.core import options

    monkeypatch.setattr(options, "schedulable_cpus", lambda: schedulable)
    monkeypatch.setattr(options.os, "cpu_count", lambda: cores)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", trainers)
    assert options.input_cores() == expected


def host(start, seconds, cores=16, per_worker=400.0, demand=4700.0, startup=1.0, step=0.01):
    """A model of P5 on a GPU host, on a test clock: each worker process makes ``per_worker`` images/s once it has
    started (``startup`` seconds after AUTOTUNE asked for it; the ``start`` ones are warm: prestarted when the step was
    built), on at most ``cores - 1`` cores; the trainer takes up to ``demand`` images/s and waits for the rest. Returns
    the images/s of the last second up to ``seconds``."""
    clock = Clock()
    tuner = ParallelismTuner(cores, start=start, clock=clock)
    ready_at = [0.0] * start
    made = []
    while clock.now < seconds:
        clock.now += step
        working = min(sum(1 for t in ready_at if t <= clock.now), cores - 1)
        supply = working * per_worker * step
        taken = min(supply, demand * step)
        tuner.record(round(taken), step * (1 - taken / (demand * step)))
        made.append((clock.now, taken))
        value = tuner.update()
        ready_at += [clock.now + startup] * (value - len(ready_at))
    return sum(n for t, n in made if t > seconds - 1.0)


def test_on_a_16_core_host_processes_reach_90_percent_of_the_best_fixed_setting_within_5_seconds():
    best = max(host(start=n, seconds=5.0) for n in range(1, 17))  # a fixed setting: no climbing
    assert host(start=15, seconds=5.0) >= 0.9 * best  # where AUTOTUNE starts on 16 cores (input_cores)
    assert host(start=2, seconds=5.0) < 0.5 * best  # where it started before: the climb had not got far by then


def test_a_parallel_map_starts_at_the_input_cores_of_a_many_core_host(monkeypatch):
    from parafeed.core import iterator

    monkeypatch.setattr(iterator, "input_cores", lambda: 15)  # a 16-core host (start_cores() outside workers)
    options = pf.Options(stats=True)
    options.max_workers = 16

    def wait(x):
        time.sleep(0.002)
        return x

    it = iter(pf.Dataset.range(200).map(wait, num_parallel_calls=pf.AUTOTUNE).with_options(options))
    assert [next(it) for _ in range(40)] == list(range(40))  # past the probe: the threads started
    assert {s.name: s for s in it.stats()}["Map"].parallelism >= 15
    it.close()


def test_a_pool_window_restarts_with_the_workers_and_is_kept_with_what_it_decided():
    """The trainer's wait while the workers (re)start is not a measure of the pipeline: the window starts again when
    they have started, so a long restart does not read as a trainer that did not wait (which would shrink the pool)."""
    clock = Clock()
    tuner = PoolTuner(clock=clock)
    clock.now += 30.0  # the workers took 30 s to start; the trainer waited for them outside the window's measures
    tuner.restart()
    assert tuner.update(2, lambda: 10) == 2  # a new window: not full yet
    assert pool_window(tuner, clock, 2, 10, waited_share=0.8, busy_share=1.0) == 4
    assert list(tuner.windows) == [(POOL_WINDOW_SECONDS, 0.8, 1.0, 2, 10, 4)]
    for _ in range(2):  # (without the restarts each 30 s would count as a window the trainer hardly waited in)
        clock.now += 30.0
        tuner.restart()
        assert pool_window(tuner, clock, 4, 0, waited_share=0.2, busy_share=1.0) == 4
    assert [w.decided for w in tuner.windows] == [4, 4, 4] and tuner.windows[-1].room == 0

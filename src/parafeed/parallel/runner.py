"""The parallel map runner: feeds an executor with chunks of input, returns results in order (or as they finish).

A feeder thread pulls input elements, groups them into chunks (tasks) and submits them while fewer than
``parallelism x depth`` chunks are outstanding; the consumer takes finished chunks, in input order when deterministic
(the same elements as a serial map, in the same order) or in completion order otherwise. A chunk stays outstanding until
the consumer takes it, so memory is bounded. Errors keep their place: an exception from the function on element
``i`` is raised when element ``i`` would have been returned, with a note naming the step and ``i``, and iteration
goes on after it, as in a serial map.

With AUTOTUNE on the thread executor, the first elements run inline to time the function: functions too cheap to gain
from threads (under ``INLINE_BELOW`` seconds) go on in the serial iterator, with no threads at all. The first call is
left out of the timing (it pays for warm-up: imports, caches), and the probe ends after ``PROBE_ELEMENTS`` or once the
calls after the first have taken ``PROBE_SECONDS``, so an expensive function runs only a few elements inline. The
median call is the function's time, and what the threads are then held to: a step whose threads barely beat one thread
warns once that its function holds the GIL (:mod:`parafeed.parallel.thread_speedup`), or moves it to worker processes
where it chose no executor; with ``Options.autotune.executor = "process"`` (the device feeds) a function worth running
in parallel moves to them at once.
"""

from __future__ import annotations

import collections
import queue
import statistics
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any, Protocol, cast

from parafeed.core.dataset import AUTOTUNE
from parafeed.core.functions import fn_name, user_error
from parafeed.core.iterator import DatasetIterator, current_options, resolve_deterministic, start_cores
from parafeed.core.options import input_cores, schedulable_cpus
from parafeed.core.positions import Mark, PositionMarks, position, seek
from parafeed.errors import StateError, WorkerError
from parafeed.parallel.autotune import Learned, ParallelismTuner, task_size
from parafeed.parallel.executor import FATAL, MakeExecutor, Outcome, ResultQueue
from parafeed.parallel.thread_speedup import ThreadSpeedup, Verdict
from parafeed.parallel.threads import watch_stop

INLINE_BELOW = 50e-6  # seconds per element under which AUTOTUNE runs a thread map inline
PROBE_ELEMENTS, PROBE_SECONDS = 16, 0.02  # the probe's length at most: elements, and seconds after the first. It
# takes the median call: P5's 0.9 ms decode, averaged over the 2 ms a probe took before, read 3.9 ms once in three
# starts (a cold call), averaged over 16 calls 2.2 ms once in six, and over their later half 2.6-7.2 ms in five of
# eight (its readers filling their buffers at the same time); its threads then seemed 2-8x faster than they were,
# and the GIL check passed them. The median of 16: 0.80-0.85 ms in eight of eight
_END = "end"
_PROBE, _PARALLEL = "probe", "parallel"


class _Shared:
    """State shared by the consumer and the feeder thread (never the iterator itself, so it can be collected)."""

    def __init__(self, limit: int, chunk: int):
        self.cond = threading.Condition()
        self.limit = limit  # chunks outstanding at most (submitted, not yet taken by the consumer)
        self.in_flight = 0
        self.chunk = chunk
        self.stop = False
        self.starts: dict[int, int] = {}  # chunk seq -> index of its first input element
        self.upstream: set[int] = set()  # seqs carrying an error raised by the input, not by the function
        self.states: dict[int, Mark] = {}  # seq -> the input's position before the chunk (a PositionMarks mark)
        self.results: ResultQueue = queue.SimpleQueue()
        self.executor: Any = None  # where the feeder submits chunks ...
        self.switch_to: Any = None  # ... and the executor it submits to from its next chunk on (a switch)


class SerialMap(Protocol):
    """What ``make_serial`` returns: an iterator mapping inline, whose ``index`` counts the elements it mapped."""

    index: int

    def __next__(self) -> Any: ...


def _feed(shared: _Shared, parent: DatasetIterator, marks: PositionMarks) -> None:
    watch_stop(lambda: shared.stop)
    seq = index = produced = 0
    try:
        while True:
            with shared.cond:
                while shared.in_flight >= shared.limit and not shared.stop:
                    shared.cond.wait(0.1)
                if shared.stop:
                    return
                shared.in_flight += 1
                if shared.switch_to is not None:  # chunks from here on go to the new executor
                    shared.executor, shared.switch_to = shared.switch_to, None
                executor = shared.executor
            chunk: list[Any] = []
            error, ended = None, False
            before = marks.mark(produced)
            for _ in range(shared.chunk):
                try:
                    chunk.append(next(parent))
                except StopIteration:
                    ended = True
                    break
                except Exception as err:
                    error = err
                    break
            produced = len(chunk)
            if chunk:
                shared.starts[seq] = index
                shared.states[seq] = before
                executor.submit(seq, chunk)
                seq, index = seq + 1, index + len(chunk)
            else:
                with shared.cond:
                    shared.in_flight -= 1
            if error is not None:
                with shared.cond:
                    shared.in_flight += 1
                shared.starts[seq] = index
                shared.states[seq], produced = marks.reset(), 0
                shared.upstream.add(seq)
                shared.results.put((seq, [(False, error)], 0.0))
                seq, error = seq + 1, None  # hold no exception while waiting
            if ended:
                shared.results.put((_END, seq, 0.0))
                return
    except BaseException as err:
        shared.results.put((FATAL, WorkerError(f"the input feeder of a parallel step failed: {err!r}"), 0.0))
    finally:
        parent.close()


class ParallelMapIterator(DatasetIterator):
    """``fn`` over the parent's elements on an executor (threads or processes), ordered or first-finished."""

    _workers: int  # the workers asked of the executor (set when it starts)

    def __init__(
        self,
        parent: DatasetIterator,
        *,
        fn: Callable[[Any], Any],
        user_fn: Any,
        step: str,
        num_parallel_calls: int,
        deterministic: bool | None,
        make_executor: MakeExecutor,
        task_seconds: float,
        make_serial: Callable[[DatasetIterator, int], SerialMap] | None = None,
        depth: int = 1,
        order_fixed: bool = False,
        max_parallelism: int | None = None,
        learned: Learned | None = None,
        switch_to: MakeExecutor | None = None,
        switch_at_once: bool = False,
    ):
        """Args:
        fn: element -> result, as the step applies it (:func:`parafeed.core.functions.element_fn`).
        user_fn: the user's function, named in errors.
        step: the step's name in errors (``"map()"``).
        num_parallel_calls: an int, or AUTOTUNE (tuned up to ``Options.max_workers``).
        deterministic: results in input order (None: the pipeline's option).
        make_executor: builds the executor when the step starts running.
        task_seconds: the time one chunk should take (sets the chunk size from measured times).
        make_serial: ``(parent, index) -> iterator`` mapping inline, whose ``index`` counts the elements it mapped:
            AUTOTUNE switches to it for functions too cheap to gain from parallelism (None: never).
        depth: chunks outstanding per unit of parallelism.
        order_fixed: the input's order follows from its state, so positions are marked cheaply (PositionMarks).
        max_parallelism: AUTOTUNE's ceiling (None: ``Options.max_workers``; the Ray executor gives the cluster's CPUs).
        learned: the step's record of where AUTOTUNE settled in its earlier passes: this pass starts there (else at
            :func:`~parafeed.core.options.input_cores`) and updates it.
        switch_to: worker processes for the function (``make_executor``'s arguments), which a map on threads that
            chose no executor moves to when its threads do not speed the function up (it holds the GIL); None: it
            warns instead.
        switch_at_once: move to ``switch_to`` as soon as the probe finds the function worth running in parallel
            (``Options.autotune.executor = "process"``).
        """
        super().__init__()
        options = current_options()
        self._parent = parent
        self._fn = fn
        self._user_fn = user_fn
        self._step = step
        self._deterministic = resolve_deterministic(deterministic)
        autotune = num_parallel_calls == AUTOTUNE and options.resolve("autotune")
        ceiling = max_parallelism or options.workers
        self._max = ceiling if num_parallel_calls == AUTOTUNE else num_parallel_calls
        self._learned = learned if autotune else None
        start = (learned and learned.parallelism) or min(self._max, start_cores())
        self._tuner = ParallelismTuner(self._max, start=start) if autotune else None
        self._make_executor = make_executor
        self._target = task_seconds
        self._order_fixed = order_fixed
        self._depth = depth  # chunks outstanding per unit of parallelism (2: a worker always has its next task)
        # AUTOTUNE on threads times the function first (probe), then maps inline or in parallel
        self._mode = _PROBE if autotune and make_serial is not None else _PARALLEL
        self._make_serial = make_serial
        self._serial: SerialMap | None = None
        self._probe_times: list[float] | None = None  # seconds of the calls timed (None: the first, untimed, not yet)
        self._speedup: ThreadSpeedup | None = None  # (threads, after a probe) whether they speed the function up
        self._executor: Any = None
        self._switch_to = switch_to
        self._move_at_start = bool(switch_to and autotune and switch_at_once)
        self._left: Any = None  # the executor switched away from (closed with this iterator)
        self._shared: _Shared | None = None
        self._feeder: threading.Thread | None = None
        self._current: collections.deque[tuple[int, Outcome]] = collections.deque()
        self._done: dict[int, tuple[list[Outcome], float]] = {}  # finished chunks not yet taken, by seq
        self._arrived: collections.deque[int] = collections.deque()  # seqs in completion order (non-deterministic)
        self._next_seq = 0
        self._end: int | None = None
        self._per_element = 0.0  # measured seconds per element (EWMA)
        self._index = 0  # elements mapped inline
        self._base = 0  # input index of the first element fed to the executor
        self._closed = False
        self._at: Mark = (None, None, 0)  # the input's position before the current chunk (a PositionMarks mark) ...
        self._taken = 0  # ... and the elements taken since
        self._first = 0  # input index of the current chunk's first element

    # ------------------------------------------------------------------ consumer

    def __next__(self) -> Any:
        if self._serial is not None:  # a cheap function: mapped right here by the serial iterator
            return next(self._serial)
        while True:
            if self._current:
                index, (ok, value) = self._current.popleft()
                if ok:
                    self._taken += 1
                    return value
                if not isinstance(value, _Passthrough):  # the input's errors come after its state was taken
                    self._taken += 1
                raise self._error(index, value)
            if self._mode is _PROBE:
                return self._next_probe()
            if self._closed:  # closed (after a fatal error too): nothing will arrive any more
                raise StopIteration
            if self._shared is None:
                self._start()
            if not self._take_ready():
                if self._end is not None and self._next_seq >= self._end and not self._done:
                    self.close()  # the workers go back to their pool now, not when this iterator is collected
                    raise StopIteration
                self._receive()

    def _next_probe(self) -> Any:
        x = next(self._parent)
        start = time.perf_counter()
        try:
            y = self._fn(x)
        except Exception as err:
            raise user_error(err, self._step, self._user_fn, self._index) from None
        finally:
            self._index += 1
            times = self._probe_times
            if times is None:  # the first call (warm-up) is not timed
                self._probe_times = []
            else:
                times.append(time.perf_counter() - start)
            if times and (len(times) >= PROBE_ELEMENTS or sum(times) >= PROBE_SECONDS):
                self._per_element = statistics.median(times)  # (not a cold call, nor one the pipeline's start slowed)
                self._mode = _PARALLEL
                if self._per_element < INLINE_BELOW and self._make_serial is not None:  # (not None in a probe)
                    self._serial = self._make_serial(self._parent, self._index)
                elif self._learned is not None and not self._learned.warned:  # threads: do they speed it up?
                    self._speedup = ThreadSpeedup(self._per_element, schedulable_cpus())
        return y

    def _error(self, index: int, err: Exception) -> BaseException:
        if isinstance(err, _Passthrough):
            return err.error
        return user_error(err, self._step, self._user_fn, index)

    def _take_ready(self) -> bool:
        """Move the next finished chunk (by order, or by arrival) to ``_current``; False if none is ready."""
        shared = self._shared
        assert shared is not None
        if self._deterministic:
            if self._next_seq not in self._done:
                return False
            seq = self._next_seq
        else:
            if not self._arrived:
                return False
            seq = self._arrived.popleft()
        self._next_seq += 1
        outcomes, _ = self._done.pop(seq)
        first = self._first = self._base + shared.starts.pop(seq)
        self._at, self._taken = shared.states.pop(seq), 0
        if seq in shared.upstream:
            shared.upstream.discard(seq)
            outcomes = [(False, _Passthrough(outcomes[0][1]))]
        self._current = collections.deque(enumerate(outcomes, start=first))
        with shared.cond:
            shared.in_flight -= 1
            if shared.in_flight <= shared.limit - (shared.limit + 1) // 2:  # wake the feeder for several chunks
                shared.cond.notify()
        if self._tuner is not None:
            self._tuner.record(len(outcomes), 0.0)
        return True

    def _receive(self) -> None:
        shared = cast(_Shared, self._shared)  # started before anything is received
        start = time.perf_counter()
        seq, payload, seconds = shared.results.get()
        waited = time.perf_counter() - start
        if seq == _END:
            self._end = payload
        elif seq == FATAL:
            self.close()
            raise payload
        else:
            self._done[seq] = (payload, seconds)
            self._arrived.append(seq)
            if payload and seconds:
                per = seconds / len(payload)
                self._per_element = per if not self._per_element else 0.8 * self._per_element + 0.2 * per
                shared.chunk = task_size(self._per_element, self._target)
                if self._speedup is not None:
                    held_back = self._speedup.record(len(payload), seconds, waited, self._workers)
                    if held_back is not None and not self._switch():
                        self._warn_held_back(held_back)
            stage = self.stage
            if stage is not None:
                stage.worker_time += seconds
                stage.buffered = len(self._done)
        if self._tuner is not None:
            self._tuner.record(0, waited)
            value = self._tuner.update()
            if self._learned is not None:
                self._learned.parallelism = self._tuner.settled
            if value > self._workers:  # processes are started as AUTOTUNE asks for them
                self._workers = value
                self._executor.grow(value)
            if value * self._depth != shared.limit:
                with shared.cond:
                    shared.limit = value * self._depth
                    shared.cond.notify()
            if self.stage is not None:
                self.stage.parallelism = value

    def _switch(self, starting: _Shared | None = None) -> bool:
        """Move the function to worker processes from the next chunk on (its threads finish the chunks they have),
        or from the first chunk while ``starting``; False where there is nothing to switch to, or the function cannot
        be sent to a process."""
        if self._switch_to is None:
            return False
        shared = starting or cast(_Shared, self._shared)
        workers = max(self._workers, min(self._max, input_cores()))
        try:
            new = self._switch_to(workers, shared.results)
        except Exception:  # (cloudpickle cannot send it: a lock, an open file in its closure)
            self._switch_to = None
            return False
        self._switch_to, self._speedup = None, None
        self._left, self._executor, self._workers = self._executor, new, workers
        if self._tuner is not None:
            self._tuner.value = max(self._tuner.value, workers)
        learned = cast(Learned, self._learned)  # (a switch follows a probe: AUTOTUNE keeps a record)
        learned.executor = new.kind
        with shared.cond:
            if starting is None:
                shared.switch_to = new
            else:
                shared.executor = new
            shared.limit = max(shared.limit, workers * self._depth)
            shared.cond.notify()
        if self.stage is not None:
            self.stage.executor, self.stage.parallelism = new.kind, workers
        return True

    def _warn_held_back(self, verdict: Verdict) -> None:
        """Once per step: its threads, busy, ran the function little faster than one thread would, or waited for the
        GIL longer than the function takes."""
        cast(Learned, self._learned).warned = True  # (a speedup check runs only where AUTOTUNE keeps a record)
        name = fn_name(self._user_fn)
        if verdict.gil_wait is None:
            why = (
                f"{verdict.busy:.1f} busy threads ran {name} only {verdict.speedup:.1f}x as fast as one thread would: "
                "the function most likely holds the GIL (pure-Python work), so threads cannot run it in parallel"
            )
        else:
            why = (
                f"a thread of this process waited {1000 * verdict.gil_wait:.1f} ms for the GIL on average, longer than "
                f"{name} takes per element ({1000 * self._per_element:.1f} ms): the function, its input or the loop "
                "that takes its results (a training loop launching kernels) holds the GIL, so threads here get it late"
            )
        warnings.warn(
            f'{self._step}: {why}. Run it in worker processes with map(..., executor="process") (or Options.executor '
            '= "process" for every map), or the whole pipeline with .offload(executor="process").',
            RuntimeWarning,
            stacklevel=2,
        )

    # ------------------------------------------------------------------ checkpoints

    def _get_state(self) -> dict[str, Any]:
        if self._shared is None:  # the consumer's thread owns the input
            index = self._index if self._serial is None else self._serial.index
            return {**position(self._parent.get_state(), 0), "index": index}
        if not self._deterministic:
            raise StateError(
                f"get_state(): {self._step} with deterministic=False hands out elements as they finish, so no "
                "position marks what was delivered; use deterministic=True (the default) to checkpoint"
            )
        at, error, since = self._at
        return {**position(at, since + self._taken, error), "index": self._first + self._taken}

    def _set_state(self, state: dict[str, Any]) -> None:
        if self._shared is not None or self._serial is not None:
            raise StateError(
                f"set_state(): {self._step} has started; restore a state into a new iterator (iter(ds)) before "
                "taking elements from it"
            )
        seek(self._parent, state)
        self._index = int(state["index"])

    # ------------------------------------------------------------------ lifecycle

    def _start(self) -> None:
        parallelism = self._tuner.value if self._tuner is not None else self._max
        chunk = task_size(self._per_element, self._target) if self._per_element else 1
        marks = PositionMarks(self._parent, throttled=self._order_fixed)
        self._at, self._taken, self._first = (*marks.first, 0), 0, self._index
        shared = self._shared = _Shared(parallelism * self._depth, chunk)
        self._base = self._index
        self._workers = parallelism
        moved = self._move_at_start and self._switch(shared)  # (Options.autotune.executor: no threads at all)
        if not moved:
            self._executor = shared.executor = self._make_executor(parallelism, shared.results)
        self._feeder = threading.Thread(
            target=_feed, args=(shared, self._parent, marks), name="parafeed-feeder", daemon=True
        )
        self._feeder.start()
        if self.stage is not None:
            self.stage.executor = getattr(self._executor, "kind", "")
            self.stage.threaded = True
            self.stage.parallelism = self._workers
            self.stage.buffer_size = self._workers

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        shared = self._shared
        if shared is None:  # never went parallel: the parent (or the serial iterator on it) is ours to close
            self._parent.close()
            return
        with shared.cond:
            shared.stop = True
            shared.cond.notify_all()
        for executor in (self._executor, self._left):
            if executor is not None:
                executor.close()
        if self._feeder is not None:
            self._feeder.join(timeout=5)

    def __del__(self) -> None:
        shared = getattr(self, "_shared", None)
        if shared is not None and not self._closed:
            with shared.cond:
                shared.stop = True
                shared.cond.notify_all()
            for executor in (self._executor, self._left):
                if executor is not None:
                    executor.close()


class _Passthrough(Exception):
    """Wraps an error raised by the input, so the consumer re-raises it unchanged."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error

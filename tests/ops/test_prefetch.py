import gc
import threading
import time

import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError


def prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "parafeed-prefetch"]


def test_prefetch_produces_ahead():
    produced = []
    it = iter(pf.Dataset.range(100).map(lambda x: produced.append(int(x)) or x).prefetch(5))
    next(it)
    deadline = time.time() + 30  # polled: only a failure waits this long
    while len(produced) < 6 and time.time() < deadline:
        time.sleep(0.01)
    assert 6 <= len(produced) <= 8  # the consumed element, a full buffer, and one in hand
    it.close()


def test_errors_arrive_in_order_with_their_traceback_and_iteration_goes_on():
    def fail_at_2(x):
        if x == 2:
            raise ZeroDivisionError("two")
        return x

    it = iter(pf.Dataset.range(4).map(fail_at_2).prefetch(2))
    assert [int(next(it)), int(next(it))] == [0, 1]
    with pytest.raises(ZeroDivisionError, match="two") as info:
        next(it)
    assert "fail_at_2" in "".join(str(f) for f in info.traceback)
    assert int(next(it)) == 3
    with pytest.raises(StopIteration):
        next(it)


def test_close_and_garbage_collection_stop_the_thread():
    before = len(prefetch_threads())
    it = iter(pf.Dataset.range(10**9).prefetch(2))
    next(it)
    it.close()
    assert len(prefetch_threads()) == before
    it = iter(pf.Dataset.range(10**9).prefetch(2))
    next(it)
    del it
    gc.collect()
    deadline = time.time() + 30  # polled: only a failure waits this long
    while len(prefetch_threads()) > before and time.time() < deadline:
        time.sleep(0.01)
    assert len(prefetch_threads()) == before


def test_buffer_size_arguments():
    assert [int(x) for x in pf.Dataset.range(3).prefetch(0)] == [0, 1, 2]
    with pytest.raises(InvalidArgumentError, match="prefetch"):
        pf.Dataset.range(3).prefetch(-5)

"""The feed's thread: batches readied ahead, handed over in order with the position after each, errors in their
place, the pipeline closed at its end and on close(), nothing run on a thread with depth 0."""

import threading
import time

import pytest

import parafeed as pf
from parafeed.feed.ahead import Ahead

pytestmark = pytest.mark.timeout(60)


class Source:
    """An iterator over ``items`` that records what was taken, whether it was closed, and on which thread."""

    def __init__(self, items, fail_at=None):
        self.items, self.fail_at = list(items), fail_at
        self.taken = 0
        self.closed = False
        self.threads = set()

    def __next__(self):
        self.threads.add(threading.current_thread().name)
        if self.taken == len(self.items):
            raise StopIteration
        self.taken += 1
        if self.taken == self.fail_at:
            raise ValueError(f"bad batch {self.taken}")
        return self.items[self.taken - 1]

    def close(self):
        self.closed = True


def test_batches_are_readied_ahead_on_a_thread_and_handed_over_in_order_with_their_positions():
    source = Source(range(10))
    feed = Ahead(source, ready=lambda b: b * 10, depth=3, hand_over=lambda b: b + 1, position=lambda k: {"after": k})
    assert feed.position() == {"after": 0}
    first = next(feed)
    deadline = time.monotonic() + 5
    while source.taken < 4 and time.monotonic() < deadline:  # the thread reads ahead: 1 handed over, 3 waiting
        time.sleep(0.01)
    assert first == 1 and feed.position() == {"after": 1} and source.taken == 4
    assert list(feed) == [b * 10 + 1 for b in range(1, 10)] and feed.position() == {"after": 10}
    assert source.threads == {"parafeed-feed"} and source.closed


def test_an_error_reaches_the_loop_in_its_place_and_iteration_goes_on():
    feed = Ahead(Source(range(5), fail_at=3), ready=lambda b: b, depth=2)
    assert [next(feed), next(feed)] == [0, 1]
    with pytest.raises(ValueError, match="bad batch 3") as caught:
        next(feed)
    assert "__next__" in str(caught.traceback[-1])  # the source's own frame: the traceback kept
    assert list(feed) == [3, 4]


def test_close_stops_the_thread_and_closes_the_pipeline_mid_epoch():
    source = Source(range(10**6))
    feed = Ahead(source, ready=lambda b: b, depth=2)
    assert next(feed) == 0
    feed.close()
    assert source.closed and source.taken < 10
    assert not [t for t in threading.enumerate() if t.name == "parafeed-feed"]
    with pytest.raises(StopIteration):
        next(feed)


def test_depth_0_readies_every_batch_on_the_loops_thread_when_asked():
    source = Source(range(4))
    feed = Ahead(source, ready=lambda b: -b, depth=0, position=lambda k: k)
    assert next(feed) == 0 and source.taken == 1 and feed.position() == 1  # nothing read ahead
    assert list(feed) == [-1, -2, -3] and source.threads == {threading.current_thread().name} and source.closed


def test_stats_count_the_hand_overs_and_the_wait():
    clock = iter(range(1000)).__next__
    stats = pf.feed.FeedStats(clock=lambda: float(clock()), cpu=lambda: 0.0)
    feed = Ahead(Source([[1, 2], [3, 4, 5]]), ready=lambda b: b, depth=1, size=len, stats=stats)
    assert list(feed) == [[1, 2], [3, 4, 5]]
    assert stats.batches == 2 and stats.elements == 5 and stats.waited == 2.0  # one tick per wait
    assert stats.cpu_per_element() == 0.0  # (this fake process used no CPU)

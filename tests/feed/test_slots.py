"""The ring of page-locked host buffers, with the framework's event calls replaced by fakes: a slot is reused only
once the copy out of it is done, each slot is allocated once."""

import pytest

from parafeed.feed.slots import Slots

pytestmark = pytest.mark.timeout(30)


class Event:
    """A copy out of a slot: done once the test says so (or once waited for)."""

    def __init__(self):
        self.finished = False
        self.waited = False


def ring(count):
    made = []

    def allocate(layout):
        made.append(layout)
        return [f"buffer{len(made)}"]

    def wait(event):
        event.waited = event.finished = True

    return Slots(count, allocate, lambda event: event.finished, wait), made


def test_slots_are_allocated_once_and_reused_when_their_copy_is_done():
    slots, made = ring(3)
    events = []
    for _ in range(3):  # three batches in flight: three slots made
        slot = slots.take("f32[4,3]")
        events.append(Event())
        slots.give("f32[4,3]", slot, events[-1])
    assert len(made) == 3 and slots.allocated == 3
    events[0].finished = True
    again = slots.take("f32[4,3]")
    assert again == ["buffer1"] and not events[0].waited  # the finished one, without waiting
    assert slots.allocated == 3


def test_a_busy_slot_is_taken_only_after_waiting_for_its_copy():
    slots, made = ring(2)
    events = [Event(), Event()]
    for event in events:
        slots.give("u8[2]", slots.take("u8[2]"), event)
    slot = slots.take("u8[2]")  # none finished, none left to make: the oldest, once its copy is done
    assert slot == ["buffer1"] and events[0].waited and not events[1].waited
    assert len(made) == 2


def test_each_layout_has_slots_of_its_own():
    slots, made = ring(1)
    a, b = slots.take("a"), slots.take("b")
    assert made == ["a", "b"] and a != b
    slots.give("a", a, Event())
    with pytest.raises(RuntimeError, match="all 1 slots of layout 'b'"):  # b's slot was never given back
        slots.take("b")


def test_batches_of_ever_new_shapes_keep_the_slots_of_a_few_layouts_only():
    slots, made = ring(2)
    slots.layouts = 3
    for n in range(10):  # ten shapes, each copy done at once
        event = Event()
        slots.give(n, slots.take(n), event)
        event.finished = True
    assert len(made) == 10
    slots.give(9, slots.take(9), Event())  # the newest layouts are kept: a slot reused, none made
    assert len(made) == 10
    slots.take(0)  # the oldest was let go (its memory with it): made again
    assert len(made) == 11

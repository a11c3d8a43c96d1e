"""The shared-memory ring of the process executor on its own: round trips, wrapping, back-pressure, closing."""

import threading

import numpy as np
import pytest

from parafeed.parallel.shm import OUT_OF_BAND_MIN, RingClosed, ShmRing, decode, encode

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def ring():
    owner = ShmRing(1 << 16)
    yield owner
    owner.close()


def never() -> bool:
    return False


def test_elements_round_trip_with_arrays_out_of_band(ring):
    reader = ShmRing(name=ring.name)  # the other process's side
    try:
        element = {"image": np.arange(4000, dtype=np.float32).reshape(40, 100), "id": b"x", "n": 3}  # 16 KB
        message = encode([element], ring, never)
        assert message[1] is not None  # the array went through the ring, not the pickle
        assert len(message[0]) < OUT_OF_BAND_MIN
        (got,) = decode(message, reader)
        assert got["id"] == b"x" and got["n"] == 3 and np.array_equal(got["image"], element["image"])
        got["image"][0, 0] = -1  # the reader owns a copy
        small = encode([np.zeros(3)], ring, never)
        assert small[1] is None  # small buffers stay in the pickle
    finally:
        reader.close()


def test_blobs_never_wrap_and_space_comes_back_in_order(ring):
    reader = ShmRing(name=ring.name)
    try:
        blob = memoryview(bytes(range(256)) * 100)  # 25,600 bytes: two fit in 64 KiB, a third wraps to the start
        written = []
        for k in range(7):  # more than the ring holds in total: the reader frees space as it reads
            position, sizes = ring.write([blob], never)
            written.append(position)
            (part,) = reader.read(position, sizes)
            assert bytes(part) == bytes(blob), k
        assert all(p % ring.capacity + len(blob) <= ring.capacity for p in written)  # each blob is contiguous
        assert written[2] % ring.capacity == 0  # the tail that could not hold it was skipped
    finally:
        reader.close()


def test_a_full_ring_waits_for_the_reader_then_goes_on(ring):
    reader = ShmRing(name=ring.name)
    try:
        blob = memoryview(b"z" * 40000)
        first = ring.write([blob], never)
        done = threading.Event()
        second: list = []
        writer = threading.Thread(target=lambda: (second.append(ring.write([blob], never)), done.set()))
        writer.start()
        assert not done.wait(0.2)  # no room until the first blob is read
        reader.read(*first)
        assert done.wait(10)
        writer.join()
        assert bytes(reader.read(*second[0])[0]) == bytes(blob)
    finally:
        reader.close()


def test_a_writer_waiting_for_space_stops_when_told(ring):
    ring.write([memoryview(b"a" * 40000)], never)
    with pytest.raises(RingClosed):
        ring.write([memoryview(b"b" * 40000)], lambda: True)


def test_an_element_too_big_for_the_ring_goes_in_the_pickle(ring):
    big = np.ones(ring.capacity, np.uint8)
    message = encode([big], ring, never)
    assert message[1] is None
    assert np.array_equal(decode(message, ring)[0], big)


def test_closing_removes_the_name_at_once():
    import os

    owner = ShmRing(4096)
    name = owner.name.lstrip("/")
    assert os.path.exists(f"/dev/shm/{name}")
    owner.unlink()  # a stopping pool unlinks first; the mapping still works until closed
    assert not os.path.exists(f"/dev/shm/{name}")
    owner.write([memoryview(b"still mapped")], never)
    owner.close()


def test_a_large_pickle_goes_through_the_ring_so_the_pipe_never_fills(ring):
    reader = ShmRing(name=ring.name)
    try:
        records = [bytes([k]) * 9000 for k in range(3)]  # bytes are pickled in band: 27 KB of pickle
        message = encode(records, ring, never)
        assert message[0] is None and message[1] is not None  # only the ring's place goes through the pipe
        assert decode(message, reader) == records
    finally:
        reader.close()

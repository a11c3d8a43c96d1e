"""Soak and leaks: a million elements through the process pool with random failures (nothing lost, nothing out of
order), then a thousand iterators of every kind opened, used and closed or abandoned (nothing left behind).

``make test`` runs the sizes below; ``make soak`` runs ten times more (PARAFEED_SOAK_ELEMENTS,
PARAFEED_SOAK_ITERATORS).
"""

from __future__ import annotations

import gc
import os
import random
import sys
import time

import numpy as np
import pytest

import parafeed as pf
from parafeed.parallel.remote_errors import RemoteTraceback
from tests.reliability.resources import Resources, baseline, our_shm, wait_until_released

ELEMENTS = int(os.environ.get("PARAFEED_SOAK_ELEMENTS", 1_000_000))
ITERATORS = int(os.environ.get("PARAFEED_SOAK_ITERATORS", 1000))
SEED = 20240607


def report(line: str) -> None:
    """Figures for docs/reliability.md (shown with ``pytest -s``)."""
    print(f"\n[soak] {line}", file=sys.stderr)


class FlakyTransform:
    """``3x + 1``, raising ValueError on a seeded ~1% of the elements (picklable: it runs in worker processes)."""

    def __init__(self, failing: frozenset[int]):
        self.failing = failing

    def __call__(self, x):
        if int(x) in self.failing:
            raise ValueError(f"flaky element {int(x)}")
        return x * 3 + 1


@pytest.mark.timeout(max(600, ELEMENTS // 1000))
def test_a_million_elements_with_random_errors_through_the_process_pool():
    rng = np.random.default_rng(SEED)
    failing = frozenset(np.flatnonzero(rng.random(ELEMENTS) < 0.01).tolist())
    ds = pf.Dataset.range(ELEMENTS).map(FlakyTransform(failing), num_parallel_calls=2, executor="process")
    ok = errors = 0
    i = 0  # input element the next outcome belongs to: results and errors keep their places
    it = iter(ds)
    start = time.perf_counter()
    while True:
        try:
            value = next(it)
        except StopIteration:
            break
        except ValueError as err:
            assert i in failing, f"element {i} raised {err!r} but should not"
            assert str(err) == f"flaky element {i}"
            if errors % 1000 == 0:  # the user's traceback and the element's place come along
                assert isinstance(err.__cause__, RemoteTraceback) and "in __call__" in str(err.__cause__)
                if sys.version_info >= (3, 11):
                    assert f"on input element {i}" in err.__notes__[-1]
            errors += 1
            i += 1
            continue
        assert i not in failing and value == 3 * i + 1, f"element {i}: got {value!r}"
        ok += 1
        i += 1
    seconds = time.perf_counter() - start
    it.close()
    assert i == ELEMENTS
    assert ok == ELEMENTS - len(failing) and errors == len(failing)
    report(f"{ELEMENTS} elements ({ok} results, {errors} errors, {len(failing) / ELEMENTS:.2%} failing) through "
           f"map(num_parallel_calls=2, executor='process') in {seconds:.1f} s: {ELEMENTS / seconds:,.0f} elements/s")  # fmt: skip


# ---------------------------------------------------------------------------------------------- iterators


def plus_one(x):
    return x + 1


def times_three(x):
    return x * 3


def record_length(record):
    return np.int64(len(record))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shards")
    paths, records = [], []
    for k in range(3):
        path = str(folder / f"part-{k}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for i in range(150):
                record = b"%d-%03d" % (k, i) * (1 + i % 5)
                w.write(record)
                records.append(record)
        paths.append(path)
    return paths, records


class Pipelines:
    """Datasets of every kind, built once (a map step keeps its process pool across iterators, as in training)."""

    def __init__(self, paths: list[str], records: list[bytes], folder: str):
        self.folder = folder
        self.records = records
        files = pf.Dataset.from_tensor_slices(paths)
        self.kinds = {
            "plain": (pf.Dataset.range(300).map(plus_one).batch(7), None),
            "thread map": (pf.Dataset.range(300).map(times_three, num_parallel_calls=2), [3 * i for i in range(300)]),
            "process map": (pf.Dataset.range(300).map(times_three, num_parallel_calls=2, executor="process"),
                            [3 * i for i in range(300)]),
            "prefetch": (pf.Dataset.range(300).map(plus_one).prefetch(4), [i + 1 for i in range(300)]),
            "parallel interleave": (files.interleave(pf.TFRecordDataset, cycle_length=2, num_parallel_calls=2), None),
            "tfrecord": (pf.TFRecordDataset(paths, buffer_size=256), records),
            "tfrecord parallel reads": (pf.TFRecordDataset(paths, num_parallel_reads=2), None),
            "tfrecord map prefetch": (pf.TFRecordDataset(paths).map(record_length, num_parallel_calls=2).prefetch(2),
                                      [len(r) for r in records]),
            "file cache": (pf.Dataset.range(200).map(plus_one).cache(os.path.join(folder, "shared")),
                           [i + 1 for i in range(200)]),
            "memory cache": (pf.Dataset.range(200).map(plus_one).cache(), [i + 1 for i in range(200)]),
        }  # fmt: skip

    def check(self, kind: str, got: list, complete: bool) -> None:
        _, expected = self.kinds[kind]
        if kind == "plain":
            got = [int(v) for batch in got for v in batch]
            expected = list(range(1, 301))
        elif expected is None:  # records interleaved from several files: each file's order is kept
            assert len(set(got)) == len(got) and set(got) <= set(self.records), kind
            if complete:
                assert sorted(got) == sorted(self.records), kind
            return
        values = [v if isinstance(v, bytes) else int(v) for v in got]
        assert values == (expected if complete else expected[: len(values)]), kind


def use(pipelines: Pipelines, rng: random.Random, kind: str, close: bool) -> int:
    """One iterator of ``kind``: read all of it or part of it, then close it or drop it."""
    ds, _ = pipelines.kinds[kind]
    it = iter(ds)
    complete = rng.random() < 0.4
    if complete:
        got = list(it)
    else:
        got, limit = [], rng.randint(1, 40)
        for x in it:
            got.append(x)
            if len(got) >= limit:
                break
    pipelines.check(kind, got, complete)
    if close:
        it.close()
    del it
    return len(got)


def fresh_file_cache(pipelines: Pipelines, rng: random.Random, n: int) -> int:
    """A cache file written by an iterator that stops early (discarded) or finishes (published)."""
    path = os.path.join(pipelines.folder, f"fresh-{n}")
    ds = pf.Dataset.range(50).cache(path)
    it = iter(ds)
    limit = rng.choice([5, 49, 60])  # only a pass that reaches the end publishes the file
    got = [int(x) for _, x in zip(range(limit), it)]
    it.close()
    assert got == list(range(min(limit, 50)))
    assert os.path.exists(path + ".pfcache") == (limit > 50)
    return len(got)


def fresh_process_map(rng: random.Random, seen_shm: set[str]) -> int:
    """A map step of its own: its pool starts with its first iterator and stops when the step is collected."""
    ds = pf.Dataset.range(100).map(times_three, num_parallel_calls=2, executor="process")
    it = iter(ds)
    got = [int(x) for _, x in zip(range(rng.randint(1, 100)), it)]
    seen_shm |= our_shm()
    it.close()
    assert got == [3 * i for i in range(len(got))]
    return len(got)


def two_at_once(pipelines: Pipelines, seen_shm: set[str]) -> int:
    """Two iterators of one process map at the same time: the second borrows a pool of its own."""
    ds, expected = pipelines.kinds["process map"]
    a, b = iter(ds), iter(ds)
    got_a = [int(next(a)) for _ in range(10)]
    got_b = [int(next(b)) for _ in range(10)]
    seen_shm |= our_shm()  # both pools' rings
    got_b += [int(x) for x in b]
    a.close()
    assert got_a == expected[:10] and got_b == expected
    return 310


def soak_iterators(pipelines: Pipelines, n: int, close: bool, seed: int) -> dict:
    rng = random.Random(seed)
    kinds = list(pipelines.kinds)
    counts = dict.fromkeys([*kinds, "fresh file cache", "fresh process map", "two at once"], 0)
    elements = 0
    peak = Resources.now().counts()
    seen_shm: set[str] = set()
    for i in range(n):
        if i % 200 == 100:  # (each starts worker processes: ~0.7 s)
            elements += fresh_process_map(rng, seen_shm)
            counts["fresh process map"] += 1
        elif i % 100 == 50:
            elements += two_at_once(pipelines, seen_shm)
            counts["two at once"] += 1
        elif i % 25 == 10:
            elements += fresh_file_cache(pipelines, rng, i)
            counts["fresh file cache"] += 1
        else:
            kind = rng.choice(kinds)
            elements += use(pipelines, rng, kind, close)
            counts[kind] += 1
        if i % 20 == 0:
            seen_shm |= our_shm()
            now = Resources.now().counts()
            peak = {k: max(peak[k], now[k]) for k in peak}
    return {"counts": counts, "elements": elements, "peak": peak, "seen_shm": seen_shm}


def leftover_files(folder: str) -> list[str]:
    return sorted(n for n in os.listdir(folder) if ".tmp-" in n)


@pytest.mark.timeout(max(600, ITERATORS // 5))
@pytest.mark.parametrize("close", [True, False], ids=["closed", "abandoned"])
def test_a_thousand_iterators_leave_nothing_behind(shards, tmp_path, close):
    """Plain, thread map, process map, prefetch, parallel interleave, TFRecord and cache iterators, read in full or
    in part, then closed (or dropped without close() and garbage-collected): back to the baseline afterwards."""
    paths, records = shards
    before = baseline()
    start = time.perf_counter()
    pipelines = Pipelines(paths, records, str(tmp_path))
    n = ITERATORS if close else max(ITERATORS // 2, 1)
    result = soak_iterators(pipelines, n, close, SEED + close)
    seconds = time.perf_counter() - start
    base = before.counts()
    peak = result["peak"]
    # bounded while running: what is open belongs to the live iterator and the process map's kept pool
    assert peak["fds"] <= base["fds"] + 60 and peak["threads"] <= base["threads"] + 12, (base, peak)
    assert peak["children"] <= base["children"] + 6, (base, peak)
    assert leftover_files(str(tmp_path)) == []
    del pipelines
    gc.collect()
    after = wait_until_released(before, seen_shm=result["seen_shm"])
    assert after.counts()["fds"] <= base["fds"] and after.counts()["threads"] <= base["threads"]
    report(f"{n} iterators ({'closed' if close else 'abandoned'}), {result['elements']} elements in {seconds:.1f} s; "
           f"by kind {result['counts']}; resources before {base}, peak {peak}, after {after.counts()}; "
           f"{len(result['seen_shm'])} shared-memory segments seen, none left")  # fmt: skip

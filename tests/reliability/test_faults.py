"""Fault injection: faults from outside a pipeline while it runs, and what the user sees.

Each fault must surface as a clear error (the right type, naming the step, the file and where) within seconds, never
as a hang or as silently missing data; what survived the fault must arrive complete, exactly once; and the next
iterator must work normally.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import DataLossError, WorkerError
from parafeed.io import cache_format
from tests import host
from tests.reliability.resources import baseline, wait_until_released, worker_pids

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_script(script: str, *args: str, timeout: float = 60) -> dict:
    """Run ``script`` in a fresh interpreter; it prints one JSON object last, which is returned."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True,
                          timeout=host.seconds(timeout), cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})  # fmt: skip
    assert proc.returncode == 0, f"script failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------- worker processes


# seconds within which a fault must surface: generous, as a loaded CI machine may be slow (a hang is forever)
LIMIT = 60


def slow_double(x):
    time.sleep(0.001)
    return x * 2


def take_until_error(it, limit: float) -> tuple[list[int], BaseException | None]:
    """Elements until the first exception (or the end), failing if that takes more than ``limit`` seconds."""
    got, start = [], time.monotonic()
    try:
        for x in it:
            got.append(int(x))
            assert time.monotonic() - start < limit, f"no error within {limit} s"
    except Exception as err:
        return got, err
    return got, None


@pytest.mark.timeout(180)
def test_worker_killed_from_outside_mid_epoch_raises_worker_error_then_a_new_iterator_works():
    before = baseline()
    n = 4000
    ds = pf.Dataset.range(n).map(slow_double, num_parallel_calls=2, executor="process")
    it = iter(ds)
    first = [int(next(it)) for _ in range(100)]
    assert first == [2 * i for i in range(100)]
    workers = worker_pids() - before.children
    assert len(workers) == 2, f"expected the map's 2 worker processes, found {workers}"
    victim = min(workers)
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    got, err = take_until_error(it, limit=LIMIT)
    took = time.monotonic() - start
    assert isinstance(err, WorkerError), f"expected WorkerError, got {err!r} after {len(got)} more elements"
    assert took < LIMIT
    message = str(err)
    for part in ("map()", "worker process", f"pid {victim}", "killed by signal 9", "element(s)", "pool is discarded"):
        assert part in message, f"{part!r} missing from: {message}"
    # what did arrive before the error is the exact, in-order continuation
    assert first + got == [2 * i for i in range(len(first) + len(got))]
    assert len(first) + len(got) < n  # the fault really was mid-epoch
    it.close()
    assert [int(x) for x in ds] == [2 * i for i in range(n)]  # a fresh pool serves the next iterator
    assert victim not in worker_pids()
    del it, ds, err
    wait_until_released(before)


def kill_own_worker_once(x, marker):
    if x == 500 and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return x + 1


@pytest.mark.timeout(180)
def test_function_killing_its_own_worker_names_the_step_and_the_signal(tmp_path):
    before = baseline()
    marker = str(tmp_path / "killed")
    ds = pf.Dataset.range(2000).map(lambda x: kill_own_worker_once(x, marker), num_parallel_calls=2,
                                    executor="process")  # fmt: skip
    got, err = take_until_error(iter(ds), limit=LIMIT)
    assert isinstance(err, WorkerError) and "killed by signal 9" in str(err) and "map()" in str(err), repr(err)
    assert os.path.exists(marker)
    assert got == list(range(1, len(got) + 1)) and len(got) <= 500  # element 500 never arrived
    del err
    assert [int(x) for x in ds] == list(range(1, 2001))  # the marker stops the kill: everything arrives
    del ds
    wait_until_released(before)


AFTER_WORKER_DEATH = """
    import json, os, signal, tempfile, threading
    import parafeed as pf

    marker = os.path.join(tempfile.mkdtemp(), "killed")

    def fn(x):
        if x == 300 and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return x

    def outcome(body):
        box = {}
        def run():
            try:
                box["value"] = body()
            except BaseException as err:
                box["value"] = type(err).__name__
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(30)
        return "hang" if t.is_alive() else box["value"]

    ds = pf.Dataset.range(1000).map(fn, num_parallel_calls=2, executor="process")
    it = iter(ds)
    first = outcome(lambda: len(list(it)))
    again = outcome(lambda: repr(next(it)))
    os.remove(marker)
    ignored = outcome(lambda: len(list(ds.ignore_errors())))
    print(json.dumps({"first": first, "again": again, "ignored": ignored}))
    os._exit(0)  # a hung thread may hold the pool: skip interpreter clean-up
"""


@pytest.mark.timeout(180)
def test_iteration_after_a_worker_error_ends_instead_of_hanging():
    result = run_script(AFTER_WORKER_DEATH, timeout=150)
    assert result["first"] == "WorkerError"
    assert result["again"] in ("StopIteration", "WorkerError"), result  # never "hang"
    # ignore_errors() may stop at a dead worker or recover, but never hang or silently drop elements
    assert result["ignored"] in ("WorkerError", 1000), result


# ---------------------------------------------------------------------------------------------- TFRecord damage


def write_records(path, n: int, seed: int = 0, compression=None) -> tuple[list[bytes], list[int]]:
    """``n`` records of varied sizes; returns them and their byte offsets."""
    rng = np.random.default_rng(seed)
    records = [rng.bytes(int(rng.integers(20, 400))) for _ in range(n)]
    with pf.io.TFRecordWriter(path, compression) as w:
        for r in records:
            w.write(r)
    offsets = np.cumsum([0] + [16 + len(r) for r in records]).tolist()
    return records, offsets


def drain(it) -> tuple[list[bytes], list[Exception]]:
    """Every record and every error of an iterator that goes on after errors (as parafeed's readers do)."""
    records, errors = [], []
    for _ in range(100000):
        try:
            records.append(next(it))
        except StopIteration:
            return records, errors
        except Exception as err:
            errors.append(err)
    raise AssertionError("the iterator never ended")


def damage(path, offsets, k: int, where: str) -> None:
    with open(path, "r+b") as f:
        at = offsets[k] + (3 if where == "length" else 12 + 7)
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x5A]))


@pytest.mark.parametrize("where", ["data", "length"])
@pytest.mark.parametrize("skip_errors", [False, True])
def test_record_corrupted_while_the_file_is_open(tmp_path, where, skip_errors):
    path = str(tmp_path / "shard.tfrecord")
    records, offsets = write_records(path, 60)
    ds = pf.TFRecordDataset(path, buffer_size=64)  # small reads: the damaged part is not read yet
    if skip_errors:
        ds = ds.ignore_errors()
    it = iter(ds)
    head = [next(it) for _ in range(5)]
    damage(path, offsets, 40, where)
    rest, errors = drain(it)
    assert head + rest == records[:40] + records[41:]  # every intact record, once, in order
    if skip_errors:
        assert errors == [] and ds.ignored.count == 1 and dict(ds.ignored.by_type) == {"DataLossError": 1}
        message = ds.ignored.messages[0]
    else:
        assert len(errors) == 1 and isinstance(errors[0], DataLossError)
        message = str(errors[0])
    assert path in message and f"byte offset {offsets[40]}" in message, message
    assert ("data CRC" if where == "data" else "length CRC") in message


@pytest.mark.parametrize("skip_errors", [False, True])
def test_file_truncated_while_open(tmp_path, skip_errors):
    path = str(tmp_path / "shard.tfrecord")
    records, offsets = write_records(path, 60)
    ds = pf.TFRecordDataset(path, buffer_size=64)
    if skip_errors:
        ds = ds.ignore_errors()
    it = iter(ds)
    head = [next(it) for _ in range(5)]
    os.truncate(path, offsets[30] + 20)  # in the middle of record 30
    rest, errors = drain(it)
    assert head + rest == records[:30]
    messages = ds.ignored.messages if skip_errors else [str(e) for e in errors]
    assert len(messages) == 1 and f"truncated record at byte offset {offsets[30]}" in messages[0], messages
    assert path in messages[0]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_file_truncated_while_open_ends_with_an_error_not_a_hang(tmp_path, compression):
    path = str(tmp_path / "shard.tfrecord.gz")
    records, _ = write_records(path, 3000, compression=compression)
    ds = pf.TFRecordDataset(path, compression, buffer_size=256).ignore_errors()
    it = iter(ds)
    head = [next(it) for _ in range(10)]
    os.truncate(path, os.path.getsize(path) // 2)
    start = time.monotonic()
    rest, _ = drain(it)
    assert time.monotonic() - start < LIMIT
    got = head + rest
    assert 10 <= len(got) < len(records) and got == records[: len(got)]  # a prefix, each record once
    assert ds.ignored.count >= 1 and set(ds.ignored.by_type) == {"DataLossError"}
    assert "compressed stream ends early" in ds.ignored.messages[0] and path in ds.ignored.messages[0]


# ---------------------------------------------------------------------------------------------- disk full


DISK_FULL = """
    import json, os, resource, signal, sys
    import numpy as np
    import parafeed as pf

    filename, limit = sys.argv[1], int(sys.argv[2])
    computed = [0]

    def produce(x):
        computed[0] += 1
        return {"x": np.full(64, x, np.int64), "name": b"element-%d" % x}

    ds = pf.Dataset.range(2000).map(produce).cache(filename)
    folder = os.path.dirname(filename)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead of killing us
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    out = {}
    try:
        n = sum(1 for _ in ds)
        out["error"] = None
    except OSError as err:
        out["error"] = [err.errno, str(err)]
    out["files_after_failure"] = sorted(os.listdir(folder))
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

    def check(elements):
        return len(elements) == 2000 and all(
            e["name"] == b"element-%d" % i and (e["x"] == i).all() for i, e in enumerate(elements))

    computed[0] = 0
    out["second_pass_ok"] = check(list(ds))
    out["second_pass_computed"] = computed[0]
    out["files_after_second_pass"] = sorted(os.listdir(folder))
    computed[0] = 0
    out["third_pass_ok"] = check(list(ds))
    out["third_pass_computed"] = computed[0]
    computed[0] = 0
    other = pf.Dataset.range(2000).map(produce).cache(filename)  # another pipeline object, same file
    out["other_pipeline_ok"] = check(list(other))
    out["other_pipeline_computed"] = computed[0]
    print(json.dumps(out))
"""


@pytest.mark.timeout(120)
def test_disk_full_while_writing_the_cache_file_for_real(tmp_path):
    """RLIMIT_FSIZE makes the kernel refuse writes past 64 KiB (EFBIG), as a full disk refuses them (ENOSPC)."""
    filename = str(tmp_path / "train")
    out = run_script(DISK_FULL, filename, str(64 * 1024), timeout=100)
    assert out["error"] is not None, "writing past RLIMIT_FSIZE did not fail"
    code, message = out["error"]
    assert code in (errno.EFBIG, errno.ENOSPC), out["error"]
    assert message.startswith(f"[Errno {code}] cache(): ") and filename + ".pfcache" in message, message
    assert "File too large" in message or "No space left" in message, message
    assert out["files_after_failure"] == [], "the unfinished file (or a cache) was left behind"
    assert out["second_pass_ok"] and out["second_pass_computed"] == 2000  # recomputed from the input
    assert out["files_after_second_pass"] == ["train.pfcache"]  # published only when complete
    # then replayed from the file
    assert out["third_pass_ok"] and out["third_pass_computed"] == 0
    assert out["other_pipeline_ok"] and out["other_pipeline_computed"] == 0


class _FailingFile:
    """A file whose writes fail with ENOSPC once ``budget`` bytes are written (or whose fsync fails)."""

    def __init__(self, real, budget: int):
        self._real = real
        self._budget = budget

    def write(self, data):
        if self._budget < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._budget -= len(data)
        return self._real.write(data)

    def __getattr__(self, name):
        return getattr(self._real, name)


@pytest.mark.parametrize("fail_at", ["write", "fsync"])
def test_no_space_left_while_writing_the_cache_file(tmp_path, monkeypatch, fail_at):
    filename = str(tmp_path / "cache")
    computed = []

    def produce(x):
        computed.append(int(x))
        return np.full(100, x, np.float32)

    ds = pf.Dataset.range(500).map(produce).cache(filename)
    if fail_at == "write":
        monkeypatch.setattr(cache_format, "open", lambda p, mode: _FailingFile(open(p, mode), 50_000), raising=False)
    else:

        def no_space(fd):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(cache_format.os, "fsync", no_space)
    with pytest.raises(OSError) as info:
        list(ds)
    assert info.value.errno == errno.ENOSPC
    assert "cache()" in str(info.value) and filename + ".pfcache" in str(info.value), str(info.value)
    assert "No space left on device" in str(info.value)
    assert os.listdir(tmp_path) == [], "an unfinished cache file was left behind"
    monkeypatch.undo()
    computed.clear()
    out = list(ds)
    assert computed == list(range(500)) and [float(x[0]) for x in out] == list(range(500))
    assert os.listdir(tmp_path) == ["cache.pfcache"]
    computed.clear()
    assert [float(x[0]) for x in ds] == list(range(500))
    assert computed == []  # replayed from the file


def test_replaying_a_cache_file_runs_no_user_function(tmp_path):
    """Was a bug: the replay asked the input for its element_spec, which a map() infers by calling its function."""
    computed = []

    def produce(x):
        computed.append(int(x))
        return x * 2

    filename = str(tmp_path / "cache")
    assert [int(x) for x in pf.Dataset.range(5).map(produce).cache(filename)] == [0, 2, 4, 6, 8]
    computed.clear()
    assert [int(x) for x in pf.Dataset.range(5).map(produce).cache(filename)] == [0, 2, 4, 6, 8]
    assert computed == []


# ---------------------------------------------------------------------------------------------- missing files


def make_shards(folder, n_files: int = 3, n_records: int = 100) -> list[str]:
    paths = []
    for k in range(n_files):
        path = str(folder / f"part-{k}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for i in range(n_records):
                w.write(b"%d-%03d" % (k, i))
        paths.append(path)
    return paths


def records_of(k: int, n: int = 100) -> list[bytes]:
    return [b"%d-%03d" % (k, i) for i in range(n)]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("num_parallel_reads", [None, 2])
def test_a_listed_file_deleted_before_iteration(tmp_path, num_parallel_reads):
    paths = make_shards(tmp_path)
    files = pf.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    os.remove(paths[1])
    ds = pf.TFRecordDataset(files, num_parallel_reads=num_parallel_reads)
    start = time.monotonic()
    with pytest.raises(FileNotFoundError) as info:
        list(ds)
    assert time.monotonic() - start < LIMIT
    assert info.value.errno == errno.ENOENT
    assert f"TFRecordDataset: cannot open {paths[1]}" in str(info.value), str(info.value)
    skipping = ds.ignore_errors()
    got = list(skipping)
    assert sorted(got) == records_of(0) + records_of(2)  # every record of the other files, once
    if num_parallel_reads is None:
        assert got == records_of(0) + records_of(2)
    assert skipping.ignored.count == 1 and dict(skipping.ignored.by_type) == {"NotFoundError": 1}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("num_parallel_reads", [None, 2])
def test_listed_files_deleted_during_iteration(tmp_path, num_parallel_reads):
    """The file being read is deleted (POSIX: it stays readable while open) and so is one not opened yet (the last:
    the parallel interleave opens the files after its open ones ahead, one per slot)."""
    paths = make_shards(tmp_path, n_files=6)
    files = pf.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    ds = pf.TFRecordDataset(files, num_parallel_reads=num_parallel_reads).ignore_errors()
    it = iter(ds)
    head = [next(it) for _ in range(10)]
    os.remove(paths[0])
    os.remove(paths[5])
    start = time.monotonic()
    rest = list(it)
    assert time.monotonic() - start < LIMIT
    assert sorted(head + rest) == [r for k in range(5) for r in records_of(k)]
    assert ds.ignored.count == 1 and paths[5] in ds.ignored.messages[0]
    assert ds.ignored.messages[0].startswith("NotFoundError: [Errno 2] TFRecordDataset: cannot open")

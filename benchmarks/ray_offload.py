"""Input workers on Ray: parafeed's ``offload()`` beside the tf.data service and Ray Data, on a local Ray cluster.

Everything runs on this machine: a Ray cluster of ``ray.cluster_utils.Cluster`` nodes (a head with no CPUs for tasks,
``--nodes`` nodes of ``--node-cpus`` logical CPUs and 100 MB of object store each, in a temp dir of their own), and a
tf.data service (a dispatcher and its workers, each a process of its own, so that they can be killed and so that a
``py_function`` runs under its worker's own interpreter lock). The trainer is this process: it iterates

* parafeed: ``pf.Dataset.range(n).map(f).batch(b).offload(workers=K)`` (the same elements, in the same order, as
  without ``offload``); the Ray input workers' actors are kept between runs (warm, as the tf.data workers are);
* the tf.data service: ``tf.data.Dataset...map(f).batch(b).apply(distribute("distributed_epoch", ...))`` on K workers.
  Its splits come from the source: ``range(n)`` gives one element per split (a dispatcher request per element), so
  the source is also written as ranges of one block each (``range(n // b).flat_map(range of block i)``), the coarse
  splits a user of the service would pick. A Python function runs as ``tf.py_function``; the service runs it on a
  worker only when that worker's process has the same function registered under the same token, so every worker
  traces the script's ``py_function`` wrappers at start-up, in the same order as the trainer (``tf_functions``);
* Ray Data: ``ray.data.range(n).map_batches(f, batch_size=b, compute=TaskPoolStrategy(size=K))``, consumed as a Ray
  Train worker does: ``streaming_split(1, equal=True)[0].iter_batches(batch_size=b)``.

Tables (each written into docs/benchmarks.md, except by a ``--quick`` run: its sizes are too small to publish):

1. per-element overhead: ``range -> map(x + 1) -> batch(256)`` on 2 input workers, elements/s (parafeed also with
   ``block=4``, ``16`` and ``64`` batches per block: the default, calls sized by time, against the best of them);
2. a CPU-bound pure-Python function (~30 us per element) on 2 input workers, elements/s;
3. scaling an I/O-like function (a 10 ms sleep per element) over 1, 2, 4, 8 input workers: elements/s and speed-up;
4. the trainer's CPU time per batch (``time.process_time()`` of this process: every thread of it, Ray's driver and
   TensorFlow's runtime included, and ``time.thread_time()`` of the consuming thread) for batches of 256 arrays of
   256x64 float32 (16 MiB);
5. exactly once under faults: an epoch of ids on 4 input workers while workers are killed (parafeed: an actor killed
   with ``ray.kill`` and a Ray node removed, and, without faults, ``iterator.resize`` down and up; tf.data service:
   worker processes killed with SIGKILL, restarted at their address or not): ids delivered, lost and repeated, and
   whether they came in the order of the pipeline on one host.

Ray Data needs ``pip install "ray[data]"`` (pandas, pyarrow); without it its rows are left out and the notes say so.

Rates are medians of ``--runs`` interleaved runs after a warm-up run (``harness.run``). A tf.data service run that
stalls is cut off (``--stall`` seconds without an element) and reported as such rather than waited for.

Usage: python benchmarks/ray_offload.py [--quick] [--runs 3] [--only overhead,cpu,scaling,trainer,faults]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import importlib.metadata
import logging
import multiprocessing
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

import harness
import numpy as np

import parafeed as pf

SPIN = 1500  # iterations of the CPU-bound function's loop (~30 us)
SLEEP = 0.010  # the I/O-like function's wait per element
FAULT_SLEEP = 0.001  # the per-element cost of the faults epoch
SHAPE = (256, 64)  # the trainer-CPU workload's element: a float32 array of this shape
OBJECT_STORE = 100 * 2**20
BLOCKS = (4, 16, 64)  # R1: batches per parafeed block in the rows that set ``block=`` (the default's yardstick)
PARAFEED, TF_SERVICE, RAY_DATA = "parafeed offload", "tf.data service", "Ray Data"
RAY_DATA_WHY = ""  # why Ray Data cannot be measured ("" when it can)


# the user functions (module level: Ray pickles them by value, the tf.data workers trace them at start-up) --------


def add_one(x):
    return x + 1


def spin(x):
    s = 0
    for i in range(SPIN):
        s += i * i
    return x + (s & 0)


def nap(x):
    time.sleep(SLEEP)
    return x


def short_nap(x):
    time.sleep(FAULT_SLEEP)
    return x


def make_array(x):
    return np.full(SHAPE, x, dtype=np.float32)


def rows_add_one(batch: dict) -> dict:
    return {"id": batch["id"] + 1}


def rows_spin(batch: dict) -> dict:
    return {"id": np.array([spin(int(v)) for v in batch["id"]], dtype=np.int64)}


def rows_nap(batch: dict) -> dict:
    return {"id": np.array([nap(int(v)) for v in batch["id"]], dtype=np.int64)}


def rows_array(batch: dict) -> dict:
    ids = batch["id"].astype(np.float32)
    return {"x": np.ascontiguousarray(np.broadcast_to(ids[:, None, None], (len(ids), *SHAPE)))}


_TF_FUNCTIONS: dict | None = None


def tf_functions() -> dict:
    """The script's Python functions as ``tf.function`` wrappers of ``tf.py_function``, traced once, in this order,
    in the trainer and in every tf.data worker: the ``py_function`` tokens (``pyfunc_0``, ``pyfunc_1`` ...) a
    pipeline sends to the service then name the same function in the worker's registry."""
    global _TF_FUNCTIONS
    if _TF_FUNCTIONS is None:
        import tensorflow as tf

        spec = [tf.TensorSpec([], tf.int64)]
        _TF_FUNCTIONS = {}
        for name, fn in (("spin", spin), ("nap", nap), ("short_nap", short_nap)):

            def call(x, fn=fn):
                return np.int64(fn(int(x)))

            wrapper = tf.function(lambda x, call=call: tf.py_function(call, [x], tf.int64), input_signature=spec)
            wrapper.get_concrete_function()
            _TF_FUNCTIONS[name] = wrapper
    return _TF_FUNCTIONS


# the Ray cluster -------------------------------------------------------------------------------------------------


class RayCluster:
    """A local multi-node Ray cluster (``ray.cluster_utils.Cluster``) this process is connected to."""

    def __init__(self, nodes: int, cpus: int):
        from ray.cluster_utils import Cluster

        import ray

        self.ray = ray
        self.dir = tempfile.mkdtemp(prefix="pf-ray-")
        head = {"num_cpus": 0, "object_store_memory": OBJECT_STORE, "temp_dir": self.dir, "include_dashboard": False}
        self.cluster = Cluster(initialize_head=True, head_node_args=head)
        self.nodes = [self.cluster.add_node(num_cpus=cpus, object_store_memory=OBJECT_STORE) for _ in range(nodes)]
        self.cluster.wait_for_nodes()
        ray.init(address=self.cluster.address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        global RAY_DATA_WHY
        try:
            import ray.data
        except ImportError as err:  # Ray Data needs pandas and pyarrow (`pip install "ray[data]"`)
            RAY_DATA_WHY = f"`import ray.data` failed ({type(err).__name__}: {err}); `pip install 'ray[data]'`"
            return
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        context.execution_options.verbose_progress = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)

    def node_of(self, actor) -> object | None:
        """The cluster node (``Cluster.add_node``'s handle) an actor lives on, None if not known."""
        with contextlib.suppress(Exception):
            from ray._private import state  # no public call gives an actor's node without the dashboard

            node_id = state.actors(actor._actor_id.hex())["Address"]["NodeID"]
            return next((n for n in self.nodes if n.node_id == node_id), None)
        return None

    def remove(self, node) -> None:
        self.cluster.remove_node(node)
        self.nodes.remove(node)

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.ray.shutdown()
        with contextlib.suppress(Exception):
            self.cluster.shutdown()
        shutil.rmtree(self.dir, ignore_errors=True)


# the tf.data service ---------------------------------------------------------------------------------------------

_CHILDREN: list[multiprocessing.Process] = []  # every process started here, killed at the end (or on a hang)


def _quiet() -> None:
    """In a child process: TensorFlow's start-up lines (and its servers' logs) to /dev/null, unless --verbose."""
    if os.environ.get("PF_BENCH_VERBOSE") != "1":
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)


def _serve(role: str, dispatcher: str | None, port: int, conn) -> None:
    """In a child process: the dispatcher (``role`` "dispatcher") or a worker of the tf.data service, until the parent
    says stop or is gone."""
    _quiet()
    import tensorflow as tf

    service = tf.data.experimental.service
    if role == "dispatcher":
        server = service.DispatchServer(service.DispatcherConfig(port=0))
        conn.send(server.target)
    else:
        tf_functions()
        server = service.WorkerServer(service.WorkerConfig(dispatcher_address=dispatcher, port=port))
        conn.send(server._address)  # (no public attribute gives the address it bound)
    with contextlib.suppress(EOFError, OSError):
        conn.recv()
    os._exit(0)  # a TF server's destructor can wait for its RPCs: leave at once


def _spawn(target, *args) -> tuple[multiprocessing.Process, object]:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=target, args=(*args, child), daemon=True)
    process.start()
    child.close()
    _CHILDREN.append(process)
    return process, parent


def _answer(process: multiprocessing.Process, conn, what: str, timeout: float = 120.0):
    if not conn.poll(timeout):
        process.kill()
        raise RuntimeError(f"{what} did not start in {timeout:.0f} s")
    return conn.recv()


class TfService:
    """A tf.data service dispatcher and ``workers`` workers, each in a process of its own."""

    def __init__(self, workers: int):
        process, conn = _spawn(_serve, "dispatcher", None, 0)
        self.target = _answer(process, conn, "the tf.data dispatcher")
        self.address = self.target.split("://")[1]
        self._dispatcher = (process, conn)
        self.workers: list[tuple[multiprocessing.Process, object, int]] = []
        self.add(workers)

    def add(self, count: int, ports: list[int] | None = None, wait: bool = True) -> list:
        """Start ``count`` workers (at ``ports``, or any free port); wait until they registered unless ``wait`` is
        false (then the started ones are returned for :meth:`ready`)."""
        started = [_spawn(_serve, "worker", self.address, port) for port in (ports or [0] * count)]
        return self.ready(started) if wait else started

    def ready(self, started: list) -> list:
        for process, conn in started:
            address = _answer(process, conn, "a tf.data worker")
            self.workers.append((process, conn, int(address.rsplit(":", 1)[1])))
        time.sleep(0.5)  # the first heartbeat registers it with the dispatcher
        return started

    def kill(self, index: int) -> int:
        """SIGKILL worker ``index``; its port."""
        process, _, port = self.workers[index]
        os.kill(process.pid, signal.SIGKILL)
        process.join(5)
        return port

    def stop(self) -> None:
        for process, _conn, _ in [*self.workers, (*self._dispatcher, 0)]:
            process.kill()
            process.join(5)
        self.workers = []


def tf_pipeline(target: str, n: int, batch: int, fn, mode: str = "distributed_epoch", split: int | None = None,
                compression: str | None = "AUTO"):  # fmt: skip
    """``range(n).map(fn).batch(batch)`` on the service; ``split``: elements per split (None: one, as ``range(n)``
    gives them), the source then being ``range(ceil(n / split))`` flat-mapped to each split's ids."""
    import tensorflow as tf

    if split is None:
        ds = tf.data.Dataset.range(n)
    else:
        ds = tf.data.Dataset.range(-(-n // split)).flat_map(
            lambda i: tf.data.Dataset.range(i * split, tf.minimum((i + 1) * split, n))
        )
    ds = ds.map(fn).batch(batch)
    distribute = tf.data.experimental.service.distribute
    return ds.apply(distribute(processing_mode=mode, service=target, compression=compression))


# hangs -----------------------------------------------------------------------------------------------------------

_CLEANUP: list[Callable[[], None]] = []


@contextlib.contextmanager
def deadline(seconds: float, what: str):
    """Give up on the whole script (children killed, Ray stopped) if the block runs longer than ``seconds``: a
    tf.data service client that waits for a worker cannot be interrupted from Python."""

    def expire() -> None:
        print(f"\n{what} ran past {seconds:.0f} s: giving up (the tf.data client cannot be interrupted)", flush=True)
        for fn in reversed(_CLEANUP):
            with contextlib.suppress(Exception):
                fn()
        os._exit(3)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def kill_children() -> None:
    for process in _CHILDREN:
        with contextlib.suppress(Exception):
            process.kill()


# candidates ------------------------------------------------------------------------------------------------------


TIMES: dict[str, list[tuple[float, float, float, int]]] = collections.defaultdict(list)


def count_batches(iterable, n: int, label: str, key: str | None = None, start: float | None = None) -> int:
    """Iterate (as a trainer does: nothing but the batch's size read), check the element count, and note in
    ``TIMES[label]`` the seconds to the first batch, to the last, to the end, and the first batch's size."""
    start = time.perf_counter() if start is None else start
    seen, first, last, size = 0, 0.0, 0.0, 0
    for b in iterable:
        last = time.perf_counter() - start
        rows = len(b[key]) if key else int(b.shape[0])
        if not seen:
            first, size = last, rows
        seen += rows
    assert seen == n, f"{label}: {seen} elements, expected {n}"
    TIMES[label].append((first, last, time.perf_counter() - start, size))
    return n


def timing(label: str, n: int) -> tuple[float, float, float]:
    """Medians over the timed runs of ``label`` (the warm-up run left out): seconds to the first batch, elements/s
    from the first batch to the last, seconds from the last batch to the end of the epoch."""
    runs = TIMES[label][1:] or TIMES[label]
    first = statistics.median(r[0] for r in runs)
    between = statistics.median((n - r[3]) / max(r[1] - r[0], 1e-9) for r in runs)
    tail = statistics.median(r[2] - r[1] for r in runs)
    return first, between, tail


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


TIMING_NOTE = (
    "*First batch*: from the start of the epoch (for Ray Data, from `ray.data.range`) to its first batch; *between*: "
    "the rate from the first batch to the last; *end*: from the last batch to the end of the epoch (StopIteration)."
)


def rate_table(title: str, rates: dict[str, list[float]], sizes: dict[str, int], baseline: str, local: str,
               note: str) -> str:  # fmt: skip
    """harness.report's table, with each library's median time to the first batch of an epoch, its rate from the
    first batch to the last, and the time from the last batch to the end of the epoch."""
    base, one = statistics.median(rates[baseline]), statistics.median(rates[local])
    lines = [
        f"### {title}",
        "",
        f"| library | median elements/s | min | max | vs {baseline} | of no offload | first batch | elements/s "
        "between | end |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, values in rates.items():
        med = statistics.median(values)
        first, between, tail = timing(name, sizes[name])
        lines.append(
            f"| {name} | {harness._fmt(med)} | {harness._fmt(min(values))} | {harness._fmt(max(values))} | "
            f"{med / base:.2f}x | {med / one:.0%} | {ms(first)} | {harness._fmt(between)} | {ms(tail)} |"
        )
    lines += ["", f"{len(next(iter(rates.values())))} runs each, interleaved; {harness._machine()}.", "", note, ""]
    return "\n".join(lines)


SAVE = True  # write the tables into docs/benchmarks.md (not for --quick runs unless --save)


def report(key: str, text: str) -> None:
    print(text, flush=True)
    if SAVE:
        harness._save(key, text)


def parafeed_candidate(ds: pf.Dataset, n: int, name: str) -> Callable[[], int]:
    return lambda: count_batches(ds, n, name)


def tf_candidate(ds, n: int, name: str, limit: float) -> Callable[[], int]:
    def run() -> int:
        with deadline(limit, name):
            return count_batches(ds, n, name)

    return run


def ray_data_candidate(n: int, batch: int, fn, workers: int, label: str, key: str = "id", blocks: int | None = None,
                       batch_format: str = "default") -> Callable[[], int] | None:  # fmt: skip
    """Ray Data's run, or None when Ray Data cannot be imported (its row is then left out, and the note says why)."""
    if RAY_DATA_WHY:
        return None
    import ray

    def run() -> int:
        start = time.perf_counter()
        ds = ray.data.range(n, override_num_blocks=blocks).map_batches(
            fn, batch_size=batch, compute=ray.data.TaskPoolStrategy(size=workers)
        )
        split = ds.streaming_split(1, equal=True)[0]
        return count_batches(split.iter_batches(batch_size=batch, batch_format=batch_format), n, label, key, start)

    return run


def present(candidates: dict) -> dict:
    """The candidates that can run (Ray Data's is None without it)."""
    return {key: fn for key, fn in candidates.items() if fn is not None}


def ray_data_note() -> str:
    return f" Ray Data not measured: {RAY_DATA_WHY}." if RAY_DATA_WHY else ""


def release() -> None:
    """Let go of the parafeed datasets of the last workload: their idle input workers give their CPUs back."""
    gc.collect()
    time.sleep(0.5)


# 1. per-element overhead -----------------------------------------------------------------------------------------


def overhead(args, service: TfService) -> None:
    n, workers, batch = args.n_overhead, 2, 256
    fine = max(batch, n // 40 // batch * batch)  # one split per element is slow: that run reads a prefix
    local = "parafeed, no offload (in the trainer)"
    fine_name = f"{TF_SERVICE}, range(n): one element per split (first {fine:,})"
    coarse_name = f"{TF_SERVICE}, splits of {batch}"
    blocked = {b: f"{PARAFEED}, block={b} (batches per block)" for b in BLOCKS}
    candidates = {
        local: parafeed_candidate(pf.Dataset.range(n).map(add_one).batch(batch), n, local),
        PARAFEED: parafeed_candidate(
            pf.Dataset.range(n).map(add_one).batch(batch).offload(workers=workers), n, PARAFEED
        ),
        **{
            name: parafeed_candidate(
                pf.Dataset.range(n).map(add_one).batch(batch).offload(workers=workers, block=b), n, name
            )
            for b, name in blocked.items()
        },
        coarse_name: tf_candidate(
            tf_pipeline(service.target, n, batch, lambda x: x + 1, split=batch), n, coarse_name, args.limit
        ),
        fine_name: tf_candidate(tf_pipeline(service.target, fine, batch, lambda x: x + 1), fine, fine_name, args.limit),
        RAY_DATA: ray_data_candidate(n, batch, rows_add_one, workers, RAY_DATA),
    }
    rates = harness.run(present(candidates), runs=args.runs)
    sizes = {name: n for name in candidates} | {fine_name: fine}
    best = max(blocked.values(), key=lambda name: statistics.median(rates[name]))
    default_share = statistics.median(rates[PARAFEED]) / statistics.median(rates[best])
    title = f"R1 per-element overhead of input workers: range({n:,}) -> map(x + 1) -> batch({batch}), {workers} workers"
    note = (
        f"{workers} input workers each: parafeed's `offload(workers={workers})` (Ray actors; a block of one batch "
        f"each by default, a call carrying as many blocks as take 30 round trips; {', '.join(map(str, BLOCKS))} "
        f"batches with `block=`: the default gave {default_share:.0%} of the best of them, {best!r}), "
        f"{workers} tf.data service workers (processes; "
        "`map(lambda x: x + 1)` in-graph), Ray Data "
        f"`map_batches(..., compute=TaskPoolStrategy(size={workers}))` (vectorised: one NumPy add per batch) read "
        "through `streaming_split(1, equal=True)`. parafeed calls `x + 1` once per element. The tf.data service hands "
        "out one split per element of `range(n)` (a dispatcher request each), so that row ran on the first "
        f"{fine:,} elements; the row above it gives each split {batch} ids. *Of no offload*: of the same pipeline run "
        f"in the trainer process, no workers. {TIMING_NOTE} {cluster_note(args)}"
    )
    report("ray-offload-overhead", rate_table(title, rates, sizes, coarse_name, local, note))


# 2. CPU-bound Python ---------------------------------------------------------------------------------------------


def cpu_bound(args, service: TfService) -> None:
    n, workers, batch = args.n_cpu, 2, 256
    per_element = calibrate(spin)
    local = "parafeed, no offload (in the trainer)"
    fns = tf_functions()
    tf_name = f"{TF_SERVICE} (py_function, splits of {batch})"
    candidates = {
        local: parafeed_candidate(pf.Dataset.range(n).map(spin).batch(batch), n, local),
        PARAFEED: parafeed_candidate(pf.Dataset.range(n).map(spin).batch(batch).offload(workers=workers), n, PARAFEED),
        tf_name: tf_candidate(tf_pipeline(service.target, n, batch, fns["spin"], split=batch), n, tf_name, args.limit),
        RAY_DATA: ray_data_candidate(n, batch, rows_spin, workers, RAY_DATA),
    }
    rates = harness.run(present(candidates), runs=args.runs)
    title = (
        f"R2 CPU-bound pure-Python function (~{per_element * 1e6:.0f} us per element) on {workers} input workers, "
        f"{n:,} elements"
    )
    note = (
        f"The function: a Python loop of {SPIN} multiply-adds ({per_element * 1e6:.0f} us per call in this "
        f"process), called once per element by every library (Ray Data: in a loop over its batch of {batch}). "
        f"{workers} input workers each, on {os.cpu_count()} cores that the trainer, the workers and Ray's own "
        "processes share, so the ceiling is about 2x the no-offload rate. tf.data workers run it as "
        "`tf.py_function` (each under its own process's interpreter lock). "
        f"{TIMING_NOTE} {cluster_note(args)}"
    )
    report("ray-offload-cpu", rate_table(title, rates, dict.fromkeys(candidates, n), tf_name, local, note))


def calibrate(fn, calls: int = 2000) -> float:
    fn(0)
    start = time.perf_counter()
    for i in range(calls):
        fn(i)
    return (time.perf_counter() - start) / calls


# 3. scaling an I/O-like function ---------------------------------------------------------------------------------


def scaling(args, cluster: RayCluster) -> None:
    batch = 8
    counts = [k for k in (1, 2, 4, 8) if k <= args.max_workers]
    fns = tf_functions()
    rates: dict[tuple[str, int], list[float]] = {}
    sizes: dict[tuple[str, int], int] = {}
    service = TfService(0)
    _CLEANUP.append(service.stop)
    try:
        for k in counts:
            service.add(k - len(service.workers))
            n = int(args.seconds / SLEEP * k) // batch * batch
            pf_ds = pf.Dataset.range(n).map(nap).batch(batch).offload(workers=k)
            tf_ds = tf_pipeline(service.target, n, batch, fns["nap"], split=batch)
            sizes.update({(name, k): n for name in (PARAFEED, TF_SERVICE, RAY_DATA)})
            candidates = {
                (PARAFEED, k): parafeed_candidate(pf_ds, n, f"{PARAFEED}, {k}"),
                (TF_SERVICE, k): tf_candidate(tf_ds, n, f"{TF_SERVICE}, {k}", args.limit),
                (RAY_DATA, k): ray_data_candidate(n, batch, rows_nap, k, f"{RAY_DATA}, {k}", blocks=n // batch),
            }
            print(f"  {k} input workers, {n} elements", flush=True)
            rates.update(harness.run(present(candidates), runs=args.runs))  # type: ignore[arg-type]
            del pf_ds, candidates
            release()
    finally:
        service.stop()
        _CLEANUP.remove(service.stop)
    med = {key: statistics.median(v) for key, v in rates.items()}
    lines = [
        f"### R3 scaling an I/O-like function ({SLEEP * 1000:.0f} ms sleep per element) over input workers",
        "",
        "| library | input workers | median elements/s | min | max | speed-up vs 1 worker | of ideal "
        "| vs tf.data service | first batch | elements/s between | between, of ideal | end |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (name, k), values in rates.items():
        m, ideal = med[(name, k)], k / SLEEP
        first, between, tail = timing(f"{name}, {k}", sizes[(name, k)])
        lines.append(
            f"| {name} | {k} | {harness._fmt(m)} | {harness._fmt(min(values))} | {harness._fmt(max(values))} | "
            f"{m / med[(name, counts[0])]:.2f}x | {m / ideal:.0%} | {m / med[(TF_SERVICE, k)]:.2f}x | "
            f"{ms(first)} | {harness._fmt(between)} | {between / ideal:.0%} | {ms(tail)} |"
        )
    lines += [
        "",
        f"{args.runs} runs each, interleaved per worker count; {harness._machine()}.",
        "",
        f"`range(n).map(sleep {SLEEP * 1000:.0f} ms).batch({batch})`, n = {args.seconds:g} s of ideal work "
        f"({args.seconds / SLEEP:.0f} elements per worker), so every worker gets many blocks: parafeed a block of "
        f"one batch of {batch}, the tf.data service splits of {batch} ids (`py_function` on each worker, its workers "
        f"added one set at a time to one dispatcher), Ray Data `TaskPoolStrategy(size=K)` over blocks of "
        f"{batch} rows (the same unit of work everywhere). *Of ideal*: of K / {SLEEP * 1000:.0f} ms. {TIMING_NOTE} "
        "Sleeping workers need no cores, so the 2 "
        f"cores do not cap this one; they do run every process's bookkeeping. {cluster_note(args)}",
        "",
    ]
    report("ray-offload-scaling", "\n".join(lines))


# 4. trainer-side CPU per batch -----------------------------------------------------------------------------------


def trainer_cpu(args, service: TfService) -> None:
    import tensorflow as tf

    batch, batches, workers = 256, args.batches, 2
    n = batch * batches
    local = "parafeed, no offload (the pipeline in the trainer)"
    tf_auto = f"{TF_SERVICE} (compression AUTO, its default)"
    tf_none = f"{TF_SERVICE} (compression=None)"
    fill = lambda x: tf.fill(SHAPE, tf.cast(x, tf.float32))  # noqa: E731
    candidates = {
        local: parafeed_candidate(pf.Dataset.range(n).map(make_array).batch(batch), n, local),
        PARAFEED: parafeed_candidate(
            pf.Dataset.range(n).map(make_array).batch(batch).offload(workers=workers), n, PARAFEED
        ),
        tf_auto: tf_candidate(tf_pipeline(service.target, n, batch, fill, split=batch), n, tf_auto, args.limit),
        tf_none: tf_candidate(
            tf_pipeline(service.target, n, batch, fill, split=batch, compression=None), n, tf_none, args.limit
        ),
        RAY_DATA: ray_data_candidate(n, batch, rows_array, workers, RAY_DATA, key="x", batch_format="numpy"),
    }
    candidates = present(candidates)
    idle = idle_cpu()
    for fn in candidates.values():  # warm-up
        fn()
    cpu: dict[str, list[tuple[float, float, float]]] = {name: [] for name in candidates}
    for _ in range(args.runs):
        for name, fn in candidates.items():
            gc.collect()  # (a full collection costs ~200 ms here: whichever epoch it fell in would pay for it)
            wall, proc, thread = time.perf_counter(), time.process_time(), time.thread_time()
            fn()
            cpu[name].append(
                (
                    (time.process_time() - proc) / batches,
                    (time.thread_time() - thread) / batches,
                    batches / (time.perf_counter() - wall),
                )
            )
    mb = batch * np.prod(SHAPE) * 4 / 2**20
    lines = [
        f"### R4 trainer-side CPU per batch: {batches} batches of {batch} float32 arrays of {SHAPE[0]}x{SHAPE[1]} "
        f"({mb:.0f} MiB each), {workers} input workers",
        "",
        "| library | trainer process CPU ms/batch | min | max | consuming thread CPU ms/batch | batches/s | MB/s | "
        "process CPU vs tf.data service |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = statistics.median(v[0] for v in cpu[tf_auto])
    for name, values in cpu.items():
        proc = [v[0] * 1000 for v in values]
        thread = statistics.median(v[1] * 1000 for v in values)
        rate = statistics.median(v[2] for v in values)
        lines.append(
            f"| {name} | {statistics.median(proc):.2f} | {min(proc):.2f} | {max(proc):.2f} | {thread:.2f} | "
            f"{rate:.1f} | {rate * mb * 2**20 / 1e6:,.0f} | {statistics.median(proc) / 1000 / base:.2f}x |"
        )
    lines += [
        "",
        f"{args.runs} runs each, interleaved, after a warm-up run; {harness._machine()}.",
        "",
        "Trainer process CPU: `time.process_time()` of this process over the epoch / batches: every thread of it, so "
        "Ray's driver threads (parafeed, Ray Data) and TensorFlow's runtime and RPC threads (tf.data service) count. "
        f"This process, idle while connected to Ray and to the tf.data service, takes {idle * 1000:.1f} ms of CPU per "
        "second, counted too; garbage is collected before each epoch (a full collection of this process's objects "
        "takes ~200 ms of CPU and would fall in whichever epoch triggered it). Consuming thread: "
        "`time.thread_time()` of the loop that takes the batches (what the training step would wait on). The trainer "
        "reads each batch's size only. Elements: `np.full(shape, x)` (parafeed), `tf.fill` (tf.data, in-graph, splits "
        "of one batch), a broadcast per batch (Ray Data, read with `batch_format='numpy'`). The first row, for scale: "
        f"the whole pipeline run in the trainer, no input workers. {cluster_note(args)}",
        "",
    ]
    report("ray-offload-trainer-cpu", "\n".join(lines))


def idle_cpu(seconds: float = 1.0) -> float:
    """CPU seconds per second this process takes while idle (Ray's driver threads, TensorFlow's)."""
    start, wall = time.process_time(), time.perf_counter()
    time.sleep(seconds)
    return (time.process_time() - start) / (time.perf_counter() - wall)


# 5. exactly once under faults ------------------------------------------------------------------------------------


class Outcome:
    """One row of the faults table: ids delivered against the ids expected (``copies`` of each of ``range(ids)``)."""

    def __init__(self, system: str, mode: str, killed: str, got: list[int], ids: int, copies: int, ended: str,
                 seconds: float, replaced: str = ""):  # fmt: skip
        have, expected = collections.Counter(got), collections.Counter({i: copies for i in range(ids)})
        in_order = "yes" if got == list(range(ids)) else "no"
        if copies > 1:
            in_order = "n/a"
        lost, repeated = sum((expected - have).values()), sum((have - expected).values())
        self.row = (system, mode, killed, len(got), lost, repeated, in_order, ended, seconds, replaced)


def parafeed_faults(args, cluster: RayCluster) -> list[Outcome]:
    n, workers, batch = args.n_faults, 4, 32
    outcomes = []
    for scenario in ("none", "resize", "faults"):
        ds = pf.Dataset.range(n).map(short_nap).batch(batch).offload(workers=workers)
        start = time.perf_counter()
        it = iter(ds)
        ids = next(it).tolist()
        actors = it.actors
        events: list[str] = []
        plan = [0.25, 0.6] if scenario != "none" else []
        for b in it:
            ids.extend(b.tolist())
            if not plan or len(ids) < plan[0] * n:
                continue
            plan.pop(0)
            if scenario == "resize":
                size = it.resize(2 if not events else 6)
                events.append(f"resize({size}) at {len(ids):,}")
            elif not events:
                cluster.ray.kill(actors[0])
                events.append(f"actor killed at {len(ids):,}")
            else:
                victim = next((a for a in it.actors[1:] if cluster.node_of(a) is not None), None)
                node = cluster.node_of(victim) if victim is not None else None
                if node is None:
                    events.append("no node found to remove")
                else:
                    cluster.remove(node)
                    events.append(f"node removed at {len(ids):,}")
        seconds = time.perf_counter() - start
        mode = f"offload(workers={workers}), blocks of {batch}"
        killed = "0"
        if scenario == "resize":
            mode += f"; {', '.join(events)}"
        elif scenario == "faults":
            killed = f"{len(events)} ({'; '.join(events)})"
        outcomes.append(Outcome("parafeed", mode, killed, ids, n, 1, "yes", seconds, replaced=str(it.replaced)))
        del it, ds
        release()
    return outcomes


def _tf_client(target: str, conn) -> None:
    """In a child process: the trainer of the tf.data service's faults runs; streams each batch's ids back."""
    _quiet()
    import tensorflow as tf

    fns = tf_functions()
    while True:
        try:
            command = conn.recv()
        except EOFError:
            os._exit(0)
        if command is None:
            os._exit(0)
        mode, n, batch = command
        try:
            for b in tf_pipeline(target, n, batch, fns["short_nap"], mode=mode, split=batch):
                conn.send(("ids", b.numpy().astype(np.int64).tobytes()))
            conn.send(("end", None))
        except tf.errors.OpError as err:
            conn.send(("error", f"{type(err).__name__}: {err.message.splitlines()[0][:200]}"))


class TfFaults:
    """Epochs of ids on a tf.data service of 4 workers, read by a trainer process of their own (a client waiting for
    a dead worker cannot be interrupted: it is killed)."""

    def __init__(self, args):
        self.args = args
        self.service = TfService(4)
        _CLEANUP.append(self.service.stop)
        self.client: tuple | None = None

    def run(self, mode: str, copies: int, kills: list[float], restart: bool) -> Outcome:
        args, service, batch = self.args, self.service, 32
        if self.client is None:
            self.client = _spawn(_tf_client, service.target)
        process, conn = self.client
        ids_n = args.n_faults // copies
        conn.send((mode, ids_n, batch))
        got: list[int] = []
        start = last = time.perf_counter()
        plan, restarting, events = list(kills), [], []
        ended = "yes"
        while True:
            if conn.poll(0.05):
                kind, payload = conn.recv()
                if kind == "end":
                    break
                if kind == "error":
                    ended = f"no: {payload}"
                    break
                got.extend(np.frombuffer(payload, dtype=np.int64).tolist())
                last = time.perf_counter()
            elif time.perf_counter() - last > args.stall:
                ended = f"no: no element for {args.stall:.0f} s, cut off"
                process.kill()
                self.client = None
                break
            if plan and len(got) >= plan[0] * ids_n * copies:
                plan.pop(0)
                index = len(events)
                port = service.kill(index)
                events.append(f"at {len(got):,}")
                if restart:
                    restarting.append((index, service.add(1, ports=[port], wait=False)))
        seconds = (last if ended != "yes" else time.perf_counter()) - start
        for index, started in restarting:  # the restarted workers take the killed ones' places
            service.ready(started)
            service.workers[index] = service.workers.pop()
        killed = "0"
        if kills:
            killed = f"{len(kills)} ({', '.join(events)}){'; restarted at their ports' if restart else ''}"
        label = mode if copies == 1 else f"{mode} ({copies} workers x {ids_n:,} ids)"
        replaced = f"0 ({len(kills)} restarted by the script)" if restart else "0"
        return Outcome(TF_SERVICE, label, killed, got, ids_n, copies, ended, seconds, replaced)

    def close(self) -> None:
        if self.client is not None:
            self.client[0].kill()
        self.service.stop()
        _CLEANUP.remove(self.service.stop)


def tf_faults(args) -> list[Outcome]:
    outcomes: list[Outcome] = []
    runs = TfFaults(args)
    try:
        outcomes.append(runs.run("distributed_epoch", 1, [], False))
        outcomes.append(runs.run("distributed_epoch", 1, [0.25, 0.6], True))
        outcomes.append(runs.run("parallel_epochs", 4, [0.25, 0.6], True))
    finally:
        runs.close()
    runs = TfFaults(args)  # a fresh service: the next run leaves two of its workers dead
    try:
        outcomes.append(runs.run("distributed_epoch", 1, [0.25, 0.6], False))
    finally:
        runs.close()
    return outcomes


def faults(args, cluster: RayCluster) -> None:
    outcomes = parafeed_faults(args, cluster) + tf_faults(args)
    lines = [
        f"### R5 exactly once under faults: an epoch of {args.n_faults:,} ids ({FAULT_SLEEP * 1000:.0f} ms each) on 4 "
        "input workers, workers killed during it",
        "",
        "| system | mode | workers killed | delivered | lost | repeated | in order | epoch ended | seconds | "
        "workers replaced |",
        "|---|---|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for system, mode, killed, delivered, lost, repeated, in_order, ended, seconds, replaced in (
        o.row for o in outcomes
    ):
        lines.append(
            f"| {system} | {mode} | {killed} | {delivered:,} | {lost:,} | {repeated:,} | {in_order} | {ended} | "
            f"{seconds:.1f} | {replaced} |"
        )
    lines += [
        "",
        f"{harness._machine()}.",
        "",
        f"`range(n).map(sleep {FAULT_SLEEP * 1000:.0f} ms).batch(32)`, ids checked one by one: *lost*: ids expected "
        "and not delivered, *repeated*: deliveries beyond the expected count, *in order*: the sequence is `range(n)`, "
        "the order of the pipeline on one host. parafeed: `iterator.resize(n)` mid-epoch (no fault), and one "
        "input worker's actor "
        "killed with `ray.kill` at 25% of the epoch, then the Ray node of another removed with "
        "`Cluster.remove_node` at 60%. tf.data service: worker processes killed with SIGKILL at 25% and 60%, "
        "splits of 32 ids; *restarted*: a new worker process on the killed one's port right away, as a cluster "
        "manager would (its start, a TensorFlow import, takes some seconds); without a restart the epoch does not "
        f"end: the client waits for the dead workers' tasks (cut off after {args.stall:.0f} s without an element; "
        "its seconds run to the last element). `parallel_epochs`: every worker produces the whole dataset, so every "
        "id is expected once per worker (the dataset is a quarter of the ids, for the same work). "
        f"{cluster_note(args)}",
        "",
    ]
    report("ray-offload-faults", "\n".join(lines))


# main ------------------------------------------------------------------------------------------------------------


def cluster_note(args) -> str:
    return (
        f"Ray: a local `Cluster` (head without CPUs + {args.nodes} nodes x {args.node_cpus} logical CPUs, "
        f"{OBJECT_STORE >> 20} MB object store each) on this {os.cpu_count()}-core machine. Versions: {versions()}."
        + ray_data_note()
    )


def versions() -> str:
    found = []
    for name in ("parafeed", "ray", "tensorflow-cpu", "numpy", "pyarrow"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found.append(f"{name} {importlib.metadata.version(name)}")
    return ", ".join(found)


SECTIONS = ("overhead", "cpu", "scaling", "trainer", "faults")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: small sizes, 1 run each, tables not saved")
    parser.add_argument("--save", action="store_true", help="save a --quick run's tables in docs/benchmarks.md too")
    parser.add_argument("--runs", type=int, default=None, help="timed runs per candidate (default 3; --quick 1)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}")
    parser.add_argument("--n-overhead", type=int, default=None, help="elements of R1 (default 200,000)")
    parser.add_argument("--n-cpu", type=int, default=None, help="elements of R2 (default 40,000)")
    parser.add_argument("--seconds", type=float, default=None, help="R3: ideal seconds per run (default 1.5)")
    parser.add_argument("--max-workers", type=int, default=8, help="R3: the most input workers (1, 2, 4, 8)")
    parser.add_argument("--batches", type=int, default=None, help="R4: batches of 16 MiB (default 40)")
    parser.add_argument("--n-faults", type=int, default=None, help="R5: ids in the epoch (default 20,000)")
    parser.add_argument("--stall", type=float, default=None, help="R5: seconds without an element before giving up")
    parser.add_argument("--limit", type=float, default=300, help="seconds one tf.data run may take before giving up")
    parser.add_argument("--nodes", type=int, default=4, help="Ray nodes besides the head")
    parser.add_argument("--node-cpus", type=int, default=6, help="logical CPUs per Ray node")
    parser.add_argument("--verbose", action="store_true", help="keep the tf.data processes' logs")
    args = parser.parse_args()
    os.environ["PF_BENCH_VERBOSE"] = "1" if args.verbose else "0"
    global SAVE
    SAVE = not args.quick or args.save
    quick = args.quick
    defaults = {
        "runs": (3, 1),
        "n_overhead": (200_000, 20_000),
        "n_cpu": (40_000, 4_000),
        "seconds": (1.5, 0.5),
        "batches": (40, 6),
        "n_faults": (20_000, 4_000),
        "stall": (20.0, 8.0),
    }
    for key, (full, small) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, small if quick else full)
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    if sections - set(SECTIONS):
        parser.error(f"unknown sections {sorted(sections - set(SECTIONS))}; choose from {SECTIONS}")
    sections = [s for s in SECTIONS if s in sections]  # in this order: faults last (it removes a Ray node)

    began = time.perf_counter()
    print(f"{harness._machine()}; {versions()}", flush=True)
    _CLEANUP.append(kill_children)
    cluster = RayCluster(args.nodes, args.node_cpus)
    _CLEANUP.append(cluster.shutdown)
    service = None
    try:
        import tensorflow as tf

        tf.get_logger().setLevel("ERROR")
        tf_functions()  # first of all: the py_function tokens the workers expect
        if {"overhead", "cpu", "trainer"} & set(sections):
            service = TfService(2)
            _CLEANUP.append(service.stop)
        for section in sections:
            start = time.perf_counter()
            print(f"\n## {section}", flush=True)
            if section == "overhead":
                overhead(args, service)
            elif section == "cpu":
                cpu_bound(args, service)
            elif section == "trainer":
                trainer_cpu(args, service)
            elif section == "scaling":
                scaling(args, cluster)
            elif section == "faults":
                faults(args, cluster)  # last: it removes a Ray node
            release()
            print(f"({section}: {time.perf_counter() - start:.0f} s)", flush=True)
    finally:
        if service is not None:
            service.stop()
        cluster.shutdown()
        kill_children()
    print(f"\ntotal {time.perf_counter() - began:.0f} s", flush=True)


if __name__ == "__main__":
    main()

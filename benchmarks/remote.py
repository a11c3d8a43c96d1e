"""Remote reads: TFRecord shards in object storage, with 0 and 20 ms of latency added to every request.

The endpoint is moto's S3 server on 127.0.0.1 and the latency comes from the fault proxy of the storage tests
(``tests/storage/servers.py``: ``S3Server``, ``FaultProxy(delay=0.02)``), each run in a process of its own so that
their Python does not share the readers' interpreter lock. The same records (100 KiB of random bytes each, in 8
shards of ~13 MB by default: moto reads a whole object for every ranged GET, so its time per request grows with
the object, which S3's does not; smaller objects keep that cost small for every reader) are read by:

* parafeed: ``pf.TFRecordDataset(urls, num_parallel_reads=4, storage_options=...)``, and one file at a time;
  records CRC-checked as always;
* plain fsspec: for each shard ``fs.open(path, "rb")`` (s3fs's defaults) read in 1 MiB chunks, nothing framed:
  what a user writes by hand;
* MosaicML Streaming: the same records written with its ``MDSWriter`` to the same endpoint and read with
  ``StreamingDataset(remote=..., local=<a fresh dir>, shuffle=False)``, timed from its construction to the last
  sample (it downloads whole shards into its local cache: that is its design);
* tf.data, where it can reach the endpoint (TensorFlow reaches ``s3://`` only through tensorflow-io);
* parafeed on the same shards on local disk (the ceiling), and parafeed with its local remote cache
  (``options.remote.cache_dir``): epoch 1 fills it, epoch 2 reads from it.

Rates are MB/s of record payload (10^6 bytes; plain fsspec reads the framing too, but is given the same payload
for the same shards). Every reader's count of records and bytes is checked, so a reader that skips data cannot win.
Runs are interleaved: every reader once per run, so noise spreads evenly; there is no warm-up run. Prints a table of
medians and writes it into docs/benchmarks.md.

Usage: python benchmarks/remote.py [--mb 400] [--runs 3] [--shards 32]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import importlib.util
import multiprocessing
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness
import numpy as np

import parafeed as pf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests.storage.servers is imported from it
RECORD = 100 * 1024  # bytes per record
PARALLEL = 4  # num_parallel_reads a user would pick for a handful of shards
DELAY = 0.02  # seconds added to every request
BUCKET = "bench"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
LOCAL = "parafeed, local files"
PARAFEED = f"parafeed, {PARALLEL} files at once"
FSSPEC = "plain fsspec, 1 MiB reads"


# endpoints -------------------------------------------------------------------------------------------------------


def _serve(upstream: str | None, delay: float, conn) -> None:
    """In a child process: moto's S3 server (``upstream`` None) or the latency proxy in front of ``upstream``."""
    sys.path.insert(0, ROOT)
    from tests.storage.servers import FaultProxy, S3Server

    server = S3Server() if upstream is None else FaultProxy(upstream, delay=delay)
    conn.send(server.url)
    conn.recv()  # until told to stop
    server.stop()


class Endpoint:
    """A server of ``tests.storage.servers`` running in a child process; ``url`` reaches it."""

    def __init__(self, upstream: str | None = None, delay: float = 0.0):
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(upstream, delay, child), daemon=True)
        self._process.start()
        self.url = self._conn.recv()

    def stop(self) -> None:
        self._conn.send("stop")
        self._process.join(10)


def s3_options(endpoint: str) -> dict:
    """The storage tests' s3fs options for ``endpoint``, with fsspec's instance cache on, as users have it (the tests
    turn it off: then every file opened builds a new S3FileSystem, about 150 ms on this machine)."""
    sys.path.insert(0, ROOT)
    from tests.storage import servers

    return servers.s3_options(endpoint, skip_instance_cache=False)


# data ------------------------------------------------------------------------------------------------------------


def shard_records(count: int, shards: int) -> list[int]:
    return [count // shards + (i < count % shards) for i in range(shards)]


def records(shard: int, count: int) -> Iterator[bytes]:
    rng = np.random.default_rng(shard)
    for _ in range(count):
        yield rng.bytes(RECORD)


def write_shards(work: str, count: int, shards: int) -> list[str]:
    paths = []
    for i, n in enumerate(shard_records(count, shards)):
        path = os.path.join(work, f"shard-{i:02d}-of-{shards:02d}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for r in records(i, n):
                w.write(r)
        paths.append(path)
    return paths


def upload(endpoint: str, paths: list[str]) -> list[str]:
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options(endpoint))
    fs.call_s3("create_bucket", Bucket=BUCKET)
    keys = []
    for path in paths:
        keys.append(f"{BUCKET}/tfrecord/{os.path.basename(path)}")
        fs.put_file(path, keys[-1])
    return keys


# MosaicML Streaming ----------------------------------------------------------------------------------------------


def import_mosaic() -> tuple[type, type]:
    """MosaicML Streaming's ``StreamingDataset`` and ``MDSWriter``.

    ``import streaming`` runs its package ``__init__``, which imports its vision, text and dataloader modules and
    with them torchvision and transformers, neither used here; PyPI's torchvision does not load with the CPU build of
    torch that parafeed's extras pin. So the two packages ``streaming`` and ``streaming.base`` are entered without
    running their ``__init__`` (only their re-exports are skipped) and the classes are imported from their modules.
    """
    spec = importlib.util.find_spec("streaming")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("mosaicml-streaming is not installed (`make bench` installs it)")
    root = next(iter(spec.submodule_search_locations))
    for name, path in (("streaming", root), ("streaming.base", os.path.join(root, "base"))):
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [path]
            sys.modules[name] = package
    from streaming.base.dataset import StreamingDataset
    from streaming.base.format.mds.writer import MDSWriter

    return StreamingDataset, MDSWriter


def write_mds(mds_writer: type, endpoint: str, count: int, shards: int) -> str:
    """The records, in as many shards, as MDS in the bucket; the shards' URL prefix."""
    os.environ["S3_ENDPOINT_URL"] = endpoint
    remote = f"s3://{BUCKET}/mds"
    per_shard = max(shard_records(count, shards))
    limit = per_shard * (RECORD + 8) + 4 * (per_shard + 2)  # samples, their sizes and the offsets
    with mds_writer(out=remote, columns={"data": "bytes"}, size_limit=limit, progress_bar=False) as w:
        for i, n in enumerate(shard_records(count, shards)):
            for r in records(i, n):
                w.write({"data": r})
    return remote


# readers ---------------------------------------------------------------------------------------------------------


class Expect:
    def __init__(self, count: int, file_bytes: int):
        self.count, self.payload, self.file_bytes = count, count * RECORD, file_bytes

    def check(self, name: str, count: int, payload: int) -> int:
        got, want = f"{count} records, {payload} bytes", f"{self.count} records, {self.payload} bytes"
        assert (count, payload) == (self.count, self.payload), f"{name}: read {got}, expected {want}"
        return payload


def parafeed_reader(name: str, expect: Expect, files: list[str] | str, parallel: int | None,
                    storage_options: dict | None, options: Callable[[], pf.Options | None] = lambda: None
                    ) -> Callable[[], int]:  # fmt: skip
    """parafeed reading ``files``: a list, or a glob pattern listed as users do (``list_files``, timed too)."""

    def read() -> int:
        names = files
        if isinstance(files, str):
            names = pf.Dataset.list_files(files, shuffle=False, storage_options=storage_options)
        ds = pf.TFRecordDataset(names, num_parallel_reads=parallel, storage_options=storage_options)
        opts = options()
        if opts is not None:
            ds = ds.with_options(opts)
        n = size = 0
        for r in ds:
            n += 1
            size += len(r)
        return expect.check(name, n, size)

    return read


def fsspec_reader(expect: Expect, keys: list[str], endpoint: str) -> Callable[[], int]:
    def read() -> int:
        import s3fs

        fs = s3fs.S3FileSystem(**s3_options(endpoint))
        size = 0
        for key in keys:
            with fs.open(key, "rb") as f:
                while chunk := f.read(1 << 20):
                    size += len(chunk)
        assert size == expect.file_bytes, f"plain fsspec: read {size} bytes, expected {expect.file_bytes}"
        return expect.payload

    return read


def mosaic_reader(dataset: type, expect: Expect, remote: str, endpoint: str, work: str) -> Callable[[], int]:
    def read() -> int:
        os.environ["S3_ENDPOINT_URL"] = endpoint
        local = tempfile.mkdtemp(prefix="mds-", dir=work)
        try:
            ds = dataset(remote=remote, local=local, shuffle=False, batch_size=64)
            n = size = 0
            for sample in ds:
                n += 1
                size += len(sample["data"])
            del ds
            return expect.check("MosaicML Streaming", n, size)
        finally:
            shutil.rmtree(local, ignore_errors=True)

    return read


def tf_data(expect: Expect, urls: list[str], endpoint: str) -> tuple[Callable[[], int] | None, str]:
    """A tf.data reader of ``url`` if TensorFlow reaches it, else None; and why not."""
    try:
        import tensorflow as tf
    except ImportError:
        return None, "TensorFlow is not installed"
    try:
        import tensorflow_io  # noqa: F401  (registers s3:// with TensorFlow)

        tfio = ""
    except ImportError:
        tfio = (
            "tensorflow-io is not installed (its last release, 0.37.1, is built for TF 2.16 and does not load in "
            f"TF {tf.__version__}: undefined symbols); "
        )
    os.environ.update(S3_ENDPOINT=endpoint, S3_USE_HTTPS="0", S3_VERIFY_SSL="0", AWS_ENDPOINT_URL=endpoint)
    try:
        next(iter(tf.data.TFRecordDataset(urls[0])))
    except Exception as err:
        message = re.sub(r"\{\{.*?\}\}\s*", "", str(err)).split(" [Op:")[0].splitlines()[0]
        return None, f"{tfio}TF {tf.__version__} cannot read s3:// ({type(err).__name__}: {message})"

    @tf.function
    def count(ds):
        return ds.reduce(tf.constant(0, tf.int64), lambda c, b: c + tf.cast(tf.shape(b)[0], tf.int64))

    def read() -> int:  # records batched and counted in-graph, as in benchmarks/formats.py
        n = int(count(tf.data.TFRecordDataset(urls, num_parallel_reads=PARALLEL).batch(64)))
        return expect.check("tf.data", n, n * RECORD)

    return read, ""


class RemoteCache:
    """parafeed with ``options.remote.cache_dir``: ``epoch(1)`` reads into a new cache, ``epoch(2)`` reads it again."""

    def __init__(self, work: str):
        self.work = work
        self.dir: str | None = None

    def options(self, epoch: int) -> pf.Options:
        if epoch == 1:
            self.close()
            self.dir = tempfile.mkdtemp(prefix="shard-cache-", dir=self.work)
        opts = pf.Options()
        opts.remote.cache_dir = self.dir
        opts.remote.cache_bytes = 2 << 30
        return opts

    def close(self) -> None:
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None


def server_cost(endpoint: str, key: str) -> str:
    """What moto takes to answer a 4 MiB range of ``key`` and the whole of it (it reads the whole object for every
    ranged GET, so its time per request grows with the object, as S3's does not)."""
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options(endpoint))
    size = fs.info(key)["size"]
    fs.cat_file(key, start=0, end=4 << 20)
    start = time.perf_counter()
    for _ in range(5):
        fs.cat_file(key, start=0, end=4 << 20)
    ranged = (time.perf_counter() - start) / 5
    start = time.perf_counter()
    fs.cat_file(key)
    whole = time.perf_counter() - start
    return (
        f"moto reads the whole object for every ranged GET: a 4 MiB range of one {size / 2**20:.0f} MiB shard took "
        f"{ranged * 1000:.0f} ms, the whole shard {whole * 1000:.0f} ms: readers that make many ranged requests "
        "(parafeed's 4 MiB blocks, MosaicML's 8 MiB parts) pay that per request, which S3 does not, and s3fs's 50 MiB "
        "read-ahead (one request per shard) does not (hence many small shards: `--shards`)."
    )


# measuring and reporting -----------------------------------------------------------------------------------------


def run(candidates: dict[tuple[str, str], Callable[[], int]], runs: int) -> dict[tuple[str, str], list[float]]:
    """MB/s of each candidate over ``runs`` interleaved runs (as ``harness.run``, with progress, no warm-up)."""
    rates: dict[tuple[str, str], list[float]] = {key: [] for key in candidates}
    for k in range(runs):
        for key, fn in candidates.items():
            start = time.perf_counter()
            n = fn()
            seconds = time.perf_counter() - start
            rates[key].append(n / seconds / 1e6)
            print(f"  run {k + 1}/{runs}: {key[0]} ({key[1]}): {seconds:.2f} s, {rates[key][-1]:.0f} MB/s", flush=True)
    return rates


def table(title: str, rates: dict[tuple[str, str], list[float]], skipped: dict[str, str], note: str) -> str:
    med = {key: statistics.median(v) for key, v in rates.items()}
    local = med.get((LOCAL, "local disk"))
    lines = [
        f"### {title}",
        "",
        "| reader | latency | median MB/s | min | max | of no-latency | vs plain fsspec | of local files |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (name, latency), values in rates.items():
        m = med[(name, latency)]
        base = med.get((name, "0 ms")) or (med.get((PARAFEED, "0 ms")) if "cache" in name else None)
        fsspec = med.get((FSSPEC, latency))
        cells = [
            name,
            latency,
            harness._fmt(m),
            harness._fmt(min(values)),
            harness._fmt(max(values)),
            f"{m / base:.0%}" if base and latency != "0 ms" else "",
            f"{m / fsspec:.2f}x" if fsspec else "",
            f"{m / local:.0%}" if local else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    for name, why in skipped.items():
        lines.append(f"| {name} | | not measured: {why} | | | | | |")
    runs = len(next(iter(rates.values())))
    lines += ["", f"{runs} runs each, interleaved; {harness._machine()}.", "", note, ""]
    return "\n".join(lines)


def versions() -> str:
    names = ["parafeed", "numpy", "fsspec", "s3fs", "moto", "mosaicml-streaming", "tensorflow"]
    found = []
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found.append(f"{name} {importlib.metadata.version(name)}")
    return ", ".join(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=400, help="MB of records (100 KiB each)")
    parser.add_argument("--shards", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    count = args.mb * 10
    os.environ.update(CREDENTIALS)  # moto takes any credentials; nothing leaves 127.0.0.1
    print(f"{harness._machine()}; {versions()}")

    work = tempfile.mkdtemp(prefix="parafeed-remote-")
    s3 = Endpoint()
    direct = Endpoint(upstream=s3.url)  # the same proxy with no delay: the no-latency figure
    proxy = Endpoint(upstream=s3.url, delay=DELAY)
    cache = RemoteCache(work)
    try:
        paths = write_shards(work, count, args.shards)
        keys = upload(s3.url, paths)
        expect = Expect(count, sum(os.path.getsize(p) for p in paths))
        server = server_cost(s3.url, keys[0])
        print(server)
        urls = [f"s3://{k}" for k in keys]
        pattern = f"s3://{BUCKET}/tfrecord/*.tfrecord"  # what parafeed's readers list, as users do
        skipped: dict[str, str] = {}
        try:
            dataset, writer = import_mosaic()
            mds = write_mds(writer, s3.url, count, args.shards)
        except Exception as err:
            dataset = mds = None
            skipped["MosaicML Streaming"] = f"{type(err).__name__}: {err}"
        tf_read, why = tf_data(expect, urls, s3.url)
        if tf_read is None:
            skipped["tf.data"] = why
        try:
            cache.options(1)
        except Exception as err:
            cache = None
            skipped["parafeed + remote cache"] = f"options.remote.cache_dir: {type(err).__name__}: {err}"

        candidates: dict[tuple[str, str], Callable[[], int]] = {
            (LOCAL, "local disk"): parafeed_reader(LOCAL, expect, paths, PARALLEL, None)
        }
        for latency, endpoint in (("0 ms", direct.url), (f"{DELAY * 1000:.0f} ms", proxy.url)):
            opts = s3_options(endpoint)
            candidates[(PARAFEED, latency)] = parafeed_reader(PARAFEED, expect, pattern, PARALLEL, opts)
            one = "parafeed, 1 file at a time"
            candidates[(one, latency)] = parafeed_reader(one, expect, pattern, None, opts)
            candidates[(FSSPEC, latency)] = fsspec_reader(expect, keys, endpoint)
            if dataset is not None:
                candidates[("MosaicML Streaming", latency)] = mosaic_reader(dataset, expect, mds, endpoint, work)
            if tf_read is not None and latency == "0 ms":  # TensorFlow's S3 client keeps its first endpoint
                candidates[("tf.data", latency)] = tf_read
        if cache is not None:
            latency, opts = f"{DELAY * 1000:.0f} ms", s3_options(proxy.url)
            for epoch, what in ((1, "filling it"), (2, "reading it")):
                name = f"parafeed + remote cache, epoch {epoch} ({what})"
                candidates[(name, latency)] = parafeed_reader(
                    name, expect, urls, PARALLEL, opts, lambda epoch=epoch: cache.options(epoch)
                )

        rates = run(candidates, args.runs)
        payload = expect.payload / 1e6
        title = (
            f"Reading from object storage: {count:,} TFRecords of 100 KiB ({payload:.0f} MB) in {args.shards} shards, "
            f"S3 on 127.0.0.1 (moto), 0 and {DELAY * 1000:.0f} ms per request"
        )
        note = (
            f"MB/s of record payload. Every request passes through a proxy (tests/storage/servers.py's FaultProxy, "
            f"in a process of its own) that adds 0 or {DELAY * 1000:.0f} ms to it. *Of no-latency*: the same "
            "reader's 0 ms median (for the shard "
            f"cache, that of {PARAFEED!r}). *Vs plain fsspec*: at the same latency. MosaicML Streaming: MDS shards "
            "of the same records, timed from `StreamingDataset(...)` to its last sample, a fresh local cache each "
            f"run. The remote cache: a new `options.remote.cache_dir` each run, epoch 2 right after epoch 1. {server} "
            f"Versions: {versions()}."
        )
        text = table(title, rates, skipped, note)
        print(text)
        harness._save("remote", text)
    finally:
        if cache is not None:
            cache.close()
        proxy.stop()
        direct.stop()
        s3.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

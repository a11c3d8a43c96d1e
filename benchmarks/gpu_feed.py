"""Feeding an accelerator: P5 photos into a training loop, every feeder in the same run, and what each costs the
training process.

The pipeline, written as a user would (issue 41): TFRecord shards of JPEG photos (500x375, quality 90, tf.Example
``image``/``label``) -> ``TFRecordDataset(files, num_parallel_reads=4)`` -> ``map(parse, decode_jpeg, resize 224,
/ 255, num_parallel_calls=AUTOTUNE)`` -> ``batch(B, drop_remainder=True)`` -> ``prefetch(AUTOTUNE)``, fed by
``to_torch(device=...)``. Rows (each a feeder; each runs alone in a child process so that its CPU is its own):

* ``N bare threads``: decode + resize + /255 of parsed JPEG bytes on the host's cores, results dropped (the ceiling);
* parafeed's default (AUTOTUNE, no executor: on a device, processes; else threads, or processes where threads do not
  speed the map up), and the same with threads first on a device too (``Options.autotune.executor = "thread"``: each
  window's verdict on them is printed); each default row says where its map ran (threads, or moved to processes);
  ``map(executor="process")`` (its workers read its input); the same with ``map_input_in_workers = False`` (the input
  read here and sent to the workers); ``.batch().offload(executor="process")``;
* parafeed's default fed by ``to_jax(device)`` (``jax.Array``s on the device; feed only: there is no JAX model here);
* PyTorch's DataLoader over the records in memory, ``cores - 1`` workers, ``pin_memory`` on a GPU;
* tf.data with TensorFlow's own ops (AUTOTUNE), and Grain over the same records in ArrayRecord files (``mp_prefetch``,
  ``cores - 1`` workers), their NumPy batches made tensors on the device (where TensorFlow or Grain is installed);
* ``free input``: one batch already on the device, fed again and again (the model's own speed), with a model only.

Two parts:

1. **CPU per image** (``--model none``, what ``make bench`` runs, on any machine): each feeder iterated for
   ``--seconds`` after ``--warmup`` seconds, its batches taken as tensors on ``--device`` (``cpu`` by default);
   images/s, and the training process's CPU per image (``getrusage(RUSAGE_SELF)``: all its threads, not the worker
   processes): what the feed costs the process that launches the model's kernels.
2. **Training** (``--model resnet50``, ``resnet18``, or ``tiny`` to try the script on a CPU): torchvision's model,
   channels_last, bf16 autocast on CUDA, SGD with momentum, cross-entropy; images/s of training for each feeder, as
   a share of free input. ``--model gil`` (on any machine): a loop whose step holds the GIL ``--gil-us`` per image
   in a C call, as a CUDA loop's Python does while it launches kernels (ResNet-50's launches took 211 µs of the
   loop's CPU per image on the H200 host), so the feeders' threads in the training process get the GIL late.

``--check`` (any device; the device script runs it first): ``map(executor="process")`` and
``offload(executor="process")`` batches through ``to_torch(device)`` with a slow loop (the workers run ahead while
copies run) are compared with the values the pipeline made, and the share of bytes sent to the device straight from
the workers' shared memory is printed (``FeedStats.direct_bytes``: on a GPU, all but the first batches'; on the CPU,
none, since no copy is made).

Each row also says how fast it gets going (worker processes starting, AUTOTUNE finding the cores): seconds from the
first ``next()`` to the first batch, and to the end of the first second (after that batch) in which batches came at
90 % of the row's speed (its images/s after the warm-up).
``--runs`` rounds, rows interleaved, medians (min-max). The table goes into docs/benchmarks.md (section
``gpu-feed-<device>-<model>``) unless ``--no-save``.
Usage: python benchmarks/gpu_feed.py [--device cuda] [--model resnet50] [--batch 256] [--photos 4000] [--shards 16]
[--runs 3] [--warmup 5] [--seconds 15] [--rows ...] [--data bench-data] [--no-save]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RESULT = "GPU-FEED-RESULT "
BARE, FREE, DATALOADER = "bare threads", "free input", "PyTorch DataLoader"
TFDATA, GRAIN = "tf.data (AUTOTUNE)", "Grain (mp_prefetch)"
JAX = "parafeed default, to_jax()"
DEFAULT = "parafeed default (AUTOTUNE, no executor)"
THREADS_FIRST = 'parafeed default, threads first (autotune.executor="thread")'
ROWS = [
    BARE,
    FREE,
    DEFAULT,
    THREADS_FIRST,
    'parafeed map(executor="process")',
    'parafeed map(executor="process"), input fed from here',
    'parafeed offload(executor="process")',
    JAX,
    DATALOADER,
    TFDATA,
    GRAIN,
]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _feeder(row: str, paths: list[str], records: list[bytes], args: argparse.Namespace) -> tuple[Any, Any]:
    """An iterator of (images, labels) tensors on ``args.device`` for ``row``, and its map step (None: no parafeed);
    ``records``: the files' records in memory, for the DataLoader (it reads no TFRecord)."""
    import numpy as np
    import workloads

    import parafeed as pf

    workers = max(1, pf.core.options.input_cores())  # (the anchors' worker processes: as many as parafeed's)
    if row in (TFDATA, GRAIN):
        import torch

        def on_device(batches: Any) -> Any:
            for x, y in batches:
                yield torch.from_numpy(x).to(args.device, non_blocking=True), torch.from_numpy(y).to(args.device)

        return on_device(_tfdata(paths, args.batch) if row == TFDATA else _grain(paths, args.batch, workers)), None
    if row == DATALOADER:
        import torch.utils.data as tud

        class Photos(tud.Dataset):
            def __len__(self) -> int:
                return len(records)

            def __getitem__(self, i: int) -> Any:
                image, label = workloads._preprocess_numpy(records[i])
                return np.asarray(image), np.int64(label)

        cuda = args.device.startswith("cuda")
        loader = tud.DataLoader(Photos(), batch_size=args.batch, shuffle=False, drop_last=True, pin_memory=cuda,
                                num_workers=workers, persistent_workers=True)  # fmt: skip

        def forever() -> Any:
            while True:
                for x, y in loader:
                    yield x.to(args.device, non_blocking=True), y.to(args.device, non_blocking=True)

        return forever(), None
    spec = {"image": pf.io.FixedLenFeature([], "string"), "label": pf.io.FixedLenFeature([], "int64")}

    def preprocess(record: Any) -> Any:
        example = pf.io.parse_single_example(record, spec)
        image = pf.image.resize(pf.image.decode_jpeg(example["image"], channels=3), workloads.IMAGE_SIZE)
        return image / 255.0, example["label"]

    process = "process" in row
    ds = pf.TFRecordDataset(paths, num_parallel_reads=4).repeat()
    ds = mapped = ds.map(preprocess, num_parallel_calls=pf.AUTOTUNE,
                         executor="process" if process and "map(" in row else None)  # fmt: skip
    ds = ds.batch(args.batch, drop_remainder=True)
    if "offload" in row:
        ds = ds.offload(executor="process")
    if "input fed from here" in row:  # (the map's input read in this process and sent to its workers)
        options = pf.Options()
        options.experimental_optimization.map_input_in_workers = False
        ds = ds.with_options(options)
    if row == THREADS_FIRST:  # (what a device feed's default was: threads, moved if they do not speed the map up)
        import logging

        options = pf.Options()
        options.autotune.executor = "thread"
        ds = ds.with_options(options)
        logging.basicConfig(format="%(message)s")  # (each window's verdict, to the parent)
        logging.getLogger("parafeed.parallel.thread_speedup").setLevel(logging.DEBUG)
    if row == JAX:
        import jax

        device = jax.devices("gpu" if args.device.startswith("cuda") else "cpu")[0]
        return iter(ds.prefetch(pf.AUTOTUNE).to_jax(device)), mapped
    return iter(ds.prefetch(pf.AUTOTUNE).to_torch(device=args.device, stats=args.stats)), mapped


def _tfdata(paths: list[str], batch: int) -> Any:
    """The pipeline in tf.data, TensorFlow's own ops, its batches as NumPy (a PyTorch loop's tensors are made from
    those; ``prefetch_to_device`` needs TensorFlow's GPU build, which the lent device host does not have)."""
    import tensorflow as tf
    import workloads

    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

    def preprocess(record: Any) -> Any:
        example = tf.io.parse_single_example(record, spec)
        image = tf.image.resize(tf.io.decode_jpeg(example["image"], channels=3), workloads.IMAGE_SIZE)
        return image / 255.0, example["label"]

    ds = tf.data.TFRecordDataset(paths, num_parallel_reads=4).repeat()
    ds = ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE).batch(batch, drop_remainder=True)
    return ds.prefetch(tf.data.AUTOTUNE).as_numpy_iterator()


def _array_records(paths: list[str]) -> list[str]:
    """The TFRecord shards' records in ArrayRecord files beside them (written once), Grain's own format."""
    from array_record.python.array_record_module import ArrayRecordWriter

    import parafeed as pf

    out = []
    for path in paths:
        out.append(path + ".arrayrecord")
        if not os.path.exists(out[-1]):
            writer = ArrayRecordWriter(out[-1] + ".tmp", "group_size:1")  # (one record a chunk: read by position)
            for record in pf.TFRecordDataset(path):
                writer.write(record)
            writer.close()
            os.replace(out[-1] + ".tmp", out[-1])
    return out


def _grain(paths: list[str], batch: int, workers: int) -> Any:
    """Grain as its docs show: ``ArrayRecordDataSource`` over the same records (it reads no TFRecord; written by
    :func:`_array_records`), the same decoding as the DataLoader's, batches made in ``workers`` worker processes
    (``mp_prefetch``)."""
    import workloads

    grain = workloads.import_grain()
    ds = grain.MapDataset.source(grain.sources.ArrayRecordDataSource(paths)).repeat().map(workloads._preprocess_numpy)
    ds = ds.to_iter_dataset().batch(batch, drop_remainder=True)  # (elements read ahead on its threads, then batched)
    return iter(ds.mp_prefetch(grain.multiprocessing.MultiprocessingOptions(num_workers=workers)))


def check(args: argparse.Namespace) -> None:
    """Batches through the device feed equal the pipeline's, with the share sent from the workers' memory."""
    import numpy as np
    import torch

    import parafeed as pf

    def image(i: Any) -> Any:
        return {"image": (np.arange(224 * 224 * 3) + i).astype(np.uint8).reshape(224, 224, 3), "label": np.int64(i)}

    for mode in ("map", "offload"):
        ds = pf.Dataset.range(64 * 24).map(image, num_parallel_calls=2, executor="process" if mode == "map" else None)
        ds = ds.batch(64)
        if mode == "offload":
            ds = ds.offload(executor="process", workers=2)
        stats = pf.feed.FeedStats()
        base = torch.arange(224 * 224 * 3, device=args.device).reshape(1, 224, 224, 3)
        for k, batch in enumerate(ds.prefetch(2).to_torch(device=args.device, stats=stats)):
            labels = torch.arange(64 * k, 64 * (k + 1), device=args.device)
            expected = ((base + labels.reshape(64, 1, 1, 1)) % 256).to(torch.uint8)
            if not (torch.equal(batch["label"], labels) and torch.equal(batch["image"], expected)):
                raise SystemExit(f"check: {mode}: batch {k} differs from what the pipeline made")
            time.sleep(0.02)  # (a slow step: the workers write the next batches while this one's copy runs)
        moved = stats.direct_bytes + stats.staged_bytes
        share = f"{stats.direct_bytes / moved:.0%}" if moved else "no copy (CPU tensors share the memory)"
        print(f"check {mode}(executor='process') on {args.device}: {k + 1} batches equal; from the workers' shared "
              f"memory: {share}")  # fmt: skip


def _model(args: argparse.Namespace) -> Any:
    """step(images, labels) for ``args.model``."""
    if args.model == "gil":  # the loop's Python holding the GIL, as CUDA's kernel launches do (no model)
        start = time.perf_counter()
        sum(range(1_000_000))  # (a C loop that never lets the GIL go)
        count = int(args.gil_us * 1e-6 * args.batch / ((time.perf_counter() - start) / 1_000_000))
        return lambda images, labels: sum(range(count))
    import torch

    if args.model == "tiny":  # (a CPU trial of the script)
        model: Any = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=4), torch.nn.AdaptiveAvgPool2d(1),
                                         torch.nn.Flatten(), torch.nn.Linear(8, 1000))  # fmt: skip
    else:
        import torchvision

        model = getattr(torchvision.models, args.model)()
    model = model.to(args.device).to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    cuda = args.device.startswith("cuda")

    def step(images: Any, labels: Any) -> None:
        x = images.permute(0, 3, 1, 2) if images.shape[-1] == 3 else images  # NHWC -> NCHW, channels_last in memory
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            loss = loss_fn(model(x.float()), labels.long() % 1000)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def _sync(args: argparse.Namespace, labels: Any) -> None:
    if hasattr(labels, "block_until_ready"):
        labels.block_until_ready()  # (JAX: the batch's copies are done)
    elif args.device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def child(row: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one row: images/s and the training process's CPU per image over ``args.seconds`` after warm-up."""
    import workloads

    paths = workloads.make_photo_shards(os.path.join(args.data, "photos"), args.photos, args.shards)
    if row == BARE:
        from concurrent.futures import ThreadPoolExecutor

        import parafeed as pf

        threads = os.cpu_count() or 1
        spec = {"image": pf.io.FixedLenFeature([], "string")}
        jpegs = [pf.io.parse_single_example(r, spec)["image"] for r in pf.TFRecordDataset(paths)]
        pool = ThreadPoolExecutor(threads)

        def work(part: list) -> int:
            for jpeg in part:
                pf.image.resize(pf.image.decode_jpeg(jpeg, channels=3), workloads.IMAGE_SIZE) / 255.0
            return len(part)

        def one_pass() -> int:
            return sum(pool.map(work, [jpegs[i::threads] for i in range(threads)]))

        one_pass()
        start, cpu, n = time.perf_counter(), _cpu(), 0
        while time.perf_counter() - start < args.seconds:
            n += one_pass()
        return {"rate": n / (time.perf_counter() - start), "cpu_us": 0.0}
    step = _model(args) if args.model != "none" else None
    import parafeed as pf

    args.stats = pf.feed.FeedStats()  # (what the device feed sent from the workers' memory)
    records = list(pf.TFRecordDataset(paths)) if row == DATALOADER else []
    import torch  # (the imports before the clock: seconds each, not the feed's)

    if row == TFDATA:
        import tensorflow  # noqa: F401
    if row == GRAIN:
        workloads.import_grain()
        paths = _array_records(paths)
    began = time.perf_counter()  # (parafeed's pools may start as its pipeline is built; the others' at next())
    if row == FREE:
        images = torch.rand(args.batch, 224, 224, 3, device=args.device)
        labels = torch.zeros(args.batch, dtype=torch.int64, device=args.device)
        feed: Any = iter(lambda: (images, labels), None)
        mapped = None
    else:
        feed, mapped = _feeder(row, paths, records, args)
    arrived: list[float] = []  # when each batch came (how fast the feed gets going)
    while not arrived or time.perf_counter() - began < args.warmup:  # pools started, AUTOTUNE settled, kernels built
        images, labels = next(feed)
        arrived.append(time.perf_counter())
        if step is not None:
            step(images, labels)
    _sync(args, labels)
    start, cpu, n = time.perf_counter(), _cpu(), 0
    while time.perf_counter() - start < args.seconds:
        images, labels = next(feed)
        arrived.append(time.perf_counter())
        if step is not None:
            step(images, labels)
        n += len(labels)
    _sync(args, labels)
    seconds = time.perf_counter() - start
    result: dict[str, Any] = {"rate": n / seconds, "cpu_us": (_cpu() - cpu) / n * 1e6,
                              "arrived": [t - began for t in arrived]}  # fmt: skip
    moved = args.stats.direct_bytes + args.stats.staged_bytes
    if moved:
        result["direct"] = args.stats.direct_bytes / moved
    if row in (DEFAULT, THREADS_FIRST, JAX):  # (AUTOTUNE's choice: threads, inline, or moved to processes)
        result["map on"] = "processes" if mapped.learned.executor == "process" else "threads"
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", default="none", choices=["none", "tiny", "gil", "resnet18", "resnet50"])
    parser.add_argument("--gil-us", type=float, default=211.0, help="--model gil: the GIL held per image, in µs")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--photos", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rows", default=";".join(ROWS), help="rows to run, separated by semicolons")
    parser.add_argument("--data", default="bench-data")
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--check", action="store_true", help="check the device feed's batches, then end")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.check:
        check(args)
        return
    if args.child:
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # (JAX takes what it uses, not 75 % of the GPU)
        print(RESULT + json.dumps(child(args.child, args)), flush=True)
        os._exit(0)  # (no waiting for the feeders' pools at exit: the row is measured)
    # (free input is a model's speed; bare threads are the CPU-only ceiling; there is no JAX model here)
    skip = {FREE} if args.model == "none" else {BARE, JAX}
    rows = [r for r in args.rows.split(";") if r and r not in skip]
    if set(rows) - set(ROWS):
        parser.error(f"unknown rows {sorted(set(rows) - set(ROWS))}; the rows are {ROWS}")
    results: dict[str, list[dict[str, Any]]] = {r: [] for r in rows}
    for _ in range(args.runs):
        for row in rows:
            command = [sys.executable, os.path.abspath(__file__), "--child", row]
            for flag in ("device", "model", "gil_us", "batch", "photos", "shards", "warmup", "seconds", "data"):
                command += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
            out = subprocess.run(command, capture_output=True, text=True, timeout=600)
            line = [x for x in out.stdout.splitlines() if x.startswith(RESULT)]
            if not line:
                print(f"{row}: failed\n{out.stderr[-3000:]}", file=sys.stderr)
                continue
            results[row].append(json.loads(line[0][len(RESULT) :]))
            said = {k: v for k, v in results[row][-1].items() if k != "arrived"}
            print(f"{row}: {said}", file=sys.stderr, flush=True)  # (a cut-short run still says something)
            for verdict in [x for x in out.stderr.splitlines() if x.startswith("thread speedup:")]:
                print(f"  {verdict}", file=sys.stderr)
    print(table(results, args))


def reached(arrived: list[float], batch: int, rate: float, window: float = 1.0) -> float:
    """When the batches of the last ``window`` seconds first came at ``rate`` images/s or faster, a whole window after
    the first batch at the soonest (the batches read ahead before it would count; inf: never)."""
    j = 0
    for i, t in enumerate(arrived):
        while arrived[j] <= t - window:
            j += 1
        if t - arrived[0] >= window and (i - j + 1) * batch >= rate * window:
            return t
    return float("inf")


def table(results: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    def cell(values: list[float], fmt: str) -> str:
        if not values:
            return "-"
        return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"

    ceiling = FREE if args.model != "none" else BARE
    top = statistics.median([r["rate"] for r in results.get(ceiling, [])] or [0.0])
    loader = statistics.median([r["rate"] for r in results.get(DATALOADER, [])] or [0.0])
    what = {"none": "taking batches", "gil": f"a loop that holds the GIL {args.gil_us:g} µs per image"}.get(
        args.model, f"training {args.model}"
    )
    lines = [
        f"### Feeding {args.device}: {what}, batch {args.batch}",
        "",
        f"| feeder | images/s | of {ceiling} | first batch (s) | at 90 % (s) | vs DataLoader | training process CPU "
        "per image (µs) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row, runs in results.items():
        rates = [r["rate"] for r in runs]
        med = statistics.median(rates) if rates else 0.0
        share = f"{med / top:.0%}" if top and rates else "-"
        ratio = f"{med / loader:.2f}x" if loader and rates else "-"
        cpu = cell([r["cpu_us"] for r in runs], ".1f") if row not in (BARE, FREE) else "-"
        first = ramp = "-"  # (seconds after the first next(): its first batch; its first second at 90 % of its speed)
        if runs and row not in (BARE, FREE):
            first = f"{statistics.median(r['arrived'][0] for r in runs):.1f}"
            after = statistics.median(reached(r["arrived"], args.batch, 0.9 * r["rate"]) for r in runs)
            ramp = f"{after:.1f}" if after < float("inf") else "never"
        ran = sorted({r["map on"] for r in runs if "map on" in r})  # (the map's executor, where AUTOTUNE chose it)
        name = f"{row}: map on {' and '.join(ran)}" if ran else row
        direct = [r["direct"] for r in runs if "direct" in r]  # (bytes sent from the workers' shared memory)
        name += f" ({statistics.median(direct):.0%} from workers' memory)" if direct else ""
        lines.append(f"| {name} | {cell(rates, ',.0f')} | {share} | {first} | {ramp} | {ratio} | {cpu} |")
    setup = f"{args.photos} photos in {args.shards} shards, {args.seconds:g} s per row after {args.warmup:g} s"
    lines += ["", f"{args.runs} runs each, interleaved, medians (min-max); {os.cpu_count()} CPUs, {setup}.", ""]
    text = "\n".join(lines)
    if not args.no_save:
        import harness

        harness._save(f"gpu-feed-{args.device.split(':')[0]}-{args.model}", text)
    return text


if __name__ == "__main__":
    main()

"""D1: feeding MirroredStrategy (two replicas), D2: how evenly replicas share classes under each split, and D3: what
``equal_steps()``'s run-time agreement costs a DDP step.

D1 trains the demo's CNN on the demo's data (scikit-learn digits as PNG/JPEG in TFRecord shards, decoded, randomly
rotated and shifted, normalised, 32 images per replica per step) with a custom loop in which the step function takes
its batch from the distributed iterator, fed three ways in the same process, runs interleaved:

* parafeed: one pipeline per replica (``pf.adapters.tf.distribute``), batch-level decoding with OpenCV on threads;
* tf.data: one pipeline per worker as ``distribute_datasets_from_function`` expects, the same work with TensorFlow
  ops (``parse_example``, ``decode_image``, Keras' RandomRotation and RandomTranslation), AUTOTUNE;
* free input: one batch per replica kept in memory by TensorFlow, the step time with an input that costs nothing.

The input-wait share is ``1 - free step / step``: the part of a step that the input costs, whether by making the
step wait or by taking CPU from it (on this CPU-only machine the model and the pipeline share two cores).

D2 writes the digits into 10 files, sorted by class or shuffled, and splits them between 2, 4 and 8 replicas with
tf.data's FILE and DATA auto-shard policies and parafeed's AUTO and ``balance="labels"``.

D3 runs a 2-rank PyTorch DDP job (gloo on 127.0.0.1, CPU, one torch thread per rank; benchmarks/jobs/ddp_agree.py)
training a small CNN (32x32x3, 32 images per replica per step) on a pipeline with a filter after ``distribute()``, so
the replicas' batch counts are unknown, two ways with the same data and steps, runs interleaved:
``equal_steps(steps=K)`` (K counted beforehand: no agreement) and ``equal_steps()`` (the replicas vote every step: one
gloo all-reduce, cast a step ahead so it overlaps the training step). It reports the median step of each, the
difference per step (µs and % of the step), and the raw cost of one agreement: the same two pipelines iterated without
a model, per step (µs), beside a bare gloo all-reduce of one int64.

Usage: python benchmarks/distribution.py [--only balance,feeding,agree] [--runs 3] [--epochs 3] [--data bench-data]
       [--agree-runs 6] [--agree-steps 150] [--no-save]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness
import numpy as np

import parafeed as pf
from parafeed.io.manifest import manifest_files, read_manifest
from parafeed.tools import demo
from parafeed.tools.convert import convert

GLOBAL_BATCH = 64
SECTIONS = ("balance", "feeding", "agree")
AGREE_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs", "ddp_agree.py")


def digit_shards(folder: str) -> list[str]:
    manifest = os.path.join(folder, "shards", "digits-train.manifest.json")
    if not os.path.exists(manifest):
        train, _ = demo.write_digit_images(os.path.join(folder, "images"))
        convert(train, os.path.join(folder, "shards"), 8, name="digits-train", overwrite=True, progress=False)
    return manifest_files(read_manifest(manifest))


def tf_dataset_fn(files: list[str], tf: Any, keras: Any) -> Any:
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
    augment = keras.Sequential([keras.layers.RandomRotation(12 / 360), keras.layers.RandomTranslation(2 / 32, 2 / 32)])

    def decode(records):
        example = tf.io.parse_example(records, spec)

        def one(data):
            image = tf.io.decode_image(data, channels=1, expand_animations=False)
            image.set_shape((demo.IMAGE_SIZE, demo.IMAGE_SIZE, 1))
            return image

        images = tf.map_fn(one, example["image"], fn_output_signature=tf.uint8)
        images = augment(tf.cast(images, tf.float32), training=True) / 127.5 - 1.0
        return images, example["label"], tf.ones_like(example["label"], tf.float32)

    def fn(ctx):
        per_replica = ctx.get_per_replica_batch_size(GLOBAL_BATCH)
        ds = tf.data.TFRecordDataset(files).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        ds = ds.shuffle(1024).batch(per_replica, drop_remainder=True)
        return ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE).repeat().prefetch(tf.data.AUTOTUNE)

    return fn


def feeding(args: argparse.Namespace) -> None:
    import keras
    import tensorflow as tf

    files = digit_shards(args.data)
    strategy = demo.mirrored_strategy(tf, 2)
    n = strategy.num_replicas_in_sync
    _, train_step = demo.build_training(tf, keras, strategy, GLOBAL_BATCH, learning_rate=1e-3)

    steps = len(demo.make_pipeline(files, 1)(n, 0, GLOBAL_BATCH // n)) * args.epochs
    with iter(demo.make_pipeline(files, 1)(n, 0, GLOBAL_BATCH // n)) as first:
        one = next(first)
    inputs = {
        "parafeed": lambda: pf.adapters.tf.distribute(strategy, demo.make_pipeline(files, args.epochs), GLOBAL_BATCH),
        "tf.data (AUTOTUNE)": lambda: strategy.distribute_datasets_from_function(tf_dataset_fn(files, tf, keras)),
        "free input": lambda: strategy.distribute_datasets_from_function(
            lambda _: tf.data.Dataset.from_tensors(one).repeat()
        ),
    }
    step_ms: dict[str, list[float]] = {name: [] for name in inputs}
    for run in range(args.runs + 1):  # the first round warms up (traces the step for each input)
        for name, make in inputs.items():
            it = iter(make())
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                float(train_step(it)[0])
                times.append(time.perf_counter() - start)
            if run:
                step_ms[name].append(statistics.median(times[steps // 10 :]) * 1e3)
    rates = {name: [GLOBAL_BATCH / ms * 1e3 for ms in values] for name, values in step_ms.items()}
    harness.report(
        "distribution-feeding", "D1 feeding MirroredStrategy (2 replicas): training samples/s", rates, "samples/s",
        baseline="tf.data (AUTOTUNE)",
    )  # fmt: skip
    free = statistics.median(step_ms["free input"])
    lines = [
        "| input | median step (ms) | input-wait share (1 - free step / step) |",
        "|---|---:|---:|",
    ]
    for name, values in step_ms.items():
        step = statistics.median(values)
        lines.append(f"| {name} | {step:.1f} | {max(0.0, 1 - free / step):.1%} |")
    table = (
        "\n".join(lines)
        + f"\n\n{args.runs} runs of {steps} steps each, median step of each run; {harness._machine()}.\n"
    )
    print(table)
    harness._save("distribution-wait", "### D1 the share of a step that the input costs\n\n" + table)


def write_layout(folder: str, order: np.ndarray, pixels: np.ndarray, labels: np.ndarray) -> list[str]:
    """The records in ``order`` cut into 10 files of nearly equal size."""
    os.makedirs(folder, exist_ok=True)
    files = []
    for f, part in enumerate(np.array_split(order, 10)):
        path = os.path.join(folder, f"part-{f}.tfrecord")
        with pf.io.TFRecordWriter(path) as w:
            for i in part:
                w.write(pf.io.serialize_example({"pixels": pixels[i].astype(np.float32), "label": int(labels[i])}))
        files.append(path)
    return files


def balance(args: argparse.Namespace) -> None:
    from sklearn.datasets import load_digits

    digits = load_digits()
    layouts = {  # as many datasets are stored: sorted by class, or shuffled once
        "sorted by class": np.argsort(digits.target, kind="stable"),
        "shuffled": np.random.default_rng(0).permutation(len(digits.target)),
    }
    lines = [
        "| records | replicas | split | samples max/min | largest class deviation (samples) | max KL to all data |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for layout, order in layouts.items():
        files = write_layout(os.path.join(args.data, f"digits-{layout.replace(' ', '-')}"), order, digits.data,
                             digits.target)  # fmt: skip
        per_file = pf.distribute.record_labels(files)
        everything = np.concatenate(per_file)
        for n in (2, 4, 8):
            splits = {
                "tf.data FILE (files[i::n])": [np.concatenate(per_file[r::n]) for r in range(n)],
                "tf.data DATA (records[i::n])": [everything[r::n] for r in range(n)],
            }
            for name, kwargs in (("parafeed AUTO", {}), ('parafeed balance="labels"', {"balance": "labels"})):
                plan = pf.TFRecordDataset(files).distribute(n, 0, **kwargs).plan
                splits[f"{name} ({plan.policy})"] = pf.distribute.plan_labels(plan, files)
            for name, labels in splits.items():
                rep = pf.distribute.report(labels)
                lines.append(
                    f"| {layout} | {n} | {name} | {rep.max_min:.3f} | {rep.class_deviation:.1f} | {max(rep.kl):.4f} |"
                )
    table = "\n".join(lines) + f"\n\n1,797 digits in 10 files of 179 or 180 records; {harness._machine()}.\n"
    print(table)
    harness._save("distribution-balance", "### D2 class balance between replicas (digits, 10 files)\n\n" + table)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agree_job(runs: int, steps: int, world: int = 2, timeout: float = 600.0) -> dict[str, Any]:
    """Rank 0's result of benchmarks/jobs/ddp_agree.py run on ``world`` gloo ranks (each a process of its own)."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as folder:
        out, port = os.path.join(folder, "rank0.json"), str(free_port())
        logs = [os.path.join(folder, f"rank{r}.log") for r in range(world)]
        ranks = []
        for r in range(world):
            with open(logs[r], "w") as log:
                command = [sys.executable, AGREE_JOB, str(r), str(world), port, out, str(runs), str(steps)]
                ranks.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout
        for process in ranks:
            try:
                process.wait(max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
        for process in ranks:  # (a rank left running has hung: the others are done or dead)
            if process.poll() is None:
                process.kill()
                process.wait()
        failed = [(r, p.returncode) for r, p in enumerate(ranks) if p.returncode != 0]
        if failed or not os.path.exists(out):
            tails = "".join(f"\n--- rank {r} (exit {code}):\n{Path(logs[r]).read_text()[-3000:]}" for r, code in failed)
            raise RuntimeError(f"D3: the DDP job failed or hung (limit {timeout:.0f} s), ranks {failed}{tails}")
        with open(out) as f:
            return json.load(f)


def agreement_cost(args: argparse.Namespace) -> None:
    began, load = time.perf_counter(), os.getloadavg()
    result = agree_job(args.agree_runs, args.agree_steps)
    ways = {"steps=K": "equal_steps(steps=K): counts given, no agreement", "agreement": "equal_steps(): agreement"}
    steps = {len(times) for way in ways for times in result["train"][way]}  # (timed: a block's first step left out)
    rows = result["rows"]  # (rank 0's rows of weight 1 per epoch: one value per way, the same for both)
    if len(steps) != 1 or rows["steps=K"] != rows["agreement"] or len(rows["agreement"]) != 1:
        raise RuntimeError(f"D3: the two ways ran different steps or rows: steps {steps}, rows {rows}")

    def run_medians(kind: str, way: str, unit: float) -> list[float]:
        return [statistics.median(times) * unit for times in result[kind][way]]

    train = {way: run_medians("train", way, 1e3) for way in ways}  # ms
    alone = {way: run_medians("pipeline", way, 1e6) for way in ways}  # µs
    step = {way: statistics.median(values) for way, values in train.items()}
    raw = {way: statistics.median(values) for way, values in alone.items()}
    cost_us = (step["agreement"] - step["steps=K"]) * 1e3
    paired_us = [(b - a) * 1e3 for a, b in zip(train["steps=K"], train["agreement"])]  # (each: one run's two ways)
    raw_us = raw["agreement"] - raw["steps=K"]
    trip_us = statistics.median(statistics.median(times) * 1e6 for times in result["all_reduce"])
    lines = [
        "| pipeline | median DDP step (ms) | min | max | pipeline alone: median step (µs) | min | max |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for way, name in ways.items():
        lines.append(
            f"| {name} | {step[way]:.2f} | {min(train[way]):.2f} | {max(train[way]):.2f} | {raw[way]:.0f} | "
            f"{min(alone[way]):.0f} | {max(alone[way]):.0f} |"
        )
    base = step["steps=K"] * 1e3  # µs
    paired = statistics.median(paired_us)
    lines += [
        "",
        "| the agreement's cost per step (agreement - steps=K) | µs | share of a DDP step |",
        "|---|---:|---:|",
        f"| in the DDP step: the median of each run's difference | {paired:+.0f} | {paired / base:+.2%} |",
        f"| in the DDP step: the difference of the medians | {cost_us:+.0f} | {cost_us / base:+.2%} |",
        f"| raw: vote + count, the pipeline alone (no step to overlap) | {raw_us:+.0f} | {raw_us / base:+.2%} |",
        f"| for reference: a bare gloo all-reduce of one int64 (no parafeed) | {trip_us:.0f} | {trip_us / base:.2%} |",
    ]
    runs, k, timed = len(paired_us), max(result["counts"]), steps.pop()
    note = (
        f"2 gloo ranks on 127.0.0.1 (CPU, 1 torch thread each) train a CNN under DDP on 32x32x3 images, 32 per replica "
        f"per step, through a filter after distribute() (replica counts {result['counts']} batches, policy pad, "
        f"K = {k}). {runs} runs after a warm-up run; in each, one epoch of each way, the two taking turns every "
        f"{result['block']} steps (A B B A ...), a turn's first step not timed ({timed} steps timed per way; the "
        f"pipeline alone: {result['pipeline_epochs']} epochs); rank 0's median step of each run, the median of the "
        f"runs. The DDP step's difference per run ranges from {min(paired_us):+.0f} to {max(paired_us):+.0f} µs; "
        f"{harness._machine()}, load average {load[0]:.1f} before the run; {time.perf_counter() - began:.0f} s in all."
    )
    title = "### D3 equal_steps() agreeing at run time: its cost per DDP step (2 ranks, gloo)"
    text = f"{title}\n\n" + "\n".join(lines) + f"\n\n{note}\n"
    print(text)
    harness._save("distribution-agree", text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3, help="epochs per run")
    parser.add_argument("--data", default="bench-data")
    parser.add_argument("--agree-runs", type=int, default=6, help="D3: timed runs (an epoch of each way) (>= 3)")
    parser.add_argument("--agree-steps", type=int, default=150, help="D3: about how many steps a replica's epoch has")
    parser.add_argument("--no-save", action="store_true", help="print the tables only (docs/benchmarks.md untouched)")
    args = parser.parse_args()
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    if sections - set(SECTIONS):
        parser.error(f"unknown sections {sorted(sections - set(SECTIONS))}; choose from {SECTIONS}")
    if args.agree_runs < 3:
        parser.error(f"--agree-runs must be >= 3 (medians of runs), got {args.agree_runs}")
    if args.no_save:
        harness._save = lambda key, table: None
    if "balance" in sections:
        balance(args)
    if "feeding" in sections:
        feeding(args)
    if "agree" in sections:
        agreement_cost(args)


if __name__ == "__main__":
    main()

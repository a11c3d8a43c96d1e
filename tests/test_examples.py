"""The seed examples (examples/seed_*.py) run end to end with --quick and print the results they promise."""

import os
import re
import subprocess
import sys

import pytest

from tests import host

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name, workdir, timeout, *options):
    """Run examples/<name>.py --quick [options] in a subprocess; returns its stdout (fails the test with the output if
    the script fails or hangs)."""
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, os.path.join(ROOT, "examples", f"{name}.py"), "--quick", "--workdir", str(workdir)]
    command += options
    limit = host.seconds(timeout)
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired as err:
        output = err.stdout.decode(errors="replace") if isinstance(err.stdout, bytes) else err.stdout or ""
        output = output[-3000:]  # (subprocess gives bytes on a timeout, even with text=True)
        pytest.fail(f"{name} did not finish within {limit:.0f} s ({timeout} s stretched for this host):\n{output}")
    assert done.returncode == 0, f"{name} exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def number_after(label, text):
    match = re.search(re.escape(label) + r"\s*([0-9.]+)", text)
    assert match, f"no {label!r} in the output:\n{text[-3000:]}"
    return float(match.group(1))


@pytest.mark.timeout(240)
def test_seed_000_tfrecord_mirrored(tmp_path):
    # 2 epochs (--quick trains 3): the test accuracy is already over 0.9 after them
    out = run_example("seed_000_tfrecord_mirrored", tmp_path, 220, "--epochs", "2")
    assert (tmp_path / "train.tfrecords").stat().st_size > 0 and (tmp_path / "test.tfrecords").stat().st_size > 0
    assert "MirroredStrategy: 2 replicas" in out
    # --quick resizes to 32x32; pixels scaled to [0, 1]
    assert re.search(
        r"first batch: images \(32, 32, 32, 1\) float32 in \[0\.\d\d, [01]\.\d\d\], labels \(32,\) int64", out
    )
    assert number_after("test accuracy:", out) > 0.7


@pytest.mark.timeout(300)
def test_seed_001_shard_group_multiworker(tmp_path):
    out = run_example("seed_001_shard_group_multiworker", tmp_path, 280)
    # (a) the two shards of the file list cover every file once; (b) every group_by_window batch is one digit
    assert "the 2 shards together: all 1797 files, none twice" in out
    assert re.search(r"group_by_window.*1437 samples; every batch holds one digit: True", out), out
    # (c) FILE sharding of uneven files: very different batch counts, made equal by equal_steps()
    assert "policy FILE: batches per worker before equal_steps(): [43, 3]" in out
    steps = re.search(r"steps per epoch on each worker: \[(\d+), (\d+)\] \(equal: True\)", out)
    assert steps and steps.group(1) == steps.group(2) == "43", out
    assert "every sample seen exactly once in an epoch: True (1437 of 1437)" in out
    assert "both workers trained the same model (identical losses): True" in out
    assert number_after("test accuracy:", out) > 0.7


@pytest.mark.timeout(240)
def test_seed_002_balanced_mlp(tmp_path):
    out = run_example("seed_002_balanced_mlp", tmp_path, 220)
    deviation = re.search(r"naive ([0-9.]+), shuffled ([0-9.]+), stratified ([0-9.]+) samples", out)
    assert deviation, out
    naive, shuffled, stratified = (float(x) for x in deviation.groups())
    assert naive > 50 and naive > shuffled > stratified and stratified < 1
    assert sorted(p.name for p in tmp_path.glob("balance-*.png")) == ["balance-0.png", "balance-1.png", "balance-2.png"]
    assert "per-replica batch sizes [16, 48]" in out
    averaged = re.search(r"weighted losses ([0-9.]+) == global-batch mean ([0-9.]+)", out)
    assert averaged and averaged.group(1) == averaged.group(2), out
    assert re.search(r"sizes \[32, 32\] at step 0 -> \[16, 48\] at step 29", out), out
    assert "MirroredStrategy: 2 replicas" in out
    assert number_after("test accuracy:", out) > 0.8


@pytest.mark.timeout(240)
def test_seed_003_threads_processes(tmp_path):
    # the timing table (an illustration, not a check of speed) on 64 of the 600 images: every row and column is there
    out = run_example("seed_003_threads_processes", tmp_path, 220, "--timing-images", "64")
    assert sorted(p.name for p in tmp_path.glob("data_*.tfrecord")) == [f"data_{i}.tfrecord" for i in range(4)]
    for line in ("1. from_tensor_slices", "2. list_files", "3. TFRecordDataset", "(map_and_batch)"):
        assert re.search(re.escape(line) + r".*: 19 batches, 600 images", out), f"{line}: {out}"
    assert re.search(r"same records in the same order as num_parallel_reads=\d+: True", out), out
    assert re.search(r"executor='process'\): 600 feature rows, identical to the serial map's: True", out), out
    rows = re.findall(r"^(decode JPEG|pure-Python).*?((?:\s+[0-9,]+/s = [0-9.]+x){3})$", out, re.MULTILINE)
    assert [name for name, _ in rows] == ["decode JPEG", "pure-Python"], out
    for _, cells in rows:
        assert re.findall(r"= ([0-9.]+)x", cells)[0] == "1.00"  # ratios are relative to the serial run


@pytest.mark.timeout(200)
def test_resume_elastic_example(tmp_path):
    out = run_example("resume_elastic", tmp_path, 180)
    assert "4 replicas killed after step 6" in out
    assert "epoch 0: records 300, trained 300, distinct 300" in out  # the resumed epoch, on 2 replicas
    assert "epoch 1: records 300, trained 300, distinct 300" in out  # the next one: whole again

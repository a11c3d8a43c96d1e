"""Fuzzing the readers of untrusted bytes (a short run of ``tests/reliability/fuzz.py``; ``make fuzz`` runs 100,000+
inputs), TensorFlow as the oracle for valid Examples, and regression tests for what the fuzzer found."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
import tracemalloc
import zlib

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import DataLossError, ParseError
from parafeed.io import cache_format, tfrecord, tfrecord_framing
from tests import host
from tests.reliability import fuzz, fuzz_example, wire

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALLOWED = {
    "tfrecord": {"ok", "DataLossError"},
    "example": {"ok", "ParseError"},
    "cache": {"ok", "DataLossError", "InvalidArgumentError"},
}


@pytest.mark.timeout(120)
def test_short_fuzz_run_breaks_no_rule(tmp_path):
    """5,000 inputs shared by the TFRecord reader and the Example parser, and 1,000 cache files, in a process whose
    address space is capped (a huge allocation fails instead of passing unnoticed), under its hang watchdog."""
    report_path = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tests.reliability.fuzz", "--inputs", "5000", "--cache-inputs", "1000", "--seed", "7",
         "--json", str(report_path)],
        capture_output=True, text=True, timeout=host.seconds(110), cwd=ROOT,
    )  # fmt: skip
    assert report_path.exists(), f"the fuzzer did not finish ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    report = json.loads(report_path.read_text())
    assert report["failures"] == [], proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["inputs"] == {"tfrecord": 2500, "example": 2500, "cache": 1000}
    for target, outcomes in report["outcomes"].items():
        assert set(outcomes) <= ALLOWED[target], (target, outcomes)
        # the inputs reach both sides: valid ones checked for exact output, damaged ones raising errors
        assert report["checked_exactly"][target] > 0.1 * report["inputs"][target], report["checked_exactly"]
        assert outcomes.get("ok", 0) > 0 and sum(v for k, v in outcomes.items() if k != "ok") > 0
    assert max(report["slowest_input_seconds"].values()) < fuzz.SLOW_SECONDS


def test_fuzz_run_is_reproducible_and_reports_a_broken_rule(monkeypatch):
    first = fuzz.run({"tfrecord": 40, "example": 40, "cache": 20}, seed=3)
    again = fuzz.run({"tfrecord": 40, "example": 40, "cache": 20}, seed=3)
    assert first.as_dict()["outcomes"] == again.as_dict()["outcomes"] and not first.failures
    # a parser that wrongly accepts damaged bytes is caught (the rules can fail)
    monkeypatch.setattr(pf.io, "parse_example", lambda serialized, features: {k: None for k in features})
    broken = fuzz.run({"example": 30}, seed=3)
    assert broken.failures and "reproduce" in broken.failures[0]
    assert "--targets example --seed 3 --start" in broken.failures[0]["reproduce"]


@pytest.mark.timeout(120)
def test_valid_examples_parse_as_tensorflow_parses_them():
    """Differential: parafeed.io.parse_example against tf.io.parse_example on 400 random valid batches."""
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is the oracle (make test installs it)")

    def tf_spec(spec):
        dtype = {"string": tf.string, "float32": tf.float32, "int64": tf.int64}[spec.dtype]
        default = getattr(spec, "default_value", None)
        default = None if default is None else np.asarray(default).tolist()
        if isinstance(spec, pf.io.FixedLenFeature):
            return tf.io.FixedLenFeature(spec.shape, dtype, default)
        if isinstance(spec, pf.io.VarLenFeature):
            return tf.io.VarLenFeature(dtype)
        return tf.io.FixedLenSequenceFeature(spec.shape, dtype, allow_missing=True, default_value=default)

    def tf_outcome(serialized, specs):
        try:
            parsed = tf.io.parse_example(np.array(serialized, dtype=object), {k: tf_spec(s) for k, s in specs.items()})
        except tf.errors.InvalidArgumentError:
            return "ParseError"
        out = {}
        for key, value in parsed.items():
            if isinstance(value, tf.SparseTensor):
                values = value.values.numpy()
                out[key] = ("sparse", value.indices.numpy(), values.astype(object) if value.dtype == tf.string
                            else values, value.dense_shape.numpy())  # fmt: skip
            else:
                out[key] = value.numpy().astype(object) if value.dtype == tf.string else value.numpy()
        return out

    outcomes = {"ok": 0, "ParseError": 0}
    for i in range(400):
        rng = random.Random(f"tf-oracle:{i}")
        batch = [wire.random_example(rng, canonical=True) for _ in range(rng.choice([1, 1, 2, 3]))]
        serialized = [s for s, _ in batch]
        specs = fuzz_example.random_specs(rng, [f for _, f in batch])
        ours = fuzz_example.parse_outcome(serialized, specs, native=True)
        theirs = tf_outcome(serialized, specs)
        assert fuzz_example.same_outcome(ours, theirs), (
            f"batch {i}: parafeed {fuzz_example._brief(ours)}, tf {fuzz_example._brief(theirs)}"
        )
        assert fuzz_example.same_outcome(ours, fuzz_example.expected_parse([f for _, f in batch], specs))
        outcomes["ok" if isinstance(ours, dict) else "ParseError"] += 1
    assert outcomes["ok"] > 100 and outcomes["ParseError"] > 20, outcomes


# ---------------------------------------------------------------------------------------------- huge lengths


def peak_allocation(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def raises(error, fn):
    def run():
        with pytest.raises(error):
            fn()

    return run


def test_huge_lengths_are_refused_without_allocating_them(tmp_path):
    # a TFRecord length of 2**62 with a valid length CRC: the reader reads at most 64 MiB at a time (a cap)
    path = str(tmp_path / "huge.tfrecord")
    with open(path, "wb") as f:
        f.write(wire.frame(b"x" * 100) + wire.frame(b"abc", length=2**62))
    it = pf.io.tf_record_iterator(path)
    assert next(it) == b"x" * 100
    assert peak_allocation(raises(DataLossError, lambda: next(it))) < (64 << 20) + (8 << 20)
    # an Example whose length prefix says 2**63 bytes
    data = wire.tag(1, 2) + wire.varint(2**63) + b"\x0a\x00"
    spec = {"x": pf.io.VarLenFeature("int64")}
    raises(ParseError, lambda: pf.io.parse_example([data], spec))()  # (the first call imports the parser: 15 MB)
    assert peak_allocation(raises(ParseError, lambda: pf.io.parse_example([data], spec))) < 1 << 20
    # a cache file whose header length says 4 GiB, and one whose record says its array has 2**63 x 2**63 values
    cache = str(tmp_path / "c.pfcache")
    writer = cache_format.CacheWriter(cache)
    writer.write((np.arange(3, dtype=np.int64), b"name"))
    writer.finish()
    good = open(cache, "rb").read()
    bad_header = good[:8] + struct.pack("<I", 2**32 - 1) + good[12:]
    (n,) = struct.unpack_from("<I", good, 8)
    at = 16 + n  # the first record: u32 length | u32 crc | payload (rank 1, dims, data ...)
    (length,) = struct.unpack_from("<I", good, at)
    payload = bytearray(good[at + 8 : at + 8 + length])
    payload[0] = 2
    payload[1:17] = struct.pack("<QQ", 2**63, 2**63)
    record = struct.pack("<II", len(payload), zlib.crc32(payload)) + payload
    bad_dims = good[:at] + record + good[at + 8 + length :]
    dtypes = [np.dtype(np.int64), np.dtype(object)]
    for damaged in (bad_header, bad_dims):
        with open(cache, "wb") as f:
            f.write(damaged)
        assert peak_allocation(raises(DataLossError, lambda: list(cache_format.read_cache(cache, dtypes)))) < 1 << 20


# ---------------------------------------------------------------------------------------------- GZIP members


def gzip_member(records: list[bytes]) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    return c.compress(b"".join(wire.frame(r) for r in records)) + c.flush()


@pytest.mark.parametrize("buffer_size", [1, 100, None])
def test_concatenated_gzip_files_give_every_record(tmp_path, buffer_size):
    """``cat a.gz b.gz`` is a valid GZIP file (one member each); TensorFlow and gzip read both."""
    parts = [[b"a%d" % i for i in range(300)], [], [b"b%d" % i for i in range(5)]]
    path = str(tmp_path / "cat.tfrecord.gz")
    with open(path, "wb") as f:
        f.write(b"".join(gzip_member(p) for p in parts))
    assert list(pf.TFRecordDataset(path, "GZIP", buffer_size=buffer_size)) == parts[0] + parts[2]


def test_bytes_after_a_gzip_member_are_corrupt_data(tmp_path):
    path = str(tmp_path / "tail.tfrecord.gz")
    member = gzip_member([b"r%d" % i for i in range(50)])
    with open(path, "wb") as f:
        f.write(member + b"\0" * 10)  # padding is not a member: TensorFlow says DataLossError too
    ds = pf.TFRecordDataset(path, "GZIP").ignore_errors()
    assert list(ds) == [b"r%d" % i for i in range(50)]
    assert ds.ignored.count == 1 and f"compressed byte offset {len(member)}" in ds.ignored.messages[0]


# ---------------------------------------------------------------------------------------------- Example specs


def test_missing_feature_with_a_zero_size_shape_is_a_parse_error():
    """An empty default is no default (as in tf.io); was a bare ValueError from a NumPy reshape."""
    spec = {"x": pf.io.FixedLenFeature([0], "int64", default_value=[])}
    empty = pf.io.serialize_example({"x": np.array([], np.int64)})
    other = pf.io.serialize_example({"y": 1})
    assert pf.io.parse_example([empty, empty], spec)["x"].shape == (2, 0)
    for batch in ([empty, other], [other]):
        with pytest.raises(ParseError, match="Feature: x .* is required"):
            pf.io.parse_example(batch, spec)


# ---------------------------------------------------------------------------------------------- bugs it found


def test_native_framing_agrees_with_python_on_a_maximal_length():
    """Was a bug: the native length-CRC cache started at length 2**64-1, so that length was called a bad CRC."""
    buf = wire.frame(b"ok") + wire.frame(b"abc", length=2**64 - 1)
    crc = tfrecord_framing.crc32c_function()
    assert tfrecord._native is not None
    for pos in (0, 18):  # framing from the first record, and from the damaged one (as after a read boundary)
        assert tfrecord._native.frame_records(buf, pos, crc, 64) == tfrecord._frame_python(buf, pos, crc, 64)


def test_skipping_zero_records_skips_nothing(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with pf.io.TFRecordWriter(path) as w:
        for i in range(5):
            w.write(b"%d" % i)
    it = pf.io.tf_record_iterator(path)
    assert next(it) == b"0"
    assert it.skip(0) == 0
    assert list(it) == [b"1", b"2", b"3", b"4"]

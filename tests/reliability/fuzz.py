"""Fuzzing parafeed's readers of untrusted bytes: TFRecord files, tf.train.Example parsing, cache files.

    python -m tests.reliability.fuzz --inputs 100000 [--seed 0] [--targets tfrecord,example] [--json report.json]

``--inputs`` is shared evenly by the TFRecord reader and the Example parser; the cache-file reader adds a tenth more
(``--cache-inputs``). Every input is derived from (seed, target, index) alone, so a failure prints the command that
reproduces it. Inputs are valid files / messages spelled in many ways (checked against what the format says they
hold) or mutations of them: bit flips, truncations, inserted / deleted / duplicated bytes, bad and huge lengths
(with valid length CRCs), random field numbers and wire types, nested garbage, random bytes.

Rules checked for every input (a broken rule is a failure; the run exits 1):
  * the only exceptions are parafeed's errors for damaged data (DataLossError from the readers, ParseError from
    the parser, DataLossError / InvalidArgumentError from the cache reader); no other type, no MemoryError (the
    runner caps its address space), no crash, and no input takes more than a few seconds (a watchdog aborts);
  * a valid input gives exactly what it holds; a damaged TFRecord file gives every record before the damage, only
    records that are intact frames in the file (in file order), and with one damaged frame every other record;
  * the C fast paths (TFRecord framing, Example decoding) agree with the pure-Python / protobuf ones;
  * an exhausted reader stays exhausted, and ``TFRecordDataset(...).ignore_errors()`` gives the reader's records.

The targets live in ``fuzz_tfrecord.py``, ``fuzz_example.py`` and ``fuzz_cache.py``; ``fuzz_rules.py`` holds what
they share.
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import json
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.reliability import fuzz_cache, fuzz_example, fuzz_tfrecord
from tests.reliability.fuzz_rules import FuzzFailure

TARGETS = {"tfrecord": fuzz_tfrecord.fuzz_one, "example": fuzz_example.fuzz_one, "cache": fuzz_cache.fuzz_one}
SLOW_SECONDS = 10.0  # an input taking longer than this counts as a hang


# ---------------------------------------------------------------------------------------------- runner


@dataclass
class Report:
    seed: int
    inputs: collections.Counter = field(default_factory=collections.Counter)
    exact: collections.Counter = field(default_factory=collections.Counter)  # output checked against the answer
    outcomes: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    mutations: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    seconds: collections.Counter = field(default_factory=collections.Counter)
    slowest: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "seed": self.seed,
            "inputs": dict(self.inputs),
            "total_inputs": sum(self.inputs.values()),
            "checked_exactly": dict(self.exact),
            "outcomes": {t: dict(c) for t, c in self.outcomes.items()},
            "mutations": {t: dict(c.most_common()) for t, c in self.mutations.items()},
            "seconds": {t: round(s, 2) for t, s in self.seconds.items()},
            "slowest_input_seconds": {t: round(s, 4) for t, s in self.slowest.items()},
            "failures": self.failures,
        }

    def summary(self) -> str:
        lines = [f"fuzz: seed {self.seed}, {sum(self.inputs.values())} inputs, {len(self.failures)} failures"]
        for target in self.inputs:
            outcomes = ", ".join(f"{k} {v}" for k, v in self.outcomes[target].most_common())
            lines.append(
                f"  {target:9} {self.inputs[target]:7} inputs ({self.exact[target]} checked exactly) in "
                f"{self.seconds[target]:.1f} s, slowest {self.slowest.get(target, 0) * 1000:.0f} ms: {outcomes}"
            )
        for failure in self.failures[:10]:
            lines.append(f"  FAILURE {failure['target']} #{failure['index']}: {failure['error']}")
            lines.append(f"    reproduce: {failure['reproduce']}")
        return "\n".join(lines)


def run(counts: dict[str, int], seed: int = 0, start: int = 0, watchdog: bool = False,
        progress: Callable[[str], None] | None = None) -> Report:  # fmt: skip
    """Fuzz each target with ``counts[target]`` inputs (indices ``start`` ...); returns the tally."""
    report = Report(seed)
    workdir = tempfile.mkdtemp(prefix="parafeed-fuzz-")
    try:
        for target, n in counts.items():
            fn = TARGETS[target]
            began = time.perf_counter()
            for i in range(start, start + n):
                rng = random.Random(f"{seed}:{target}:{i}")
                if watchdog:
                    faulthandler.dump_traceback_later(SLOW_SECONDS * 6, exit=True)
                t0 = time.perf_counter()
                try:
                    outcome, exact, mutation = fn(rng, i, workdir)
                except Exception as err:  # any other exception type, or a broken rule
                    outcome, exact, mutation = "FAILURE", False, "?"
                    text = str(err) if isinstance(err, FuzzFailure) else traceback.format_exc(limit=-6)
                    report.failures.append({
                        "target": target, "index": i, "error": f"{type(err).__name__}: {text}",
                        "reproduce": f"python -m tests.reliability.fuzz --targets {target} --seed {seed} --start {i} "
                                     "--inputs 1",
                    })  # fmt: skip
                took = time.perf_counter() - t0
                if took > SLOW_SECONDS:
                    report.failures.append({"target": target, "index": i, "error": f"took {took:.1f} s",
                                            "reproduce": f"--targets {target} --seed {seed} --start {i}"})  # fmt: skip
                report.slowest[target] = max(report.slowest.get(target, 0.0), took)
                report.inputs[target] += 1
                report.exact[target] += bool(exact)
                report.outcomes[target][outcome] += 1
                report.mutations[target][mutation.split("+")[0]] += 1
                if progress is not None and (i - start + 1) % 10000 == 0:
                    progress(f"{target}: {i - start + 1}/{n} inputs, {len(report.failures)} failures")
            report.seconds[target] = time.perf_counter() - began
    finally:
        if watchdog:
            faulthandler.cancel_dump_traceback_later()
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def split_inputs(total: int, targets: list[str], cache_inputs: int | None) -> dict[str, int]:
    main = [t for t in targets if t != "cache"]
    counts = {t: total // len(main) + (k < total % len(main)) for k, t in enumerate(main)} if main else {}
    if "cache" in targets:
        counts["cache"] = cache_inputs if cache_inputs is not None else (total // 10 if main else total)
    return counts


def limit_memory(extra_bytes: int = 3 << 30) -> None:
    """Cap the address space at what is mapped now plus ``extra_bytes``: a huge allocation fails (MemoryError)."""
    import resource

    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra_bytes, resource.getrlimit(resource.RLIMIT_AS)[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000, help="inputs shared by the TFRecord and Example targets")
    parser.add_argument("--cache-inputs", type=int, default=None, help="cache-file inputs (default: inputs / 10)")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="index of the first input (to reproduce one)")
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args(argv)
    targets = [t for t in args.targets.split(",") if t]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {unknown}; choose from {list(TARGETS)}")
    limit_memory()
    counts = split_inputs(args.inputs, targets, args.cache_inputs)
    report = run(counts, args.seed, args.start, watchdog=True, progress=lambda s: print(s, file=sys.stderr))
    print(report.summary())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report.as_dict(), f, indent=1)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Faults survived: a TFRecord file read from S3 (moto on 127.0.0.1) through a proxy that injects one kind of fault
into every few ranged requests; every record compared with what was written.

s3fs and botocore are told to try each request once, so every fault reaches parafeed's own retries (what they do
is counted by ``Retrier.total_faults``). Prints a table (fault kind, requests, faults injected, retries, records
read and checked by their CRCs, records lost, records repeated) and writes it into docs/benchmarks.md.

Usage: python benchmarks/remote_faults.py [--mb 20]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests.storage.servers

import harness
import numpy as np

import parafeed as pf
from parafeed.io.remote import Retrier

BLOCK = 256 << 10  # bytes per ranged request: many requests, many faults
ONE_TRY = {"config_kwargs": {"retries": {"total_max_attempts": 1}, "read_timeout": 1, "connect_timeout": 2}}
KINDS = {  # fault -> every how many ranged requests it strikes
    "503": 3,  # a 503 SlowDown answer, as S3 throttles
    "cut": 3,  # the connection closed halfway through the body
    "short": 3,  # a well-formed answer with half the bytes asked for
    "stall": 10,  # no answer until the client's read timeout (1 s)
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=20, help="MB of records (1 to 20 KB each)")
    args = parser.parse_args()
    import s3fs
    from tests.storage.servers import FaultProxy, S3Server, s3_options

    s3fs.S3FileSystem.retries = 1  # (its own retries would hide the faults from parafeed)
    rng = np.random.default_rng(0)
    records: list[bytes] = []
    while sum(map(len, records)) < args.mb * 10**6:
        records.append(rng.bytes(int(rng.integers(1_000, 20_000))))
    server = S3Server()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as work:
            local = os.path.join(work, "d.tfrecord")
            with pf.io.TFRecordWriter(local) as w:
                for r in records:
                    w.write(r)
            fs = s3fs.S3FileSystem(**s3_options(server.url))
            fs.call_s3("create_bucket", Bucket="faults")
            fs.put_file(local, "faults/d.tfrecord")
        options = pf.Options()
        options.remote.block_size = BLOCK
        options.remote.retry_delay = 0.01
        for kind, every in KINDS.items():
            proxy = FaultProxy(server.url, fault=kind, every=every, stall=2.0)
            before = Retrier.total_faults
            start = time.perf_counter()
            try:
                ds = pf.TFRecordDataset("s3://faults/d.tfrecord", storage_options=s3_options(proxy.url, **ONE_TRY))
                got = list(ds.with_options(options))
            finally:
                proxy.stop()
            seconds = time.perf_counter() - start
            wanted, have = collections.Counter(records), collections.Counter(got)
            lost, repeated = sum((wanted - have).values()), sum((have - wanted).values())
            in_order = "yes" if got == records else "no"
            retries = Retrier.total_faults - before
            rows.append((kind, proxy.ranged_gets, proxy.faults, retries, len(got), lost, repeated, in_order, seconds))
    finally:
        server.stop()
    lines = [
        f"### Faults survived: {len(records):,} TFRecords ({args.mb} MB) from S3 (moto) through a fault proxy",
        "",
        "| fault | ranged requests | faults injected | retries | records read (CRC-checked) | lost | repeated "
        "| in order | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for kind, requests, faults, retries, read, lost, repeated, in_order, seconds in rows:
        lines.append(
            f"| {kind} (every {KINDS[kind]}) | {requests} | {faults} | {retries} | {read:,} | {lost} | {repeated} "
            f"| {in_order} | {seconds:.1f} |"
        )
    lines += [
        "",
        f"{harness._machine()}. 503: a SlowDown answer; cut: the connection closed halfway through the body; short: a "
        "well-formed answer with half the bytes; stall: no answer until the client's 1 s read timeout. s3fs and "
        f"botocore try each request once, so parafeed does every retry ({BLOCK >> 10} KiB blocks, back-off from "
        "10 ms); a short or cut answer's bytes are kept and the next request starts at the byte after them.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    harness._save("remote_faults", text)
    if any(row[5] or row[6] or row[7] != "yes" for row in rows):
        sys.exit("records were lost, repeated or reordered")


if __name__ == "__main__":
    main()

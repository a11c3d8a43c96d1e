"""What the storage tests read: TFRecord files of random records, uploaded to a fresh bucket of the test S3 server."""

from __future__ import annotations

import itertools

import numpy as np

import parafeed as pf

from .servers import s3_options

_bucket_numbers = itertools.count()

# parafeed does the retrying: botocore tries once (and s3fs too: the one_try fixture)
ONE_TRY = {"config_kwargs": {"retries": {"total_max_attempts": 1}, "read_timeout": 1, "connect_timeout": 2}}


def random_records(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.bytes(int(rng.integers(1, 20_000))) for _ in range(n)]


def upload(s3, tmp_path, files: dict[str, list[bytes]]) -> tuple[str, object]:
    """A new bucket holding TFRecord files ``name -> records``; its s3:// prefix and the s3fs filesystem."""
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options(s3.url))
    bucket = f"bucket-{next(_bucket_numbers)}"
    fs.call_s3("create_bucket", Bucket=bucket)
    for name, records in files.items():
        local = tmp_path / name.replace("/", "_")
        with pf.io.TFRecordWriter(str(local)) as w:
            for r in records:
                w.write(r)
        fs.put_file(str(local), f"{bucket}/{name}")
    return f"s3://{bucket}", fs


def small_blocks(ds: pf.Dataset, block: int = 64 << 10, retry_delay: float = 0.01) -> pf.Dataset:
    options = pf.Options()
    options.remote.block_size = block
    options.remote.read_ahead = 4 * block
    options.remote.retry_delay = retry_delay
    return ds.with_options(options)

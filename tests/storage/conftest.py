"""Fixtures of the storage tests: one S3 server for all of them (every test uploads to a bucket of its own, see
``data.upload``), s3fs trying each request once."""

from __future__ import annotations

import pytest

from .servers import S3Server


@pytest.fixture
def one_try(monkeypatch):
    """s3fs tries each request once (its class attribute ``retries``), so every fault reaches parafeed."""
    import s3fs

    monkeypatch.setattr(s3fs.S3FileSystem, "retries", 1)


@pytest.fixture(scope="package")
def s3():
    server = S3Server()
    yield server
    server.stop()

"""Where files live: a local path, or any fsspec URL (``s3://``, ``gs://``, ``http(s)://``, ``memory://`` ...).

Local paths (and ``file://`` URLs) are opened directly, with no fsspec on the way. A URL goes to the filesystem
fsspec has for its protocol (s3fs, gcsfs, its own HTTP filesystem ...), built with the caller's
``storage_options`` (credentials, endpoints: the filesystem's own keyword arguments) or the filesystem's own
configuration (environment variables, config files). Its bytes are read by :class:`parafeed.io.remote.RemoteFile`:
ranged reads ahead of the reader, retried on transient faults; or from the local remote cache when it is on.
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError, NotFoundError

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*(::[^:]*)?://")
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "http": "http", "https": "http"}


def is_url(path: str) -> bool:
    """Whether ``path`` names a file through fsspec (any ``scheme://`` but ``file://``)."""
    return bool(_URL.match(path)) and not path.startswith("file://")


def local_path(path: str) -> str:
    """A local path from a path or a ``file://`` URL."""
    return path[len("file://") :] if path.startswith("file://") else path


def as_path(name: Any) -> str:
    """A file name (str, bytes or os.PathLike) as a str."""
    return os.fsdecode(name)


_filesystems: dict[str, Any] = {}


def filesystem(url: str, storage_options: dict | None, step: str) -> tuple[Any, str]:
    """``(fsspec filesystem, path within it)`` for ``url``. A process keeps one filesystem per protocol and
    options, so every file of a pipeline shares its connections (even with ``skip_instance_cache``).

    parafeed retries (:class:`parafeed.io.remote.Retrier`), so an S3 filesystem it builds tries each request once:
    botocore's retries off and s3fs's own loop at one try, unless ``storage_options`` set botocore's retries
    (``config_kwargs={"retries": ...}``), which then keeps both as the user configured them."""
    try:
        import fsspec
    except ImportError:
        raise _missing(url, step, "fsspec") from None
    protocol = url.split("://", 1)[0]
    key = fsspec.utils.tokenize(protocol, os.getpid(), storage_options)  # (a forked child builds its own)
    fs = _filesystems.get(key)
    if fs is not None:
        return fs, fsspec.core.strip_protocol(url)
    try:
        given = storage_options or {}
        options = _one_try(protocol, given)
        fs, path = fsspec.core.url_to_fs(url, **options)
        if options is not given and hasattr(fs, "retries"):
            fs.retries = 1  # (s3fs's own retry loop: an attribute of the instance, not an argument)
        if "::" not in protocol:  # (a chain of filesystems is built anew each time)
            _filesystems[key] = fs
        return fs, path
    except ImportError as err:  # the protocol's package (s3fs, gcsfs, aiohttp) is not installed
        raise _missing(url, step, str(err)) from None
    except ValueError as err:
        raise InvalidArgumentError(f"{step}: {url}: {err}") from None


def _one_try(protocol: str, options: dict) -> dict:
    """``options`` for an S3 filesystem that tries each request once (``options`` itself when the user set
    botocore's retries, or for another protocol)."""
    config = options.get("config_kwargs") or {}
    if protocol not in ("s3", "s3a") or "retries" in config:
        return options
    # (a new instance: fsspec's instance cache would otherwise share one whose retries the user's code relies on)
    return {**options, "config_kwargs": {**config, "retries": {"total_max_attempts": 1}}, "skip_instance_cache": True}


def _missing(url: str, step: str, what: str) -> ImportError:
    protocol = url.split("://", 1)[0].split("::")[-1]
    extra = _EXTRAS.get(protocol)
    hint = f"pip install 'parafeed[{extra}]'" if extra else f"install the fsspec filesystem for {protocol}://"
    return ImportError(f"{step}: cannot read {url}: {what} is missing; {hint}")


def glob(pattern: str, storage_options: dict | None, step: str) -> list[str]:
    """The URLs (or local paths) matching a glob pattern."""
    if not is_url(pattern):
        import glob as globbing

        return globbing.glob(local_path(pattern))
    from parafeed.io.remote import remember

    fs, path = filesystem(pattern, storage_options, step)
    found = []
    for name, info in fs.glob(path, detail=True).items():
        if info.get("type") != "directory":
            found.append(fs.unstrip_protocol(name))
            remember(found[-1], info)  # opening it then asks nothing more (docs/storage.md)
    return found


def open_input(path: str, step: str, storage_options: dict | None = None, current: Any = None) -> Any:
    """A raw, seekable binary file over ``path``: the local file, or a :class:`RemoteFile` for a URL (read with the
    :class:`parafeed.io.remote.Settings` ``current``, the running pipeline's by default). A missing file raises
    :class:`NotFoundError` (still a FileNotFoundError) naming the step."""
    if not is_url(path):
        local = local_path(path)
        try:
            return open(local, "rb", buffering=0)
        except FileNotFoundError as err:  # tf.data's NotFoundError (still a FileNotFoundError)
            raise NotFoundError(err.errno, f"{step}: cannot open {path}: {err.strerror}") from None
        except OSError as err:
            raise type(err)(err.errno, f"{step}: cannot open {path}: {err.strerror}") from None
    from parafeed.io.remote import open_remote

    fs, inner = filesystem(path, storage_options, step)
    return open_remote(path, fs, inner, step, current)


def remote_settings(paths: list[str]) -> Any:
    """The building pipeline's remote settings when a path is a URL (for files opened later, while the run reads),
    else None."""
    if not any(is_url(p) for p in paths):
        return None
    from parafeed.io.remote import settings

    return settings()


def size_of(path: str, step: str, storage_options: dict | None = None) -> int:
    """The size in bytes of the file at ``path``."""
    if not is_url(path):
        return os.path.getsize(local_path(path))
    from parafeed.io.remote import Retrier, describe, settings

    fs, inner = filesystem(path, storage_options, step)
    return int(describe(fs, inner, Retrier(path, step, settings()))["size"])


def exists(path: str, step: str, storage_options: dict | None = None) -> bool:
    """Whether a file is at ``path``."""
    if not is_url(path):
        return os.path.exists(local_path(path))
    from parafeed.io.remote import Retrier, settings

    fs, inner = filesystem(path, storage_options, step)
    return bool(Retrier(path, step, settings()).call("looking for it", 0, lambda: fs.exists(inner)))


def staging_name(path: str) -> str:
    """A local temporary name to write the bytes of ``path`` into, before :func:`publish`: beside a local path (so
    that publishing it is a rename), in the temporary directory for a URL."""
    if not is_url(path):
        return f"{local_path(path)}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    suffix = "-" + re.sub(r"[^A-Za-z0-9._-]", "_", path.rsplit("/", 1)[-1])[-64:]
    fd, tmp = tempfile.mkstemp(prefix="parafeed-upload-", suffix=suffix)
    os.close(fd)
    return tmp


def publish(tmp: str, path: str, step: str, storage_options: dict | None = None) -> None:
    """Put the finished local file ``tmp`` at ``path``: a rename, or an upload (retried on transient faults) after
    which ``tmp`` is removed. Either way the file appears whole or not at all (object stores make an upload visible
    once it is complete)."""
    if not is_url(path):
        os.replace(tmp, local_path(path))
        return
    from parafeed.io.remote import Retrier, settings

    try:
        fs, inner = filesystem(path, storage_options, step)
        Retrier(path, step, settings()).call("uploading", 0, lambda: fs.put_file(tmp, inner))
    finally:
        os.remove(tmp)


def read_file(filename: str | bytes | os.PathLike, name: str | None = None) -> bytes:
    """The contents of a file as ``bytes`` (``tf.io.read_file``); a missing file raises NotFoundError."""
    path = os.fsdecode(filename.item() if isinstance(filename, np.ndarray) else filename)
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise NotFoundError(f"read_file: {path}; No such file or directory") from None

"""Where files live: a local path, or any fsspec URL (``s3://``, ``gs://``, ``http(s)://``, ``memory://`` ...).

Local paths (and ``file://`` URLs) are opened directly, with no fsspec on the way. A URL goes to the filesystem
fsspec has for its protocol (s3fs, gcsfs, its own HTTP filesystem ...), built with the caller's
``storage_options`` (credentials, endpoints: the filesystem's own keyword arguments) or the filesystem's own
configuration (environment variables, config files). Its bytes are read by :class:`parafeed.io.remote.RemoteFile`:
ranged reads ahead of the reader, retried on transient faults; or from the local shard cache when it is on.
"""

from __future__ import annotations

import os
import re
from typing import Any

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
    options, so every file of a pipeline shares its connections (even with ``skip_instance_cache``)."""
    try:
        import fsspec
    except ImportError:
        raise _missing(url, step, "fsspec") from None
    protocol = url.split("://", 1)[0]
    key = fsspec.utils.tokenize(protocol, os.getpid(), storage_options)  # (a forked child builds its own)
    fs = _filesystems.get(key)
    if fs is not None:
        return fs, fs._strip_protocol(url)
    try:
        fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
        if "::" not in protocol:  # (a chain of filesystems is built anew each time)
            _filesystems[key] = fs
        return fs, path
    except ImportError as err:  # the protocol's package (s3fs, gcsfs, aiohttp) is not installed
        raise _missing(url, step, str(err)) from None
    except ValueError as err:
        raise InvalidArgumentError(f"{step}: {url}: {err}") from None


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
    fs, path = filesystem(pattern, storage_options, step)
    return [fs.unstrip_protocol(p) for p in fs.glob(path) if fs.isfile(p)]


def open_input(path: str, step: str, storage_options: dict | None = None) -> Any:
    """A raw, seekable binary file over ``path``: the local file, or a :class:`RemoteFile` for a URL. A missing
    file raises :class:`NotFoundError` (still a FileNotFoundError) naming the step."""
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
    return open_remote(path, fs, inner, step)

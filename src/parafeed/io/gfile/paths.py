"""Where a ``pf.io.gfile`` path is: a local path, or a URL's fsspec filesystem and the path there (:class:`Where`);
the storage options URLs use (:func:`set_storage_options`); ``join``; and the errors of the operating system and of
the filesystems as TensorFlow's (:func:`os_error`, :func:`not_found`, :func:`already_exists`).
"""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Callable
from typing import Any

from parafeed.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    UnknownError,
)
from parafeed.io.storage import is_url, local_path

PathLike = str | bytes | os.PathLike

# ---------------------------------------------------------------------------------------------- storage options

_options: dict[str, dict] = {}  # protocol ("" for any URL) -> storage options


def set_storage_options(options: dict | None, protocol: str | None = None) -> None:
    """Storage options for the URLs that gfile calls name without their own ``storage_options=``: for one
    ``protocol`` (``"s3"``, ``"gs"`` ...), or for every URL when it is None; ``None`` as ``options`` forgets them.

    Example:
        >>> pf.io.gfile.set_storage_options({"client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}, "s3")
        >>> pf.io.gfile.listdir("s3://bucket/checkpoints")
    """
    key = "" if protocol is None else protocol.split("://", 1)[0]
    if options is None:
        _options.pop(key, None)
    elif not isinstance(options, dict):
        raise InvalidArgumentError(f"gfile.set_storage_options: `options` must be a dict or None, got {options!r}")
    else:
        _options[key] = dict(options)


# ---------------------------------------------------------------------------------------------- where a path is


class Where:
    """A path resolved: ``local`` (a local path) or ``fs`` + ``inner`` (its fsspec filesystem and the path there);
    ``name`` is the path as the caller gave it, as a str."""

    __slots__ = ("fs", "inner", "local", "name", "options", "step")

    def __init__(self, name: Any, step: str, storage_options: dict | None):
        self.name = as_str(name, step)
        self.step = step
        self.fs: Any = None
        self.inner = ""
        self.local: str | None = None
        self.options: dict | None = None
        if is_url(self.name):
            from parafeed.io.storage import filesystem

            protocol = self.name.split("://", 1)[0]
            given = storage_options
            if given is None:
                given = _options.get(protocol.split("::")[-1], _options.get(""))
            self.options = given
            self.fs, self.inner = filesystem(self.name, given, step)
        else:
            self.local = local_path(self.name)

    def call(self, what: str, request: Callable[[], Any]) -> Any:
        """``request()`` on the URL's filesystem, retried on transient faults; a missing path raises NotFoundError,
        the file system's other definite answers (exists, permission, not a directory) their parafeed errors."""
        from parafeed.io.remote import Retrier, settings

        refused: list[OSError] = []

        def attempt() -> Any:
            try:
                return request()
            except (FileExistsError, PermissionError, IsADirectoryError, NotADirectoryError) as err:
                refused.append(err)  # (an answer, not a fault: never retried)
                return None

        try:
            result = Retrier(self.name, self.step, settings()).call(what, 0, attempt)
        except NotFoundError:
            raise not_found(self.step, self.name) from None
        if refused:
            raise os_error(self.step, self.name, refused[0])
        return result

    def info(self) -> dict:
        """fsspec's info of the URL (type, size ...)."""
        info: dict = self.call("asking about it", lambda: self.fs.info(self.inner))
        return info

    def same_filesystem(self, other: Where) -> bool:
        return self.fs is not None and self.fs is other.fs


def as_str(name: Any, step: str) -> str:
    """A path given as str, bytes or os.PathLike, as a str; InvalidArgumentError naming ``step`` otherwise."""
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.fsdecode(name)
    raise InvalidArgumentError(f"{step}: a path must be a str, bytes or os.PathLike, got {type(name).__name__}")


_CHECK = "check the path (pf.io.gfile.exists, pf.io.gfile.glob) and, for a URL, its storage_options"


def not_found(step: str, path: str, what: str = "No such file or directory", fix: str = _CHECK) -> NotFoundError:
    """TensorFlow's error for a missing path (still a FileNotFoundError), naming the path and what to do."""
    return NotFoundError(2, f"{step}: {path}; {what}: {fix}")


_PRECONDITIONS = (errno.EBUSY, errno.EXDEV, errno.EROFS, errno.ENOTEMPTY)


def already_exists(step: str, path: str) -> AlreadyExistsError:
    """TensorFlow's error for a copy or rename onto an existing ``path`` without ``overwrite``."""
    return AlreadyExistsError(17, f"{step}: {path}; file already exists: pass overwrite=True to replace it")


def os_error(step: str, path: str, err: OSError) -> Exception:
    """A parafeed error for an error of the operating system about ``path``, as TensorFlow classifies them."""
    reason = err.strerror or str(err)
    if isinstance(err, FileNotFoundError):
        return not_found(step, path, reason)
    if isinstance(err, FileExistsError):
        return AlreadyExistsError(err.errno, f"{step}: {path}; {reason}")
    if isinstance(err, PermissionError):
        return PermissionDeniedError(err.errno, f"{step}: {path}; {reason}")
    if err.errno in (errno.EINVAL, errno.ENAMETOOLONG, errno.ELOOP):
        return InvalidArgumentError(f"{step}: {path}; {reason}")
    if isinstance(err, (IsADirectoryError, NotADirectoryError)) or err.errno in _PRECONDITIONS:
        return FailedPreconditionError(f"{step}: {path}; {reason}")
    return UnknownError(f"{step}: {path}; {type(err).__name__}: {reason}")


def join(path: PathLike, *paths: PathLike) -> str:
    """Path parts joined: with ``/`` for a URL, as ``os.path.join`` for a local path (``tf.io.gfile.join``)."""
    first = os.fsdecode(path)
    rest = [os.fsdecode(p) for p in paths]
    if "://" in first[1:]:
        return posixpath.join(first, *rest)
    return os.path.join(first, *rest)

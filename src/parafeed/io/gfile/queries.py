"""What ``pf.io.gfile`` says of a path without changing it: ``exists``, ``isdir``, ``listdir``, ``stat`` (with
:class:`FileStatistics`) and ``walk``, and the forms of them that take a resolved :class:`~.paths.Where`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from parafeed.errors import NotFoundError
from parafeed.io.gfile.paths import PathLike, Where, as_str, join, not_found, os_error


def exists_at(where: Where) -> bool:
    """``exists`` of a resolved path."""
    if where.local is not None:
        return os.path.exists(where.local)
    return bool(where.call("looking for it", lambda: where.fs.exists(where.inner)))


def exists(path: PathLike, *, storage_options: dict | None = None) -> bool:
    """Whether a file or directory is at ``path`` (``tf.io.gfile.exists``)."""
    return exists_at(Where(path, "gfile.exists", storage_options))


def isdir_at(where: Where) -> bool:
    """``isdir`` of a resolved path."""
    if where.local is not None:
        return os.path.isdir(where.local)
    try:
        return bool(where.call("looking for it", lambda: where.fs.isdir(where.inner)))
    except NotFoundError:
        return False


def isdir(path: PathLike, *, storage_options: dict | None = None) -> bool:
    """Whether ``path`` is a directory; False when nothing is there (``tf.io.gfile.isdir``)."""
    return isdir_at(Where(path, "gfile.isdir", storage_options))


def list_entries(where: Where) -> list[tuple[str, bool]] | None:
    """The (name, is a directory) of each entry of the directory ``where``, in the listing's order; None when it is
    not a directory."""
    if where.local is not None:
        try:
            with os.scandir(where.local) as scan:
                return [(e.name, e.is_dir()) for e in scan]
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:
            raise os_error(where.step, where.name, err) from None
    try:
        if where.info().get("type") != "directory":
            return None
        listing = where.call("listing it", lambda: where.fs.ls(where.inner, detail=True))
    except NotFoundError:
        return None
    own = where.inner.rstrip("/")
    out = []
    for info in listing:
        name = info["name"].rstrip("/")
        if name == own or not name:
            continue
        out.append((name.rsplit("/", 1)[-1], info.get("type") == "directory"))
    return out


def listdir(path: PathLike, *, storage_options: dict | None = None) -> list[str]:
    """The names in the directory ``path``, without ``.`` and ``..`` and without a trailing ``/``, in the order the
    file system lists them (``tf.io.gfile.listdir``); NotFoundError when ``path`` is not a directory."""
    where = Where(path, "gfile.listdir", storage_options)
    entries = list_entries(where)
    if entries is None:
        raise not_found(where.step, where.name, "Could not find directory")
    return [name for name, _ in entries]


class FileStatistics:
    """What ``stat`` says of a path: its size in bytes, its modification time in nanoseconds since the epoch, and
    whether it is a directory (TensorFlow's ``FileStatistics``). Local files give whole seconds, as TensorFlow does."""

    __slots__ = ("is_directory", "length", "mtime_nsec")

    def __init__(self, length: int, mtime_nsec: int, is_directory: bool) -> None:
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory

    def _key(self) -> tuple[int, int, bool]:
        return (self.length, self.mtime_nsec, self.is_directory)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileStatistics) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, is_directory={self.is_directory})"


def _mtime_nsec(info: dict) -> int:
    """A modification time in nanoseconds from an fsspec info (s3fs's LastModified, gcsfs's updated, mtime ...)."""
    import datetime

    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            try:
                value = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
        if isinstance(value, datetime.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=datetime.timezone.utc)
            value = value.timestamp()
        if isinstance(value, (int, float)):
            return round(float(value) * 1e9)
    return 0


def stat(path: PathLike, *, storage_options: dict | None = None) -> FileStatistics:
    """The size, modification time and kind of ``path`` (``tf.io.gfile.stat``); NotFoundError when missing."""
    return stat_at(Where(path, "gfile.stat", storage_options))


def stat_at(where: Where) -> FileStatistics:
    """``stat`` of a resolved path."""
    if where.local is not None:
        try:
            st = os.stat(where.local)
        except OSError as err:
            raise os_error(where.step, where.name, err) from None
        import stat as modes

        return FileStatistics(int(st.st_size), int(st.st_mtime) * 1_000_000_000, modes.S_ISDIR(st.st_mode))
    info = where.info()
    directory = info.get("type") == "directory"
    return FileStatistics(int(info.get("size") or 0), _mtime_nsec(info), directory)


def walk(
    top: PathLike, topdown: bool = True, onerror: Callable[[Exception], Any] | None = None, *,
    storage_options: dict | None = None,
) -> Iterator[tuple[str, list[str], list[str]]]:  # fmt: skip
    """``(directory, subdirectory names, file names)`` for ``top`` and every directory below it, parents first
    (``topdown``) or last (``tf.io.gfile.walk``). A ``top`` that is not a directory yields nothing (``onerror`` is
    called with its NotFoundError). With ``topdown``, removing names from the subdirectory list skips them."""
    name = as_str(top, "gfile.walk")
    where = Where(name, "gfile.walk", storage_options)
    entries = list_entries(where)
    if entries is None:
        if onerror is not None:
            onerror(not_found(where.step, name, "Could not find directory"))
        return
    subdirs = [n for n, is_dir in entries if is_dir]
    files = [n for n, is_dir in entries if not is_dir]
    if topdown:
        yield name, subdirs, files
    for sub in subdirs:
        yield from walk(join(name, sub), topdown, onerror, storage_options=storage_options)
    if not topdown:
        yield name, subdirs, files

"""What ``pf.io.gfile`` changes: ``mkdir``, ``makedirs``, ``remove``, ``rmtree``, ``copy`` and ``rename`` (across file
systems too), and ``get_registered_schemes``.
"""

from __future__ import annotations

import contextlib
import os
import shutil

from parafeed.errors import AlreadyExistsError, FailedPreconditionError, InvalidArgumentError
from parafeed.io.gfile.files import GFile
from parafeed.io.gfile.paths import PathLike, Where, already_exists, os_error
from parafeed.io.gfile.queries import exists_at, isdir_at, stat_at

_CHUNK = 4 << 20  # bytes a copy moves at a time


def mkdir(path: PathLike, *, storage_options: dict | None = None) -> None:
    """Create the directory ``path``, whose parent must exist (``tf.io.gfile.mkdir``); nothing happens if it is
    there already, as in TensorFlow. On object stores nothing is created (a prefix needs no object)."""
    where = Where(path, "gfile.mkdir", storage_options)
    if where.local is not None:
        try:
            os.mkdir(where.local)
        except FileExistsError:
            pass
        except OSError as err:
            raise os_error(where.step, where.name, err) from None
        return
    with contextlib.suppress(AlreadyExistsError):
        where.call("creating it", lambda: where.fs.mkdir(where.inner, create_parents=False))


def makedirs(path: PathLike, *, storage_options: dict | None = None) -> None:
    """Create the directory ``path`` and its missing parents; nothing happens if it exists
    (``tf.io.gfile.makedirs``). FailedPreconditionError if a file is in the way."""
    where = Where(path, "gfile.makedirs", storage_options)
    if where.local is not None:
        try:
            os.makedirs(where.local, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise FailedPreconditionError(
                f"{where.step}: {where.name} is not a directory (a file is in its way)"
            ) from None
        except OSError as err:
            raise os_error(where.step, where.name, err) from None
        return
    where.call("creating it", lambda: where.fs.makedirs(where.inner, exist_ok=True))


def remove(path: PathLike, *, storage_options: dict | None = None) -> None:
    """Delete the file ``path`` (``tf.io.gfile.remove``); NotFoundError when missing, FailedPreconditionError for
    a directory (use ``rmtree``)."""
    where = Where(path, "gfile.remove", storage_options)
    if where.local is not None:
        try:
            os.remove(where.local)
        except IsADirectoryError:
            raise FailedPreconditionError(
                f"{where.step}: {where.name}; Is a directory: use pf.io.gfile.rmtree"
            ) from None
        except OSError as err:
            raise os_error(where.step, where.name, err) from None
        return
    if where.info().get("type") == "directory":
        raise FailedPreconditionError(f"{where.step}: {where.name}; Is a directory: use pf.io.gfile.rmtree")
    where.call("deleting it", lambda: where.fs.rm_file(where.inner))


def rmtree(path: PathLike, *, storage_options: dict | None = None) -> None:
    """Delete ``path`` and everything under it (a file is deleted too) (``tf.io.gfile.rmtree``); NotFoundError when
    nothing is there."""
    where = Where(path, "gfile.rmtree", storage_options)
    if where.local is not None:
        try:
            if os.path.isdir(where.local) and not os.path.islink(where.local):
                shutil.rmtree(where.local)
            else:
                os.remove(where.local)
        except OSError as err:
            raise os_error(where.step, getattr(err, "filename", None) or where.name, err) from None
        return
    where.info()  # (NotFoundError when missing)
    where.call("deleting it", lambda: where.fs.rm(where.inner, recursive=True))


def _check_target(src: Where, dst: Where, overwrite: bool, copying: bool) -> None:
    """The checks TensorFlow makes before a copy or rename: the source exists (a file, for a copy), the target is
    free (or ``overwrite``) and is not a directory."""
    source = stat_at(src)
    if copying and source.is_directory:
        raise InvalidArgumentError(f"{src.step}: {src.name} is a directory; copy copies files only")
    if exists_at(dst):
        if not overwrite:
            raise already_exists(dst.step, dst.name)
        if isdir_at(dst) and not source.is_directory:
            raise FailedPreconditionError(f"{dst.step}: {dst.name}; Is a directory")


def copy(src: PathLike, dst: PathLike, overwrite: bool = False, *, storage_options: dict | None = None) -> None:
    """Copy the file ``src`` to ``dst``, across file systems too (``tf.io.gfile.copy``). AlreadyExistsError if
    ``dst`` exists and not ``overwrite``; InvalidArgumentError for a directory."""
    step = "gfile.copy"
    source, target = Where(src, step, storage_options), Where(dst, step, storage_options)
    _check_target(source, target, overwrite, copying=True)
    if source.local is not None and target.local is not None:
        try:
            shutil.copyfile(source.local, target.local)
        except OSError as err:
            raise os_error(step, os.fsdecode(getattr(err, "filename", None) or target.name), err) from None
        return
    if source.same_filesystem(target):
        source.call("copying it", lambda: source.fs.copy(source.inner, target.inner))
        return
    with (
        GFile(source.name, "rb", storage_options=source.options) as f,
        GFile(target.name, "wb", storage_options=target.options) as out,
    ):
        while chunk := f.read(_CHUNK):
            out.write(chunk)
        out.tell()  # (an empty file is created too)


def rename(src: PathLike, dst: PathLike, overwrite: bool = False, *, storage_options: dict | None = None) -> None:
    """Move the file or directory ``src`` to ``dst`` (``tf.io.gfile.rename``). AlreadyExistsError if ``dst``
    exists and not ``overwrite``. Across file systems (a local file to a URL ...) a file is copied, then removed."""
    step = "gfile.rename"
    source, target = Where(src, step, storage_options), Where(dst, step, storage_options)
    if source.local is not None and target.local is not None:
        if not overwrite and os.path.lexists(target.local):
            raise already_exists(step, target.name)
        try:
            os.replace(source.local, target.local)
        except OSError as err:
            raise os_error(step, os.fsdecode(getattr(err, "filename", None) or source.name), err) from None
        return
    _check_target(source, target, overwrite, copying=False)
    if source.same_filesystem(target):
        source.call("moving it", lambda: source.fs.mv(source.inner, target.inner, recursive=True))
        return
    if isdir_at(source):
        raise InvalidArgumentError(f"{step}: {source.name} is a directory; across file systems rename moves files only")
    copy(source.name, target.name, overwrite=True, storage_options=storage_options)
    remove(source.name, storage_options=source.options)


def get_registered_schemes() -> list[str]:
    """The schemes gfile understands: ``""`` (local paths), ``file``, and every protocol fsspec knows (whose
    package may still need installing) (``tf.io.gfile.get_registered_schemes``)."""
    try:
        import fsspec
    except ImportError:
        return ["", "file"]
    return ["", "file", *sorted(set(fsspec.available_protocols()) - {"file"})]

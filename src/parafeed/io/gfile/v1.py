"""``pf.io.gfile.gfile_v1``: TF1's ``tf.compat.v1.gfile`` names (``Exists``, ``Glob``, ``GFile``, ``ListDirectory``,
...) over ``pf.io.gfile``'s functions.
"""

from __future__ import annotations

from collections.abc import Iterator

from parafeed.io.gfile.files import GFile
from parafeed.io.gfile.operations import copy, makedirs, mkdir, remove, rename, rmtree
from parafeed.io.gfile.paths import PathLike
from parafeed.io.gfile.patterns import glob
from parafeed.io.gfile.queries import exists, isdir, listdir, stat, walk


def _walk_v1(top: PathLike, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    """TF1's ``gfile.Walk``: ``in_order`` is ``topdown``."""
    return walk(top, topdown=in_order)


class _GFileV1:
    """TF1's ``tf.compat.v1.gfile`` names over the same functions: ``Copy``, ``DeleteRecursively``, ``Exists``,
    ``FastGFile``, ``GFile``, ``Glob``, ``IsDirectory``, ``ListDirectory``, ``MakeDirs``, ``MkDir``, ``Open``,
    ``Remove``, ``Rename``, ``Stat``, ``Walk``."""

    Copy = staticmethod(copy)
    DeleteRecursively = staticmethod(rmtree)
    Exists = staticmethod(exists)
    FastGFile = GFile
    GFile = GFile
    Glob = staticmethod(glob)
    IsDirectory = staticmethod(isdir)
    ListDirectory = staticmethod(listdir)
    MakeDirs = staticmethod(makedirs)
    MkDir = staticmethod(mkdir)
    Open = GFile
    Remove = staticmethod(remove)
    Rename = staticmethod(rename)
    Stat = staticmethod(stat)
    Walk = staticmethod(_walk_v1)

    def __repr__(self) -> str:
        return "<pf.io.gfile.gfile_v1: tf.compat.v1.gfile's names>"


gfile_v1 = _GFileV1()
"""TF1's ``tf.compat.v1.gfile`` / ``tf.gfile`` namespace (``gfile_v1.Exists(path)``, ``gfile_v1.GFile(...)``)."""

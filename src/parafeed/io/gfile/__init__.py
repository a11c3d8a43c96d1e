"""``pf.io.gfile``: TensorFlow's ``tf.io.gfile`` over local paths and every fsspec URL parafeed reads.

The functions and :class:`GFile` keep ``tf.io.gfile``'s names, arguments, results and errors, so code that manages
checkpoints, vocabularies or shard lists with ``tf.io.gfile`` ports by renaming ``tf.`` to ``pf.``.
:data:`gfile_v1` holds the TF1 spellings (``Exists``, ``Glob``, ``GFile``, ``ListDirectory``, ...).

Local paths (and ``file://`` URLs) use the operating system directly; a URL (``s3://``, ``gs://``, ``memory://``
...) goes to its fsspec filesystem, resolved as the readers resolve it (:mod:`parafeed.io.storage`: one filesystem
per protocol and options, requests retried on transient faults). Storage options (credentials, endpoints) come from
the ``storage_options=`` keyword of each call, else from :func:`set_storage_options`, else from the filesystem's
own configuration. fsspec is imported only when a URL is used.

What differs from the local file system on object stores: directories are key prefixes, so ``mkdir`` and
``makedirs`` create nothing, a "directory" exists once a key is under it, and a file written with :class:`GFile`
appears when it is closed (it is written to a local temporary file and uploaded whole).

The modules, by what they hold:

* ``paths``: where a path is (a local path, or a URL's filesystem), storage options, ``join``, and the errors of the
  operating system and of the filesystems as TensorFlow's;
* ``queries``: ``exists``, ``isdir``, ``listdir``, ``stat`` (:class:`FileStatistics`), ``walk``;
* ``patterns``: ``glob``;
* ``files``: :class:`GFile`;
* ``operations``: ``mkdir``, ``makedirs``, ``remove``, ``rmtree``, ``copy``, ``rename``, ``get_registered_schemes``;
* ``v1``: :data:`gfile_v1`.

:class:`AlreadyExistsError` and :class:`PermissionDeniedError` live in :mod:`parafeed.errors` (``pf.errors``) with
the other errors; they are named here too, for code that catches ``pf.io.gfile.AlreadyExistsError``.
"""

from parafeed.errors import AlreadyExistsError, PermissionDeniedError
from parafeed.io.gfile.files import GFile
from parafeed.io.gfile.operations import copy, get_registered_schemes, makedirs, mkdir, remove, rename, rmtree
from parafeed.io.gfile.paths import join, set_storage_options
from parafeed.io.gfile.patterns import glob
from parafeed.io.gfile.queries import FileStatistics, exists, isdir, listdir, stat, walk
from parafeed.io.gfile.v1 import gfile_v1

__all__ = [
    "AlreadyExistsError",
    "FileStatistics",
    "GFile",
    "PermissionDeniedError",
    "copy",
    "exists",
    "get_registered_schemes",
    "gfile_v1",
    "glob",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "set_storage_options",
    "stat",
    "walk",
]

"""``Dataset.snapshot``: the first complete pass is written to disk while passing through; later runs read it.

The snapshot of a pipeline lives in ``<path>/<fingerprint>/`` in the saved-dataset format
(:mod:`parafeed.io.saved_dataset`), published only when the pass ends, so an unfinished snapshot is never read. The
fingerprint describes the upstream pipeline (each step's type and arguments, Python functions by their code, their
defaults and the values they capture, lists, dicts and sets by type only since they are often accumulators), so a
changed pipeline writes a new snapshot, as tf.data keys snapshots by its graph's hash. Files the pipeline reads are
named, not hashed: change a file's contents and the old snapshot is read (as in tf.data).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import types
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from parafeed.core.arguments import callable_arg
from parafeed.core.dataset import Dataset, PassThroughDataset
from parafeed.core.functions import call, fn_name
from parafeed.core.graph import walk
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import ElementTypeError, InvalidArgumentError, StateError
from parafeed.io.saved_dataset import METADATA, SavedMetadata, SavedWriter
from parafeed.ops.save import read_shards
from parafeed.values.structure import spec_of
from parafeed.values.supertype import common_spec

_COMPRESSIONS = {None: "", "": "", "NONE": "", "AUTO": "", "SNAPPY": "", "GZIP": "GZIP"}
_NOT_ARGUMENTS = {"_parents", "_name"}  # the parents are walked; a name is not part of what a step does


def fingerprint(dataset: Dataset) -> str:
    """A hex digest that describes the pipeline ending at ``dataset`` (see the module docs)."""
    h = hashlib.sha256()
    for node in walk(dataset):
        h.update(f"<{type(node).__module__}.{type(node).__qualname__}>".encode())
        description = node.__getstate__()  # what a node pickles as: its arguments, not its run-time caches
        for key in sorted(description):
            if key not in _NOT_ARGUMENTS:
                h.update(key.encode())
                _describe(h, description[key], 0)
    return h.hexdigest()[:20]


def _describe(h: Any, value: Any, depth: int) -> None:
    if depth > 6:
        h.update(b"...")
        return
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        h.update(repr(value).encode() + type(value).__name__.encode())
    elif isinstance(value, np.ndarray):
        h.update(f"{value.dtype}{value.shape}".encode())
        h.update(repr(value.tolist()).encode() if value.dtype.kind == "O" else np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (tuple, list, set, frozenset)):
        h.update(f"{type(value).__name__}{len(value)}".encode())
        for v in sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value:
            _describe(h, v, depth + 1)
    elif isinstance(value, dict):
        h.update(f"dict{len(value)}".encode())
        for k, v in value.items():
            _describe(h, k, depth + 1)
            _describe(h, v, depth + 1)
    elif isinstance(value, Dataset):
        h.update(fingerprint(value).encode())
    elif isinstance(value, types.CodeType):
        h.update(value.co_code + repr(value.co_names).encode())
        _describe(h, value.co_consts, depth + 1)
    elif isinstance(value, (types.FunctionType, types.MethodType)):
        fn = value.__func__ if isinstance(value, types.MethodType) else value
        _describe(h, fn.__code__, depth + 1)
        _describe(h, fn.__defaults__, depth + 1)
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                h.update(b"<empty>")
                continue
            if isinstance(value, (list, dict, set)):  # mutable: an accumulator would change the key as it fills
                h.update(type(value).__name__.encode())
            else:
                _describe(h, value, depth + 1)
    elif callable(value) and hasattr(value, "__dict__"):  # a callable object: its class and fields
        h.update(type(value).__qualname__.encode())
        _describe(h, dict(sorted(vars(value).items())), depth + 1)
    else:
        h.update(f"<{type(value).__module__}.{type(value).__qualname__}>".encode())


def _shard(step: str, shard_func: Callable | None, element: Any, position: int) -> int:
    """The shard of an element: ``shard_func``'s int32 or int64 scalar, else its position modulo the CPU count
    (tf.data's default)."""
    if shard_func is None:
        return position % multiprocessing.cpu_count()
    value = np.asarray(call(shard_func, element))
    if value.shape != () or value.dtype not in (np.int32, np.int64):
        raise ElementTypeError(
            f"{step}: `shard_func` {fn_name(shard_func)} must return an int64 scalar, got {value.dtype} with shape "
            f"{value.shape}"
        )
    return int(value)


class SnapshotDataset(PassThroughDataset):
    """The input's elements; written to ``path`` on the first complete pass and read from there afterwards."""

    order_fixed = False  # a snapshot is read through reader_func

    def __init__(
        self,
        parent: Dataset,
        path: str | os.PathLike,
        compression: str | None = "AUTO",
        reader_func: Callable | None = None,
        shard_func: Callable | None = None,
        name: str | None = None,
    ):
        super().__init__(parent, name=name)
        key = compression.upper() if isinstance(compression, str) else compression
        if key not in _COMPRESSIONS:
            raise InvalidArgumentError(
                f"snapshot(): `compression` must be 'AUTO', 'GZIP', 'SNAPPY', 'NONE' or None, got {compression!r}"
            )
        self._compression = _COMPRESSIONS[key]
        self._reader_func = None if reader_func is None else callable_arg("snapshot()", "reader_func", reader_func)
        self._shard_func = None if shard_func is None else callable_arg("snapshot()", "shard_func", shard_func)
        self._root = os.fspath(path)
        # tf.data traces both functions here: check them now (reader_func on no shards, shard_func on one element)
        if self._reader_func is not None:
            read_shards("snapshot()", [], parent.element_spec, "", self._reader_func)
        if self._shard_func is not None and not os.path.exists(os.path.join(self.snapshot_dir, METADATA)):
            _shard("snapshot()", self._shard_func, parent._sample_element(), 0)

    @property
    def snapshot_dir(self) -> str:
        """The directory of this pipeline's snapshot: ``<path>/<fingerprint of the input pipeline>``."""
        return os.path.join(self._root, fingerprint(self._parent))

    def _make_iterator(self) -> DatasetIterator:
        return _SnapshotIterator(self)


class _SnapshotIterator(DatasetIterator):
    """Reads a finished snapshot, or passes the input through while writing one (published at the end; an error or
    an early ``close()`` drops it). A pass restored from a state in the middle passes its input through without
    writing, since the elements before the restored position are not known to it."""

    def __init__(self, ds: SnapshotDataset):
        super().__init__()
        self._ds = ds
        self._dir = ds.snapshot_dir
        self._inner: DatasetIterator | None = None
        self._writer: SavedWriter | None = None
        self._writing = False  # the pass writes a snapshot (its writer made at its first element)
        self._spec: Any = None  # the spec of the elements written so far
        self._reading = os.path.exists(os.path.join(self._dir, METADATA))
        self._open(write=True)

    def _open(self, write: bool) -> None:
        ds = self._ds
        if self._reading:  # (the spec saved with it: no call of the input's functions to learn one)
            meta = SavedMetadata(self._dir, "snapshot()")
            reader = read_shards("snapshot()", meta.shards, meta.element_spec(), meta.compression, ds._reader_func)
            self._inner = reader._iter()
            return
        self._writing = write
        self._inner = ds._parent._iter()

    def _start_writing(self, spec: Any) -> SavedWriter:
        """The writer, made at the first element with its spec (as tf.data, which traces the input instead of
        calling its functions once more to learn it)."""
        os.makedirs(self._dir, exist_ok=True)
        self._writer = SavedWriter(self._dir, spec, self._ds._compression, "snapshot()")
        self._spec = self._writer.spec
        return self._writer

    def __next__(self) -> Any:
        try:
            x = next(self._inner)  # type: ignore[arg-type]  # None only once closed (no cast per element)
        except StopIteration:
            if self._writing:
                self._writing = False
                writer = self._writer or self._start_writing(self._ds.element_spec)  # (an empty input)
                writer.spec = self._spec  # the elements' own: dimensions that varied are None
                writer.finish()
                self._writer = None
            raise
        except BaseException:
            self._drop()
            raise
        if self._writing:
            try:
                writer = self._writer or self._start_writing(spec_of(x))
                self._spec = common_spec("snapshot()", [self._spec, spec_of(x)])
                writer.write(x, _shard("snapshot()", self._ds._shard_func, x, writer.count))
            except BaseException:
                self._drop()
                raise
        return x

    def _get_state(self) -> dict:
        inner = cast(DatasetIterator, self._inner)  # (None only once closed)
        return {"reading": self._reading, "inner": inner.get_state()}

    def _set_state(self, state: dict) -> None:
        reading = bool(state["reading"])
        if reading and not os.path.exists(os.path.join(self._dir, METADATA)):
            raise StateError(f"set_state(): snapshot(): the state reads the snapshot {self._dir}, which is gone")
        self.close()
        self._reading = reading
        self._open(write=False)
        cast(DatasetIterator, self._inner).set_state(state["inner"])  # (_open sets it)

    def _drop(self) -> None:
        self._writing = False
        if self._writer is not None:
            self._writer.abort()
            self._writer = None

    def close(self) -> None:
        self._drop()
        if self._inner is not None:
            self._inner.close()
            self._inner = None

    def __del__(self) -> None:
        self._drop()

"""``cache``: keep the elements of the first full pass, in memory or in a file, and replay them afterwards."""

from __future__ import annotations

import os
import threading
from typing import Any, cast

from parafeed.core.dataset import Dataset, PassThroughDataset
from parafeed.core.graph import REORDERING
from parafeed.core.iterator import DatasetIterator, Scope, build_in, current_scope
from parafeed.errors import StateError
from parafeed.io.cache_format import CacheReader, CacheWriter
from parafeed.io.storage import exists
from parafeed.values.structure import flatten, pack_as

CACHE_SUFFIX = ".pfcache"


class MemoryCache:
    """The elements of the first complete pass of a cache step, and the iteration of the run that made them: the
    contents of an in-memory cache, which belong to its dataset (as in tf.data), not to one run."""

    def __init__(self) -> None:
        self.elements: list | None = None
        self.iteration: int | None = None
        self._lock = threading.Lock()

    def publish(self, elements: list, iteration: int) -> None:
        """Keep a complete pass, unless another one was kept first."""
        with self._lock:
            if self.elements is None:
                self.elements, self.iteration = elements, iteration


class CacheDataset(PassThroughDataset):
    """The input's elements, computed once.

    In memory (``filename=""``), the first run that reaches the end stores the elements and later runs replay them;
    an unfinished pass is discarded. With a filename the elements go to ``filename + ".pfcache"``, published only
    once complete, and every later run (in any process) reads that file. Later passes replay the first pass's order,
    not their input's (a reshuffling shuffle before the cache shuffles once): its kind is ``REORDERING``.
    """

    kind = REORDERING

    def __init__(self, parent: Dataset, filename: str | os.PathLike = "", name: str | None = None,
                 storage_options: dict | None = None):  # fmt: skip
        super().__init__(parent, name=name)
        filename = os.fspath(filename)
        self._path = filename + CACHE_SUFFIX if filename else None
        self._storage_options = storage_options
        self._memory = MemoryCache()

    def with_parents(self, *parents: Dataset) -> CacheDataset:
        clone = super().with_parents(*parents)
        clone._memory = MemoryCache()  # another input: its own cached pass
        return clone

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        del state["_memory"]  # a copy in another process caches its own pass
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._memory = MemoryCache()

    def _make_iterator(self) -> DatasetIterator:
        return _CacheIterator(self, current_scope())

    def _read_file(self) -> Any:
        """The file's elements, described by its header; the input's element spec is asked only when it is known
        without running a user function (to check the file was written by this pipeline), or when the header cannot
        describe them."""
        with CacheReader(cast(str, self._path), self._storage_options) as reader:  # (a file cache's)
            if not reader.count:
                return
            nesting, dtypes = reader.nesting, reader.dtypes
            parent = self._parent
            if nesting is None or dtypes is None or parent._static_shapes():
                spec = parent.element_spec
                nesting, dtypes = spec, [s.dtype for s in flatten(spec)]
                reader.check(dtypes)
            for leaves in reader.records(dtypes):
                yield pack_as(nesting, leaves)


class _CacheIterator(DatasetIterator):
    """Replays the cached pass, or passes the input through while recording it (published when the input ends;
    an error or an early ``close()`` discards the record: only a complete pass is ever cached).

    Its state says which pass it is in: a replay of the memory's pass (by the iteration that made it) or of the file,
    or the filling pass of an iteration. A restore replays that same pass, or computes it again from the input (in a
    new process, or where another run has cached another pass since), never a different one.
    """

    def __init__(self, ds: CacheDataset, scope: Scope):
        super().__init__()
        self._ds = ds
        self._scope = scope
        self._index = 0
        self._source: Any = None
        self._parent: DatasetIterator | None = None  # the input, while filling
        self._writer: CacheWriter | None = None
        self._elements: list | None = None
        self._replay: tuple | None = None  # (iteration or None for a file) while replaying
        self._iteration = scope.iteration  # the pass being filled
        self._open(replay=True, iteration=None)

    def _step_name(self) -> str:
        return "Cache"

    def _open(self, replay: bool, iteration: int | None) -> None:
        """Replay the cached pass of ``iteration`` (any, when None) if there is one, else fill from the input's pass
        of ``iteration`` (this run's, when None)."""
        ds, memory = self._ds, self._ds._memory
        if replay and ds._path is None and memory.elements is not None and iteration in (None, memory.iteration):
            self._source, self._replay = iter(memory.elements), (memory.iteration,)
            return
        if replay and ds._path is not None and exists(ds._path, "cache()", ds._storage_options):
            self._source, self._replay = ds._read_file(), (None,)
            return
        self._replay = None
        if iteration is not None:
            self._iteration = iteration
        if ds._path is None:
            self._elements = []
        elif not exists(ds._path, "cache()", ds._storage_options):
            # before the input iterator, so a failure here leaks nothing
            self._writer = CacheWriter(ds._path, ds._storage_options)
        replay_of = None if self._iteration == self._scope.iteration else self._iteration
        self._parent = build_in(self._scope, ds._parent, replay=replay_of)

    def __next__(self) -> Any:
        if self._replay is not None:
            x = next(self._source)
            self._index += 1
            return x
        try:
            x = next(self._parent)  # type: ignore[arg-type]  # set while filling (no cast per element)
        except StopIteration:
            self._publish()
            raise
        except BaseException:
            self._discard()
            raise
        if self._writer is not None:
            try:
                self._writer.write(x)
            except BaseException:
                self._discard()
                raise
        elif self._elements is not None:
            self._elements.append(x)
        self._index += 1
        return x

    def _get_state(self) -> dict:
        if self._replay is not None:
            return {"index": self._index, "replay": True, "iteration": self._replay[0]}
        return {"index": self._index, "replay": False, "iteration": self._iteration}

    def _set_state(self, state: dict) -> None:
        """Opens the saved pass again (see the class docs) and takes its elements up to the saved index."""
        self.close()
        self._index = 0
        iteration = state.get("iteration")
        self._open(bool(state["replay"]), None if iteration is None else int(iteration))
        index = int(state["index"])
        if self.skip(index) != index:
            raise StateError(f"set_state(): cache(): the cached pass ended before the saved position {index}")

    def _publish(self) -> None:
        if self._writer is not None:
            self._writer.finish()
            self._writer = None
        elif self._elements is not None:
            self._ds._memory.publish(self._elements, self._iteration)
        self._elements = None

    def _discard(self) -> None:
        if self._writer is not None:
            self._writer.abort()
            self._writer = None
        self._elements = None

    def close(self) -> None:
        self._discard()
        if self._parent is not None:
            self._parent.close()
            self._parent = None
        closer = getattr(self._source, "close", None)
        if closer is not None:
            closer()
        self._source = None

    def __del__(self) -> None:
        self._discard()

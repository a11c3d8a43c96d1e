"""``cache``: keep the elements of the first full pass, in memory or in a file, and replay them afterwards."""

from __future__ import annotations

import os
from typing import Any

from parafeed.dataset import Dataset, PassThroughDataset
from parafeed.io.cache_file import CacheReader, CacheWriter
from parafeed.iterator import DatasetIterator
from parafeed.structure import flatten, pack_as

CACHE_SUFFIX = ".pfcache"


class CacheDataset(PassThroughDataset):
    """The input's elements, computed once.

    In memory (``filename=""``), the first iterator that reaches the end stores the elements and later iterators
    replay them; an unfinished pass is discarded. With a filename the elements go to ``filename + ".pfcache"``,
    published only once complete, and every later iterator (in any process) reads that file.
    """

    _count_preserving = True

    def __init__(self, parent: Dataset, filename: str | os.PathLike = "", name: str | None = None):
        super().__init__(parent, name=name)
        filename = os.fspath(filename)
        self._path = filename + CACHE_SUFFIX if filename else None
        self._memory: list | None = None

    def _make_iterator(self) -> DatasetIterator:
        if self._path is None:
            if self._memory is not None:
                return _ReplayIterator(iter(self._memory))
            return _FillIterator(self._parent._iter(), self, None)
        if os.path.exists(self._path):
            return _ReplayIterator(self._read_file())
        writer = CacheWriter(self._path)  # before the input iterator, so a failure here leaks nothing
        return _FillIterator(self._parent._iter(), self, writer)

    def _read_file(self) -> Any:
        """The file's elements, described by its header; the input's element spec is asked only when it is known
        without running a user function (to check the file was written by this pipeline), or when the header cannot
        describe them."""
        with CacheReader(self._path) as reader:
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
    """Both kinds of cache iterator save the index of the next element, so a state saved while filling the cache
    restores into one replaying it and the other way round."""

    _index = 0

    def _step_name(self) -> str:
        return "Cache"

    def _get_state(self) -> dict:
        return {"index": self._index}

    def _set_state(self, state: dict) -> None:
        """Takes the elements up to the saved index again (a cache being filled needs them; its input is new)."""
        self.skip(self._steps_forward(int(state["index"]), self._index))


class _ReplayIterator(_CacheIterator):
    def __init__(self, source: Any):
        super().__init__()
        self._source = source

    def __next__(self) -> Any:
        x = next(self._source)
        self._index += 1
        return x

    def close(self) -> None:
        closer = getattr(self._source, "close", None)
        if closer is not None:
            closer()


class _FillIterator(_CacheIterator):
    """Passes the input through while recording it; publishes the record when the input ends.

    An error or an early ``close()`` discards the record: only a complete pass is ever cached.
    """

    def __init__(self, parent: DatasetIterator, ds: CacheDataset, writer: CacheWriter | None):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._writer = writer
        self._elements: list | None = [] if writer is None else None

    def __next__(self) -> Any:
        try:
            x = next(self._parent)
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

    def _publish(self) -> None:
        if self._writer is not None:
            self._writer.finish()
            self._writer = None
        elif self._elements is not None and self._ds._memory is None:
            self._ds._memory = self._elements
        self._elements = None

    def _discard(self) -> None:
        if self._writer is not None:
            self._writer.abort()
            self._writer = None
        self._elements = None

    def close(self) -> None:
        self._discard()
        super().close()

    def __del__(self) -> None:
        self._discard()

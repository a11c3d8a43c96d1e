"""``flat_map``'s iterator: an interleave with ``cycle_length=1``, the mapped datasets one after another.

When the inputs read files (their iterators' ``reads_files``), the ``FILES_AHEAD`` inputs after the current one are
opened while the current one is read, and their first requests put in flight: a remote file's latency is then not
paid between files. The function is called for those inputs at that time (one or two inputs early), never for inputs
whose datasets do not read files.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from parafeed.core.iterator import DatasetIterator, build_in, current_scope
from parafeed.core.positions import position, snapshot

if TYPE_CHECKING:
    from parafeed.ops.interleave import InterleaveDataset

FILES_AHEAD = 2  # inputs opened ahead when they read files (each remote file takes up to half the read-ahead)
_END = object()  # (opened ahead) the end of the inputs


class FlatMapIterator(DatasetIterator):
    """One dataset after another (``cycle_length=1``, where block_length does not matter)."""

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._scope = current_scope()
        self._current: DatasetIterator | None = None
        self._inputs = 0  # inputs taken from the parent (the next one's number), those opened ahead not counted
        self._at: tuple = (None, None)  # the input's state before the current input element
        # the inputs after the current one, opened ahead: (number, the input's state before it, its iterator, _END,
        # or the error opening it raised)
        self._ahead: collections.deque[tuple[int, tuple, Any]] = collections.deque()
        # what the next element is taken from: the current input, or what it lent (DatasetIterator.lend); empty when
        # the current input is to be asked first
        self._from: Iterator[Any] = iter(())

    def __next__(self) -> Any:
        try:
            return next(self._from)
        except StopIteration:
            pass
        while True:
            it = self._current
            if it is not None:
                if self._from is not it:  # (just opened, or what it lent is used up: it gives the next element)
                    try:
                        element = next(it)
                    except StopIteration:
                        pass
                    else:  # (a reader lends the rest of its chunk: taken without calling it, see lend())
                        self._from = it.lend() if it.lends else it
                        return element
                it.close()
                self._current, self._from = None, iter(())
            self._open_next()

    @property
    def lends(self) -> bool:  # type: ignore[override]
        return self._current is not None and self._current.lends

    def lend(self) -> Iterator[Any]:
        return self._from

    def _open_next(self) -> None:
        """Make the next input the current one (StopIteration at the end of the inputs, the error where opening it
        failed), and open the ones after it ahead when it reads files."""
        if not self._ahead:
            self._ahead.append(self._open(self._inputs))
        number, self._at, it = self._ahead[0]
        if it is _END:
            raise StopIteration
        self._ahead.popleft()
        if isinstance(it, Exception):
            self._inputs = number  # (an input that failed to open takes no number, as its function gave no dataset)
            raise it
        self._inputs = number + 1
        self._current, self._from = it, iter(())
        if it.reads_files:
            self._open_ahead()

    def _open_ahead(self) -> None:
        """Open the inputs after the current one, up to FILES_AHEAD, and start their reads; not past the end of the
        inputs or an input that failed to open."""
        while len(self._ahead) < FILES_AHEAD:
            number = self._inputs
            if self._ahead:
                number, _, last = self._ahead[-1]
                if not isinstance(last, DatasetIterator):
                    return
                number += 1
            self._ahead.append(self._open(number))
            it = self._ahead[-1][2]
            if isinstance(it, DatasetIterator):
                it.open_ahead()

    def _open(self, number: int) -> tuple[int, tuple, Any]:
        at = snapshot(self._parent)
        try:
            element = next(self._parent)
            return number, at, build_in(self._scope, self._ds.open_input(element, number))
        except StopIteration:
            return number, at, _END
        except Exception as err:
            return number, at, err

    @property
    def reads_files(self) -> bool:  # type: ignore[override]
        it = self._first()
        return isinstance(it, DatasetIterator) and it.reads_files

    def open_ahead(self) -> None:
        it = self._first()
        if isinstance(it, DatasetIterator):
            it.open_ahead()

    def _first(self) -> Any:
        """The current input, else the next one (opened now if need be: an iterator, _END or an error)."""
        if self._current is not None:
            return self._current
        if not self._ahead:
            self._ahead.append(self._open(self._inputs))
        return self._ahead[0][2]

    def skip(self, n: int) -> int:
        self._from = iter(())
        done = 0
        while done < n:
            if self._current is None:
                try:
                    self._open_next()
                except StopIteration:
                    break
            assert self._current is not None
            got = self._current.skip(n - done)
            done += got
            if done < n:
                self._current.close()
                self._current = None
        return done

    def _get_state(self) -> dict:
        if self._current is None:
            if self._ahead:  # (the input has moved past those opened ahead)
                number, (at, error), _ = self._ahead[0]
                return {"at": position(at, 0, error)["at"], "current": None, "inputs": number}
            return {"at": self._parent.get_state(), "current": None, "inputs": self._inputs}
        at, error = self._at
        return {"at": position(at, 0, error)["at"], "current": self._current.get_state(), "inputs": self._inputs}

    def _set_state(self, state: dict) -> None:
        self._close_inputs()
        self._parent.set_state(state["at"])
        self._inputs = int(state["inputs"])
        if state["current"] is not None:
            self._inputs -= 1
            self._open_next()  # (the input the state was taken in, and the one after it ahead)
            assert self._current is not None
            self._at = (state["at"], None)
            self._current.set_state(state["current"])

    def _close_inputs(self) -> None:
        self._from = iter(())
        for it in (self._current, *(it for _, _, it in self._ahead)):
            if isinstance(it, DatasetIterator):
                it.close()
        self._current = None
        self._ahead.clear()

    def close(self) -> None:
        self._close_inputs()
        super().close()

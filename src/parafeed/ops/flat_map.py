"""``flat_map``'s iterator: an interleave with ``cycle_length=1``, the mapped datasets one after another."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parafeed.core.iterator import DatasetIterator, build_in, current_scope
from parafeed.core.positions import position, snapshot

if TYPE_CHECKING:
    from parafeed.ops.interleave import InterleaveDataset


class FlatMapIterator(DatasetIterator):
    """One dataset after another (``cycle_length=1``, where block_length does not matter)."""

    def __init__(self, parent: DatasetIterator, ds: InterleaveDataset):
        super().__init__(parent)
        self._parent = parent
        self._ds = ds
        self._scope = current_scope()
        self._current: DatasetIterator | None = None
        self._inputs = 0
        self._at: tuple = (None, None)  # the input's state before the current input element

    def __next__(self) -> Any:
        while True:
            it = self._current
            if it is not None:
                try:
                    return next(it)
                except StopIteration:
                    it.close()
                    self._current = None
            self._at = snapshot(self._parent)
            element = next(self._parent)
            self._current = build_in(self._scope, self._ds.open_input(element, self._inputs))
            self._inputs += 1

    def skip(self, n: int) -> int:
        done = 0
        while done < n:
            if self._current is None:
                self._at = snapshot(self._parent)
                try:
                    element = next(self._parent)
                except StopIteration:
                    break
                self._current = build_in(self._scope, self._ds.open_input(element, self._inputs))
                self._inputs += 1
            got = self._current.skip(n - done)
            done += got
            if done < n:
                self._current.close()
                self._current = None
        return done

    def _get_state(self) -> dict:
        if self._current is None:
            return {"at": self._parent.get_state(), "current": None, "inputs": self._inputs}
        at, error = self._at
        return {"at": position(at, 0, error)["at"], "current": self._current.get_state(), "inputs": self._inputs}

    def _set_state(self, state: dict) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        self._parent.set_state(state["at"])
        self._inputs = int(state["inputs"])
        if state["current"] is not None:
            self._at = (state["at"], None)
            element = next(self._parent)
            self._current = build_in(self._scope, self._ds.open_input(element, self._inputs - 1))
            self._current.set_state(state["current"])

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        super().close()

"""``repeat``: run the input again and again."""

from __future__ import annotations

from typing import Any

from parafeed.core.arguments import count_arg
from parafeed.core.dataset import INFINITE, UNKNOWN, Dataset, PassThroughDataset
from parafeed.core.iterator import DatasetIterator, build_in, current_scope


class RepeatDataset(PassThroughDataset):
    """The input's elements ``count`` times over (forever for ``None`` / -1); each pass is a new input iterator."""

    def __init__(self, parent: Dataset, count: int | None = None, name: str | None = None):
        super().__init__(parent, name=name)
        self._count = -1 if count is None else count_arg("repeat()", "count", count)

    def _make_iterator(self) -> DatasetIterator:
        return _RepeatIterator(self._parent, self._count)

    def _cardinality(self) -> int:
        n = self._parent._cardinality()
        if self._count == -1:
            return 0 if n == 0 else INFINITE
        if self._count == 0:
            return 0
        if n in (INFINITE, UNKNOWN):
            return n
        return n * self._count


class _RepeatIterator(DatasetIterator):
    def __init__(self, dataset: Dataset, count: int):
        super().__init__()
        self._dataset = dataset
        self._scope = current_scope()
        self._count = count
        self._epoch = 0
        self._it: DatasetIterator | None = None
        self._produced = False

    def __next__(self) -> Any:
        while True:
            if self._it is None:
                if self._count != -1 and self._epoch >= self._count:
                    raise StopIteration
                self._it = build_in(self._scope, self._dataset, self._epoch)
                self._produced = False
            try:
                x = next(self._it)
            except StopIteration:
                self._it.close()
                self._it = None
                self._epoch += 1
                if not self._produced:  # an empty pass: repeating it would spin forever
                    self._count = self._epoch
                continue
            self._produced = True
            return x

    def skip(self, n: int) -> int:
        """Skip ``n`` elements with the input's own skips (a TFRecord reader seeks), pass after pass."""
        done = 0
        while done < n:
            if self._it is None:
                if self._count != -1 and self._epoch >= self._count:
                    break
                self._it = build_in(self._scope, self._dataset, self._epoch)
                self._produced = False
            skipped = self._it.skip(n - done)
            done += skipped
            self._produced = self._produced or skipped > 0
            if done < n:  # the pass ended
                self._it.close()
                self._it = None
                self._epoch += 1
                if not self._produced:
                    self._count = self._epoch
        return done

    def _get_state(self) -> dict:
        child = None if self._it is None else self._it.get_state()
        return {"epoch": self._epoch, "count": self._count, "produced": self._produced, "current": child}

    def _set_state(self, state: dict) -> None:
        self.close()
        self._epoch, self._count = int(state["epoch"]), int(state["count"])
        self._produced = bool(state["produced"])
        if state["current"] is not None:
            self._it = build_in(self._scope, self._dataset, self._epoch)
            self._it.set_state(state["current"])

    def close(self) -> None:
        if self._it is not None:
            self._it.close()
            self._it = None

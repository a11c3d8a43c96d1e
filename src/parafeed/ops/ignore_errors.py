"""``ignore_errors``: drop the elements whose production raised, and count them."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import Any

from parafeed.core.dataset import UNKNOWN, Dataset, PassThroughDataset
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import WorkerError

log = logging.getLogger("parafeed")


class IgnoredErrors:
    """What ``ignore_errors`` skipped: a total, counts by exception type and the first few messages."""

    KEPT_MESSAGES = 20

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.by_type: Counter[str] = Counter()
        self.messages: list[str] = []

    def add(self, err: Exception) -> None:
        with self._lock:
            self.count += 1
            self.by_type[type(err).__name__] += 1
            if len(self.messages) < self.KEPT_MESSAGES:
                self.messages.append(f"{type(err).__name__}: {err}")

    def __repr__(self) -> str:
        return f"IgnoredErrors(count={self.count}, by_type={dict(self.by_type)})"


class IgnoreErrorsDataset(PassThroughDataset):
    """The input's elements, minus those whose production raised an exception (tf.data's ``ignore_errors``).

    Skipped errors are counted in :attr:`ignored` (over all iterators of this dataset); with ``log_warning`` each
    is also logged. The input must be able to go on after an error, as parafeed's steps and readers do.
    """

    def __init__(self, parent: Dataset, log_warning: bool = False, name: str | None = None):
        super().__init__(parent, name=name)
        self._log_warning = bool(log_warning)
        self.ignored = IgnoredErrors()

    def _make_iterator(self) -> DatasetIterator:
        return _IgnoreErrorsIterator(self._parent._iter(), self.ignored, self._log_warning)

    def _cardinality(self) -> int:
        return UNKNOWN


class _IgnoreErrorsIterator(DatasetIterator):
    def __init__(self, parent: DatasetIterator, ignored: IgnoredErrors, log_warning: bool):
        super().__init__(parent)
        self._parent = parent
        self._ignored = ignored
        self._log_warning = log_warning

    def __next__(self) -> Any:
        while True:
            try:
                return next(self._parent)
            except (StopIteration, WorkerError):  # a dead worker stops the pipeline: it is no element's error
                raise
            except Exception as err:
                self._ignored.add(err)
                if self._log_warning:
                    log.warning("ignore_errors(): skipped an element: %s: %s", type(err).__name__, err)

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state()}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])

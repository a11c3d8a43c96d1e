"""``map`` then ``batch``, fused as tf.data fuses them by default (``map_and_batch_fusion``): a batch is the unit.

Two things follow, as in tf.data:

* **Errors.** A batch is ``batch_size`` consecutive input elements whatever happens: an error in one of them is
  raised for the whole batch (its other rows are dropped) and the next batch starts at the next boundary. With
  ``options.experimental_optimization.map_and_batch_fusion = False`` the next batch starts right after the failing
  element instead, as ``batch()`` over any other step does.
* **Rows written where they are made.** A result is copied into its row of the batch by the thread that computed it,
  while it is still in that core's cache, and its memory is free at once for the next result; stacking a batch
  afterwards would read every row again from main memory (:class:`~parafeed.parallel.batch_rows.BatchRows`: by the
  map's worker threads or processes when its order is fixed, else by the batch as each result arrives).
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from parafeed.core.iterator import DatasetIterator
from parafeed.errors import WorkerError
from parafeed.parallel.batch_rows import BatchRows, Placed


class Numbered(DatasetIterator):
    """The map's input with each element's number, for workers writing results into :class:`BatchRows`. An input
    error takes a number too (the map hands it on as one outcome). Its state is its input's: numbering restarts at 0
    when a state is restored (a fused batch saves states only between batches)."""

    def __init__(self, parent: DatasetIterator):
        super().__init__(parent)
        self.inner = parent
        self._count = 0

    def __next__(self) -> tuple[int, Any]:
        i = self._count
        self._count = i + 1
        try:
            return i, next(self.inner)
        except StopIteration:
            self._count = i
            raise

    def skip(self, n: int) -> int:
        return self.inner.skip(n)  # only while restoring, before numbering starts

    def get_state(self) -> dict:
        return self.inner.get_state()

    def set_state(self, state: dict) -> None:
        self.inner.set_state(state)
        self._count = 0


def placing(fn: Any, rows: BatchRows) -> Any:
    """``fn`` for :class:`Numbered` input: its result written into its row where it can be."""

    def apply(numbered: tuple[int, Any]) -> Any:
        return rows.place(numbered[0], fn(numbered[1]))

    return apply


class MapAndBatchIterator(DatasetIterator):
    """Batches of a map's results, ``batch_size`` input elements each, errors raised for the whole batch."""

    def __init__(self, parent: DatasetIterator, rows: BatchRows, drop_remainder: bool):
        super().__init__(parent)
        self._parent = parent
        self._rows = rows
        self._size = rows.size
        self._drop_remainder = drop_remainder
        self._number = 0  # batches taken since the start (or the restored position)

    def __next__(self) -> Any:
        got: list[Any] = []
        error, size, rows = None, self._size, self._rows
        base = self._number * size
        while len(got) < size:
            if not rows.enabled:  # results not written in place: take the rest at C speed
                try:
                    got.extend(islice(self._parent, size - len(got)))
                except WorkerError:
                    raise
                except Exception as err:
                    error = error or err
                    got.append(None)  # the failed element's place
                    continue
                break  # the batch is full, or the input ended
            try:
                x = next(self._parent)
            except StopIteration:
                break
            except WorkerError:
                raise
            except Exception as err:
                error = error or err
                x = None
            got.append(x if type(x) is Placed or error is not None else rows.place(base + len(got), x))
        n = len(got)
        number = self._number
        if n == 0 or (self._drop_remainder and n < size):
            self._rows.drop(number)
            raise StopIteration
        self._number += 1
        if error is not None:
            self._rows.drop(number)
            raise error
        return self._rows.take(number, got, "batch()")

    def _step_name(self) -> str:
        return "Batch"  # the same state as an unfused batch: a checkpoint restores with fusion on or off

    def _get_state(self) -> dict:
        return {"parent": self._parent.get_state()}

    def _set_state(self, state: dict) -> None:
        self._parent.set_state(state["parent"])
        self._number = 0

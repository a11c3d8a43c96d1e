"""The iterator base class: the run-time state of one pipeline step, with ``get_state()`` / ``set_state()``."""

from __future__ import annotations

from typing import Any

from parafeed.errors import StateError
from parafeed.stats import Pipeline, StageStats


class DatasetIterator:
    """Run-time state of one node: iterate it with ``next()``; ``close()`` releases threads, processes and files.

    Iterators keep raising ``StopIteration`` once exhausted.
    """

    _stage: StageStats | None = None  # this step's counters, when the pipeline collects stats
    _pipeline: Pipeline | None = None  # set on the root iterator of a tree

    def __init__(self, *parents: DatasetIterator):
        self._parents = parents

    def stats(self) -> list[StageStats]:
        """Per-step counters of the running pipeline (with ``Options(stats=True)``), upstream steps first."""
        return self._pipeline.stages() if self._pipeline is not None else []

    def __iter__(self) -> DatasetIterator:
        return self

    def __next__(self) -> Any:
        raise NotImplementedError

    def skip(self, n: int) -> int:
        """Move past up to ``n`` elements without returning them; returns how many were skipped.

        Steps that can skip cheaply (a TFRecord reader seeking with its index, ``map`` not running its function on
        skipped elements) override this; the default takes them with ``next``.
        """
        done = 0
        for _ in range(n):
            try:
                next(self)
            except StopIteration:
                break
            done += 1
        return done

    # ------------------------------------------------------------------ checkpointing

    def get_state(self) -> dict:
        """This iterator's position as a small JSON-serialisable dict: restore it with ``set_state``.

        The state holds positions, indices, seeds and RNG states, never element data (except ``unique``'s seen
        values). Restore it into a new iterator of the same pipeline, in this process or another one.

        Example:
            >>> it = iter(ds); next(it); state = it.get_state()
            >>> it2 = iter(ds); it2.set_state(state)  # it2 goes on where `it` stood
        """
        state = {"step": self._step_name(), **self._get_state()}
        if self._pipeline is None:
            return state
        from parafeed.checkpoint import with_seeds

        return with_seeds(self._pipeline, state)

    def set_state(self, state: dict) -> None:
        """Move this iterator to a position saved by ``get_state`` (on a new iterator, before taking elements)."""
        if not isinstance(state, dict) or state.get("step") != self._step_name():
            got = state.get("step") if isinstance(state, dict) else type(state).__name__
            raise StateError(
                f"set_state(): the state was saved by a {got!r} step where this pipeline has {self._step_name()!r}; "
                "restore a state into the same pipeline it was saved from"
            )
        if self._pipeline is not None:
            from parafeed.checkpoint import restore_seeds

            restore_seeds(self._pipeline, state)
        self._set_state(state)

    def _step_name(self) -> str:
        return type(self).__name__.strip("_").removesuffix("Iterator")

    def _steps_forward(self, position: int, at: int) -> int:
        """How many elements a step that cannot seek takes again to get from ``at`` to a restored ``position``."""
        if position < at:
            raise StateError(
                f"set_state(): the {self._step_name()} step cannot go back (from element {at} to {position}); "
                "restore the state into a new iterator (iter(ds))"
            )
        return position - at

    def _get_state(self) -> dict:
        raise StateError(f"get_state(): the {self._step_name()} step cannot save its position")

    def _set_state(self, state: dict) -> None:
        raise StateError(f"set_state(): the {self._step_name()} step cannot restore a position")

    def close(self) -> None:
        """Release resources held by this iterator and its parents; idempotent."""
        for parent in self._parents:
            parent.close()

    def __enter__(self) -> DatasetIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

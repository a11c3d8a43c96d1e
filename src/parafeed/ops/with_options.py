"""``with_options``: options for the whole pipeline, set at a step."""

from __future__ import annotations

from parafeed.core.dataset import Dataset, PassThroughDataset
from parafeed.core.graph import ONE_TO_ONE
from parafeed.core.iterator import DatasetIterator
from parafeed.core.options import Options


class OptionsDataset(PassThroughDataset):
    """The input as it is, with ``options`` applying to every step of the pipeline (later ones win; see
    ``Dataset.options``). Its iterator is its input's: it costs nothing per element."""

    kind = ONE_TO_ONE

    def __init__(self, parent: Dataset, options: Options, name: str | None = None):
        super().__init__(parent, name=name)
        self._options = options

    def _own_options(self) -> Options:
        return self._options

    def _make_iterator(self) -> DatasetIterator:
        return self._parent._iter()

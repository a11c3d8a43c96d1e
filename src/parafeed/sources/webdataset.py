"""``WebDataset``: the samples of WebDataset tar shards, with everything a file reader has: splits by shard or by
sample (samples are reached by the byte offsets of their headers), label balance, resume and elastic resume,
object storage."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.sources.files import FileReaderDataset
from parafeed.values.structure import STRING, TensorSpec


class WebDataset(FileReaderDataset):
    """The samples of WebDataset tar shards, one element per sample: a dict of ``__key__`` and one ``bytes`` per
    extension, grouped as the ``webdataset`` package groups them (docs/formats.md#webdataset).

    Args:
        filenames: a shard's name, a list of them, or a dataset of them (``.tar``; local or a URL).
        keys: the extensions to read (others are left out); by default the first sample's, and a sample with others
            is an error.
        defaults: ``{extension: bytes}`` for samples without that member.
        num_parallel_reads: read that many shards at once, interleaving their samples one by one.
        storage_options: for shards named by URL, the fsspec filesystem's own options.

    Example:
        >>> ds = pf.WebDataset(pf.io.gfile.glob("shards/train-*.tar"), keys=["jpg", "cls"])
        >>> ds = ds.map(lambda s: (pf.image.decode_jpeg(s["jpg"]), pf.strings.to_number(s["cls"], pf.int64)))
    """

    _step = "WebDataset"

    def __init__(
        self,
        filenames: Any,
        keys: Sequence[str] | None = None,
        defaults: dict | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
        *,
        storage_options: dict | None = None,
    ):
        from parafeed.io.tar_samples import ShardReader

        if isinstance(keys, (str, bytes)):
            raise InvalidArgumentError(f"{self._step}: `keys` must be a list of extensions, got {keys!r}")
        self._keys = None if keys is None else list(keys)
        self._defaults = dict(defaults or {})
        self._chosen: Any = None  # the Extensions read (the first sample's when keys is None), on first use
        self.storage_options = storage_options

        def reader(path: str) -> Any:
            return ShardReader(path, self.extensions(), storage_options)

        super().__init__(filenames, reader, num_parallel_reads, name)

    def extensions(self) -> Any:
        """The extensions every element has: ``keys``, or those of the first sample of the first shard with one."""
        if self._chosen is None:
            from parafeed.io.tar_samples import Extensions, first_sample

            keys = self._keys
            if keys is None:
                names = self.file_list()
                if names is None:
                    from parafeed.core.dataset import iterate

                    names = [os.fsdecode(n) for n in iterate(self._parents[0])]
                found = next((s for s in (first_sample(p, self.storage_options) for p in names) if s), None)
                if found is None:
                    raise InvalidArgumentError(
                        f"{self._step}: no sample in {len(names)} shard(s) to learn the extensions from; pass `keys=`"
                    )
                keys = sorted({*found[1], *(str(k).lower() for k in self._defaults)})
            self._chosen = Extensions(keys, self._defaults, strict=self._keys is None)
        return self._chosen

    def _element_spec(self) -> Any:
        from parafeed.io.tar_samples import KEY

        return {KEY: TensorSpec((), STRING), **{k: TensorSpec((), STRING) for k in self.extensions().keys}}

    @property
    def indexed(self) -> bool:
        return True

    def record_count(self, path: str) -> int:
        from parafeed.io.tar_samples import sample_offsets

        return len(sample_offsets(path, self.storage_options))

    def open_positions(self, files: list[str], counts: list[int]) -> Any:
        from parafeed.io.tar_samples import TarSamples

        return TarSamples(files, counts, self.extensions(), self.storage_options)

    def labels_of(self, path: str, label: str, label_fn: Any) -> np.ndarray:
        """``label_fn(sample)``, else the integer text of the member with the extension ``label`` (``cls``, as
        WebDataset writers store class numbers) of every sample of one shard."""
        if label_fn is not None:
            return super().labels_of(path, label, label_fn)
        key = label.lower()
        if key not in self.extensions().keys:
            raise InvalidArgumentError(
                f"distribute(balance='labels'): the samples have no {key!r} member (they have "
                f"{self.extensions().keys}); pass `label=` (the extension holding the class number) or `label_fn=`"
            )
        it = self._reader(path)
        try:
            texts = [sample[key] for sample in it]
        finally:
            it.close()
        try:
            return np.asarray([int(t) for t in texts], dtype=np.int64)
        except ValueError:
            raise InvalidArgumentError(
                f"distribute(balance='labels'): {path}: the {key!r} members must hold integers as text; pass "
                "`label_fn=`"
            ) from None

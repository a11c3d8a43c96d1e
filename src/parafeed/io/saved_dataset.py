"""The on-disk format of ``Dataset.save`` / ``Dataset.load`` and ``Dataset.snapshot``: a directory of shards.

Layout::

    <path>/pf_saved_dataset.json     metadata: element spec, element count, compression, run, shard files
    <path>/run-<id>/<shard:08d>.shard one file per shard index

A shard is a TFRecord file (optionally GZIP-compressed, CRC-checked) whose records are elements encoded as in the
cache file format (:mod:`parafeed.io.cache_format`: per leaf its rank, dims and raw values). The metadata file is
written last, by an atomic rename, so a directory without it (or with a run it does not name) holds no finished save.
This is parafeed's own format: TensorFlow's ``tf.data.Dataset.save`` writes protobuf snapshots that parafeed does not
read, and the other way round.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from typing import Any

import numpy as np

from parafeed.errors import DataLossError, InvalidArgumentError, NotFoundError
from parafeed.io.cache_format import NoNesting, decode_nesting, decode_payload, encode_leaf, encode_nesting
from parafeed.io.tfrecord import TFRecordWriter
from parafeed.values.structure import STRING, DatasetSpec, TensorSpec, as_dtype, as_shape, dtype_name, flatten, pack_as

METADATA = "pf_saved_dataset.json"
FORMAT = "parafeed-saved-dataset"
_COMPRESSIONS = {None: "", "": "", "NONE": "", "GZIP": "GZIP"}


def compression_of(step: str, value: Any) -> str:
    """``None``/``"NONE"`` -> ``""``, ``"GZIP"`` -> ``"GZIP"``; anything else is refused."""
    key = value.upper() if isinstance(value, str) else value
    if key not in _COMPRESSIONS:
        raise InvalidArgumentError(f"{step}: `compression` must be None, 'NONE' or 'GZIP', got {value!r}")
    return _COMPRESSIONS[key]


def as_spec(step: str, spec: Any) -> Any:
    """A spec structure of parafeed TensorSpecs (tf.TensorSpec leaves are converted by shape and dtype)."""

    def leaf(s: Any) -> TensorSpec:
        if isinstance(s, TensorSpec):
            return s
        if isinstance(s, DatasetSpec) or not (hasattr(s, "shape") and hasattr(s, "dtype")):
            raise InvalidArgumentError(
                f"{step}: can only save and load elements of tensors (TensorSpec leaves), got {s!r}"
            )
        return TensorSpec(s.shape, s.dtype)

    leaves = flatten(spec)
    return pack_as(spec, [leaf(s) for s in leaves])


def encode_spec(step: str, spec: Any) -> dict:
    """JSON for an element spec: the nesting (as the cache format writes it) and each leaf's shape and dtype."""
    leaves = flatten(as_spec(step, spec))
    return {
        "nesting": encode_nesting(spec),
        "leaves": [{"shape": None if s.shape is None else list(s.shape), "dtype": dtype_name(s.dtype)} for s in leaves],
    }


def decode_spec(path: str, data: dict) -> Any:
    """The element spec a metadata file describes (raises when its nesting names a class that is not imported)."""
    leaves = [TensorSpec(as_shape(leaf["shape"]), as_dtype(leaf["dtype"])) for leaf in data["leaves"]]
    if data["nesting"] is None:
        template = None
    else:
        try:
            template = decode_nesting(data["nesting"])
        except NoNesting:
            template = None
    if template is None:
        raise InvalidArgumentError(
            f"load(): the saved dataset at {path} has elements of a structure that cannot be rebuilt here (a "
            "namedtuple class that is not imported, or a dict subclass); pass `element_spec=`"
        )
    return pack_as(template, leaves)


class SavedWriter:
    """Writes elements into the shards of a new run under ``path``; :meth:`finish` publishes the metadata."""

    def __init__(self, path: str, spec: Any, compression: str, step: str = "save()"):
        self.path = path
        self.step = step
        self.spec = as_spec(step, spec)
        self.dtypes = [s.dtype for s in flatten(self.spec)]
        self.compression = compression
        self.run = uuid.uuid4().hex[:16]
        self.run_dir = os.path.join(path, f"run-{self.run}")
        os.makedirs(self.run_dir, exist_ok=True)
        self._writers: dict[int, TFRecordWriter] = {}
        self.count = 0

    def write(self, element: Any, shard: int) -> None:
        leaves = flatten(element)
        if len(leaves) != len(self.dtypes):
            raise InvalidArgumentError(
                f"{self.step}: element {self.count} has {len(leaves)} components, the spec has {len(self.dtypes)}"
            )
        parts = []
        for leaf, dtype in zip(leaves, self.dtypes):
            if dtype == STRING and not isinstance(leaf, (bytes, np.ndarray)):
                raise InvalidArgumentError(f"{self.step}: cannot save a {type(leaf).__name__} component")
            parts.append(encode_leaf(leaf, dtype))
        writer = self._writers.get(shard)
        if writer is None:
            name = os.path.join(self.run_dir, f"{shard:08d}.shard")
            writer = self._writers[shard] = TFRecordWriter(name, self.compression or None)
        writer.write(b"".join(parts))
        self.count += 1

    def finish(self, extra: dict | None = None) -> None:
        """Close the shards and atomically publish the metadata (replacing an earlier save, whose run is removed)."""
        for writer in self._writers.values():
            writer.close()
        shards = sorted(self._writers)
        old = _read_json(self.path)
        meta = {
            "format": FORMAT,
            "version": 1,
            "run": self.run,
            "num_elements": self.count,
            "compression": self.compression,
            "shards": [f"{s:08d}.shard" for s in shards],
            "element_spec": encode_spec(self.step, self.spec),
            **(extra or {}),
        }
        tmp = os.path.join(self.path, f".{METADATA}.tmp-{self.run}")
        with open(tmp, "w") as f:
            json.dump(meta, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(self.path, METADATA))
        if old is not None and old.get("run") != self.run:
            shutil.rmtree(os.path.join(self.path, f"run-{old.get('run')}"), ignore_errors=True)

    def abort(self) -> None:
        """Drop the unfinished run."""
        for writer in self._writers.values():
            with contextlib.suppress(OSError):
                writer.close()
        self._writers = {}
        shutil.rmtree(self.run_dir, ignore_errors=True)


def _read_json(path: str) -> dict | None:
    try:
        with open(os.path.join(path, METADATA)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise DataLossError(f"load(): the metadata file {os.path.join(path, METADATA)} is corrupt: {err}") from None


class SavedMetadata:
    """A finished save at ``path``: its element spec, count, compression and shard files."""

    def __init__(self, path: str, step: str = "load()"):
        meta = _read_json(path)
        if meta is None:
            raise NotFoundError(
                f"{step}: no saved dataset at {path} (no {METADATA}); write one with `ds.save(path)` (directories "
                "written by tf.data.Dataset.save are not readable by parafeed)"
            )
        if meta.get("format") != FORMAT:
            raise DataLossError(f"{step}: {os.path.join(path, METADATA)} is not a parafeed saved-dataset file")
        self.path = path
        self.raw = meta
        self.num_elements = int(meta["num_elements"])
        self.compression = meta["compression"]
        run_dir = os.path.join(path, f"run-{meta['run']}")
        self.shards = [os.path.join(run_dir, name) for name in meta["shards"]]

    def element_spec(self) -> Any:
        return decode_spec(self.path, self.raw["element_spec"])


def decode_record(path: str, record: bytes, dtypes: list, spec: Any) -> Any:
    """One element from a shard record."""
    try:
        leaves = decode_payload(record, dtypes)
    except (ValueError, IndexError, OverflowError) as err:
        raise DataLossError(f"load(): a record of the shard {path} is corrupt: {err}") from None
    return pack_as(spec, leaves)

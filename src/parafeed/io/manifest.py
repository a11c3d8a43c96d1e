"""The manifest of a ``parafeed convert`` output: its shards, their features and (in a sidecar) every record's label.

Written by :func:`parafeed.tools.convert.convert`; read here, so the engine (replica sharding by label, reports) never
depends on the tool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np

from parafeed.errors import InvalidArgumentError

MANIFEST_SUFFIX = ".manifest.json"
FORMAT = "parafeed-shards"


def read_manifest(path: str) -> dict:
    """A manifest written by :func:`convert` (a ``.manifest.json`` path, or the folder holding exactly one)."""
    if os.path.isdir(path):
        found = [f for f in os.listdir(path) if f.endswith(MANIFEST_SUFFIX)]
        if len(found) != 1:
            raise InvalidArgumentError(f"{path}: expected one *{MANIFEST_SUFFIX} file, found {len(found)}")
        path = os.path.join(path, found[0])
    with open(path) as f:
        manifest = json.load(f)
    if manifest.get("format") != FORMAT:
        raise InvalidArgumentError(f"{path} is not a parafeed shard manifest")
    manifest["_dir"] = os.path.dirname(os.path.abspath(path))
    return manifest


def manifest_files(manifest: dict) -> list[str]:
    """The shard paths of a manifest, in shard order."""
    return [os.path.join(manifest["_dir"], s["file"]) for s in manifest["shards"]]


def manifest_features(manifest: dict) -> dict:
    """Parse specs (``FixedLenFeature``) for every feature recorded in a manifest."""
    from parafeed.io import FixedLenFeature

    return {k: FixedLenFeature(v["shape"], v["dtype"]) for k, v in manifest["features"].items()}


def manifest_labels(files: Sequence[str]) -> list[np.ndarray] | None:
    """Every record's label for ``files``, if they are shards of a manifest (beside them) that recorded labels."""
    folder = os.path.dirname(os.path.abspath(files[0])) if files else ""
    if not folder or not os.path.isdir(folder):
        return None
    for name in os.listdir(folder):
        if not name.endswith(MANIFEST_SUFFIX):
            continue
        manifest = read_manifest(os.path.join(folder, name))
        by_file = {s["file"]: i for i, s in enumerate(manifest["shards"])}
        if "labels_file" not in manifest or any(os.path.basename(f) not in by_file for f in files):
            continue
        with np.load(os.path.join(folder, manifest["labels_file"]), allow_pickle=False) as data:
            return [data[f"shard_{by_file[os.path.basename(f)]:05d}"] for f in files]
    return None

"""WebDataset shards: tar files whose members are grouped into samples, as the ``webdataset`` package groups them.

A member ``dir/name.ext1.ext2`` belongs to the sample ``dir/name`` (the name up to the first dot of its last part)
under the extension ``ext1.ext2`` (lowercased); consecutive members with the same key form one sample, and samples
never span shards. Members that are not regular files, names without a dot and ``__meta__``-style names are skipped;
an extension twice in one sample is an error. A sample is a dict of ``__key__`` (bytes) and one ``bytes`` per
extension.

A sample's position in its shard is the byte offset of its first member's header: restoring one seeks there. The
samples' offsets of a shard are found by walking its headers (the members' data is skipped, not read) and kept in
memory, for counts and reads by position.
"""

from __future__ import annotations

import re
import tarfile
import threading
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from parafeed.core.iterator import DatasetIterator
from parafeed.errors import DataLossError, InvalidArgumentError, StateError
from parafeed.io.storage import is_url, open_input, remote_settings

STEP = "WebDataset"
KEY = "__key__"
_META = re.compile(r"__[^/]*__($|/)")  # (the webdataset package's skip_meta)
_NAME = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")  # key, extension


def _meta(name: str) -> bool:
    """Whether the webdataset package skips a member as metadata (``__meta__``-style names)."""
    return bool(_META.match(name)) or ("/" not in name and name.startswith("__") and name.endswith("__"))


def split_name(name: str) -> tuple[str | None, str | None]:
    """``(key, extension)`` of a member's name, as the webdataset package splits it; (None, None) when it has none."""
    match = _NAME.match(name)
    return (match.group(1), match.group(2).lower()) if match else (None, None)


class Members:
    """The members of one tar file from a byte offset on: ``(header offset, key, extension, data)``; what webdataset
    skips is skipped. A file cut short or with a damaged header raises DataLossError naming it and the offset."""

    def __init__(self, path: str, storage_options: dict | None = None, current: Any = None):
        self.path = path
        self._file = open_input(path, STEP, storage_options, current)
        try:
            # (tarfile's reading position and member list are set directly: offset, firstmember, members)
            self._tar: Any = cast(Any, tarfile.open(fileobj=self._file, mode="r:"))  # noqa: SIM115 (closed in close())
        except tarfile.TarError as err:
            self._file.close()
            raise DataLossError(f"{STEP}: {path} is not a readable tar file: {err}") from None
        self._tar.firstmember = None
        self.size = self._file.seek(0, 2)
        self.end = self.size  # (the end of the archive's members, once found)
        self.seek(0)

    def seek(self, offset: int) -> None:
        """The next member read is the one whose header is at byte ``offset``."""
        self._tar.offset = offset
        self._file.seek(offset)

    def next(self, read: bool = True) -> tuple[int, str, str, bytes | None] | None:
        """The next member of a sample (its data when ``read``), or None at the end of the archive."""
        tar = self._tar
        while True:
            offset = tar.offset
            try:
                info = tar.next()
            except tarfile.TarError as err:
                raise DataLossError(
                    f"{STEP}: {self.path}: damaged or cut short at byte offset {offset}: {err}"
                ) from err
            tar.members = []  # (tarfile keeps every member it read)
            if info is None:
                self._check_end(offset)
                self.end = offset
                return None
            key, extension = split_name(info.name)
            if key is None or extension is None or not info.isreg() or _meta(info.name):
                continue
            data = None
            if read:
                if info.issparse():
                    data = tar.extractfile(info).read()
                else:  # (the data follows the header: read it at once, without tarfile's file object)
                    self._file.seek(info.offset_data)
                    data = self._file.read(info.size)
                if len(data) != info.size:
                    raise DataLossError(
                        f"{STEP}: {self.path}: member {info.name!r} (header at byte offset {offset}) is cut short: "
                        f"{len(data)} of its {info.size} bytes"
                    )
            return offset, key, extension, data

    def _check_end(self, offset: int) -> None:
        """An archive ends with two zero blocks; anything else where tarfile found no more members is damage."""
        self._file.seek(offset)
        rest = self._file.read(min(self.size - offset, 1 << 16))
        if len(rest) < 1024 or rest.count(0) != len(rest):
            raise DataLossError(
                f"{STEP}: {self.path}: damaged or cut short at byte offset {offset} (no member header and no end of "
                "archive there)"
            )

    def close(self) -> None:
        self._tar.close()
        self._file.close()


class Extensions:
    """The extensions of a dataset's elements, ``keys``: members with others are left out when the user chose them,
    else (``strict``: the first sample's) another extension is an error, as a dataset's elements have one structure.
    A sample without one of them takes its ``defaults`` value, or is an error naming the shard and the sample."""

    def __init__(self, keys: Sequence[str], defaults: dict | None, strict: bool):
        self.keys = sorted({str(k).lower() for k in keys})
        self.defaults = {str(k).lower(): bytes(v) for k, v in (defaults or {}).items()}
        self.strict = strict
        unknown = sorted(set(self.defaults) - set(self.keys))
        if unknown:
            raise InvalidArgumentError(f"{STEP}: `defaults` names extension(s) {unknown} that are not read")

    def element(self, path: str, key: str, parts: dict[str, bytes]) -> dict[str, bytes]:
        """The element of a sample: ``__key__`` and the data of each extension."""
        if self.strict and not set(parts) <= set(self.keys):
            raise InvalidArgumentError(
                f"{STEP}: {path}: sample {key!r} has extension(s) {sorted(set(parts) - set(self.keys))} that the "
                "first sample has not; choose the extensions with WebDataset(..., keys=[...])"
            )
        out = {KEY: key.encode()}
        for k in self.keys:
            value = parts.get(k, self.defaults.get(k))
            if value is None:
                raise InvalidArgumentError(
                    f"{STEP}: {path}: sample {key!r} has no {k!r} member (it has {sorted(parts)}); read only the "
                    f"extensions every sample has with WebDataset(..., keys=[...]) or give defaults={{{k!r}: b''}}"
                )
            out[k] = value
        return out


def read_sample(members: Members, first: tuple | None, path: str) -> tuple[str, dict[str, bytes], tuple | None]:
    """One sample: ``(key, {extension: data}, the next sample's first member or None)``, from ``first`` (a member
    already read) or the next member."""
    member = first or members.next()
    if member is None:
        raise StopIteration
    _, key, _, _ = member
    parts: dict[str, bytes] = {}
    while member is not None and member[1] == key:
        _, _, extension, data = member
        if extension in parts:
            raise InvalidArgumentError(f"{STEP}: {path}: sample {key!r} has the member {key}.{extension} twice")
        parts[extension] = data
        member = members.next()
    return key, parts, member


class ShardReader(DatasetIterator):
    """The samples of one shard, in order. State: ``{"offset"}``, the byte offset of the next sample's first
    member."""

    def __init__(self, path: str, extensions: Extensions, storage_options: dict | None = None):
        super().__init__()
        self._path = path
        self._members = Members(path, storage_options)
        self._extensions = extensions
        self._ahead: tuple | None = None  # the next sample's first member, read with the last sample
        self._offset = 0
        self._damaged = False

    def __next__(self) -> dict[str, bytes]:
        if self._damaged:  # (nothing after damage in a tar can be trusted: the shard ends there)
            raise StopIteration
        try:
            key, parts, self._ahead = read_sample(self._members, self._ahead, self._path)
        except DataLossError:
            self._damaged = True
            raise
        self._offset = self._ahead[0] if self._ahead is not None else self._members.end
        return self._extensions.element(self._path, key, parts)

    def _get_state(self) -> dict:
        return {"offset": self._offset}

    def _set_state(self, state: dict) -> None:
        offset = int(state["offset"])
        if not 0 <= offset <= self._members.size:
            raise StateError(f"set_state(): byte offset {offset} is outside {self._path} ({self._members.size} bytes)")
        self._ahead, self._offset, self._damaged = None, offset, False
        self._members.seek(offset)

    def close(self) -> None:
        self._members.close()


_offsets: dict[tuple[str, int], np.ndarray] = {}  # (path, size) -> its samples' offsets
_offsets_lock = threading.Lock()


def sample_offsets(path: str, storage_options: dict | None = None) -> np.ndarray:
    """The byte offsets of the samples of one shard (walking its headers once; kept while the file keeps its
    size)."""
    members = Members(path, storage_options)
    try:
        with _offsets_lock:
            known = _offsets.get((path, members.size))
        if known is not None:
            return known
        found, last = [], None
        while (member := members.next(read=False)) is not None:
            if member[1] != last:
                found.append(member[0])
                last = member[1]
        offsets = np.asarray(found, dtype=np.int64)
        with _offsets_lock:
            _offsets[(path, members.size)] = offsets
        return offsets
    finally:
        members.close()


class TarSamples:
    """Samples of shards by position in their concatenation (shards holding ``counts`` samples), each read by
    seeking to its first member. Safe to call from several threads."""

    def __init__(self, paths: list[str], counts: list[int], extensions: Extensions,
                 storage_options: dict | None = None):  # fmt: skip
        self.paths = list(paths)
        self.starts = np.cumsum([0, *counts])
        self.remote = any(is_url(p) for p in self.paths)
        self._extensions = extensions
        self._storage_options = storage_options
        self._settings = remote_settings(self.paths)  # (files are opened later, as they are read)
        self._open: dict[int, tuple[Members, np.ndarray]] = {}
        self._lock = threading.Lock()

    def read(self, position: int) -> dict[str, bytes]:
        k = int(np.searchsorted(self.starts, position, side="right")) - 1
        path = self.paths[k]
        with self._lock:
            if k not in self._open:
                members = Members(path, self._storage_options, self._settings)
                self._open[k] = (members, sample_offsets(path, self._storage_options))
            members, offsets = self._open[k]
            members.seek(int(offsets[position - int(self.starts[k])]))
            key, parts, _ = read_sample(members, None, path)
        return self._extensions.element(path, key, parts)

    def close(self) -> None:
        with self._lock:
            for members, _ in self._open.values():
                members.close()
            self._open.clear()


def first_sample(path: str, storage_options: dict | None = None) -> tuple[str, dict[str, bytes]] | None:
    """The key and members of a shard's first sample (None for a shard without samples)."""
    members = Members(path, storage_options)
    try:
        key, parts, _ = read_sample(members, None, path)
        return key, parts
    except StopIteration:
        return None
    finally:
        members.close()

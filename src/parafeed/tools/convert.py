"""``parafeed convert``: raw data -> balanced TFRecord shards of tf.train.Example, with a JSON manifest.

Sources: an image folder (one subfolder per class, as Keras' ``image_dataset_from_directory`` reads it), a CSV file
with a header row, or a ``.npz`` file of arrays with a common first dimension.

Shards are balanced: record counts differ by at most one, and when there are labels every shard's count of every
class is within one of the ideal share (records of each class are dealt round-robin across the shards). The result
depends only on the input and the seed. Shards are written in parallel by worker processes, each to a temporary
name renamed when complete, with its record index beside it (``.pfindex``: readers seek in it, locally or in object
storage); the manifest (``<name>.manifest.json``), written last, is what marks a complete set.

The output folder may be a URL (``s3://bucket/prefix``, ``gs://...``: ``storage_options`` for its filesystem): the
set is written to a local temporary folder, then uploaded file by file (each retried on transient faults), the
manifest last.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import multiprocessing
import os
import struct
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from parafeed.core.options import schedulable_cpus
from parafeed.errors import InvalidArgumentError, WorkerError
from parafeed.io.index import INDEX_SUFFIX
from parafeed.io.manifest import FORMAT, MANIFEST_SUFFIX
from parafeed.io.storage import filesystem, is_url, publish

IMAGE_EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
LABELS_SUFFIX = ".labels.npz"


@dataclass
class Source:
    """What a conversion reads: items (one per record), their labels, and how a worker turns an item into bytes."""

    kind: str
    path: str
    items: list
    labels: list[int] | None
    label_names: list[str] | None
    features: dict[str, dict]  # name -> {"dtype": ..., "shape": [...]}, the schema written to the manifest
    encode: Callable[[Any], bytes]  # runs in worker processes: must be picklable (a module-level function)
    skipped: list[dict] = field(default_factory=list)


@dataclass
class ConvertResult:
    manifest_path: str
    manifest: dict


# ---------------------------------------------------------------------------------------------- sources


def image_folder_source(path: str, verify: bool = True, workers: int | None = None, progress: bool = True) -> Source:
    """Items of an image folder: ``path/<class>/**/<image>``; classes are the sorted subfolder names."""
    classes = sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))
    if not classes:
        raise InvalidArgumentError(f"convert: {path} has no class subfolders (expected {path}/<class>/<image files>)")
    items: list[tuple[str, int]] = []
    for label, name in enumerate(classes):
        for root, dirs, files in os.walk(os.path.join(path, name)):
            dirs.sort()
            items.extend((os.path.join(root, f), label) for f in sorted(files) if f.lower().endswith(IMAGE_EXTENSIONS))
    if not items:
        raise InvalidArgumentError(f"convert: no image files ({', '.join(IMAGE_EXTENSIONS)}) under {path}")
    paths = [p for p, _ in items]
    problems = _run_parallel(check_image, paths, workers, "checking images", progress) if verify else {}
    skipped = [{"path": p, "reason": problems[i]} for i, (p, _) in enumerate(items) if problems.get(i)]
    good = [
        (p, label, os.path.relpath(p, path), classes[label])
        for i, (p, label) in enumerate(items)
        if not problems.get(i)
    ]
    return Source(
        kind="image_folder", path=path, items=good, labels=[g[1] for g in good], label_names=classes,
        features={"image": {"dtype": "string", "shape": []}, "label": {"dtype": "int64", "shape": []},
                  "class": {"dtype": "string", "shape": []}, "filename": {"dtype": "string", "shape": []},
                  "height": {"dtype": "int64", "shape": []}, "width": {"dtype": "int64", "shape": []},
                  "format": {"dtype": "string", "shape": []}},
        encode=encode_image_item, skipped=skipped,
    )  # fmt: skip


def check_image(path: str) -> str | None:
    """Why the image at ``path`` cannot be used, or None: it must read and decode completely."""
    from parafeed.tensor_ops import image

    try:
        with open(path, "rb") as f:
            data = f.read()
        decoded = image.decode_image(data, expand_animations=False)
        if decoded.size == 0:
            return "empty image"
    except OSError as err:
        return f"cannot read: {err.strerror or err}"
    except Exception as err:
        return f"cannot decode: {err}"
    return None


def _image_size(data: bytes) -> tuple[int, int, str]:
    """(height, width, format) from the image header, without decoding pixels where the format allows."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        width, height = struct.unpack(">II", data[16:24])
        return height, width, "png"
    if data[:3] == b"\xff\xd8\xff":
        import simplejpeg

        height, width, _, _ = simplejpeg.decode_jpeg_header(data)
        return height, width, "jpeg"
    from parafeed.tensor_ops import image

    decoded = image.decode_image(data, expand_animations=False)
    return decoded.shape[0], decoded.shape[1], "gif" if data[:4] == b"GIF8" else "bmp"


def encode_image_item(item: tuple[str, int, str, str]) -> bytes:
    from parafeed.io import serialize_example

    path, label, relpath, class_name = item
    with open(path, "rb") as f:
        data = f.read()
    height, width, fmt = _image_size(data)
    return serialize_example({"image": data, "label": label, "class": class_name, "filename": relpath,
                              "height": height, "width": width, "format": fmt})  # fmt: skip


def csv_source(path: str, label: str | None) -> Source:
    """Items of a CSV file with a header row: each row, with its column types inferred (int64, float32, string)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        raise InvalidArgumentError(f"convert: {path} needs a header row and at least one data row")
    header, body = rows[0], rows[1:]
    for i, row in enumerate(body):
        if len(row) != len(header):
            raise InvalidArgumentError(f"convert: {path}:{i + 2}: {len(row)} fields, but the header has {len(header)}")
    label = label if label is not None else ("label" if "label" in header else None)
    if label is not None and label not in header:
        raise InvalidArgumentError(f"convert: {path} has no column {label!r} (columns: {', '.join(header)})")
    columns = {name: [row[j] for row in body] for j, name in enumerate(header)}
    typed = {name: _infer_column(values) for name, values in columns.items()}
    labels, names = None, None
    if label is not None:
        labels, names = _labels_of(typed[label], path, label)
        if names is not None:  # string labels: store their class index, keep the name as "label_name"
            typed["label_name"] = typed[label]
            typed[label] = np.array(labels, np.int64)
    features = {name: {"dtype": _kind(values), "shape": []} for name, values in typed.items()}
    items = [{name: values[i] for name, values in typed.items()} for i in range(len(body))]
    return Source("csv", path, items, labels, names, features, encode_row)


def _infer_column(values: list[str]) -> np.ndarray:
    for dtype in (np.int64, np.float32):
        try:
            return np.array([dtype(v) for v in values], dtype=dtype)
        except (ValueError, OverflowError):
            continue
    return np.array([v.encode() for v in values], dtype=object)


def _kind(values: np.ndarray) -> str:
    return "string" if values.dtype == object else values.dtype.name


def _labels_of(values: np.ndarray, path: str, name: str) -> tuple[list[int], list[str] | None]:
    if values.dtype == np.int64:
        if values.min() < 0:
            raise InvalidArgumentError(f"convert: {path}: label column {name!r} has negative values")
        return values.tolist(), None
    if values.dtype == object:
        names = sorted({v.decode() for v in values})
        index = {n: i for i, n in enumerate(names)}
        return [index[v.decode()] for v in values], names
    raise InvalidArgumentError(f"convert: {path}: label column {name!r} must hold integers or class names")


def encode_row(item: dict) -> bytes:
    from parafeed.io import serialize_example

    return serialize_example(item)


def npz_source(path: str, label: str | None) -> Source:
    """Items of an ``.npz`` file: row ``i`` of every array (arrays need the same first dimension)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    if not arrays:
        raise InvalidArgumentError(f"convert: {path} holds no arrays")
    sizes = {k: (a.shape[0] if a.ndim else None) for k, a in arrays.items()}
    if None in sizes.values() or len(set(sizes.values())) != 1:
        raise InvalidArgumentError(f"convert: {path}: every array needs the same first dimension, got {sizes}")
    if label is None:
        label = next((k for k in ("label", "labels", "y") if k in arrays), None)
    if label is not None and label not in arrays:
        raise InvalidArgumentError(f"convert: {path} has no array {label!r} (arrays: {', '.join(arrays)})")
    labels, names = None, None
    if label is not None:
        values = arrays[label]
        if values.ndim != 1:
            raise InvalidArgumentError(f"convert: {path}: the label array {label!r} must be 1-D, got {values.shape}")
        typed = np.array([v.encode() if isinstance(v, str) else v for v in values.tolist()], dtype=object) if (
            values.dtype.kind in "USO") else values.astype(np.int64)  # fmt: skip
        labels, names = _labels_of(typed, path, label)
    features = {}
    for k, a in arrays.items():
        kind = "string" if a.dtype.kind in "USO" else "float32" if a.dtype.kind == "f" else "int64"
        features[k] = {"dtype": kind, "shape": list(a.shape[1:])}
    n = cast(int, next(iter(sizes.values())))  # (not None: checked above)
    return Source("npz", path, [(path, i) for i in range(n)], labels, names, features, encode_npz_row)


_npz_cache: dict[str, dict] = {}


def encode_npz_row(item: tuple[str, int]) -> bytes:
    from parafeed.io import serialize_example

    path, i = item
    if path not in _npz_cache:  # once per worker process
        with np.load(path, allow_pickle=False) as data:
            _npz_cache[path] = {k: data[k] for k in data.files}
    return serialize_example({k: a[i] for k, a in _npz_cache[path].items()})


# ---------------------------------------------------------------------------------------------- planning


def plan_shards(n: int, labels: Sequence[int] | None, num_shards: int, seed: int) -> list[list[int]]:
    """Item indices per shard: counts within 1, each class dealt round-robin so shard histograms are within 1 of
    the ideal; the order inside a shard is shuffled. Deterministic for a seed."""
    from parafeed.distribute.balance import deal

    rng = np.random.default_rng(seed + 1)
    return [rng.permutation(s).tolist() for s in deal(labels, num_shards, seed, n)]


# ---------------------------------------------------------------------------------------------- writing


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """Worker processes forked from a clean server process: forking the caller itself can deadlock the children when
    it runs threads (OpenCV's pool, a prefetch) that hold locks at the time of the fork."""
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
            yield pool
    except BrokenProcessPool as err:
        raise WorkerError(
            "convert: a worker process died. When convert() runs in a script, call it under "
            '`if __name__ == "__main__":`: worker processes import the main script, which must not convert again'
        ) from err


def _run_parallel(fn: Callable, args: list, workers: int | None, what: str, progress: bool = True) -> dict[int, Any]:
    """``{i: fn(args[i])}`` over worker processes with a progress bar; results that are None are left out."""
    from tqdm import tqdm

    out: dict[int, Any] = {}
    workers = workers or schedulable_cpus()
    chunk = max(1, len(args) // (workers * 8))
    with (
        _pool(workers) as pool,
        tqdm(total=len(args), desc=what, unit="file", leave=False, disable=not progress) as bar,
    ):
        futures = {pool.submit(_apply_chunk, fn, args[i : i + chunk]): i for i in range(0, len(args), chunk)}
        for future in as_completed(futures):
            start = futures[future]
            for j, result in enumerate(future.result()):
                if result is not None:
                    out[start + j] = result
            bar.update(min(chunk, len(args) - start))
    return out


def _apply_chunk(fn: Callable, args: list) -> list:
    return [fn(a) for a in args]


def _write_shard(encode: Callable, items: list, path: str, labels: list[int] | None) -> dict:
    """Write one shard to a temporary name and rename it when complete; returns its manifest entry."""
    from parafeed.io import TFRecordWriter

    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with TFRecordWriter(tmp) as writer:
            for item in items:
                writer.write(encode(item))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    from parafeed.io.index import record_offsets

    record_offsets(path)  # writes the shard's index beside it
    entry = {"file": os.path.basename(path), "records": len(items), "bytes": os.path.getsize(path)}
    if labels is not None:
        entry["labels"] = _histogram(labels)
    return entry


def _histogram(labels: Sequence[int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(Counter(labels).items())}


def convert(
    src: str,
    out: str,
    num_shards: int,
    name: str | None = None,
    label: str | None = None,
    seed: int = 0,
    workers: int | None = None,
    verify: bool = True,
    strict: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    storage_options: dict | None = None,
) -> ConvertResult:
    """Convert ``src`` (image folder, .csv or .npz) into ``num_shards`` balanced TFRecord shards in ``out`` (a folder
    or a URL).

    ``progress=False`` hides the progress bars. ``result.manifest`` is what ``read_manifest`` gives for the output.
    """
    from tqdm import tqdm

    if num_shards <= 0:
        raise InvalidArgumentError(f"convert: --shards must be > 0, got {num_shards}")
    if not os.path.exists(src):
        raise InvalidArgumentError(f"convert: {src} does not exist")
    name = name or os.path.splitext(os.path.basename(os.path.normpath(src)))[0]
    if is_url(out):
        return _convert_to_url(out, name, overwrite, storage_options, lambda folder: convert(
            src, folder, num_shards, name, label, seed, workers, verify, strict, overwrite=True, progress=progress
        ))  # fmt: skip
    manifest_path = os.path.join(out, name + MANIFEST_SUFFIX)
    os.makedirs(out, exist_ok=True)
    existing = [f for f in os.listdir(out) if f.startswith(f"{name}-") and f.endswith((".tfrecord", INDEX_SUFFIX))]
    if (existing or os.path.exists(manifest_path)) and not overwrite:
        raise InvalidArgumentError(f"convert: {out} already holds shards named {name}-*; pass --overwrite to replace")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)  # from here on, the set is incomplete until the new manifest is written
    for old in existing:
        os.remove(os.path.join(out, old))

    if os.path.isdir(src):
        source = image_folder_source(src, verify=verify, workers=workers, progress=progress)
    elif src.lower().endswith(".csv"):
        source = csv_source(src, label)
    elif src.lower().endswith(".npz"):
        source = npz_source(src, label)
    else:
        raise InvalidArgumentError(f"convert: {src}: expected an image folder, a .csv or a .npz file")
    for problem in source.skipped:
        print(f"convert: skipped {problem['path']}: {problem['reason']}")
    if source.skipped and strict:
        raise InvalidArgumentError(f"convert: {len(source.skipped)} unreadable input file(s) (--strict)")
    if not source.items:
        raise InvalidArgumentError(f"convert: nothing to convert in {src}")

    plan = plan_shards(len(source.items), source.labels, num_shards, seed)
    width = max(5, len(str(num_shards)))
    paths = [os.path.join(out, f"{name}-{s:0{width}d}-of-{num_shards:0{width}d}.tfrecord") for s in range(num_shards)]
    shards: list[dict | None] = [None] * num_shards
    with _pool(workers or schedulable_cpus()) as pool, tqdm(
        total=len(source.items), desc=f"writing {num_shards} shards", unit="record", disable=not progress
    ) as bar:  # fmt: skip
        futures = {
            pool.submit(_write_shard, source.encode, [source.items[i] for i in idx], paths[s],
                        None if source.labels is None else [source.labels[i] for i in idx]): s
            for s, idx in enumerate(plan)
        }  # fmt: skip
        for future in as_completed(futures):
            shards[futures[future]] = future.result()
            bar.update(len(plan[futures[future]]))

    manifest = {
        "format": FORMAT,
        "version": 1,
        "name": name,
        "source": {"kind": source.kind, "path": os.path.abspath(src)},
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "num_shards": num_shards,
        "num_records": len(source.items),
        "features": source.features,
        "label": None if source.labels is None else ("label" if label is None else label),
        "label_names": source.label_names,
        "label_counts": None
        if source.labels is None
        else {str(k): v for k, v in sorted(Counter(source.labels).items())},
        "shards": shards,
        "skipped": source.skipped,
    }
    if source.labels is not None:  # every record's label, in shard order: lets replicas split by class for free
        labels_path = os.path.join(out, name + LABELS_SUFFIX)
        with open(labels_path + ".tmp", "wb") as labels_file:
            shard_labels: dict[str, Any] = {f"shard_{s:05d}": np.array([source.labels[i] for i in idx], np.int64)
                                            for s, idx in enumerate(plan)}  # fmt: skip
            np.savez(labels_file, **shard_labels)
        os.replace(labels_path + ".tmp", labels_path)
        manifest["labels_file"] = os.path.basename(labels_path)
    tmp = manifest_path + f".tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=2)
    os.replace(tmp, manifest_path)
    manifest["_dir"] = os.path.abspath(out)  # as read_manifest gives it (not written to the file)
    return ConvertResult(manifest_path, manifest)


def _convert_to_url(out: str, name: str, overwrite: bool, storage_options: dict | None,
                    write: Callable[[str], ConvertResult]) -> ConvertResult:  # fmt: skip
    """``write`` the set into a local temporary folder, then upload it to ``out``, its manifest last."""
    import tempfile

    from parafeed.io.remote import Retrier, settings

    step = "convert"
    fs, base = filesystem(out, storage_options, step)
    retry = Retrier(out, step, settings()).call
    found = retry("listing", 0, lambda: fs.glob(f"{base.rstrip('/')}/{name}[-.]*"))
    existing = [p for p in found if p.rsplit("/", 1)[-1].startswith(f"{name}-") or p.endswith(MANIFEST_SUFFIX)]
    if existing and not overwrite:
        raise InvalidArgumentError(f"convert: {out} already holds shards named {name}-*; pass --overwrite to replace")
    manifest_name = name + MANIFEST_SUFFIX
    for path in sorted(existing, key=lambda p: not p.endswith(MANIFEST_SUFFIX)):  # incomplete from the manifest on
        retry("removing", 0, lambda path=path: fs.rm_file(path))
    with tempfile.TemporaryDirectory(prefix="parafeed-convert-") as folder:
        result = write(folder)
        for file in sorted(os.listdir(folder), key=lambda f: f == manifest_name):
            target = f"{out.rstrip('/')}/{file}"
            publish(os.path.join(folder, file), target, step, storage_options)
    result.manifest["_dir"] = out.rstrip("/")
    return ConvertResult(f"{out.rstrip('/')}/{manifest_name}", result.manifest)

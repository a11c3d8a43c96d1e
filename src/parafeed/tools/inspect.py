"""``parafeed inspect``: what a set of TFRecord, ArrayRecord, Parquet or WebDataset files (or saved Hugging Face
datasets) holds, and whether every record is intact.

For each TFRecord or ArrayRecord (``.array_record``) file: record count, bytes, every record checked (TFRecord's
CRCs, ArrayRecord's chunk hashes), the tf.train.Example schema inferred from the first records (feature -> list type
and value counts), and the histogram of the label feature when there is one. For each Parquet file (``.parquet``):
rows, bytes, every row group decoded, the columns (type, and value counts of list columns) and the histogram of the
label column. For each WebDataset shard (``.tar``): samples, bytes, every member read, the extensions (sizes in bytes)
and the histogram of the label extension (``label``, else ``cls``). For a Hugging Face dataset saved with
``save_to_disk`` (a folder) or one of its ``.arrow`` files: rows, bytes, every row read, the columns and the label
column's histogram.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from parafeed.errors import DataLossError, ParseError

SCHEMA_RECORDS = 1000  # records parsed with protobuf to infer the schema


@dataclass
class FileReport:
    path: str
    records: int = 0
    bytes: int = 0
    errors: list[str] = field(default_factory=list)
    schema: dict[str, dict] = field(default_factory=dict)
    labels: Counter = field(default_factory=Counter)
    not_examples: int = 0  # records that are not tf.train.Example

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "records": self.records, "bytes": self.bytes, "errors": self.errors,
                "schema": self.schema, "labels": {str(k): v for k, v in sorted(self.labels.items())},
                "not_examples": self.not_examples}  # fmt: skip


def inspect_file(
    path: str, compression: str | None = None, label: str = "label", storage_options: dict | None = None
) -> FileReport:
    """Read every record of ``path`` (a local path or a URL; checking CRCs), infer its Example schema and count its
    labels."""
    from parafeed.io.example_proto import message_classes
    from parafeed.io.storage import size_of
    from parafeed.io.streams import compression_type_of
    from parafeed.io.tfrecord import TFRecordFileReader

    if path.endswith(".arrow") or is_saved_huggingface(path):
        report = FileReport(path)
        _inspect_huggingface(report, label)
        return report
    report = FileReport(path, bytes=size_of(path, "inspect", storage_options))
    if path.endswith(".parquet"):
        _inspect_parquet(report, label, storage_options)
        return report
    if path.endswith(".tar"):
        _inspect_shard(report, label, storage_options)
        return report
    if compression is None:
        compression = "GZIP" if path.endswith(".gz") else ""
    example = message_classes()["Example"]
    batch: list[bytes] = []
    if path.endswith(".array_record"):  # (records as TFRecord's: tf.train.Examples, usually)
        from parafeed.io.array_record import ArrayRecordFileReader

        try:
            reader: Any = ArrayRecordFileReader(path, storage_options)
        except DataLossError as err:
            report.errors.append(str(err))
            return report
    else:
        reader = TFRecordFileReader(path, compression_type_of(compression), storage_options=storage_options)
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except DataLossError as err:
            report.errors.append(str(err))
            continue
        report.records += 1
        if report.records <= SCHEMA_RECORDS:
            _add_schema(report, example, record)
        batch.append(record)
        if len(batch) == 1024:
            _count_labels(report, batch, label)
            batch = []
    _count_labels(report, batch, label)
    return report


def _inspect_parquet(report: FileReport, label: str, storage_options: dict | None) -> None:
    """Every row group of a Parquet file decoded: rows, columns (list columns: their value counts), labels."""
    from parafeed.io.arrow_columns import pyarrow_modules
    from parafeed.io.parquet import STEP, open_parquet

    pa, _, _ = pyarrow_modules(STEP)
    try:
        f = open_parquet(report.path, storage_options)
    except DataLossError as err:
        report.errors.append(str(err))
        return
    try:
        for g in range(f.metadata.num_row_groups):
            try:
                table = f.read_row_group(g)
            except (OSError, pa.ArrowException) as err:
                report.errors.append(f"{report.path}, row group {g}: {err}")
                continue
            _add_table(report, table, label)
    finally:
        f.close()


def _add_table(report: FileReport, table: Any, label: str) -> None:
    """An Arrow table's rows counted: its columns (list columns: their value counts) and the label column's values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    report.records += table.num_rows
    for name, column in zip(table.column_names, table.columns):
        n = pc.list_value_length(column) if pa.types.is_list(column.type) else None
        low, high = (1, 1) if n is None else (pc.min(n).as_py() or 0, pc.max(n).as_py() or 0)
        entry = report.schema.setdefault(name, {"kind": str(column.type), "min_values": low, "max_values": high,
                                                "records": 0})  # fmt: skip
        entry["min_values"], entry["max_values"] = min(entry["min_values"], low), max(entry["max_values"], high)
        entry["records"] += table.num_rows
    if label in table.column_names:
        column = table.column(label)
        if pa.types.is_integer(column.type) or pa.types.is_string(column.type):
            report.labels.update(v for v in column.to_pylist() if v is not None)


def is_saved_huggingface(path: str) -> bool:
    """Whether ``path`` is a folder ``datasets.Dataset.save_to_disk`` wrote (or a ``DatasetDict``'s)."""
    return os.path.isdir(path) and any(
        os.path.exists(os.path.join(path, name)) for name in ("state.json", "dataset_dict.json")
    )


def _inspect_huggingface(report: FileReport, label: str) -> None:
    """A Hugging Face dataset saved with ``save_to_disk`` (a folder) or one of its Arrow files (``.arrow``, as in
    ``datasets``' cache): every row read, its columns and the label column's histogram (a ``ClassLabel``'s ids)."""
    path = report.path
    names = sorted(os.listdir(path)) if os.path.isdir(path) else []
    files = [os.path.join(path, name) for name in names] if names else [path]
    report.bytes = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
    try:
        import datasets
    except ImportError:
        report.errors.append(f"{path}: reading Hugging Face datasets needs `pip install 'parafeed[huggingface]'`")
        return
    if "dataset_dict.json" in names:
        splits = [d for d in names if os.path.isdir(os.path.join(path, d))]
        report.errors.append(f"{path} holds a DatasetDict (splits {splits}); inspect one split's folder")
        return
    try:
        ds = datasets.load_from_disk(path) if os.path.isdir(path) else datasets.Dataset.from_file(path)
        for batch in ds.with_format("arrow").iter(batch_size=65536):
            _add_table(report, batch, label)
    except Exception as err:  # (pyarrow's errors on a damaged file, datasets' on a damaged folder)
        report.errors.append(f"{path} is not a readable Hugging Face dataset: {type(err).__name__}: {err}")


LABEL_EXTENSIONS = ("cls", "class")  # a WebDataset sample's class, as text, when no extension is named `label`


def _inspect_shard(report: FileReport, label: str, storage_options: dict | None) -> None:
    """Every member of a WebDataset shard read, grouped into samples as the webdataset package groups them: samples,
    extensions (their sizes in bytes, as min/max values) and the histogram of the label extension (``label``, else
    ``cls``). Damage ends the shard, as it ends WebDataset's reading."""
    from parafeed.errors import InvalidArgumentError
    from parafeed.io.tar_samples import Members, read_sample

    try:
        members = Members(report.path, storage_options)
    except DataLossError as err:
        report.errors.append(str(err))
        return
    ahead = None
    try:
        while True:
            try:
                _, parts, ahead = read_sample(members, ahead, report.path)
            except StopIteration:
                break
            except DataLossError as err:
                report.errors.append(str(err))
                break
            except InvalidArgumentError as err:  # (a member twice in a sample)
                report.errors.append(str(err))
                continue
            report.records += 1
            for extension, data in parts.items():
                n = len(data or b"")
                entry = report.schema.setdefault(
                    extension, {"kind": "bytes", "min_values": n, "max_values": n, "records": 0}
                )
                entry["min_values"], entry["max_values"] = min(entry["min_values"], n), max(entry["max_values"], n)
                entry["records"] += 1
            value = next((parts[e] for e in (label, *LABEL_EXTENSIONS) if e in parts), None)
            if value is not None:
                text = value.decode(errors="replace").strip()
                report.labels[int(text) if text.lstrip("-").isdigit() else text] += 1
    finally:
        members.close()


def _add_schema(report: FileReport, example: Any, record: bytes) -> None:
    try:
        features = example.FromString(record).features.feature
    except Exception:
        report.not_examples += 1
        return
    for key in features:
        kind = features[key].WhichOneof("kind") or "empty"
        n = len(getattr(features[key], kind).value) if kind != "empty" else 0
        entry = report.schema.setdefault(key, {"kind": kind, "min_values": n, "max_values": n, "records": 0})
        if entry["kind"] != kind:
            entry["kind"] = "mixed"
        entry["min_values"] = min(entry["min_values"], n)
        entry["max_values"] = max(entry["max_values"], n)
        entry["records"] += 1


def _count_labels(report: FileReport, batch: list[bytes], label: str) -> None:
    kind = report.schema.get(label, {}).get("kind")
    if not batch or kind not in ("int64_list", "bytes_list"):
        return
    from parafeed.io import VarLenFeature, parse_example

    try:
        values = parse_example(batch, {label: VarLenFeature("int64" if kind == "int64_list" else "string")})[label]
    except ParseError:
        return
    report.labels.update(v.decode() if isinstance(v, bytes) else int(v) for v in values.values.tolist())


def format_reports(reports: list[FileReport]) -> str:
    """A human-readable summary of the reports."""
    lines = []
    for r in reports:
        status = "OK" if not r.errors else f"{len(r.errors)} CORRUPT"
        check = (
            "decoded"
            if r.path.endswith((".parquet", ".array_record"))
            else "read"
            if r.path.endswith(".tar")
            else "CRC"
        )
        lines.append(f"{r.path}: {r.records} records, {r.bytes:,} bytes, {check} {status}")
        for err in r.errors[:5]:
            lines.append(f"  ! {err}")
        for key, s in sorted(r.schema.items()):
            count = s["min_values"] if s["min_values"] == s["max_values"] else f"{s['min_values']}..{s['max_values']}"
            lines.append(f"  {key}: {s['kind']} x {count}")
        if r.not_examples:
            lines.append(f"  ({r.not_examples} of the first records are not tf.train.Example)")
    totals: Counter[Any] = Counter()
    for r in reports:
        totals.update(r.labels)
    if totals:
        lines.append("labels: " + ", ".join(f"{k}: {v}" for k, v in sorted(totals.items(), key=lambda kv: str(kv[0]))))
    records = sum(r.records for r in reports)
    corrupt = sum(len(r.errors) for r in reports)
    lines.append(f"total: {len(reports)} files, {records} records, {corrupt} corrupt")
    return "\n".join(lines)

"""The ``parafeed`` command: ``convert`` raw data to balanced TFRecord shards, ``inspect`` TFRecord, ArrayRecord,
Parquet or WebDataset files, ``report`` how replicas would split them, ``bench`` a pipeline, run the ``demo``."""

from __future__ import annotations

import argparse
import json
import sys

from parafeed.errors import ParafeedError


def _convert(args: argparse.Namespace) -> int:
    from parafeed.tools.convert import convert

    result = convert(
        args.src, args.out, args.shards, name=args.name, label=args.label, seed=args.seed, workers=args.workers,
        verify=not args.no_verify, strict=args.strict, overwrite=args.overwrite, storage_options=args.storage_options,
    )  # fmt: skip
    m = result.manifest
    print(f"wrote {m['num_records']} records in {m['num_shards']} shards; manifest {result.manifest_path}")
    for shard in m["shards"]:
        labels = f" labels {shard['labels']}" if "labels" in shard else ""
        print(f"  {shard['file']}: {shard['records']} records, {shard['bytes']:,} bytes{labels}")
    if m["skipped"]:
        print(f"skipped {len(m['skipped'])} unreadable file(s) (listed in the manifest)")
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from parafeed.io.storage import glob, is_url
    from parafeed.tools.inspect import format_reports, inspect_file

    paths = [  # a URL's glob is expanded here (the shell expands local ones)
        path
        for arg in args.files
        for path in (sorted(glob(arg, args.storage_options, "inspect")) if is_url(arg) and "*" in arg else [arg])
    ]
    reports = [inspect_file(path, args.compression, args.label, args.storage_options) for path in paths]
    if args.json:
        print(json.dumps([r.as_dict() for r in reports], indent=2))
    else:
        print(format_reports(reports))
    return 1 if any(r.errors for r in reports) else 0


def _bench(args: argparse.Namespace) -> int:
    from parafeed.tools.bench import main

    return main(args.script, args.seconds)


def _report(args: argparse.Namespace) -> int:
    import parafeed as pf
    from parafeed.io.manifest import manifest_files, read_manifest

    manifest = read_manifest(args.shards)
    files = manifest_files(manifest)
    policy = args.policy.upper()
    balance = "labels" if policy == "LABELS" else None
    ds = pf.TFRecordDataset(files).distribute(
        args.replicas, 0, policy="AUTO" if balance else policy, balance=balance, label=args.label
    )
    labels = pf.distribute.plan_labels(ds.plan, files, args.label)
    title = f"{manifest['name']}: {args.replicas} replicas, {ds.plan.policy} sharding"
    result = pf.distribute.report(labels, manifest.get("label_names"), title)
    print(result.table())
    for note in ds.plan.notes:
        print(f"note: {note}")
    if args.png:
        print(f"plot: {result.to_png(args.png)}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from parafeed.tools.demo import main

    return main(args.workdir, args.epochs, args.replicas)


def _storage_options_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--storage-options", type=json.loads, metavar="JSON",
        help="for URLs: the fsspec filesystem's options as JSON, e.g. '{\"client_kwargs\": {\"endpoint_url\": ...}}'",
    )  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parafeed", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("convert", help="image folder / CSV / .npz -> balanced TFRecord shards + manifest")
    p.add_argument("src", help="an image folder (one subfolder per class), a .csv file or a .npz file")
    p.add_argument("out", help="output folder, or a URL (s3://bucket/prefix, gs://...)")
    p.add_argument("--shards", type=int, required=True, help="number of shards")
    p.add_argument("--name", help="shard name prefix (default: the source's name)")
    p.add_argument("--label", help="label column / array (default: 'label' when present)")
    p.add_argument("--seed", type=int, default=0, help="shuffling seed (the output depends only on it and the input)")
    p.add_argument("--workers", type=int, help="worker processes (default: all CPUs)")
    p.add_argument("--no-verify", action="store_true", help="do not decode every image to check it first")
    p.add_argument("--strict", action="store_true", help="fail when an input file is unreadable (default: skip it)")
    p.add_argument("--overwrite", action="store_true", help="replace shards of the same name in OUT")
    _storage_options_argument(p)
    p.set_defaults(run=_convert)

    p = sub.add_parser(
        "inspect",
        help="record counts, schema, labels and checks of TFRecord (ArrayRecord, Parquet, WebDataset .tar) files",
    )
    p.add_argument("files", nargs="+")
    p.add_argument("--compression", choices=["", "GZIP", "ZLIB"], help="default: GZIP for *.gz, else none")
    p.add_argument("--label", default="label", help="feature holding the label (default: label)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _storage_options_argument(p)
    p.set_defaults(run=_inspect)

    p = sub.add_parser("report", help="per-replica sample counts, class histograms and imbalance of a split")
    p.add_argument("shards", help="a `parafeed convert` output folder or its .manifest.json")
    p.add_argument("--replicas", type=int, required=True)
    p.add_argument("--policy", default="AUTO", choices=["AUTO", "FILE", "RECORD", "DATA", "LABELS"],
                   help="how replicas split the data (LABELS: balance every class)")  # fmt: skip
    p.add_argument("--label", default="label", help="feature holding the label (default: label)")
    p.add_argument("--png", help="also write a bar chart here")
    p.set_defaults(run=_report)

    p = sub.add_parser("demo", help="train on scikit-learn's digits with MirroredStrategy, fed by parafeed")
    p.add_argument("--workdir", default="parafeed-demo", help="where images, shards and the plot go")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--replicas", type=int, default=2, help="logical CPU devices when there is no GPU (default 2)")
    p.set_defaults(run=_demo)

    p = sub.add_parser("bench", help="run a pipeline for a while; print per-stage throughput and the bottleneck")
    p.add_argument("script", help="a Python file defining `dataset` or `make_dataset()`")
    p.add_argument("--seconds", type=float, default=10.0, help="how long to run (default 10)")
    p.set_defaults(run=_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ParafeedError, OSError) as err:
        print(f"parafeed {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

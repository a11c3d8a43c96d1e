"""Replica sharding: each replica gets a disjoint share of the data, with tf.data's policies (and a record-level one).

``ds.distribute(num_replicas, replica_id, policy)`` rewrites the pipeline for one replica:

* ``FILE``: the reader's files are split between replicas (``files[replica_id::num_replicas]``), so each replica
  reads only its files. With fewer files than replicas it falls back to ``RECORD`` with a warning.
* ``RECORD``: every ``num_replicas``-th record of the reader, from ``replica_id``: each replica reads only its
  records (TFRecord files seek past the others with their index).
* ``DATA``: every ``num_replicas``-th element of the pipeline's output (before its final ``batch``), as tf.data's
  DATA policy; the shard is moved down through one-to-one steps (deterministic ``map``, ``prefetch``) towards the
  source, so work before it is done once, not on every replica.
* ``AUTO``: ``FILE`` when the pipeline reads a fixed list of files, at least one per replica; ``RECORD`` when it
  reads fewer files; ``DATA`` when it reads no files.
* ``OFF``: no sharding.

``num_replicas`` / ``replica_id`` default to a TF ``InputContext`` given as ``input_context``, then to
``torch.distributed`` when it is initialised, then to ``TF_CONFIG``'s worker count and index.

The shard point records how many elements every replica gets when that can be known (file record counts, or the
cardinality); :meth:`Dataset._replica_counts` carries those counts through count-preserving steps and ``batch``, which
is what lets ``equal_steps`` give every replica the same number of batches.
"""

from __future__ import annotations

import copy
import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parafeed.dataset import Dataset, PassThroughDataset
from parafeed.errors import InvalidArgumentError
from parafeed.iterator import DatasetIterator

log = logging.getLogger("parafeed")

POLICIES = ("AUTO", "FILE", "RECORD", "DATA", "OFF")


@dataclass
class ShardPlan:
    """How a pipeline was split: the policy used and, when known, every replica's files and element counts."""

    policy: str
    num_replicas: int
    replica_id: int
    counts: list[int] | None = None  # elements per replica at the shard point
    files: list[list[str]] | None = None  # files per replica (FILE)
    labels: list[np.ndarray] | None = None  # the labels of every replica's records (balance="labels")
    notes: list[str] = field(default_factory=list)
    start: int = 0  # samples of the global order consumed before (an elastic resume begins after them)


def replica_context(
    num_replicas: int | None = None, replica_id: int | None = None, input_context: Any = None
) -> tuple[int, int]:
    """(num_replicas, replica_id): the arguments, else a TF InputContext, torch.distributed or TF_CONFIG."""
    if num_replicas is not None or replica_id is not None:
        if num_replicas is None or replica_id is None:
            raise InvalidArgumentError("distribute(): give both `num_replicas` and `replica_id`, or neither")
    elif input_context is not None:
        num_replicas, replica_id = input_context.num_input_pipelines, input_context.input_pipeline_id
    else:
        num_replicas, replica_id = _from_environment()
    if not isinstance(num_replicas, int) or num_replicas <= 0:
        raise InvalidArgumentError(f"distribute(): `num_replicas` must be an int > 0, got {num_replicas!r}")
    if not isinstance(replica_id, int) or not 0 <= replica_id < num_replicas:
        raise InvalidArgumentError(
            f"distribute(): `replica_id` must be in [0, {num_replicas - 1}] (num_replicas - 1), got {replica_id!r}"
        )
    return num_replicas, replica_id


def _from_environment() -> tuple[int, int]:
    import sys

    torch_distributed = sys.modules.get("torch.distributed")
    if torch_distributed is not None and torch_distributed.is_available() and torch_distributed.is_initialized():
        return torch_distributed.get_world_size(), torch_distributed.get_rank()
    config = os.environ.get("TF_CONFIG")
    if config:
        spec = json.loads(config)
        workers = spec.get("cluster", {}).get("worker", [])
        task = spec.get("task", {})
        if workers and task.get("type") == "worker":
            return len(workers), int(task.get("index", 0))
    return 1, 0


# ---------------------------------------------------------------------------------------------- the rewrite


class ReplicaShardDataset(PassThroughDataset):
    """This replica's share of its input: every ``num_replicas``-th element from ``replica_id`` (or, with
    ``split=False``, the input as is, already split by file). Knows every replica's element count when it can."""

    def __init__(self, parent: Dataset, plan: ShardPlan, split: bool = True):
        super().__init__(parent)
        self.plan = plan
        self._split = split

    def _make_iterator(self) -> DatasetIterator:
        parent = self._parent._iter()
        if not self._split:
            return parent
        from parafeed.ops.shard import ShardIterator

        return ShardIterator(parent, self.plan.num_replicas, self.plan.start + self.plan.replica_id)

    def _cardinality(self) -> int:
        if self.plan.counts is not None:
            return self.plan.counts[self.plan.replica_id]
        return self._parent._cardinality() if not self._split else -2

    def _replica_counts(self) -> list[int] | None:
        return self.plan.counts


class DistributedDataset(PassThroughDataset):
    """One replica's pipeline; ``plan`` tells how the data was split."""

    _count_preserving = True

    def __init__(self, parent: Dataset, plan: ShardPlan):
        super().__init__(parent)
        self.plan = plan

    def _make_iterator(self) -> DatasetIterator:
        return self._parent._iter()


def _with_parents(node: Dataset, parents: tuple[Dataset, ...]) -> Dataset:
    """A copy of ``node`` reading from other parents."""
    if parents == node._parents:
        return node
    clone = copy.copy(node)
    clone._parents = parents
    if hasattr(clone, "_structure"):  # zip: the structure of datasets follows its parents
        from parafeed.structure import pack_as

        clone._structure = pack_as(clone._structure, list(parents))
    if hasattr(clone, "_process_pool"):  # a map's worker processes belong to the original step
        clone._process_pool = None
    return clone


def _replace(root: Dataset, target: Dataset, replacement: Dataset) -> Dataset:
    """``root`` with the node ``target`` replaced, copying the nodes on the way down to it."""
    if root is target:
        return replacement
    parents = tuple(_replace(p, target, replacement) for p in root._parents)
    return _with_parents(root, parents)


def _nodes(root: Dataset) -> list[Dataset]:
    """Every node of the pipeline, readers included but not their insides (their file lists)."""
    from parafeed.readers import FileReaderDataset

    out, stack, seen = [], [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        if not isinstance(node, FileReaderDataset):
            stack.extend(node._parents)
    return out


def _readers(root: Dataset) -> list[Any]:
    from parafeed.readers import FileReaderDataset

    return [n for n in _nodes(root) if isinstance(n, FileReaderDataset)]


def _sources(root: Dataset) -> list[Dataset]:
    """The nodes data comes from: readers and nodes without inputs."""
    from parafeed.readers import FileReaderDataset

    return [n for n in _nodes(root) if isinstance(n, FileReaderDataset) or not n._parents]


def _round_robin(total: int, n: int) -> list[int]:
    return [total // n + (1 if r < total % n else 0) for r in range(n)]


def shard_for_replica(
    ds: Dataset, num_replicas: int | None = None, replica_id: int | None = None, policy: str = "AUTO",
    input_context: Any = None, balance: str | None = None, label: str | int = "label", label_fn: Any = None,
    seed: int = 0, start: int = 0,
) -> DistributedDataset:  # fmt: skip
    """The pipeline ``ds`` for one replica, split by ``policy`` (see the module docs)."""
    policy = str(policy).upper()
    if policy not in POLICIES:
        raise InvalidArgumentError(f"distribute(): `policy` must be one of {POLICIES}, got {policy!r}")
    if balance not in (None, "labels"):
        raise InvalidArgumentError(f"distribute(): `balance` must be None or 'labels', got {balance!r}")
    if not isinstance(start, (int, np.integer)) or start < 0:
        raise InvalidArgumentError(f"distribute(): `start` must be an int >= 0, got {start!r}")
    if start and (balance is not None or policy in ("FILE", "OFF")):
        raise InvalidArgumentError(
            "distribute(start=...): an elastic resume needs one global order dealt round-robin: use policy RECORD "
            f"or DATA without balance (got policy={policy!r}, balance={balance!r})"
        )
    n, r = replica_context(num_replicas, replica_id, input_context)
    plan = ShardPlan(policy, n, r, start=int(start))
    readers, sources = _readers(ds), _sources(ds)
    reader = readers[0] if len(readers) == 1 and len(sources) == 1 else None
    files = reader.file_list() if reader is not None else None
    if balance == "labels":
        from parafeed.ops.sources import TensorSlicesDataset

        plan.policy = "LABELS"
        if len(sources) == 1 and isinstance(sources[0], TensorSlicesDataset):
            return DistributedDataset(_shard_slices_by_labels(ds, sources[0], plan, label, label_fn, seed), plan)
        if files is None or getattr(reader, "_compression", None) != "":
            raise InvalidArgumentError(
                "distribute(balance='labels'): needs in-memory arrays (from_tensor_slices) or a TFRecordDataset over "
                "a fixed list of uncompressed files (its records are read by position)"
            )
        return DistributedDataset(_shard_by_labels(ds, reader, files, plan, label, label_fn, seed), plan)
    if policy == "OFF":
        return DistributedDataset(ds, plan)
    if policy == "AUTO":
        policy = "DATA" if files is None else "RECORD" if start else _file_or_record(reader, files, n, plan)
    if policy in ("FILE", "RECORD") and files is None:
        raise InvalidArgumentError(
            f"distribute(): policy {policy} needs a pipeline that reads one fixed list of files (TFRecordDataset, "
            "TextLineDataset, CsvDataset); use DATA for other sources"
        )
    if policy == "FILE" and len(files) < n:
        note = (f"distribute(): {len(files)} file(s) for {n} replicas: FILE sharding would starve replicas, "
                "sharding by record instead")  # fmt: skip
        log.warning(note)
        plan.notes.append(note)
        policy = "RECORD"
    plan.policy = policy
    if policy == "FILE":
        return DistributedDataset(_shard_files(ds, reader, files, plan), plan)
    if policy == "RECORD":
        return DistributedDataset(_shard_records(ds, reader, files, plan), plan)
    return DistributedDataset(_shard_data(ds, plan), plan)


def _shard_files(ds: Dataset, reader: Any, files: list[str], plan: ShardPlan) -> Dataset:
    from parafeed.ops.shuffle import ShuffleDataset

    n, r = plan.num_replicas, plan.replica_id
    plan.files = [files[i::n] for i in range(n)]
    mine = Dataset.from_tensor_slices([os.fsencode(f) for f in plan.files[r]])
    if isinstance(reader._files, ShuffleDataset):  # shard before the file shuffle, so replicas never overlap
        shuffle = reader._files
        mine = mine.shuffle(max(1, len(plan.files[r])), seed=shuffle._seed, reshuffle_each_iteration=shuffle._reshuffle)
    counts = _file_counts(reader, files)
    plan.counts = None if counts is None else [sum(counts[i] for i in range(k, len(files), n)) for k in range(n)]
    return _replace(ds, reader, ReplicaShardDataset(reader._with_files(mine), plan, split=False))


def _file_or_record(reader: Any, files: list[str], n: int, plan: ShardPlan) -> str:
    """AUTO's choice: FILE, unless there are fewer files than replicas or whole files would split the records
    unevenly (replica totals more than 10 % apart), then RECORD."""
    if len(files) < n:
        return "RECORD"
    counts = _file_counts(reader, files)
    if counts is not None:
        totals = [sum(counts[i] for i in range(k, len(files), n)) for k in range(n)]
        if max(totals) > 1.1 * min(totals):
            plan.notes.append(f"AUTO: whole files would give replicas {totals} records; sharding by record instead")
            return "RECORD"
    return "FILE"


def _file_counts(reader: Any, files: list[str]) -> list[int] | None:
    try:
        return [reader.record_count(f) for f in files]
    except Exception as err:
        log.warning("distribute(): could not count the records of the files (%s); equal_steps will need `steps`", err)
        return None


def _shard_records(ds: Dataset, reader: Any, files: list[str], plan: ShardPlan) -> Dataset:
    counts = _file_counts(reader, files)
    plan.counts = None if counts is None else _round_robin(max(0, sum(counts) - plan.start), plan.num_replicas)
    return _replace(ds, reader, ReplicaShardDataset(reader, plan))


def _shard_data(ds: Dataset, plan: ShardPlan) -> Dataset:
    from parafeed.ops.batch import BatchDataset
    from parafeed.ops.padded_batch import PaddedBatchDataset
    from parafeed.ops.shuffle import ShuffleDataset
    from parafeed.readers import FileReaderDataset

    # the shard goes below the final batch (tf.data shards elements, not batches) ...
    node = ds
    while _one_to_one(node):
        node = node._parents[0]
    target = node._parents[0] if isinstance(node, (BatchDataset, PaddedBatchDataset)) else node
    # ... and then down through one-to-one steps, so that the work they do is not repeated on every replica
    while _one_to_one(target):
        target = target._parents[0]
    if any(isinstance(n, ShuffleDataset) and not n._seeded for n in _nodes(target)):
        note = ("distribute(): DATA sharding after a shuffle without a seed: every replica shuffles differently, so "
                "their shares overlap. Give the shuffle a seed, or shard by FILE or RECORD.")  # fmt: skip
        log.warning(note)
        plan.notes.append(note)
    total = target._cardinality()
    if total < 0 and isinstance(target, FileReaderDataset) and target.file_list() is not None:
        counts = _file_counts(target, target.file_list())
        total = -1 if counts is None else sum(counts)
    plan.counts = _round_robin(max(0, total - plan.start), plan.num_replicas) if total >= 0 else None
    return _replace(ds, target, ReplicaShardDataset(target, plan))


def _shard_by_labels(
    ds: Dataset, reader: Any, files: list[str], plan: ShardPlan, label: Any, label_fn: Any, seed: int
) -> Dataset:
    from parafeed.distribute.balance import deal
    from parafeed.readers import TFRecordSelectionDataset

    per_file = record_labels(files, label, label_fn)
    labels = np.concatenate(per_file) if per_file else np.zeros(0, np.int64)
    shares = [np.sort(p) for p in deal(labels, plan.num_replicas, seed)]
    plan.counts = [len(p) for p in shares]
    plan.labels = [labels[p] for p in shares]
    mine = TFRecordSelectionDataset(files, [len(x) for x in per_file], shares[plan.replica_id])
    return _replace(ds, reader, ReplicaShardDataset(mine, plan, split=False))


def _shard_slices_by_labels(
    ds: Dataset, source: Any, plan: ShardPlan, label: str | int, label_fn: Any, seed: int
) -> Dataset:
    from parafeed.distribute.balance import deal
    from parafeed.ops.sources import TensorSlicesDataset
    from parafeed.structure import pack_as

    labels = _slice_labels(source, label, label_fn)
    shares = [np.sort(p) for p in deal(labels, plan.num_replicas, seed)]
    plan.counts = [len(p) for p in shares]
    plan.labels = [labels[p] for p in shares]
    mine = shares[plan.replica_id]
    rows = TensorSlicesDataset(pack_as(source._element, [a[mine] for a in source._flat]), name=source._name)
    return _replace(ds, source, ReplicaShardDataset(rows, plan, split=False))


def _slice_labels(source: Any, label: str | int, label_fn: Any) -> np.ndarray:
    """The class id of every element of a ``from_tensor_slices`` source: ``label_fn(element)`` (called like a map
    function), else its ``label`` entry (a dict key, or a tuple index; the second of a pair ``(x, y)`` by default)."""
    element = source._element
    if label_fn is not None:
        from parafeed.functions import call

        values: Any = [call(label_fn, e) for e in source]  # a tuple is spread into arguments, as in map()
    elif isinstance(element, dict) and label in element:
        values = element[label]
    elif type(element) is tuple and (isinstance(label, int) or len(element) == 2):
        values = element[label if isinstance(label, int) else 1]
    else:
        raise InvalidArgumentError(
            f"distribute(balance='labels'): cannot find the labels in elements like {source.element_spec}: pass "
            "`label=` (a dict key or a tuple index) or `label_fn=` (element -> class id)"
        )
    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"distribute(balance='labels'): labels must be one integer class id per element, got an array of shape "
            f"{values.shape} and dtype {values.dtype}"
        )
    return values.astype(np.int64)


def record_labels(files: list[str], label: str = "label", label_fn: Any = None) -> list[np.ndarray]:
    """The label of every record of every file: from a ``parafeed convert`` manifest beside the files when there is
    one, else ``label_fn(record)``, else the tf.Example feature ``label`` read from each record."""
    from parafeed.convert import manifest_labels

    if label_fn is None:
        known = manifest_labels(files)
        if known is not None:
            return known
    from parafeed.io import VarLenFeature, parse_example
    from parafeed.io.tfrecord import TFRecordFileReader

    out = []
    for path in files:
        records = list(TFRecordFileReader(path))
        if label_fn is not None:
            values = [label_fn(r) for r in records]
        else:
            parsed = parse_example(records, {label: VarLenFeature("int64")})[label] if records else None
            if parsed is not None and len(parsed.values) != len(records):
                raise InvalidArgumentError(
                    f"distribute(balance='labels'): every record of {path} needs exactly one int64 {label!r} "
                    "feature; pass `label=` (the feature's name) or `label_fn=`"
                )
            values = [] if parsed is None else parsed.values
        out.append(np.asarray(values, dtype=np.int64))
    return out


def _one_to_one(node: Dataset) -> bool:
    """Whether ``node`` gives exactly one output per input element, in order (sharding commutes with it)."""
    from parafeed.ops.map import MapDataset
    from parafeed.ops.prefetch import PrefetchDataset

    if isinstance(node, MapDataset):
        return node._deterministic is not False
    return isinstance(node, PrefetchDataset) or (type(node) is PassThroughDataset and len(node._parents) == 1)

"""Replica sharding: each replica gets a disjoint share of the data, with tf.data's policies (and a record-level one).

``ds.distribute(num_replicas, replica_id, policy)`` rewrites the pipeline for one replica:

* ``FILE``: the reader's files are split between replicas (``files[replica_id::num_replicas]``), so each replica
  reads only its files. With fewer files than replicas it falls back to ``RECORD`` with a warning.
* ``RECORD``: every ``num_replicas``-th record, from ``replica_id``: each replica reads only its records (TFRecord
  files seek past the others with their index).
* ``DATA``: every ``num_replicas``-th element of the pipeline's output (before its final ``batch``), as tf.data's
  DATA policy; the shard is moved down through one-to-one steps (deterministic ``map``, ``prefetch``) towards the
  source, so work before it is done once, not on every replica.
* ``AUTO``: ``FILE`` when the pipeline reads a fixed list of files, at least one per replica; ``RECORD`` when it
  reads fewer files; ``DATA`` when it reads no files.
* ``OFF``: no sharding.

``num_replicas`` / ``replica_id`` default to a TF ``InputContext`` given as ``input_context``, then to
``torch.distributed`` when it is initialised, then to ``jax.distributed``'s processes when it is, then to
``TF_CONFIG``'s worker count and index.

With RECORD and DATA, replica ``r`` takes elements ``r, r + n, ...`` of one global order: the input's order up to
the split, a seeded shuffle included (under RECORD every replica computes the shuffled order of positions from the
record count and reads its own records by seeking). The shard point records how many elements every replica gets
when that can be known (file record counts, or the cardinality); :func:`parafeed.core.graph.replica_counts` carries
those counts through count-preserving steps and ``batch``, which is what lets ``equal_steps`` give every replica the
same number of batches.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from parafeed.core import graph
from parafeed.core.dataset import UNKNOWN, Dataset, PassThroughDataset
from parafeed.core.graph import BATCHING, MANY_TO_MANY, ONE_TO_ONE
from parafeed.core.iterator import DatasetIterator, ResumePoint, Scope, build_in, current_scope
from parafeed.core.options import AutoShardPolicy
from parafeed.distribute.at_ids import IdsDataset
from parafeed.errors import InvalidArgumentError
from parafeed.ops.shuffle import ShuffleDataset
from parafeed.sources.files import FileReaderDataset, TFRecordDataset
from parafeed.sources.huggingface import HuggingFaceDataset
from parafeed.sources.memory import TensorSlicesDataset
from parafeed.sources.records import RecordsAtDataset, ShuffledShareDataset

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
    total: int | None = None  # elements of the global order (RECORD and DATA), when known
    global_order: bool = False  # replica r takes elements r, r + n, ... of one order (a resume on other replicas)
    # an elastic resume (distribute/elastic.py): the ids of the elements the split deals (the indices of the input
    # before the split under DATA, of the reader's records in file order or of the arrays' rows otherwise) ...
    read: Callable[[np.ndarray], Dataset] | None = None  # ... a dataset of the elements at sorted ids
    id_labels: np.ndarray | None = None  # ... every id's label (balance="labels")
    seed: int = 0  # (balance="labels": the deal's)

    def counts_from(self, start: Any) -> list[int] | None:
        """Every replica's element count in a pass that begins ``start`` elements into the global order, or that
        deals an epoch's rest (``start`` is then the pass's :class:`ResumePoint`)."""
        if isinstance(start, ResumePoint):
            return [len(ids) for ids, _ in self.rest_shares(start.rest)]
        if not start:
            return self.counts
        return None if self.total is None else _round_robin(max(0, self.total - start), self.num_replicas)

    def rest_shares(self, rest: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every replica's (ids, ranks) of an epoch's ``rest`` (ids in the order of the global order's rest): dealt
        by label with ``balance="labels"``, else round-robin; ``ranks`` are the ids' places in ``rest``."""
        n = self.num_replicas
        if self.id_labels is None:
            ranks = [np.arange(r, len(rest), n) for r in range(n)]
        else:
            from parafeed.distribute.balance import deal

            ranks = [np.sort(p) for p in deal(self.id_labels[rest], n, self.seed)]
        return [(rest[p], p) for p in ranks]


def replica_context(
    num_replicas: int | None = None, replica_id: int | None = None, input_context: Any = None
) -> tuple[int, int]:
    """(num_replicas, replica_id): the arguments, else a TF InputContext, torch.distributed, jax.distributed or
    TF_CONFIG."""
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
    jax = sys.modules.get("jax")
    if jax is not None and jax.distributed.is_initialized():
        return jax.process_count(), jax.process_index()
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
    ``split=False``, the input as is, already this replica's share). Knows every replica's element count when it can.

    A resumed pass (``pf.distribute.resume`` on another replica count) begins the split ``run.start`` elements into
    its input, or deals the ids of the epoch's rest (``run.resumed.rest``): ``source`` (the node of the input that
    reads the share; the input itself when splitting) is then replaced by a reader of this replica's ids. ``ids``
    gives, for a pass that is not such a rest, this replica's (ids, ranks): what an elastic resume needs to know
    which elements each replica had consumed (distribute/elastic.py).
    """

    def __init__(
        self, parent: Dataset, plan: ShardPlan, split: bool = True, source: Dataset | None = None,
        ids: Callable[[Scope], tuple[np.ndarray, np.ndarray]] | None = None,
    ):  # fmt: skip
        super().__init__(parent)
        self.plan = plan
        self._split = split
        self._source = source if source is not None else parent
        self._ids = ids
        self.kind = MANY_TO_MANY if split else ONE_TO_ONE

    def _make_iterator(self) -> DatasetIterator:
        scope = current_scope()
        run = scope.run if scope.run is not None and scope.top_level else None
        if run is not None and run.resumed.rest is not None:  # the epoch's rest, dealt again
            ids, ranks = self.plan.rest_shares(run.resumed.rest)[self.plan.replica_id]
            if run.tracking is not None:
                run.tracking.share = (ids, ranks)
            reader = cast("Callable[[np.ndarray], Dataset]", self.plan.read)  # (rest given: elastic.py checked)
            return graph.replace(self._parent, self._source, reader(ids))._iter()
        if run is not None and run.tracking is not None:
            run.tracking.share = self.share_ids(scope)
        parent = self._parent._iter()
        if not self._split:
            return parent
        from parafeed.ops.shard import ShardIterator

        start = run.start if run is not None else 0
        return ShardIterator(parent, self.plan.num_replicas, start + self.plan.replica_id)

    def share_ids(self, scope: Scope) -> tuple[np.ndarray, np.ndarray]:
        """This replica's (ids, ranks) in a pass of ``scope`` (see the class docs)."""
        if self._ids is not None:
            return self._ids(scope)
        if self.plan.total is None:
            raise InvalidArgumentError(
                "resume(): an elastic resume with steps that drop or hold elements after distribute() needs the "
                "number of elements before the split, which is not known here; give the source a known length "
                "(TFRecord files, arrays, range) or move the steps before distribute()"
            )
        start = scope.run.start if scope.run is not None else 0
        ids = np.arange(start + self.plan.replica_id, self.plan.total, self.plan.num_replicas)
        return ids, ids

    def _cardinality(self) -> int:
        if self.plan.counts is not None:
            return self.plan.counts[self.plan.replica_id]
        return self._parent._cardinality() if not self._split else UNKNOWN

    def _replica_counts(self, start: Any = 0) -> list[int] | None:
        return self.plan.counts_from(start)


class DistributedDataset(PassThroughDataset):
    """One replica's pipeline; ``plan`` tells how the data was split."""

    kind = ONE_TO_ONE

    def __init__(self, parent: Dataset, plan: ShardPlan):
        super().__init__(parent)
        self.plan = plan
        # (num_replicas, replica_id) -> the same split for that replica (an elastic resume rebuilds the saved ones)
        self.rebuild: Callable[[int, int], DistributedDataset] | None = None

    def _make_iterator(self) -> DatasetIterator:
        return self._parent._iter()


def _round_robin(total: int, n: int) -> list[int]:
    return [total // n + (1 if r < total % n else 0) for r in range(n)]


def shard_for_replica(
    ds: Dataset, num_replicas: int | None = None, replica_id: int | None = None, policy: str | None = None,
    input_context: Any = None, balance: str | None = None, label: str | int = "label", label_fn: Any = None,
    seed: int = 0,
) -> DistributedDataset:  # fmt: skip
    """The pipeline ``ds`` for one replica, split by ``policy`` (see the module docs)."""
    out = _split(ds, num_replicas, replica_id, policy, input_context, balance, label, label_fn, seed)
    out.rebuild = lambda n, r: shard_for_replica(ds, n, r, policy, None, balance, label, label_fn, seed)
    return out


def _split(
    ds: Dataset, num_replicas: int | None, replica_id: int | None, policy: str | None, input_context: Any,
    balance: str | None, label: str | int, label_fn: Any, seed: int,
) -> DistributedDataset:  # fmt: skip
    if policy is None:  # tf.data's options.experimental_distribute.auto_shard_policy, else AUTO
        policy = ds.options().shard_policy or "AUTO"
    policy = policy.name if isinstance(policy, AutoShardPolicy) else str(policy).upper()
    if policy == "HINT":
        raise InvalidArgumentError(
            "distribute(): policy HINT (tf.data's SHARD_HINT placeholders) has no parafeed form: put "
            "`.shard(num_replicas, replica_id)` where the split belongs and use policy 'OFF'"
        )
    if policy not in POLICIES:
        raise InvalidArgumentError(f"distribute(): `policy` must be one of {POLICIES}, got {policy!r}")
    if balance not in (None, "labels"):
        raise InvalidArgumentError(f"distribute(): `balance` must be None or 'labels', got {balance!r}")
    n, r = replica_context(num_replicas, replica_id, input_context)
    plan = ShardPlan(policy, n, r)
    readers = graph.find(ds, FileReaderDataset, into_sources=False)
    sources = graph.sources(ds)
    reader = readers[0] if len(readers) == 1 and len(sources) == 1 else None
    files = reader.file_list() if reader is not None else None
    if balance == "labels":
        plan.policy = "LABELS"
        if len(sources) == 1 and isinstance(sources[0], (TensorSlicesDataset, HuggingFaceDataset)):
            return DistributedDataset(_shard_slices_by_labels(ds, sources[0], plan, label, label_fn, seed), plan)
        if reader is None or files is None or not reader.indexed:
            raise InvalidArgumentError(
                "distribute(balance='labels'): needs in-memory arrays (from_tensor_slices), a Hugging Face "
                "datasets.Dataset (from_huggingface), or a file reader that reads records by position over a fixed "
                "list of files (TFRecordDataset of uncompressed files, ParquetDataset, ArrayRecordDataset, WebDataset)"
            )
        return DistributedDataset(_shard_by_labels(ds, reader, files, plan, label, label_fn, seed), plan)
    if policy == "OFF":
        return DistributedDataset(ds, plan)
    counts = (  # read once
        reader.record_counts() if reader is not None and files is not None and policy != "DATA" else None
    )
    if policy == "AUTO":
        policy = "DATA" if files is None else _file_or_record(files, counts, n, plan)
    if policy in ("FILE", "RECORD"):
        if reader is None or files is None:
            raise InvalidArgumentError(
                f"distribute(): policy {policy} needs a pipeline that reads one fixed list of files (TFRecordDataset, "
                "TextLineDataset, CsvDataset); use DATA for other sources"
            )
        if policy == "FILE" and len(files) < n:
            _note(
                plan,
                f"distribute(): {len(files)} file(s) for {n} replicas: FILE sharding would starve replicas, sharding "
                "by record instead",
            )
            policy = "RECORD"
        plan.policy = policy
        if policy == "FILE":
            return DistributedDataset(_shard_files(ds, reader, files, counts, plan), plan)
        return DistributedDataset(_shard_records(ds, reader, counts, plan), plan)
    plan.policy = policy
    return DistributedDataset(_shard_data(ds, plan), plan)


def _note(plan: ShardPlan, note: str) -> None:
    log.warning(note)
    plan.notes.append(note)


def _shard_files(
    ds: Dataset, reader: FileReaderDataset, files: list[str], counts: list[int] | None, plan: ShardPlan
) -> Dataset:
    n, r = plan.num_replicas, plan.replica_id
    plan.files = [files[i::n] for i in range(n)]
    mine: Dataset = TensorSlicesDataset(np.array([os.fsencode(f) for f in plan.files[r]], dtype=object))
    names = reader.parents[0]
    if isinstance(names, ShuffleDataset):  # shard before the file shuffle, so replicas never overlap
        mine = names.with_parents(mine)
    plan.counts = None if counts is None else [sum(counts[i] for i in range(k, len(files), n)) for k in range(n)]
    plan.read = _records_reader(reader, files, counts)
    share = reader.with_parents(mine)

    def ids(scope: Scope) -> tuple[np.ndarray, np.ndarray]:  # the records of this replica's files, in their order
        if counts is None:
            raise InvalidArgumentError("resume(): an elastic resume of a FILE split needs the files' record counts")
        first = dict(zip(files, np.cumsum([0, *counts[:-1]]).tolist()))
        order = [os.fsdecode(x) for x in _all(build_in(scope, mine))]
        parts = [np.arange(first[f], first[f] + counts[files.index(f)], dtype=np.int64) for f in order]
        found = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return found, found

    return graph.replace(ds, reader, ReplicaShardDataset(share, plan, split=False, ids=ids))


def _records_reader(reader: FileReaderDataset, files: list[str], counts: list[int] | None) -> Any:
    """ids -> a dataset of the records at those ids of ``files`` (in their listed order)."""
    if reader.indexed and counts is not None:
        return lambda ids: RecordsAtDataset(reader, files, counts, ids)
    listed = reader.with_parents(TensorSlicesDataset(np.array([os.fsencode(f) for f in files], dtype=object)))
    return lambda ids: IdsDataset(listed, ids)


def _all(it: DatasetIterator) -> list:
    try:
        return list(it)
    finally:
        it.close()


def _file_or_record(files: list[str], counts: list[int] | None, n: int, plan: ShardPlan) -> str:
    """AUTO's choice: FILE, unless there are fewer files than replicas or whole files would split the records
    unevenly (replica totals more than 10 % apart), then RECORD."""
    if len(files) < n:
        return "RECORD"
    if counts is not None:
        totals = [sum(counts[i] for i in range(k, len(files), n)) for k in range(n)]
        if max(totals) > 1.1 * min(totals):
            plan.notes.append(f"AUTO: whole files would give replicas {totals} records; sharding by record instead")
            return "RECORD"
    return "FILE"


def _shard_records(ds: Dataset, reader: FileReaderDataset, counts: list[int] | None, plan: ShardPlan) -> Dataset:
    """Every replica reads only its records of one global order: the reader's order, through the steps up to the
    split. Seeded shuffles on the way are computed from the record count (every replica computes the same order)
    and the replica reads its records of it by position; other steps keep the split at the reader."""
    total = None if counts is None else sum(counts)
    plan.total = total
    plan.counts = None if total is None else _round_robin(total, plan.num_replicas)
    names = reader.parents[0]
    if isinstance(names, ShuffleDataset) and not names.seeded:  # replicas would read the files in different orders
        _note(
            plan,
            "distribute(): RECORD split of files listed with an unseeded shuffle: the files are read in a fixed "
            "order so that the replicas' shares are disjoint; give list_files a seed to shuffle them",
        )
        original, reader = reader, reader.with_parents(names.parents[0])
        ds = graph.replace(ds, original, reader)
    chain = graph.chain(ds, reader)  # the steps from the split down to the reader (None: not a single chain)
    shuffles = [node for node in chain or () if isinstance(node, ShuffleDataset)]
    ordered = chain is not None and all(n.kind == ONE_TO_ONE or (n in shuffles and n.seeded) for n in chain)
    plan.global_order = ordered
    if chain is not None and any(not s.seeded for s in shuffles):
        _note(
            plan,
            "distribute(): RECORD split under a shuffle without a seed: each replica shuffles its own records, so "
            "there is no global order to resume in on another number of replicas; give the shuffle a seed",
        )
    if not (ordered and shuffles):
        plan.read = lambda ids: IdsDataset(reader, ids)
        return graph.replace(ds, reader, ReplicaShardDataset(reader, plan))
    if not reader.indexed or counts is None:
        raise InvalidArgumentError(
            "distribute(policy='RECORD'): a seeded shuffle before the split is applied to the global order, which "
            "needs the records read by position: uncompressed TFRecord files (or shard by DATA)"
        )
    share = ShuffledShareDataset(reader, counts, shuffles[::-1], plan.num_replicas, plan.replica_id)
    node: Dataset = share
    # rebuild the one-to-one steps on this replica's records (a chain: ordered); the shuffles are done
    for step in reversed(cast("list[Dataset]", chain)):
        if step not in shuffles:
            node = step.with_parents(node)
    plan.read = _records_reader(reader, cast("list[str]", reader.file_list()), counts)

    def ids(scope: Scope) -> tuple[np.ndarray, np.ndarray]:  # record numbers, in the global order
        found = share.share(scope)
        start = scope.run.start if scope.run is not None else 0
        return found, start + plan.replica_id + plan.num_replicas * np.arange(len(found))

    return ReplicaShardDataset(node, plan, split=False, source=share, ids=ids)


def _shard_data(ds: Dataset, plan: ShardPlan) -> Dataset:
    # the shard goes below the final batch (tf.data shards elements, not batches) ...
    node = graph.down(ds, lambda n: n.kind == ONE_TO_ONE)
    target = node.parents[0] if node.kind == BATCHING and len(node.parents) == 1 else node
    # ... and then down through one-to-one steps, so that the work they do is not repeated on every replica
    target = graph.down(target, lambda n: n.kind == ONE_TO_ONE)
    plan.global_order = True
    if any(not s.seeded for s in graph.find(target, ShuffleDataset)):
        plan.global_order = False
        _note(
            plan,
            "distribute(): DATA sharding after a shuffle without a seed: every replica shuffles differently, so "
            "their shares overlap. Give the shuffle a seed, or shard by FILE or RECORD.",
        )
    total = graph.count(target)
    plan.total = total if total >= 0 else None
    plan.counts = _round_robin(total, plan.num_replicas) if total >= 0 else None
    plan.read = lambda ids: IdsDataset(target, ids)
    return graph.replace(ds, target, ReplicaShardDataset(target, plan))


def _shard_by_labels(
    ds: Dataset, reader: FileReaderDataset, files: list[str], plan: ShardPlan, label: Any, label_fn: Any, seed: int
) -> Dataset:
    from parafeed.distribute.balance import deal

    per_file = record_labels(files, label, label_fn, reader=reader)
    labels = np.concatenate(per_file) if per_file else np.zeros(0, np.int64)
    shares = [np.sort(p) for p in deal(labels, plan.num_replicas, seed)]
    plan.counts = [len(p) for p in shares]
    plan.labels = [labels[p] for p in shares]
    counts = [len(x) for x in per_file]
    plan.read, plan.id_labels, plan.seed = _records_reader(reader, files, counts), labels, seed
    mine = RecordsAtDataset(reader, files, counts, shares[plan.replica_id])
    share = shares[plan.replica_id]
    return graph.replace(ds, reader, ReplicaShardDataset(mine, plan, split=False, ids=lambda _: (share, share)))


def _shard_slices_by_labels(
    ds: Dataset, source: TensorSlicesDataset | HuggingFaceDataset, plan: ShardPlan, label: str | int, label_fn: Any,
    seed: int,
) -> Dataset:  # fmt: skip
    from parafeed.distribute.balance import deal

    if isinstance(source, HuggingFaceDataset):
        labels = source.labels(str(label), label_fn)
    else:
        labels = _slice_labels(source, label, label_fn)
    shares = [np.sort(p) for p in deal(labels, plan.num_replicas, seed)]
    plan.counts = [len(p) for p in shares]
    plan.labels = [labels[p] for p in shares]
    plan.read, plan.id_labels, plan.seed = source.take_rows, labels, seed
    share = shares[plan.replica_id]
    rows = source.take_rows(share)
    return graph.replace(ds, source, ReplicaShardDataset(rows, plan, split=False, ids=lambda _: (share, share)))


def _slice_labels(source: TensorSlicesDataset, label: str | int, label_fn: Any) -> np.ndarray:
    """The class id of every element of a ``from_tensor_slices`` source: ``label_fn(element)`` (called like a map
    function), else its ``label`` entry (a dict key, or a tuple index; the second of a pair ``(x, y)`` by default)."""
    element = source.tensors
    if label_fn is not None:
        from parafeed.core.functions import call

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


def record_labels(
    files: list[str], label: str = "label", label_fn: Any = None, storage_options: dict | None = None,
    reader: FileReaderDataset | None = None,
) -> list[np.ndarray]:  # fmt: skip
    """The label of every record of every file: from a ``parafeed convert`` manifest beside local files when there
    is one, else ``label_fn(record)``, else ``reader``'s own labels (TFRecord files by default: the tf.Example
    feature ``label``; Parquet files: the column ``label``)."""
    from parafeed.io.manifest import manifest_labels

    if label_fn is None:
        known = manifest_labels(files)
        if known is not None:
            return known
    if reader is None:
        reader = TFRecordDataset(files, storage_options=storage_options)
    return [reader.labels_of(path, label, label_fn) for path in files]

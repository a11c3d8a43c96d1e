"""Data-parallel distribution: replica sharding, equal steps, class balance, speed-weighted batches, reports.

Most users write one line: ``ds.distribute(num_replicas, replica_id)`` (or with no arguments under
``torch.distributed`` / ``TF_CONFIG``), then ``.batch(...).equal_steps()``. See ``docs/distribution.md``.
"""

from parafeed.core.graph import replica_counts
from parafeed.distribute.agreement import replicas_in_process
from parafeed.distribute.balance import EQUAL_STEPS_POLICIES, count_batches, deal
from parafeed.distribute.replica_split import (
    POLICIES,
    ShardPlan,
    record_labels,
    replica_context,
    shard_for_replica,
)
from parafeed.distribute.report import BalanceReport, plan_labels, report
from parafeed.distribute.resume import resume, samples_per_step, save_state
from parafeed.distribute.speed import SpeedBalancer, loss_scale, weighted_batch, weighted_sizes

__all__ = [
    "BalanceReport",
    "EQUAL_STEPS_POLICIES",
    "POLICIES",
    "ShardPlan",
    "SpeedBalancer",
    "count_batches",
    "deal",
    "loss_scale",
    "plan_labels",
    "record_labels",
    "replica_context",
    "replica_counts",
    "replicas_in_process",
    "report",
    "resume",
    "samples_per_step",
    "save_state",
    "shard_for_replica",
    "weighted_batch",
    "weighted_sizes",
]

"""Data-parallel distribution: replica sharding, equal steps, balance, reports.

Most users write one line: ``ds.distribute(num_replicas, replica_id)`` (or with no arguments under
``torch.distributed`` / ``TF_CONFIG``), then ``.batch(...).equal_steps()``. See ``docs/distribution.md``.
"""

from parafeed.distribute.balance import (
    EQUAL_STEPS_POLICIES,
    SpeedBalancer,
    deal,
    loss_scale,
    split_batches,
    weighted_sizes,
)
from parafeed.distribute.report import BalanceReport, plan_labels, report
from parafeed.distribute.sharding import POLICIES, ShardPlan, record_labels, replica_context, shard_for_replica

__all__ = [
    "BalanceReport",
    "EQUAL_STEPS_POLICIES",
    "POLICIES",
    "ShardPlan",
    "SpeedBalancer",
    "deal",
    "loss_scale",
    "plan_labels",
    "record_labels",
    "replica_context",
    "report",
    "shard_for_replica",
    "split_batches",
    "weighted_sizes",
]

"""Balance reports: how the samples and classes of an epoch spread over the replicas.

``pf.distribute.report(replica_labels)`` takes each replica's labels for one epoch and gives a :class:`BalanceReport`:
per-replica sample counts and class histograms, the max/min ratio of the counts, and each replica's KL divergence
from the global class distribution (0 when its classes are in the global proportions), as a table and a PNG.
``parafeed report SHARDS --replicas N`` makes one for a ``parafeed convert`` output under each sharding policy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError


@dataclass
class BalanceReport:
    """Per-replica counts and class histograms of one epoch, with imbalance figures."""

    histograms: np.ndarray  # (replicas, classes)
    class_names: list[str]
    title: str = "per-replica balance"

    @property
    def counts(self) -> list[int]:
        return self.histograms.sum(axis=1).astype(int).tolist()

    @property
    def max_min(self) -> float:
        """Largest over smallest replica sample count (1.0 is perfect; inf if a replica is empty)."""
        counts = self.counts
        return math.inf if min(counts) == 0 else max(counts) / min(counts)

    @property
    def kl(self) -> list[float]:
        """Each replica's KL divergence (nats) from the global class distribution."""
        total = self.histograms.sum(axis=0).astype(float)
        q = total / max(total.sum(), 1.0)
        out = []
        for row in self.histograms.astype(float):
            p = row / max(row.sum(), 1.0)
            mask = p > 0
            out.append(float(np.sum(p[mask] * np.log(p[mask] / q[mask]))))
        return out

    @property
    def class_deviation(self) -> float:
        """The most any replica's count of any class is away from its ideal (equal) share; < 1 is the best possible
        with whole samples."""
        ideal = self.histograms.sum(axis=0) / len(self.histograms)
        return float(np.max(np.abs(self.histograms - ideal))) if self.histograms.size else 0.0

    def table(self) -> str:
        names = self.class_names
        width = max(8, *(len(n) for n in names)) if names else 8
        header = f"{'replica':>8} {'samples':>8}  " + " ".join(f"{n:>{width}}" for n in names) + f"  {'KL':>8}"
        lines = [self.title, header]
        for r, (row, kl) in enumerate(zip(self.histograms, self.kl)):
            lines.append(
                f"{r:>8} {int(row.sum()):>8}  " + " ".join(f"{int(v):>{width}}" for v in row) + f"  {kl:>8.5f}"
            )
        lines.append(
            f"max/min samples: {self.max_min:.3f}; largest class deviation from the ideal share: "
            f"{self.class_deviation:.2f}; "
            f"max KL: {max(self.kl, default=0.0):.5f}"
        )
        return "\n".join(lines)

    def to_png(self, path: str) -> str:
        """A two-panel chart: every replica's share of each class beside the global share, and every replica's sample
        count with its KL divergence; returns ``path``. Needs matplotlib (``pip install parafeed[report]``)."""
        try:
            import matplotlib
        except ImportError:
            raise InvalidArgumentError("BalanceReport.to_png(): needs matplotlib: pip install 'parafeed[report]'")
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        replicas, classes = self.histograms.shape
        shares = self.histograms / np.maximum(self.histograms.sum(axis=1, keepdims=True), 1) * 100
        total = self.histograms.sum(axis=0)
        overall = total / max(total.sum(), 1) * 100
        fig, (left, right) = plt.subplots(
            1, 2, figsize=(min(14.0, max(8.0, 0.4 * classes * max(replicas, 2) + 3)), 4.2), dpi=110,
            gridspec_kw={"width_ratios": [3, 1]},
        )  # fmt: skip
        width = 0.8 / replicas
        colors = plt.get_cmap("tab10")
        for r in range(replicas):
            x = np.arange(classes) - 0.4 + width * (r + 0.5)
            left.bar(x, shares[r], width, label=f"replica {r}", color=colors(r % 10))
        left.scatter(np.arange(classes), overall, marker="_", s=400, color="black", zorder=3, label="all data")
        left.set_xticks(range(classes), self.class_names, rotation=45 if classes > 12 else 0)
        left.set_ylabel("share of the replica's samples (%)")
        left.set_title("class distribution per replica", fontsize=10)
        left.legend(fontsize=7, ncol=2 if replicas > 4 else 1)
        right.bar(range(replicas), self.histograms.sum(axis=1), color=[colors(r % 10) for r in range(replicas)])
        for r, (count, kl) in enumerate(zip(self.counts, self.kl)):
            right.text(r, count, f"KL {kl:.4f}", ha="center", va="bottom", fontsize=7)
        right.set_xticks(range(replicas), [str(r) for r in range(replicas)])
        right.set_xlabel("replica")
        right.set_title(f"samples (max/min {self.max_min:.3f})", fontsize=10)
        fig.suptitle(self.title, fontsize=11)
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        return path


def report(
    replica_labels: Sequence[Any], class_names: Sequence[str] | None = None, title: str = "per-replica balance"
) -> BalanceReport:
    """A :class:`BalanceReport` from each replica's labels for one epoch (integer class ids)."""
    if not replica_labels:
        raise InvalidArgumentError("report(): give the labels of at least one replica")
    labels = [np.asarray(x, dtype=np.int64).reshape(-1) for x in replica_labels]
    if any(len(x) and x.min() < 0 for x in labels):
        raise InvalidArgumentError("report(): labels must be class ids >= 0")
    classes = max([len(class_names or [])] + [int(x.max()) + 1 for x in labels if len(x)])
    histograms = np.stack([np.bincount(x, minlength=classes) for x in labels])
    names = list(class_names) if class_names else [str(c) for c in range(classes)]
    names += [str(c) for c in range(len(names), classes)]
    return BalanceReport(histograms, names, title)


def plan_labels(plan: Any, files: Sequence[str], label: str = "label") -> list[np.ndarray]:
    """Each replica's labels under a :class:`~parafeed.distribute.ShardPlan` of ``files`` (read from the manifest
    beside them when there is one, else from the records)."""
    from parafeed.distribute.replica_split import record_labels

    if plan.labels is not None:
        return list(plan.labels)
    per_file = record_labels(list(files), label)
    if plan.policy == "FILE":
        index = {f: i for i, f in enumerate(files)}
        return [np.concatenate([per_file[index[f]] for f in mine] or [np.zeros(0, np.int64)]) for mine in plan.files]
    everything = np.concatenate(per_file) if per_file else np.zeros(0, np.int64)
    if plan.policy == "OFF":
        return [everything]
    return [everything[r :: plan.num_replicas] for r in range(plan.num_replicas)]

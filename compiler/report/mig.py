"""Which nodes change MIG configuration between two plans (each one must be drained).

The only module of the report package that reads how a plan configures MIG: the
`nvidia.com/mig.config` label of every node, compared node by node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from compiler.ir import ClusterPlan


@dataclass(frozen=True)
class MigChange:
    """One pool some of whose nodes get another MIG configuration in the new plan."""

    pool: str
    before: dict[str, int]
    """Nodes per configuration in the previous plan."""
    after: dict[str, int]
    """Nodes per configuration in the new plan."""
    gpus: int
    """GPUs on the nodes that change (the MIG manager reconfigures a node at a time)."""
    nodes: int
    """Nodes whose configuration changes: each one is drained."""
    indexes: tuple[int, ...] = ()
    """The index in the pool of each node that changes, ascending (the report names them)."""


def configs_text(configs: Mapping[str, int]) -> str:
    """`4 all-2x3g.40gb, 12 all-disabled`: nodes per configuration, by name; `none` if empty."""
    return ", ".join(f"{count} {name}" for name, count in sorted(configs.items())) or "none"


def pool_configurations(plan: ClusterPlan) -> dict[str, dict[str, int]]:
    """Nodes per configuration (mig.config label) of each pool of a plan."""
    return {
        pool: dict(sorted(Counter(plan.labels(pool)).items())) for pool in sorted(plan.node_configs)
    }


def mig_changes(
    previous: ClusterPlan | None, plan: ClusterPlan, gpus_per_node: Mapping[str, int]
) -> list[MigChange]:
    """The pools of `plan` with nodes whose configuration differs from `previous`.

    Nodes a previous plan did not have (a new or grown pool) count as `all-disabled` before,
    since a GPU starts with MIG disabled; without a previous plan nothing is compared.
    """
    if previous is None:
        return []
    changes = []
    for pool in sorted(plan.node_configs):
        labels = plan.labels(pool)
        names = plan.node_names.get(pool)
        before = [
            previous.label_of(pool, index, names[index] if names else None)
            for index in range(len(labels))
        ]
        moved = tuple(
            i for i, (old, new) in enumerate(zip(before, labels, strict=True)) if old != new
        )
        if moved:
            changes.append(
                MigChange(
                    pool,
                    dict(sorted(Counter(previous.labels(pool)).items())),
                    dict(sorted(Counter(labels).items())),
                    len(moved) * max(gpus_per_node.get(pool, 1), 1),
                    len(moved),
                    moved,
                )
            )
    return changes

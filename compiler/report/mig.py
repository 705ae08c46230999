"""Which GPUs change MIG configuration between two plans, and how many nodes that drains.

The only module of the report package that reads how a plan configures MIG (`pool_configs`:
GPUs per configuration and pool). When plans record layouts per node, point these two
functions at that and the report and the diff follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compiler.solve import ClusterPlan
from compiler.solve.plan import WHOLE


@dataclass(frozen=True)
class MigChange:
    """One pool whose GPUs are configured differently in the new plan."""

    pool: str
    before: dict[str, int]
    after: dict[str, int]
    gpus: int
    """GPUs that must be reconfigured (at least; the plan counts GPUs per pool)."""
    nodes: int
    """Nodes to drain, at least: the reconfigured GPUs packed onto as few nodes as possible."""


def pool_configurations(plan: ClusterPlan) -> dict[str, dict[str, int]]:
    """GPUs per configuration (`whole` or a MIG layout) of each pool of a plan."""
    return {pool: dict(sorted(c.items())) for pool, c in sorted(plan.pool_configs.items())}


def mig_changes(
    previous: ClusterPlan | None, plan: ClusterPlan, gpus_per_node: Mapping[str, int]
) -> list[MigChange]:
    """The pools of `plan` whose MIG configuration differs from `previous`, by pool name.

    GPUs a previous plan did not have (a new pool, a grown pool) count as whole before, since
    a GPU starts with MIG disabled; without a previous plan nothing is compared.
    """
    if previous is None:
        return []
    changes = []
    for pool in sorted(plan.pool_configs):
        after = plan.pool_configs[pool]
        before = dict(previous.pool_configs.get(pool, {}))
        grown = sum(after.values()) - sum(before.values())
        if grown > 0:
            before[WHOLE] = before.get(WHOLE, 0) + grown
        moved = sum(max(0, count - before.get(config, 0)) for config, count in after.items())
        if moved == 0:
            continue
        per_node = max(gpus_per_node.get(pool, 1), 1)
        changes.append(
            MigChange(
                pool,
                dict(sorted(previous.pool_configs.get(pool, {}).items())),
                dict(sorted(after.items())),
                moved,
                -(-moved // per_node),
            )
        )
    return changes

"""What every emitter reads: one cluster of the resolved fleet, with the cluster's plan."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from compiler.emit import kueue_quota, qos
from compiler.ir import ClusterPlan, ResolvedCluster, ResolvedFleet


@dataclass(frozen=True)
class ClusterView:
    """One cluster as emit sees it: the cluster's resolved policy, the fleet it belongs to
    (fleet-wide settings, the priority ladder) and its solved plan.

    Every emitter takes one and nothing else, so every output family has the same shape and
    a cluster's objects can be built in a worker process from the view alone.
    """

    cluster: ResolvedCluster
    fleet: ResolvedFleet
    plan: ClusterPlan

    # What two output families of the cluster both write, computed once per view.

    @cached_property
    def namespace_host_quotas(self) -> tuple[qos.NamespaceHostQuota, ...]:
        """The host quota of every team namespace that holds device quota: what both its
        ResourceQuota and its LimitRange say."""
        return tuple(qos.namespace_host_quotas(self.cluster))

    @cached_property
    def team_groups(self) -> dict[str, list[kueue_quota.Group]]:
        """Each team's ClusterQueue resource groups, by team name (empty when it holds no
        quota here): its ClusterQueue lists them, and it gets LocalQueues only if it has them."""
        return {
            team.name: kueue_quota.team_groups(self.cluster, team) for team in self.cluster.teams
        }

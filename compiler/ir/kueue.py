"""The names gpufleet gives what Kueue sees: the host flavor, each tier's resource, cohorts."""

from __future__ import annotations

from compiler.ir.resolved import ResolvedCluster
from compiler.ir.teams import GrantedTeam

RESOURCE_PREFIX = "gpufleet.dev/"
HOST_FLAVOR = "gpufleet-host"
"""The ResourceFlavor of the CPU and memory every ClusterQueue covers."""


def tier_resource(tier: str) -> str:
    """The logical resource Kueue charges a tier's devices to (its deviceClassMappings name)."""
    return f"{RESOURCE_PREFIX}{tier}"


def root_cohort(cluster: ResolvedCluster) -> str:
    """The cluster's cohort: `spec.kueue.cohort`, else the cluster's name."""
    return cluster.cluster.spec.kueue.cohort or cluster.name


def team_cohort(cluster: ResolvedCluster, team: GrantedTeam) -> str:
    """The cohort a team's ClusterQueue joins: the team's own (under the root), else the root."""
    return team.spec.cohort or root_cohort(cluster)

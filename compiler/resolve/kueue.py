"""Kueue's view of a cluster: flavor and resource names, cohorts, and its structural limits."""

from __future__ import annotations

from compiler.diagnostics import Diagnostic
from compiler.ir import GrantedTeam, ResolvedCluster

RESOURCE_PREFIX = "gpufleet.dev/"
HOST_FLAVOR = "gpufleet-host"
"""The ResourceFlavor of the CPU and memory every ClusterQueue covers."""
MAX_RESOURCE_GROUPS = 16
"""Kueue: at most 16 resource groups per ClusterQueue or Cohort."""


def tier_resource(tier: str) -> str:
    """The logical resource Kueue charges a tier's devices to (its deviceClassMappings name)."""
    return f"{RESOURCE_PREFIX}{tier}"


def root_cohort(cluster: ResolvedCluster) -> str:
    """The cluster's cohort: `spec.kueue.cohort`, else the cluster's name."""
    return cluster.cluster.spec.kueue.cohort or cluster.name


def team_cohort(cluster: ResolvedCluster, team: GrantedTeam) -> str:
    """The cohort a team's ClusterQueue joins: the team's own (under the root), else the root."""
    return team.spec.cohort or root_cohort(cluster)


def check_kueue(cluster: ResolvedCluster, problems: list[Diagnostic]) -> None:
    """Resource groups (one per tier plus the host group) fit Kueue's limit; names do not clash."""
    if not cluster.cluster.spec.kueue.enabled:
        return
    source = cluster.cluster.source
    if len(cluster.tiers) + 1 > MAX_RESOURCE_GROUPS:
        problems.append(
            Diagnostic(
                "GF227",
                f"cluster {cluster.name} has {len(cluster.tiers)} tiers: Kueue's cohort would "
                f"need {len(cluster.tiers) + 1} resource groups (one per tier and one for CPU "
                f"and memory), more than its {MAX_RESOURCE_GROUPS}",
                source.span(("spec", "kueue")),
                ("use fewer tiers in this cluster, or disable Kueue for it",),
            )
        )
    if any(t.name == HOST_FLAVOR for t in cluster.tiers):
        problems.append(
            Diagnostic(
                "GF227",
                f"tier name {HOST_FLAVOR!r} is the ResourceFlavor gpufleet gives CPU and memory",
                cluster.tier(HOST_FLAVOR).tier.source.span(("metadata", "name")),
                ("rename the tier",),
            )
        )

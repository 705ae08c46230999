"""Kueue's structural limits checked against a cluster (the names gpufleet gives Kueue's objects
are in compiler.ir.kueue)."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.diagnostics import Diagnostic
from compiler.ir import HOST_FLAVOR, ResolvedCluster
from compiler.resolve.check import cluster_check

MAX_RESOURCE_GROUPS = 16
"""Kueue: at most 16 resource groups per ClusterQueue or Cohort."""
KUEUE_FLAVOR_TAINTS = 8
"""Kueue's ResourceFlavor takes at most 8 nodeTaints and 8 tolerations."""


@cluster_check("GF227")
def check_kueue(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """GF227 where resource groups (one per tier plus the host group) exceed Kueue's limit, a
    tier's name clashes with the host flavor, or a tier's flavor would list more of its pools'
    node taints than Kueue's limit.

    Examples (FAIL and PASS): docs/diagnostics/GF227.md."""
    if not cluster.cluster.spec.kueue.enabled:
        return
    source = cluster.cluster.source
    if len(cluster.tiers) + 1 > MAX_RESOURCE_GROUPS:
        yield Diagnostic(
            "GF227",
            f"cluster {cluster.name} has {len(cluster.tiers)} tiers: Kueue's cohort would "
            f"need {len(cluster.tiers) + 1} resource groups (one per tier and one for CPU "
            f"and memory), more than its {MAX_RESOURCE_GROUPS}",
            source.span(("spec", "kueue")),
            ("use fewer tiers in this cluster, or disable Kueue for it",),
        )
    if any(t.name == HOST_FLAVOR for t in cluster.tiers):
        yield Diagnostic(
            "GF227",
            f"tier name {HOST_FLAVOR!r} is the ResourceFlavor gpufleet gives CPU and memory",
            cluster.tier(HOST_FLAVOR).tier.source.span(("metadata", "name")),
            ("rename the tier",),
        )
    for tier in cluster.tiers:
        taints = cluster.tier_node_taints(tier.name)
        if len(taints) > KUEUE_FLAVOR_TAINTS:
            yield Diagnostic(
                "GF227",
                f"tier {tier.name!r} takes devices from pools with {len(taints)} different "
                f"node taints in cluster {cluster.name}; its Kueue ResourceFlavor may list "
                f"at most {KUEUE_FLAVOR_TAINTS}",
                tier.tier.source.span(("spec", "select")),
                ("give the pools of one tier fewer distinct `nodeTaint`s",),
            )

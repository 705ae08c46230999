"""What a team's claim templates may offer in one cluster: fallbacks and tolerations; and
which templates a guarantee gets, by name.

Shared by the resolve checks (which warn about what is left out) and the claim emitter
(which writes what is kept), so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.ir.policy import Toleration
from compiler.ir.resolved import Guarantee, ResolvedCluster, tolerates


def usable_fallbacks(cluster: ResolvedCluster, guarantee: Guarantee) -> tuple[list[str], list[str]]:
    """The fallbacks the guarantee's claim templates offer as `firstAvailable` alternatives,
    and those left out for want of quota (see quota_fallbacks). In a cluster that runs Kueue
    none is offered: Kueue admits no workload whose claim has alternatives, so a template with
    them would hold the team's jobs forever. The solver never counts on fallbacks, so each
    guarantee still holds through its tier's own template (resolve warns, GF602)."""
    kept, dropped = quota_fallbacks(cluster, guarantee)
    return ([] if cluster.cluster.spec.kueue.enabled else kept), dropped


def quota_fallbacks(cluster: ResolvedCluster, guarantee: Guarantee) -> tuple[list[str], list[str]]:
    """The guarantee's tier's fallbacks split into (the namespace holds quota, does not).

    A fallback that selects no device in the cluster is left out silently (fleets differ);
    a claim with `firstAvailable` is charged by ResourceQuota against every alternative's
    DeviceClass, so an alternative the namespace holds no quota for would make every claim
    from the template fail admission: such fallbacks are dropped (and reported).
    """
    present = cluster.tier_names
    tier = cluster.tier(guarantee.tier)
    held = cluster.quota_tiers.get((guarantee.team.name, guarantee.namespace), frozenset())
    kept: list[str] = []
    dropped: list[str] = []
    for name in tier.tier.spec.fallbacks:
        if name == tier.name or name in kept or name not in present:
            continue
        (kept if name in held else dropped).append(name)
    return kept, dropped


def cluster_tolerations(
    cluster: ResolvedCluster, tolerations: Sequence[Toleration]
) -> list[Toleration]:
    """The tolerations that match at least one device taint of the cluster, in policy order."""
    return [t for t in tolerations if any(tolerates(t, r.taint) for r in cluster.taints)]


def claim_template_sizes(guarantee: Guarantee) -> tuple[int, ...]:
    """The device counts of a guarantee's ResourceClaimTemplates: one device, and its gang
    when the gang is larger than one."""
    return (1, guarantee.gang) if guarantee.gang > 1 else (1,)


def claim_template_name(tier: str, devices: int) -> str:
    """A ResourceClaimTemplate's name: the tier's for one device, `<tier>-x<devices>` for a
    gang's (the admission policies allow a namespace's templates by these names)."""
    return f"{tier}-x{devices}" if devices > 1 else tier

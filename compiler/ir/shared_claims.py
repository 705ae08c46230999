"""A team's shared claims as each cluster gets them: which namespace, which clusters.

A team's `sharedClaims` (its own file) become ResourceClaims that several pods name. A claim
lands in a cluster where its namespace holds quota for its tier; resolve.sharing checks the
claims against that (GF240-GF243, GF608) and emit.resourceclaim writes the ones that land.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.ir.policy import SharedClaim
from compiler.ir.resolved import ResolvedCluster
from compiler.ir.teams import GrantedTeam


@dataclass(frozen=True)
class PlacedClaim:
    """A team's shared claim as one cluster gets it."""

    team: GrantedTeam
    index: int
    claim: SharedClaim
    namespace: str

    @property
    def key(self) -> str:
        """`<team>/<namespace>/<claim>`, for sorting."""
        return f"{self.team.name}/{self.namespace}/{self.claim.name}"

    def path(self, field: str) -> tuple[str | int, ...]:
        """Where `field` of the claim is written in the team's file."""
        return ("spec", "sharedClaims", self.index, field)


def claim_namespace(team: GrantedTeam, claim: SharedClaim) -> str | None:
    """The namespace a shared claim lives in (None: unknown, reported by check_shared_claims)."""
    if claim.namespace is not None:
        return claim.namespace if claim.namespace in team.spec.namespaces else None
    return team.spec.namespaces[0] if len(team.spec.namespaces) == 1 else None


def shared_claims(cluster: ResolvedCluster) -> list[PlacedClaim]:
    """The shared claims the cluster gets: those of its teams whose namespace holds quota for
    the claim's tier there (and, when the claim lists clusters, in those only)."""
    placed = []
    for team in cluster.teams:
        for index, claim in enumerate(team.spec.shared_claims):
            namespace = claim_namespace(team, claim)
            if namespace is None:
                continue
            if claim.clusters is not None and cluster.name not in claim.clusters:
                continue
            if held_limit(cluster, team, namespace, claim.tier) > 0:
                placed.append(PlacedClaim(team, index, claim, namespace))
    return sorted(placed, key=lambda p: p.key)


def held_limit(cluster: ResolvedCluster, team: GrantedTeam, namespace: str, tier: str) -> int:
    """The device limit the team's namespace holds for the tier in the cluster (0: none)."""
    return sum(
        g.limit
        for g in cluster.guarantees
        if g.team is team and g.namespace == namespace and g.tier == tier
    )

"""The changes an explanation may offer as fixes, each applicable to a cluster so that it can
be checked by solving again before it is printed: cut guarantees, add nodes, remove or
tolerate a device taint, let a tier's gangs use whole nodes.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod

from compiler.ir import GuaranteeKey, ResolvedCluster, ResolvedPool, TierInCluster


class Edit(ABC):
    """One change to a cluster's policy."""

    @abstractmethod
    def apply(self, cluster: ResolvedCluster) -> ResolvedCluster:
        """The cluster with the change made."""


@dataclasses.dataclass(frozen=True)
class Cut(Edit):
    """Take `devices[key]` devices off each guarantee's count."""

    devices: tuple[tuple[GuaranteeKey, int], ...]

    def apply(self, cluster: ResolvedCluster) -> ResolvedCluster:
        cuts = dict(self.devices)
        guarantees = tuple(
            dataclasses.replace(g, count=g.count - cuts.get(g.key, 0)) for g in cluster.guarantees
        )
        return dataclasses.replace(cluster, guarantees=guarantees)


@dataclasses.dataclass(frozen=True)
class Grow(Edit):
    """Add `nodes` untainted nodes to `pool`, after its last node."""

    pool: str
    nodes: int

    def apply(self, cluster: ResolvedCluster) -> ResolvedCluster:
        def grow(resolved: ResolvedPool) -> ResolvedPool:
            if resolved.pool.name != self.pool:
                return resolved
            more = {"nodes": resolved.pool.nodes + self.nodes}
            return dataclasses.replace(resolved, pool=resolved.pool.model_copy(update=more))

        pools = {p.pool.name: grow(p) for p in cluster.pools}
        taints = tuple(
            dataclasses.replace(
                taint,
                targets=tuple(
                    dataclasses.replace(target, pool=pools[target.pool.pool.name])
                    for target in taint.targets
                ),
            )
            for taint in cluster.taints
        )
        return dataclasses.replace(cluster, pools=tuple(pools.values()), taints=taints)


@dataclasses.dataclass(frozen=True)
class RemoveTaint(Edit):
    """Remove the device taint called `name`."""

    name: str

    def apply(self, cluster: ResolvedCluster) -> ResolvedCluster:
        taints = tuple(t for t in cluster.taints if t.name != self.name)
        return dataclasses.replace(cluster, taints=taints)


@dataclasses.dataclass(frozen=True)
class Tolerate(Edit):
    """Let `teams` tolerate the device taint called `name` too."""

    name: str
    teams: tuple[str, ...]

    def apply(self, cluster: ResolvedCluster) -> ResolvedCluster:
        taints = tuple(
            dataclasses.replace(t, tolerated_by=tuple(sorted({*t.tolerated_by, *self.teams})))
            if t.name == self.name
            else t
            for t in cluster.taints
        )
        return dataclasses.replace(cluster, taints=taints)


@dataclasses.dataclass(frozen=True)
class Ungroup(Edit):
    """Let `tier` match gangs on nothing, so that a gang may use a whole node."""

    tier: str

    def apply(self, cluster: ResolvedCluster) -> ResolvedCluster:
        def loosen(tier: TierInCluster) -> TierInCluster:
            if tier.name != self.tier:
                return tier
            spec = tier.tier.spec.model_copy(update={"gang_match_attribute": None})
            return dataclasses.replace(tier, tier=tier.tier.model_copy(update={"spec": spec}))

        return dataclasses.replace(cluster, tiers=tuple(loosen(t) for t in cluster.tiers))

"""The fixes an explanation may offer, applied to a cluster so that each can be checked by
solving again before it is printed: cut guarantees, add nodes, remove or tolerate a device
taint, let a tier's gangs use whole nodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from compiler.resolve import ResolvedCluster, ResolvedPool, TierInCluster


def with_cuts(cluster: ResolvedCluster, cuts: Mapping[str, int]) -> ResolvedCluster:
    """The cluster with `cuts[key]` devices taken off each guarantee's count."""
    return dataclasses.replace(
        cluster,
        guarantees=tuple(
            dataclasses.replace(g, count=g.count - cuts.get(g.key, 0)) for g in cluster.guarantees
        ),
    )


def with_nodes(cluster: ResolvedCluster, pool: str, extra: int) -> ResolvedCluster:
    """The cluster with `extra` untainted nodes added to `pool` (after its last node)."""

    def grow(resolved: ResolvedPool) -> ResolvedPool:
        if resolved.pool.name != pool:
            return resolved
        nodes = resolved.pool.nodes + extra
        return dataclasses.replace(resolved, pool=resolved.pool.model_copy(update={"nodes": nodes}))

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


def without_taint(cluster: ResolvedCluster, name: str) -> ResolvedCluster:
    """The cluster without the device taint called `name`."""
    return dataclasses.replace(cluster, taints=tuple(t for t in cluster.taints if t.name != name))


def tolerating(cluster: ResolvedCluster, name: str, teams: Iterable[str]) -> ResolvedCluster:
    """The cluster where `teams` also tolerate the device taint called `name`."""
    more = tuple(teams)
    return dataclasses.replace(
        cluster,
        taints=tuple(
            dataclasses.replace(t, tolerated_by=tuple(sorted({*t.tolerated_by, *more})))
            if t.name == name
            else t
            for t in cluster.taints
        ),
    )


def ungrouped(cluster: ResolvedCluster, tier: str) -> ResolvedCluster:
    """The cluster where `tier` matches gangs on nothing, so a gang may use a whole node."""

    def loosen(resolved_tier: TierInCluster) -> TierInCluster:
        if resolved_tier.name != tier:
            return resolved_tier
        spec = resolved_tier.tier.spec.model_copy(update={"gang_match_attribute": None})
        return dataclasses.replace(
            resolved_tier, tier=resolved_tier.tier.model_copy(update={"spec": spec})
        )

    return dataclasses.replace(cluster, tiers=tuple(loosen(t) for t in cluster.tiers))

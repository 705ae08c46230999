"""Which devices of a solved plan each tier's holders can actually be given.

A device with a blocking taint serves only teams that tolerate every taint on it. The plan
counts, per tier, the devices its selector reaches (capacity), those carrying a taint, those
no holder of the tier tolerates (idle: counted nowhere as usable), and how many untainted
devices the tier's guarantees need, with tolerating holders served from the tainted devices
first. The Kueue cohort lends only untainted devices that no guarantee needs, so a borrower
never gets a device it cannot use; and the solver leaves no tainted node partitioned into MIG
devices that no one who tolerates it can use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from compiler.ir import WHOLE_GPU, GroupKey, ResolvedCluster, TierCapacity
from compiler.solve.groups import NodeGroup
from compiler.solve.model import ClusterModel, tolerated
from compiler.solve.node_options import NodeConfig, option_devices


@dataclass(frozen=True)
class Piece:
    """Some devices of one kind in a plan that carry the same taints."""

    pool: str
    device: str
    """`gpu` or a MIG profile name."""
    count: int
    taints: frozenset[str]


def pieces(group: NodeGroup, config: NodeConfig, nodes: int) -> Iterator[Piece]:
    """The devices `nodes` nodes of a group offer in one configuration, by taints (a GPU's
    own taints cover its MIG devices too)."""
    pool = group.pool.pool.name
    found: Counter[tuple[str, frozenset[str]]] = Counter()
    for option, taints in zip(config.options, group.device_taints, strict=True):
        for device, count in option_devices(option).items():
            found[device, group.node_taints | taints] += count * nodes
    for (device, taints), count in sorted(found.items(), key=lambda f: (f[0][0], sorted(f[0][1]))):
        yield Piece(pool, device, count, taints)


def tier_use(cluster: ResolvedCluster, tier: str, found: list[Piece]) -> TierCapacity:
    """What the plan's devices (`found`) are to `tier`: capacity, promises, taints."""
    slots = {(k.pool, k.device) for k in cluster.tier(tier).kinds}
    holders = [g for g in cluster.guarantees if g.tier == tier]
    mine = [p for p in found if (p.pool, p.device) in slots and p.count]
    tainted = [p for p in mine if p.taints]
    every_taint = frozenset().union(*(p.taints for p in tainted))
    usable_tainted = sum(
        p.count for p in tainted if any(p.taints <= tolerated(cluster, g) for g in holders)
    )
    tolerant = sum(g.count for g in holders if every_taint <= tolerated(cluster, g))
    guaranteed = sum(g.count for g in holders)
    return TierCapacity(
        tier,
        capacity=sum(p.count for p in mine),
        guaranteed=guaranteed,
        limit=sum(g.limit for g in holders),
        tainted=sum(p.count for p in tainted),
        idle=sum(p.count for p in tainted) - usable_tainted,
        untainted_promised=guaranteed - min(usable_tainted, tolerant),
    )


def idle_partitions(built: ClusterModel) -> list[tuple[GroupKey, int]]:
    """(group, configuration) pairs that partition tainted nodes into MIG devices no one who
    tolerates the node's taints can use: nodes there serve nobody."""
    cluster = built.cluster
    idle = []
    for group in built.groups:
        if not group.node_taints:
            continue
        pool = group.pool.pool.name
        users = {
            (kind.pool, kind.profile_name)
            for g in cluster.guarantees
            if group.node_taints <= tolerated(cluster, g)
            for kind in cluster.tier(g.tier).kinds
        }
        for index, config in enumerate(built.configs[group.key]):
            profiles = [d for d in config.devices if d != WHOLE_GPU]
            if profiles and not any((pool, d) in users for d in profiles):
                idle.append((group.key, index))
    return idle

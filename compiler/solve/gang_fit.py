"""Gangs bigger than any group they may use: infeasible whatever else the cluster holds (GF403).

A gang claim's devices share one value of the tier's match attribute, and always one node, so
a gang can never be larger than the most devices of its tier that one group holds: GPUs per
group for whole GPUs, times the most instances of the profile one GPU can hold for MIG. This
is checked before the model is built, so that the explanation names the group size that
limits the gang rather than a shortfall of devices.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.catalog import enumerate_layouts
from compiler.catalog.driver import Scope
from compiler.diagnostics import Diagnostic
from compiler.ir import DeviceKind, GangGroup, Guarantee, ResolvedCluster, ResolvedPool, gang_group


@dataclass(frozen=True)
class PoolLimit:
    """The most devices of a tier one gang can get on one pool, and the group that limits it."""

    pool: ResolvedPool
    group: GangGroup
    devices: int

    def describe(self) -> str:
        """e.g. `pool l40s: 2 GPUs per PCIe root (the pool's topology)`."""
        name, group = self.pool.pool.name, self.group
        if group.scope is Scope.DEVICE:
            return f"pool {name}: one device"
        if group.scope is Scope.GPU:
            return f"pool {name}: one GPU, {self.devices} devices of the tier"
        where = ""
        if group.size is not None:
            where = f" ({group.size.origin}" + (", unverified)" if group.size.unverified else ")")
        more = f", {self.devices} devices of the tier" if self.devices != group.gpus else ""
        return f"pool {name}: {group.gpus} GPUs per {group.words}{where}{more}"


def most_per_gpu(kind: DeviceKind) -> int:
    """How many devices of a kind one GPU can hold: 1 whole GPU, or the most instances of the
    MIG profile a layout places."""
    if kind.profile is None:
        return 1
    return max(
        (layout.count(kind.profile_name) for layout in enumerate_layouts(kind.model)), default=0
    )


def pool_limits(cluster: ResolvedCluster, guarantee: Guarantee) -> list[PoolLimit]:
    """Per pool the guarantee's tier selects: the most devices one of its gangs can get."""
    tier = cluster.tier(guarantee.tier)
    limits = []
    for pool in cluster.pools:
        kinds = [k for k in tier.kinds if k.pool == pool.pool.name]
        if not kinds:
            continue
        group = gang_group(cluster, tier, pool)
        if group.gpus is None:
            continue  # unknown grouping: refused at resolve (GF236)
        devices = max(1 if group.gpus == 0 else group.gpus * most_per_gpu(k) for k in kinds)
        limits.append(PoolLimit(pool, group, devices))
    return limits


def oversized_gangs(cluster: ResolvedCluster) -> list[Diagnostic]:
    """GF403 for every guarantee whose gangs fit no group of any pool its tier selects."""
    problems = []
    for guarantee in cluster.guarantees:
        if guarantee.gang < 2:
            continue
        limits = pool_limits(cluster, guarantee)
        if not limits or any(limit.devices >= guarantee.gang for limit in limits):
            continue
        problems.append(_oversized(cluster, guarantee, limits))
    return problems


def _oversized(
    cluster: ResolvedCluster, guarantee: Guarantee, limits: list[PoolLimit]
) -> Diagnostic:
    tier = cluster.tier(guarantee.tier)
    attribute = tier.tier.spec.gang_match_attribute
    narrow = [limit for limit in limits if limit.group.scope is not Scope.NODE]
    most = max(limit.devices for limit in limits)
    if narrow:
        scopes = sorted({limit.group.words for limit in narrow})
        reason = (
            f"tier {tier.name} keeps each gang on one {' or '.join(scopes)} ({attribute}), and "
            f"no such group holds {guarantee.gang} of its devices"
        )
    else:
        reason = f"no node the tier {tier.name} selects holds {guarantee.gang} of its devices"
    hints = [f"use gangs of at most {most} devices"]
    if narrow:
        widest = max(limit.pool.pool.gpus_per_node for limit in limits)
        hints.append(
            "a claim's devices are always on one node: without gangMatchAttribute (or with an "
            f"attribute every device of a node shares) a gang may use up to {widest} GPUs"
        )
    related = [
        (
            f"team {guarantee.team.name} guarantees {guarantee.count} x {guarantee.tier} in "
            f"namespace {guarantee.namespace}",
            guarantee.span,
        )
    ]
    if attribute is not None:
        related.append(
            (
                f"tier {tier.name} matches gangs on {attribute}",
                tier.tier.source.span(("spec", "gangMatchAttribute")),
            )
        )
    return Diagnostic(
        "GF403",
        f"cluster {cluster.name}: team {guarantee.team.name}'s gangs of {guarantee.gang} x "
        f"{guarantee.tier} (namespace {guarantee.namespace}) can never be placed: {reason} "
        f"({'; '.join(limit.describe() for limit in limits)})",
        guarantee.team.source.span(("spec", "quotas", guarantee.quota_index, "gang")),
        tuple(hints),
        tuple(related),
    )


def group_note(cluster: ResolvedCluster, guarantee: Guarantee) -> str:
    """For a conflict's note: the groups the guarantee's gangs must stay within, if narrower
    than a node (`each gang within one PCIe root: pool l40s: 2 GPUs per PCIe root ...`)."""
    if guarantee.gang < 2:
        return ""
    narrow = [
        limit for limit in pool_limits(cluster, guarantee) if limit.group.scope is not Scope.NODE
    ]
    if not narrow:
        return ""
    words = sorted({limit.group.words for limit in narrow})
    return (
        f"; each gang within one {' or '.join(words)} "
        f"({'; '.join(limit.describe() for limit in narrow)})"
    )

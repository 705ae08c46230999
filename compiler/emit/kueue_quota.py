"""The quota arithmetic of Kueue's queues, as plain numbers (rendered by emit.kueue).

A team's ClusterQueue gets, per tier it holds, `nominalQuota` = its guarantees and
`borrowingLimit` = its limits minus its guarantees (0 when it may not borrow: a missing
borrowingLimit would mean unlimited). CPU and memory follow from the tiers' host shares.
The cluster's root cohort holds the headroom the solver left (capacity minus guarantees) so
borrowers can use it; per flavor, the cohort's and the queues' nominal quotas add up to at
most the solved capacity, and devices two tiers share are offered once (headroom_owners).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from compiler.ir import (
    HOST_FLAVOR,
    ZERO,
    ClusterPlan,
    GrantedTeam,
    HostShare,
    ResolvedCluster,
    TierCapacity,
    allocatable,
    host_share,
    tier_resource,
)


@dataclass(frozen=True)
class Quota:
    """One resource of one flavor: nominal quota and (for queues) the borrowing limit."""

    resource: str
    nominal: Fraction
    borrowing_limit: Fraction | None = None


@dataclass(frozen=True)
class Group:
    """A resource group with its one flavor."""

    flavor: str
    quotas: tuple[Quota, ...]

    @property
    def covered(self) -> tuple[str, ...]:
        """The group's coveredResources."""
        return tuple(q.resource for q in self.quotas)


def _host_group(nominal: HostShare, borrowing: HostShare | None) -> Group:
    return Group(
        HOST_FLAVOR,
        (
            Quota("cpu", nominal.cpu, borrowing.cpu if borrowing else None),
            Quota("memory", nominal.memory, borrowing.memory if borrowing else None),
        ),
    )


def team_groups(cluster: ResolvedCluster, team: GrantedTeam) -> list[Group]:
    """The resource groups of a team's ClusterQueue (empty when it holds no quota here)."""
    held: dict[str, tuple[int, int]] = {}
    for g in cluster.guarantees:
        if g.team is team:
            guaranteed, limit = held.get(g.tier, (0, 0))
            held[g.tier] = (guaranteed + g.count, limit + g.limit)
    if not held:
        return []
    groups = []
    nominal_host, borrow_host = ZERO, ZERO
    for tier, (guaranteed, limit) in sorted(held.items()):
        groups.append(
            Group(
                tier,
                (Quota(tier_resource(tier), Fraction(guaranteed), Fraction(limit - guaranteed)),),
            )
        )
        share = host_share(cluster, cluster.tier(tier))
        nominal_host += share * guaranteed
        borrow_host += share * (limit - guaranteed)
    groups.append(_host_group(nominal_host, borrow_host))
    return groups


def headroom_owners(cluster: ResolvedCluster) -> dict[str, list[str]]:
    """Which tier offers the solved headroom of the devices it shares with other tiers.

    Tiers that select a common device kind form a group. When one tier of a group selects
    every kind the group does, its capacity is the group's, so the group's free devices are
    its capacity minus every guarantee of the group: that tier offers them (the first by
    name when several do). A group with no such tier offers none. Maps owner -> the group's tiers.
    """
    kinds = {t.name: {k.key for k in t.kinds} for t in cluster.tiers}
    groups: list[set[str]] = []
    for name in sorted(kinds):
        joined = [g for g in groups if any(kinds[name] & kinds[other] for other in g)]
        merged = {name}.union(*joined)
        groups = [g for g in groups if g not in joined] + [merged]
    owners: dict[str, list[str]] = {}
    for group in groups:
        union = set().union(*(kinds[n] for n in group))
        broadest = sorted(
            (n for n in group if kinds[n] == union), key=lambda n: (-len(kinds[n]), n)
        )
        if broadest:
            owners[broadest[0]] = sorted(group)
    return owners


def cohort_groups(cluster: ResolvedCluster, plan: ClusterPlan) -> list[Group]:
    """The root cohort's resource groups: each tier's untainted devices no guarantee needs
    (solve.usable: a borrower may not tolerate a taint), and the host resources no queue's
    nominal quota claims."""
    owners = headroom_owners(cluster)
    solved = {t.tier: t for t in plan.tiers}
    groups = []
    for tier in cluster.tiers:
        members = owners.get(tier.name, [])
        # only untainted devices are lent: a borrower may not tolerate a taint
        promised = sum(solved[m].untainted_promised for m in members)
        headroom = max(0, solved[tier.name].untainted - promised) if members else 0
        groups.append(Group(tier.name, (Quota(tier_resource(tier.name), Fraction(headroom)),)))
    kubelet = cluster.cluster.spec.kubelet
    total = ZERO
    for pool in cluster.pools:
        total += allocatable(pool.pool, kubelet) * pool.pool.nodes
    claimed = ZERO
    for team in cluster.teams:
        for group in team_groups(cluster, team):
            if group.flavor == HOST_FLAVOR:
                claimed += HostShare(group.quotas[0].nominal, group.quotas[1].nominal)
    left = HostShare(
        max(Fraction(0), total.cpu - claimed.cpu), max(Fraction(0), total.memory - claimed.memory)
    )
    groups.append(_host_group(left, None))
    return groups


def overcommitted(cluster: ResolvedCluster, plan: ClusterPlan) -> list[str]:
    """Where the Kueue quotas could admit more devices than the plan can give: per tier (or per
    group of tiers that share devices), the ClusterQueues' and the cohort's nominal quotas
    added up against the usable devices. Empty when Kueue's promise is the solver's."""
    solved = {t.tier: t for t in plan.tiers}
    nominal: dict[str, Fraction] = {}
    groups = [g for team in cluster.teams for g in team_groups(cluster, team)]
    for group in [*groups, *cohort_groups(cluster, plan)]:
        if group.flavor != HOST_FLAVOR:
            nominal[group.flavor] = nominal.get(group.flavor, Fraction(0)) + group.quotas[0].nominal
    shared = headroom_owners(cluster)
    members = {m for tiers in shared.values() for m in tiers}
    checks = [(owner, tiers) for owner, tiers in shared.items()]
    checks += [(t.name, [t.name]) for t in cluster.tiers if t.name not in members]
    found = []
    for owner, tiers in sorted(checks):
        total = sum((nominal.get(t, Fraction(0)) for t in tiers), Fraction(0))
        usable = _group_usable(solved, owner, tiers)
        if total > usable:
            found.append(
                f"tiers {', '.join(tiers)}: nominal quotas add up to {total} devices, "
                f"{usable} usable"
            )
    return found


def _group_usable(solved: dict[str, TierCapacity], owner: str, tiers: list[str]) -> int:
    """Devices of a group of tiers that some holder of one of them can be given.

    The owner's selector reaches every device of the group, so those its own holders can
    use count; of the tainted ones they do not tolerate (its idle devices), so do those the
    holders of another tier of the group tolerate (at most that tier's tainted devices
    that are not idle for it: a team tolerating a taint may be promised them).
    """
    tolerated = sum(solved[t].tainted - solved[t].idle for t in tiers if t != owner)
    return solved[owner].usable + min(solved[owner].idle, tolerated)

"""Memory QoS: the host quota of each team namespace (what emit.resourcequota and
emit.limitrange write from it).

The host quota follows the device quota: a namespace may hold `limit` devices of each tier,
so it may request that many devices' host shares (`requests.cpu`, `requests.memory`; with the
guarantee alone, borrowing devices would leave their pods no CPU to run on). A team asking for
Guaranteed QoS gets limits equal to requests (`limits.memory` = `requests.memory`, and a
LimitRange that defaults limits to requests and forbids a memory limit above the request); a
Burstable team may burst to the node's fair memory share per device.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

from compiler.ir import GrantedTeam, Guarantee, HostShare, ResolvedCluster, fair_share, host_share
from compiler.quantity import format_decimal


@dataclass(frozen=True)
class HostQuota:
    """A namespace's host quota and container defaults, in cores and bytes."""

    requests: HostShare
    limits_memory: Fraction
    default_request: HostShare
    default_limit_memory: Fraction
    guaranteed: bool


@dataclass(frozen=True)
class TierHost:
    """What one device of a tier comes with on the host, and what its pods may burst to."""

    share: HostShare
    burst_memory: Fraction
    """The node's fair memory share per device, at least the request."""


def tier_hosts(cluster: ResolvedCluster) -> dict[str, TierHost]:
    """Each tier's host share and burst memory in `cluster`, by tier name."""
    hosts = {}
    for tier in cluster.tiers:
        fair = fair_share(cluster, tier)
        share = host_share(cluster, tier, fair)
        hosts[tier.tier.name] = TierHost(share, max(share.memory, fair.memory))
    return hosts


def host_quota(
    held: list[Guarantee], hosts: dict[str, TierHost], guaranteed: bool
) -> HostQuota | None:
    """The host quota of a namespace holding the guarantees `held` (None when it holds none)."""
    if not held:
        return None
    shares = [hosts[g.tier].share for g in held]
    bursts = [hosts[g.tier].burst_memory for g in held]
    requests = HostShare(
        sum((s.cpu * g.limit for s, g in zip(shares, held, strict=True)), Fraction(0)),
        sum((s.memory * g.limit for s, g in zip(shares, held, strict=True)), Fraction(0)),
    )
    default_request = HostShare(min(s.cpu for s in shares), min(s.memory for s in shares))
    return HostQuota(
        requests=requests,
        limits_memory=(
            requests.memory
            if guaranteed
            else sum((b * g.limit for b, g in zip(bursts, held, strict=True)), Fraction(0))
        ),
        default_request=default_request,
        default_limit_memory=default_request.memory if guaranteed else min(bursts),
        guaranteed=guaranteed,
    )


def namespace_host_quotas(cluster: ResolvedCluster) -> list[NamespaceHostQuota]:
    """The host quota of every team namespace that holds device quota, in team order: what
    both its ResourceQuota (emit.resourcequota) and its LimitRange (emit.limitrange) say."""
    found = []
    hosts = tier_hosts(cluster)
    held: dict[tuple[str, str], list[Guarantee]] = defaultdict(list)
    for guarantee in cluster.guarantees:
        held[(guarantee.team.name, guarantee.namespace)].append(guarantee)
    for team in cluster.teams:
        guaranteed = team.spec.memory_qos == "guaranteed"
        for namespace in team.spec.namespaces:
            quota = host_quota(held.get((team.name, namespace), []), hosts, guaranteed)
            if quota is not None:
                found.append(NamespaceHostQuota(team, namespace, quota))
    return found


@dataclass(frozen=True)
class NamespaceHostQuota:
    """One team namespace's host quota."""

    team: GrantedTeam
    namespace: str
    quota: HostQuota


def cpu_quantity(value: Fraction) -> str:
    """Cores as a Kubernetes quantity."""
    return format_decimal(value)

"""Host resources: what a node leaves allocatable, and the CPU and memory one device of a
tier comes with (its per-GPU host share).

A tier's share is what it declares (`cpuPerGpu`, `hostMemoryPerGpu`, read per device of the
tier, so per MIG device for a partition tier); a tier that declares none gets the node's fair
share: the allocatable amount of the smallest node it selects, divided by the most devices of
that kind a node can hold. Quotas, limit ranges and Kueue queues all derive from these shares,
and the solver packs gangs within `allocatable`: the one place a node's reservations are
subtracted.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from compiler.catalog import MigProfile
from compiler.ir.devices import DeviceKind
from compiler.ir.policy import Kubelet, NodePool
from compiler.ir.resolved import ResolvedCluster, TierInCluster

MEBIBYTE = Fraction(2**20)
MILLICORE = Fraction(1, 1000)
DEFAULT_EVICTION_MEMORY = 100 * MEBIBYTE
"""The kubelet's default `evictionHard: memory.available: 100Mi`."""


@dataclass(frozen=True)
class HostShare:
    """CPU (cores) and memory (bytes) that go with one device."""

    cpu: Fraction
    memory: Fraction

    def __mul__(self, devices: int) -> HostShare:
        return HostShare(self.cpu * devices, self.memory * devices)

    def __add__(self, other: HostShare) -> HostShare:
        return HostShare(self.cpu + other.cpu, self.memory + other.memory)


ZERO = HostShare(Fraction(0), Fraction(0))


def reserved(kubelet: Kubelet) -> HostShare:
    """What the kubelet keeps from pods: system and kube reservations plus the eviction
    threshold (memory below it is never handed out)."""
    cpu = (kubelet.system_reserved.cpu or 0) + (kubelet.kube_reserved.cpu or 0)
    memory = (kubelet.system_reserved.memory or 0) + (kubelet.kube_reserved.memory or 0)
    eviction = kubelet.eviction_hard_memory
    memory += DEFAULT_EVICTION_MEMORY if eviction is None else eviction
    return HostShare(Fraction(cpu), Fraction(memory))


def allocatable(pool: NodePool, kubelet: Kubelet) -> HostShare:
    """A node's allocatable CPU and memory (may be negative: resolve reports that)."""
    kept = reserved(kubelet)
    return HostShare(pool.cpu - kept.cpu, pool.host_memory - kept.memory)


def max_instances(profile: MigProfile, memory_slices: int, compute_slices: int) -> int:
    """The most instances of a MIG profile one GPU can hold."""
    if profile.media:
        return 1
    return min(
        len(profile.starts),
        memory_slices // profile.memory_slices,
        compute_slices // profile.compute_slices,
    )


def devices_per_node(kind: DeviceKind, pool: NodePool) -> int:
    """The most devices of `kind` one node of `pool` can offer at once."""
    if kind.profile is None or kind.model.mig is None:
        return pool.gpus_per_node
    mig = kind.model.mig
    return pool.gpus_per_node * max_instances(kind.profile, mig.memory_slices, mig.compute_slices)


def fair_share(cluster: ResolvedCluster, tier: TierInCluster) -> HostShare:
    """The node's allocatable amounts per device, for the smallest node the tier selects,
    rounded down to whole millicores and mebibytes."""
    kubelet = cluster.cluster.spec.kubelet
    pools = {p.pool.name: p.pool for p in cluster.pools}
    shares = []
    for kind in tier.kinds:
        pool = pools[kind.pool]
        node = allocatable(pool, kubelet)
        per_node = devices_per_node(kind, pool)
        shares.append(HostShare(node.cpu / per_node, node.memory / per_node))
    cpu, memory = min(s.cpu for s in shares), min(s.memory for s in shares)
    return HostShare(_floor(cpu, MILLICORE), _floor(memory, MEBIBYTE))


def _floor(value: Fraction, unit: Fraction) -> Fraction:
    return (value // unit) * unit


def host_share(
    cluster: ResolvedCluster, tier: TierInCluster, fair: HostShare | None = None
) -> HostShare:
    """The CPU and memory one device of the tier comes with: declared, else the fair share
    (`fair`, when the caller has computed it)."""
    spec = tier.tier.spec
    fair = fair or fair_share(cluster, tier)
    cpu = spec.cpu_per_gpu if spec.cpu_per_gpu is not None else fair.cpu
    memory = spec.host_memory_per_gpu if spec.host_memory_per_gpu is not None else fair.memory
    return HostShare(Fraction(cpu), Fraction(memory))

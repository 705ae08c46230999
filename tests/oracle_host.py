"""Host arithmetic for the oracle and the plan checker, from the definitions (README, "The
feasibility solver" and "Kubernetes versions, taints, Kueue and memory QoS"; the Kubelet
model's docstrings; Kubernetes' Node Allocatable), not from compiler/solve or compiler/resolve.

A node's allocatable memory is its `hostMemory` minus `systemReserved` and `kubeReserved`
memory and the hard eviction threshold (`evictionHardMemory`, the kubelet's 100Mi when not
set); its allocatable CPU is `cpu` minus both reservations' CPU. Each device a gang uses takes
its tier's `hostMemoryPerGpu` and `cpuPerGpu` (nothing when the tier sets none). Kubernetes
counts memory in whole bytes and CPU in millicores, rounding a quantity up (`Value()`,
`MilliValue()`), and clamps a negative allocatable to zero; a request of zero always fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from compiler.model.cluster import Kubelet, NodePool
from compiler.model.tier import GpuTierSpec

KUBELET_EVICTION_MEMORY = 100 * 2**20
"""The kubelet's default hard eviction threshold `memory.available<100Mi`."""


@dataclass(frozen=True)
class Host:
    """Memory in bytes and CPU in millicores."""

    memory: int
    cpu: int

    def __add__(self, other: Host) -> Host:
        return Host(self.memory + other.memory, self.cpu + other.cpu)

    def __mul__(self, times: int) -> Host:
        return Host(self.memory * times, self.cpu * times)

    def fits_in(self, room: Host) -> bool:
        """Whether requests of this size fit in `room` (a zero request always fits)."""
        return (self.memory == 0 or self.memory <= room.memory) and (
            self.cpu == 0 or self.cpu <= room.cpu
        )

    def __sub__(self, other: Host) -> Host:
        return Host(self.memory - other.memory, self.cpu - other.cpu)


def _bytes(value: Fraction) -> int:
    return math.ceil(value)


def _millis(value: Fraction) -> int:
    return math.ceil(value * 1000)


def allocatable(kubelet: Kubelet, pool: NodePool) -> Host:
    """What one node of `pool` offers pods."""
    reserved = (kubelet.system_reserved, kubelet.kube_reserved)
    eviction = kubelet.eviction_hard_memory
    memory = pool.host_memory - sum((r.memory or Fraction(0) for r in reserved), Fraction(0))
    memory -= KUBELET_EVICTION_MEMORY if eviction is None else eviction
    cpu = pool.cpu - sum((r.cpu or Fraction(0) for r in reserved), Fraction(0))
    return Host(max(0, _bytes(memory)), max(0, _millis(cpu)))


def per_device(spec: GpuTierSpec) -> Host:
    """What each device of a tier takes of its node's host."""
    return Host(
        _bytes(spec.host_memory_per_gpu or Fraction(0)), _millis(spec.cpu_per_gpu or Fraction(0))
    )

"""The group one gang of a tier must fit in on a pool: the attribute it matches on, what shares
a value of it (a node, a NUMA node, a PCIe root, a GPU, a device) and how many GPUs that is.
resolve checks the attribute and the size are known; solve packs each gang within its group."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.catalog.driver import NVIDIA_DRIVER, DriverAttribute, Scope, attribute, published
from compiler.ir.resolved import GroupSize, ResolvedCluster, ResolvedPool, TierInCluster

SCOPE_WORDS = {
    Scope.NUMA_NODE: "NUMA node",
    Scope.PCIE_ROOT: "PCIe root",
    Scope.GPU: "GPU",
    Scope.DEVICE: "device",
    Scope.NODE: "node",
}


@dataclass(frozen=True)
class GangGroup:
    """Where one tier's gangs must sit on one pool: within `gpus` GPUs sharing a value of
    `attribute` (a whole node when the tier matches on nothing narrower); `gpus` 0 means one
    device (`uuid`), None that the pool's grouping is unknown."""

    attribute: str | None
    scope: Scope
    gpus: int | None
    size: GroupSize | None = None

    @property
    def words(self) -> str:
        """`PCIe root`, `NUMA node`, ... for messages."""
        return SCOPE_WORDS[self.scope]


def tier_types(tier: TierInCluster) -> list[str]:
    """The device types (`gpu`, `mig`) a tier selects in a cluster."""
    return sorted({"mig" if kind.is_mig else "gpu" for kind in tier.kinds})


def match_attribute(cluster: ResolvedCluster, tier: TierInCluster) -> DriverAttribute | None:
    """The driver attribute a tier's gangs match on, if the cluster's driver publishes it on
    every device type the tier selects (None also for no attribute, or another driver)."""
    name = tier.tier.spec.gang_match_attribute
    driver = cluster.cluster.spec.driver
    if name is None or driver != NVIDIA_DRIVER:
        return None
    version = cluster.cluster.spec.driver_version
    for device_type in tier_types(tier):
        if name not in published(driver, version, device_type):
            return None
    return attribute(driver, name)


def gang_group(cluster: ResolvedCluster, tier: TierInCluster, pool: ResolvedPool) -> GangGroup:
    """The group one gang of `tier` must fit in on `pool`."""
    width = pool.pool.gpus_per_node
    found = match_attribute(cluster, tier)
    name = tier.tier.spec.gang_match_attribute
    if found is None or found.scope is Scope.NODE:
        return GangGroup(name, Scope.NODE, width)
    if found.scope is Scope.GPU:
        return GangGroup(name, Scope.GPU, 1)
    if found.scope is Scope.DEVICE:
        return GangGroup(name, Scope.DEVICE, 0)
    size = pool.topology.numa_node if found.scope is Scope.NUMA_NODE else pool.topology.pcie_root
    return GangGroup(name, found.scope, size.gpus if size else None, size)

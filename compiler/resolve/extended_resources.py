"""A tier's extendedResourceName must not be one the driver's own DeviceClasses map.

Kubernetes wants an extended resource name unique among a cluster's DeviceClasses but does
not enforce it: when two classes map one name, the class created last serves every pod that
asks for it. The NVIDIA chart maps `nvidia.com/gpu` on its `gpu.nvidia.com` class (rendered
as resource.k8s.io/v1, since chart v25.12.0) and has no switch to drop only that, so a tier
with the same name competes with it: pods get the driver's class or the tier's depending on
apply order, and gpufleet's quota of 0 on the driver's class refuses them in the first case.
"""

from __future__ import annotations

from collections.abc import Iterator

from compiler.catalog.driver import NVIDIA_DRIVER
from compiler.diagnostics import Diagnostic
from compiler.ir import ResolvedCluster
from compiler.model.policy import Cluster
from compiler.resolve.check import cluster_check
from compiler.versions import Feature

DRIVER_EXTENDED_RESOURCES: dict[str, dict[str, str]] = {
    NVIDIA_DRIVER: {"nvidia.com/gpu": "gpu.nvidia.com"},
}
"""driver -> {extended resource name: the driver's DeviceClass that maps it}, as its chart
installs them (kubernetes-sigs/dra-driver-nvidia-gpu, templates/deviceclass-gpu.yaml)."""


def driver_extended_resources(cluster: Cluster) -> dict[str, str | None]:
    """The names the driver's own classes map in `cluster` -> the class (None: declared by
    the cluster, class unknown); the Cluster's `driverExtendedResources` replaces the
    chart's default."""
    declared = cluster.spec.driver_extended_resources
    if declared is not None:
        return dict.fromkeys(declared)
    return dict(DRIVER_EXTENDED_RESOURCES.get(cluster.spec.driver, {}))


@cluster_check("GF230")
def check_extended_resources(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """GF230 for each tier that maps a name the driver's classes map (only where the version
    has extended resources at all: before that GF220 says so).

    Examples (FAIL and PASS): docs/diagnostics/GF230.md."""
    if not cluster.target.has(Feature.EXTENDED_RESOURCE):
        return
    taken = driver_extended_resources(cluster.cluster)
    driver = cluster.cluster.spec.driver
    for resolved in cluster.tiers:
        tier = resolved.tier
        name = tier.spec.extended_resource_name
        if name is None or name not in taken:
            continue
        device_class = taken[name]
        owner = (
            f"the {driver} driver's DeviceClass {device_class!r}"
            if device_class
            else f"a DeviceClass of the {driver} driver (the cluster's driverExtendedResources)"
        )
        yield Diagnostic(
            "GF230",
            f"tier {tier.name!r} maps extended resource {name!r}, which {owner} already "
            f"maps in cluster {cluster.name}: the class created last serves every pod "
            f"asking for {name!r}, so such pods may get the driver's class (whose quota "
            "of 0 refuses them) instead of the tier",
            tier.source.span(("spec", "extendedResourceName")),
            (
                f"give the tier a name no other class maps, e.g. "
                f"`extendedResourceName: example.com/{tier.name}`",
                "or, if the cluster's driver install maps no extended resource, declare "
                "it in the Cluster: `driverExtendedResources: []`",
            ),
            (("the cluster", cluster.cluster.source.span(("spec", "driver"))),),
        )

"""Checks of gangs and the attribute they match on (the group a gang must fit in is
compiler.ir.gangs): what the driver publishes, and whether a group's size is known.

A tier's `gangMatchAttribute` goes into every gang claim of the tier (`matchAttribute`), so a
gang is allocated only on devices that share one value of it. The attribute must be one the
cluster's driver release publishes on the devices the tier selects (GF235: else the claim is
never allocated), and where it groups GPUs by NUMA node or PCIe root the pool's grouping must
be known, from the catalog's board or the pool's `topology` (GF236), for the solver to place
each gang within one group.
"""

from __future__ import annotations

from collections.abc import Iterator

from compiler.catalog.driver import (
    DRIVER_VERSIONS,
    NVIDIA_DRIVER,
    Scope,
    attribute,
    published,
)
from compiler.diagnostics import Diagnostic
from compiler.ir import (
    GangGroup,
    ResolvedCluster,
    ResolvedPool,
    TierInCluster,
    gang_group,
    tier_types,
)
from compiler.resolve.check import cluster_check


@cluster_check("GF235", "GF236")
def check_gangs(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """GF235 for a tier matching gangs on an attribute the cluster's driver does not publish,
    GF236 for a gang matched on a NUMA node or PCIe root where the pool's grouping is unknown.

    Examples (FAIL and PASS): docs/diagnostics/GF235.md, GF236.md."""
    driver = cluster.cluster.spec.driver
    if driver != NVIDIA_DRIVER:  # the table describes NVIDIA's driver only
        return
    for tier in cluster.tiers:
        yield from _unpublished(cluster, tier)
    unknown: set[tuple[str, Scope]] = set()
    for guarantee in cluster.guarantees:
        if guarantee.gang < 2:
            continue
        tier = cluster.tier(guarantee.tier)
        for pool in cluster.pools:
            if not any(kind.pool == pool.pool.name for kind in tier.kinds):
                continue
            group = gang_group(cluster, tier, pool)
            if group.gpus is not None or (pool.pool.name, group.scope) in unknown:
                continue
            unknown.add((pool.pool.name, group.scope))
            yield _unknown_topology(cluster, tier, pool, group, guarantee.gang)


def _unpublished(cluster: ResolvedCluster, tier: TierInCluster) -> Iterator[Diagnostic]:
    name = tier.tier.spec.gang_match_attribute
    if name is None:
        return
    driver, version = cluster.cluster.spec.driver, cluster.cluster.spec.driver_version
    for device_type in tier_types(tier):
        offered = published(driver, version, device_type)
        if name in offered:
            continue
        known = attribute(driver, name)
        where = (
            f" (published by {known.releases}" + (f"; {known.note})" if known.note else ")")
            if known is not None and device_type in known.types
            else ""
        )
        default = (
            "" if "driver_version" in cluster.cluster.spec.model_fields_set else ", the default"
        )
        yield Diagnostic(
            "GF235",
            f"tier {tier.name!r} matches gangs on {name!r}, which the NVIDIA DRA driver "
            f"{version} of cluster {cluster.name} does not publish on its "
            f"{'MIG' if device_type == 'mig' else 'GPU'} devices{where}: a gang claim "
            "would never be allocated",
            tier.tier.source.span(("spec", "gangMatchAttribute")),
            (
                f"published by driver {version}: {', '.join(sorted(offered))}",
                "a claim's devices are on one node anyway: drop gangMatchAttribute to "
                "keep a gang on one node, or set the cluster's driverVersion "
                f"({', '.join(DRIVER_VERSIONS)}) to the release it runs",
            ),
            (
                (
                    f"cluster {cluster.name} runs driver {version}{default}",
                    cluster.cluster.source.span(("spec", "driverVersion")),
                ),
            ),
        )
        return


def _unknown_topology(
    cluster: ResolvedCluster, tier: TierInCluster, pool: ResolvedPool, group: GangGroup, gang: int
) -> Diagnostic:
    index = next(i for i, p in enumerate(cluster.cluster.spec.node_pools) if p is pool.pool)
    field = "numaNode" if group.scope is Scope.NUMA_NODE else "pcieRoot"
    return Diagnostic(
        "GF236",
        f"tier {tier.name!r} keeps each gang on one {group.words} ({group.attribute}), and "
        f"gangs of {gang} devices may use pool {pool.pool.name!r} of cluster {cluster.name}, "
        f"but how its GPUs group by {group.words} is not known: the catalog has no board of "
        f"{pool.pool.gpus_per_node} x {pool.model.id}",
        cluster.cluster.source.span(("spec", "nodePools", index, "gpu")),
        (
            f"declare it on the pool: `topology: {{{field}: <GPUs per {group.words}>}}` "
            "(`nvidia-smi topo -m` on a node shows it)",
        ),
        (
            (
                f"tier {tier.name} matches gangs on {group.attribute}",
                tier.tier.source.span(("spec", "gangMatchAttribute")),
            ),
        ),
    )

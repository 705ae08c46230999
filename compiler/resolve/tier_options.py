"""Check what a tier adds to its DeviceClass and claims: fallbacks, sharing, extended names."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.catalog.driver import NVIDIA_DRIVER
from compiler.diagnostics import Diagnostic
from compiler.ir import ResolvedCluster
from compiler.model.policy import GpuTier
from compiler.resolve.check import FleetFacts, cluster_check, fleet_check

"""The driver whose opaque GpuConfig / MigDeviceConfig carries a tier's sharing strategy."""


@fleet_check("GF221", "GF223")
def check_tier_options(facts: FleetFacts) -> Iterator[Diagnostic]:
    """Fallbacks name other tiers (GF221); a time-slice interval comes only with time-slicing
    (GF223).

    Examples (FAIL and PASS): docs/diagnostics/GF221.md, GF223.md."""
    tiers = facts.policies.tiers
    names = sorted(t.name for t in tiers)
    for tier in tiers:
        spec, source = tier.spec, tier.source
        for index, fallback in enumerate(spec.fallbacks):
            if fallback == tier.name:
                message = f"tier {tier.name!r} lists itself as a fallback"
            elif fallback not in names:
                message = f"tier {tier.name!r} falls back to {fallback!r}, which is not a tier"
            else:
                continue
            yield Diagnostic(
                "GF221",
                message,
                source.span(("spec", "fallbacks", index)),
                (f"tiers: {', '.join(names)}",),
            )

        interval = spec.time_slice_interval
        if interval is not None and spec.sharing != "TimeSlicing":
            yield Diagnostic(
                "GF223",
                f"tier {tier.name!r}: timeSliceInterval {interval} needs "
                f"`sharing: TimeSlicing` (the tier's sharing is {spec.sharing})",
                source.span(("spec", "timeSliceInterval")),
                ("set `sharing: TimeSlicing` or remove timeSliceInterval",),
            )


@cluster_check("GF224", "GF225", "GF223", tested_elsewhere=("GF223",))
def check_cluster_tier_options(cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    """Per cluster: sharing fits the devices and the driver (GF224; GF223 for an interval on
    MIG devices), and no two tiers claim the same extended resource name (GF225).

    Examples (FAIL and PASS): docs/diagnostics/GF224.md, GF225.md. GF223's page shows
    check_tier_options's case; this one's (MIG devices) is in tests/test_claims.py."""
    driver = cluster.cluster.spec.driver
    extended: dict[str, GpuTier] = {}
    for resolved in cluster.tiers:
        tier = resolved.tier
        spec, source = tier.spec, tier.source
        if spec.sharing != "Exclusive":
            mig = {kind.is_mig for kind in resolved.kinds}
            if driver != NVIDIA_DRIVER:
                reason = (
                    f"the sharing configuration is the NVIDIA driver's; {cluster.name} uses "
                    f"{driver}"
                )
            elif len(mig) > 1:
                reason = (
                    f"it selects both whole GPUs and MIG devices in {cluster.name}, which take "
                    "different driver configurations"
                )
            else:
                reason = None
            if reason is not None:
                yield Diagnostic(
                    "GF224",
                    f"tier {tier.name!r} cannot be shared ({spec.sharing}): {reason}",
                    source.span(("spec", "sharing")),
                    (
                        "split the tier so that each selects only whole GPUs or only MIG "
                        "devices of the NVIDIA driver, or set `sharing: Exclusive`",
                    ),
                )

            if mig == {True} and spec.time_slice_interval is not None:
                yield Diagnostic(
                    "GF223",
                    f"tier {tier.name!r} selects MIG devices, whose time-slicing has no "
                    "interval setting",
                    source.span(("spec", "timeSliceInterval")),
                    ("remove timeSliceInterval",),
                )

        name = spec.extended_resource_name
        if name is not None:
            first = extended.setdefault(name, tier)
            if first is not tier:
                yield Diagnostic(
                    "GF225",
                    f"tiers {first.name!r} and {tier.name!r} both map extended resource "
                    f"{name!r} in cluster {cluster.name}: the scheduler would pick one",
                    source.span(("spec", "extendedResourceName")),
                    ("give each tier its own extended resource name",),
                    (("the other", first.source.span(("spec", "extendedResourceName"))),),
                )


@fleet_check("GF222")
def check_fallback_presence(facts: FleetFacts) -> Iterator[Diagnostic]:
    """A fallback must select devices in at least one cluster where its tier is used (in the
    others it is simply left out of the claims): GF222.

    Examples (FAIL and PASS): docs/diagnostics/GF222.md."""
    clusters, tiers = facts.clusters, facts.policies.tiers
    names = {t.name for t in tiers}
    for tier in tiers:
        where = [c for c in clusters if any(g.tier == tier.name for g in c.guarantees)]
        if not where:
            continue
        for index, fallback in enumerate(tier.spec.fallbacks):
            if fallback not in names or fallback == tier.name:
                continue
            if not any(fallback in {t.name for t in c.tiers} for c in where):
                yield Diagnostic(
                    "GF222",
                    f"tier {tier.name!r} falls back to {fallback!r}, which selects no device "
                    f"in the clusters where {tier.name!r} is used "
                    f"({', '.join(c.name for c in where)})",
                    tier.source.span(("spec", "fallbacks", index)),
                    ("widen the fallback tier's selector, or remove the fallback",),
                )

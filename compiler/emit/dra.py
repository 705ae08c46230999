"""DeviceClasses (one per tier) and ResourceClaimTemplates (per team namespace x tier)."""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.resolve import ResolvedCluster

DRA_API = "resource.k8s.io/v1"
WAVE_CLASSES = -3
WAVE_CLAIMS = 1


def device_classes(cluster: ResolvedCluster) -> list[Manifest]:
    """A DeviceClass per tier that selects devices in the cluster."""
    return [
        Manifest(
            kind="DeviceClass",
            name=tier.name,
            template="deviceclass.yaml.j2",
            values={"api_version": DRA_API, "expression": tier.expression},
            cluster=cluster.name,
            labels={"gpufleet.dev/tier": tier.name},
            annotations=provenance(tier.tier.source.origin, "spec.select", WAVE_CLASSES),
        )
        for tier in cluster.tiers
    ]


def claim_templates(cluster: ResolvedCluster) -> list[Manifest]:
    """One device of the tier, and the team's gang shape when it declares one."""
    manifests = []
    for guarantee in cluster.guarantees:
        tier = cluster.tier(guarantee.tier)
        shapes: list[tuple[str, int, str | None]] = [(tier.name, 1, None)]
        if guarantee.gang > 1:
            shapes.append(
                (
                    f"{tier.name}-x{guarantee.gang}",
                    guarantee.gang,
                    tier.tier.spec.gang_match_attribute,
                )
            )
        for name, count, match_attribute in shapes:
            manifests.append(
                Manifest(
                    kind="ResourceClaimTemplate",
                    name=name,
                    template="resourceclaimtemplate.yaml.j2",
                    values={
                        "api_version": DRA_API,
                        "request": "gpu",
                        "device_class": tier.name,
                        "count": count,
                        "match_attribute": match_attribute,
                    },
                    cluster=cluster.name,
                    namespace=guarantee.namespace,
                    labels={
                        "gpufleet.dev/team": guarantee.team.name,
                        "gpufleet.dev/tier": tier.name,
                    },
                    annotations=provenance(
                        guarantee.team.source.origin, f"quotas[{tier.name}]", WAVE_CLAIMS
                    ),
                )
            )
    return manifests

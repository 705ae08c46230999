"""DeviceClasses: one per tier that selects devices in the cluster, in the target's API."""

from __future__ import annotations

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.ir import TIER_LABEL
from compiler.versions import target

WAVE_CLASSES = WAVES["DeviceClass"]


def emit(view: ClusterView) -> list[Manifest]:
    """A DeviceClass per tier, with its selector and the legacy extended resource it serves
    (migration off the device plugin; resolve refuses it where the version lacks the field)."""
    cluster = view.cluster
    row = target(cluster.cluster.spec.kubernetes_version)
    manifests = []
    for tier in cluster.tiers:
        manifests.append(
            Manifest(
                kind="DeviceClass",
                name=tier.name,
                template="deviceclass.yaml.j2",
                values={
                    "api_version": row.dra_api,
                    "expression": tier.expression,
                    "extended_resource_name": tier.tier.spec.extended_resource_name,
                },
                cluster=cluster.name,
                labels={TIER_LABEL: tier.name},
                annotations=provenance(tier.tier.source.origin, "spec.select", WAVE_CLASSES),
            )
        )
    return manifests

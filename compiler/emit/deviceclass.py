"""DeviceClasses: one per tier that selects devices in the cluster, in the target's API."""

from __future__ import annotations

from typing import Any

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_safe import block
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TIER_LABEL
from compiler.versions import target

WAVE_CLASSES = WAVES["DeviceClass"]
EXPRESSION_INDENT = 10
"""The column of the selector's lines: below `spec.selectors[0].cel.expression`."""


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
                builder=build,
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


def build(manifest: Manifest) -> str:
    """A DeviceClass's YAML: its one CEL selector (a literal block, as CEL reads best), and
    the extended resource name only when it has one."""
    values = manifest.values
    expression = block(values["expression"], EXPRESSION_INDENT)
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if values["extended_resource_name"]:
        spec["extendedResourceName"] = values["extended_resource_name"]
    return object_yaml(values["api_version"], manifest, {"spec": spec})

"""LimitRanges: the container defaults of each team namespace under memory QoS (limits
equal to requests for a Guaranteed team, a burst limit for a Burstable one)."""

from __future__ import annotations

from typing import Any

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.qos import cpu_quantity
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL
from compiler.quantity import format_bytes

LIMIT_RANGE = "gpufleet-defaults"


def emit(view: ClusterView) -> list[Manifest]:
    """A LimitRange per team namespace that holds device quota (beside its host quota)."""
    manifests = []
    for held in view.namespace_host_quotas:
        quota = held.quota
        default = {"memory": format_bytes(quota.default_limit_memory)}
        if quota.guaranteed:
            default["cpu"] = cpu_quantity(quota.default_request.cpu)
        manifests.append(
            Manifest(
                kind="LimitRange",
                name=LIMIT_RANGE,
                builder=build,
                values={
                    "default_request": {
                        "cpu": cpu_quantity(quota.default_request.cpu),
                        "memory": format_bytes(quota.default_request.memory),
                    },
                    "default": dict(sorted(default.items())),
                    "max_ratio": {"memory": "1"} if quota.guaranteed else {},
                },
                cluster=view.cluster.name,
                namespace=held.namespace,
                labels={TEAM_LABEL: held.team.name},
                annotations=provenance(held.team.source.origin, "memoryQoS", WAVES["LimitRange"]),
            )
        )
    return manifests


def build(manifest: Manifest) -> str:
    """A LimitRange's YAML: one Container limit with its defaults (and its ratio, if any)."""
    values = manifest.values
    limit: dict[str, Any] = {
        "type": "Container",
        "defaultRequest": values["default_request"],
        "default": values["default"],
    }
    if values["max_ratio"]:
        limit["maxLimitRequestRatio"] = values["max_ratio"]
    return object_yaml("v1", manifest, {"spec": {"limits": [limit]}})

"""ResourceClaimTemplates per team namespace x tier: one device, and the team's gang shape.

Each template asks for the tier's DeviceClass (or, when the tier lists fallbacks, for the
first available of the tier and its fallbacks), tolerates the cluster's device taints the
team may tolerate, keeps a gang on devices sharing the tier's match attribute, and passes
the NVIDIA driver the sharing configuration of a shared tier. The request shape follows the
target version: flat requests on resource.k8s.io/v1beta1, `exactly` / `firstAvailable` after.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL, TIER_LABEL, Guarantee, ResolvedCluster, TierInCluster
from compiler.ir.claims import (
    claim_template_name,
    claim_template_sizes,
    cluster_tolerations,
    usable_fallbacks,
)
from compiler.versions import target

WAVE_CLAIMS = WAVES["ResourceClaimTemplate"]
REQUEST = "gpu"
NVIDIA_CONFIG_API = "resource.nvidia.com/v1beta1"


def sharing_config(tier: TierInCluster, request: str, driver: str) -> dict[str, Any] | None:
    """The opaque driver config of a shared tier (NVIDIA GpuConfig / MigDeviceConfig)."""
    spec = tier.tier.spec
    if spec.sharing == "Exclusive":
        return None
    mig = all(kind.is_mig for kind in tier.kinds)
    return {
        "request": request,
        "driver": driver,
        "api_version": NVIDIA_CONFIG_API,
        "kind": "MigDeviceConfig" if mig else "GpuConfig",
        "strategy": spec.sharing,
        "interval": spec.time_slice_interval,
    }


def _template(cluster: ResolvedCluster, guarantee: Guarantee, count: int) -> Manifest:
    gang = count > 1
    row = target(cluster.cluster.spec.kubernetes_version)
    driver = cluster.cluster.spec.driver
    tier = cluster.tier(guarantee.tier)
    fallbacks, _ = usable_fallbacks(cluster, guarantee)
    alternatives = [tier, *(cluster.tier(name) for name in fallbacks)]
    prioritized = len(alternatives) > 1
    configs = [
        config
        for alt in alternatives
        if (
            config := sharing_config(
                alt, f"{REQUEST}/{alt.name}" if prioritized else REQUEST, driver
            )
        )
    ]
    tolerations = [
        t.model_dump(by_alias=True, exclude_none=True)
        for t in cluster_tolerations(cluster, guarantee.team.spec.tolerations)
    ]
    name = claim_template_name(tier.name, count)
    return Manifest(
        kind="ResourceClaimTemplate",
        name=name,
        builder=build,
        values={
            "api_version": row.dra_api,
            "flat": row.flat_requests,
            "alternatives": [a.name for a in alternatives],
            "count": count,
            "tolerations": tolerations,
            "match_attribute": tier.tier.spec.gang_match_attribute if gang else None,
            "configs": configs,
        },
        cluster=cluster.name,
        namespace=guarantee.namespace,
        labels={TEAM_LABEL: guarantee.team.name, TIER_LABEL: tier.name},
        annotations=provenance(guarantee.team.source.origin, f"quotas[{tier.name}]", WAVE_CLAIMS),
    )


def build(manifest: Manifest) -> str:
    """A ResourceClaimTemplate's YAML: the spec of the claims it makes (claim_devices)."""
    spec = {"spec": {"devices": claim_devices(manifest.values)}}
    return object_yaml(manifest.values["api_version"], manifest, {"spec": spec})


def claim_devices(values: Mapping[str, Any]) -> dict[str, Any]:
    """The `devices` of a claim (a template's or a shared ResourceClaim's), from a manifest's
    values: one request of `count` devices in the version's shape (flat on v1beta1; `exactly`
    one class, or the `firstAvailable` of the tier and its fallbacks, each with the
    tolerations), the gang's constraint and the sharing configs."""
    classes, count = values["alternatives"], values["count"]
    request: dict[str, Any] = {"name": REQUEST}
    if values["flat"]:
        request |= _exact(classes[0], count)
    elif len(classes) == 1:
        request["exactly"] = _exact(classes[0], count, values["tolerations"])
    else:
        request["firstAvailable"] = [
            {"name": name} | _exact(name, count, values["tolerations"]) for name in classes
        ]
    devices: dict[str, Any] = {"requests": [request]}
    if values["match_attribute"]:
        devices["constraints"] = [
            {"requests": [REQUEST], "matchAttribute": values["match_attribute"]}
        ]
    if values["configs"]:
        devices["config"] = [_opaque(config) for config in values["configs"]]
    return devices


def _exact(
    device_class: str, count: int, tolerations: Sequence[dict[str, str]] = ()
) -> dict[str, Any]:
    """`count` devices of one class (a flat request takes no tolerations)."""
    exact: dict[str, Any] = {
        "deviceClassName": device_class,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if tolerations:
        exact["tolerations"] = list(tolerations)
    return exact


def _opaque(config: dict[str, Any]) -> dict[str, Any]:
    """The NVIDIA driver's sharing parameters for one request."""
    sharing: dict[str, Any] = {"strategy": config["strategy"]}
    if config["interval"]:
        sharing["timeSlicingConfig"] = {"interval": config["interval"]}
    parameters = {"apiVersion": config["api_version"], "kind": config["kind"], "sharing": sharing}
    return {
        "requests": [config["request"]],
        "opaque": {"driver": config["driver"], "parameters": parameters},
    }


def claim_templates(cluster: ResolvedCluster) -> list[Manifest]:
    """For each guarantee: a one-device template, and a gang template when gang > 1."""
    return [
        _template(cluster, guarantee, count)
        for guarantee in cluster.guarantees
        for count in claim_template_sizes(guarantee)
    ]


def emit(view: ClusterView) -> list[Manifest]:
    """The cluster's ResourceClaimTemplates (the admission policies allow them by name:
    ir.claims names them for both)."""
    return claim_templates(view.cluster)

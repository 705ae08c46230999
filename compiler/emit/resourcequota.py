"""ResourceQuotas of team namespaces: devices per DeviceClass (no device-plugin GPUs), host
CPU and memory for memory QoS, and no pods of a priority class the team may not use."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from compiler.catalog.driver import DRIVER_CLASSES
from compiler.emit.manifest import Manifest, provenance
from compiler.emit.qos import NamespaceHostQuota, cpu_quantity
from compiler.emit.view import ClusterView
from compiler.emit.waves import WAVES
from compiler.emit.yaml_writer import object_yaml
from compiler.ir import TEAM_LABEL, ResolvedCluster
from compiler.ir.policy import PriorityLadder
from compiler.quantity import format_bytes

WAVE_QUOTAS = WAVES["ResourceQuota"]
LEGACY_GPU_KEY = "requests.nvidia.com/gpu"
HOST_QUOTA = "gpufleet-host"


def emit(view: ClusterView) -> list[Manifest]:
    """Every ResourceQuota of the cluster's team namespaces."""
    return [
        *device_quotas(view.cluster),
        *host_quotas(view.cluster, view.namespace_host_quotas),
        *priority_quotas(view.cluster, view.fleet.ladder),
    ]


def device_quota_key(device_class: str) -> str:
    """The ResourceQuota key that caps devices of one DeviceClass in a namespace."""
    return f"{device_class}.deviceclass.resource.k8s.io/devices"


def extended_resource_keys(cluster: ResolvedCluster, limits: dict[str, int]) -> dict[str, str]:
    """Quota keys of tiers that serve a legacy extended resource (DRAExtendedResource): the
    mapped name and the class's implicit `deviceclass.resource.kubernetes.io/<class>`, both at
    the namespace's limit for the tier (0 when it holds none). Overrides the device-plugin 0
    when a tier takes over `nvidia.com/gpu`."""
    keys = {}
    for tier in cluster.tiers:
        name = tier.tier.spec.extended_resource_name
        if name is None:
            continue
        value = str(limits.get(tier.name, 0))
        keys[f"requests.{name}"] = value
        keys[f"requests.deviceclass.resource.kubernetes.io/{tier.name}"] = value
    return keys


def device_quotas(cluster: ResolvedCluster) -> list[Manifest]:
    """Per team namespace: each tier's limit, zero for every other class and for nvidia.com/gpu
    (unless the team's grant allows device-plugin resources)."""
    manifests = []
    held: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for g in cluster.guarantees:
        held[(g.team.name, g.namespace)][g.tier] = g.limit
    tier_keys = [(t.name, device_quota_key(t.name)) for t in cluster.tiers]
    zeros = {device_quota_key(c): "0" for c in DRIVER_CLASSES.get(cluster.cluster.spec.driver, ())}
    for team in cluster.teams:
        for namespace in team.spec.namespaces:
            limits = held.get((team.name, namespace), {})
            hard = {key: str(limits.get(tier, 0)) for tier, key in tier_keys}
            hard.update(zeros)
            if not team.spec.allow.device_plugin_resources:
                hard[LEGACY_GPU_KEY] = "0"
            hard.update(extended_resource_keys(cluster, limits))
            manifests.append(
                Manifest(
                    kind="ResourceQuota",
                    name="gpufleet-devices",
                    builder=build,
                    values={"hard": dict(sorted(hard.items()))},
                    cluster=cluster.name,
                    namespace=namespace,
                    labels={TEAM_LABEL: team.name},
                    annotations=provenance(team.grant.source.origin, "quotas", WAVE_QUOTAS),
                )
            )
    return manifests


def host_quotas(
    cluster: ResolvedCluster, namespaces: Sequence[NamespaceHostQuota]
) -> list[Manifest]:
    """Per team namespace that holds device quota (`namespaces`, ClusterView's): the host CPU
    and memory its devices bring."""
    manifests = []
    for held in namespaces:
        quota = held.quota
        hard = {
            "requests.cpu": cpu_quantity(quota.requests.cpu),
            "requests.memory": format_bytes(quota.requests.memory),
            "limits.memory": format_bytes(quota.limits_memory),
        }
        manifests.append(
            Manifest(
                kind="ResourceQuota",
                name=HOST_QUOTA,
                builder=build,
                values={"hard": dict(sorted(hard.items()))},
                cluster=cluster.name,
                namespace=held.namespace,
                labels={TEAM_LABEL: held.team.name},
                annotations=provenance(held.team.source.origin, "memoryQoS", WAVE_QUOTAS),
            )
        )
    return manifests


def priority_quotas(cluster: ResolvedCluster, ladder: PriorityLadder | None) -> list[Manifest]:
    """Per team namespace: no pod of a ladder PriorityClass the team may not use."""
    if ladder is None:
        return []
    levels = [level.name for level in ladder.spec.levels]
    manifests = []
    for team in cluster.teams:
        denied = sorted(set(levels) - set(team.spec.priorities))
        if not denied:
            continue
        for namespace in team.spec.namespaces:
            manifests.append(
                Manifest(
                    kind="ResourceQuota",
                    name="gpufleet-priorities",
                    builder=build,
                    values={"hard": {"pods": "0"}, "priority_classes": denied},
                    cluster=cluster.name,
                    namespace=namespace,
                    labels={TEAM_LABEL: team.name},
                    annotations=provenance(team.grant.source.origin, "priorities", WAVE_QUOTAS),
                )
            )
    return manifests


def build(manifest: Manifest) -> str:
    """A ResourceQuota's YAML: its hard limits, scoped to priority classes when it names any."""
    spec: dict[str, Any] = {"hard": manifest.values["hard"]}
    if "priority_classes" in manifest.values:
        match = {"scopeName": "PriorityClass", "operator": "In"}
        match["values"] = manifest.values["priority_classes"]
        spec["scopeSelector"] = {"matchExpressions": [match]}
    return object_yaml("v1", manifest, {"spec": spec})

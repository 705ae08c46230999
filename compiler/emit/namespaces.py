"""Team namespaces and their ResourceQuotas (DRA devices per class; no device-plugin GPUs)."""

from __future__ import annotations

from collections import defaultdict

from compiler.emit.manifest import Manifest, provenance
from compiler.emit.waves import KEEP_ON_REMOVAL, WAVES
from compiler.ir import ResolvedCluster

WAVE_NAMESPACES = WAVES["Namespace"]
WAVE_QUOTAS = WAVES["ResourceQuota"]
TEAM_LABEL = "gpufleet.dev/team"
DRIVER_CLASSES = {"gpu.nvidia.com": ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com")}
"""DeviceClasses the driver installs itself; quota 0 so no team bypasses the tiers."""
LEGACY_GPU_KEY = "requests.nvidia.com/gpu"
POD_SECURITY_LABEL = "pod-security.kubernetes.io/enforce"


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


def namespaces(cluster: ResolvedCluster) -> list[Manifest]:
    """A Namespace per namespace of every team present in the cluster, enforcing the team's
    Pod Security Standard (its grant's, else the fleet's, at the cluster's version); Argo CD
    never deletes one (KEEP_ON_REMOVAL), so dropping a team from the policy leaves its
    workloads running. Only the namespaces of teams with `adminAccess` carry the label the
    version's DRA requires for adminAccess claims (Target `admin_access_label`)."""
    version = f"v{cluster.cluster.spec.kubernetes_version}"
    admin_label = cluster.target.admin_access_label
    return [
        Manifest(
            kind="Namespace",
            name=namespace,
            template="namespace.yaml.j2",
            values={},
            cluster=cluster.name,
            labels={
                TEAM_LABEL: team.name,
                POD_SECURITY_LABEL: team.spec.pod_security,
                f"{POD_SECURITY_LABEL}-version": version,
            }
            | ({admin_label: "true"} if admin_label and team.spec.admin_access else {}),
            annotations=provenance(
                team.grant.source.origin, f"namespaces[{namespace}]", WAVE_NAMESPACES
            )
            | KEEP_ON_REMOVAL,
        )
        for team in cluster.teams
        for namespace in team.spec.namespaces
    ]


def resource_quotas(cluster: ResolvedCluster) -> list[Manifest]:
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
                    template="resourcequota.yaml.j2",
                    values={"hard": dict(sorted(hard.items()))},
                    cluster=cluster.name,
                    namespace=namespace,
                    labels={TEAM_LABEL: team.name},
                    annotations=provenance(team.grant.source.origin, "quotas", WAVE_QUOTAS),
                )
            )
    return manifests

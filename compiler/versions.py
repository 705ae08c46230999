"""The one table of what each target Kubernetes version serves, and what it gates.

Every emitter asks this table which apiVersion and which request shape to write, and the
resolve stage asks it whether a feature the policy uses exists in a cluster's version (an
error when not) and whether it is off by default there (a warning naming the feature gate
and the `--runtime-config` an administrator has to set). No other module compares versions.

Sources: kubernetes/api v0.32-v0.37 (served versions, fields), pkg/features versioned specs
(gate stages and defaults), pkg/controlplane/instance.go (group-versions served by default),
the kubelet's KubeletConfiguration v1beta1 of each release; the kubernetes-validate schemas
(1.35 and 1.36 Workload shapes).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

DRA_GROUP = "resource.k8s.io"
SCHEDULING_GROUP = "scheduling.k8s.io"


class Feature(enum.Enum):
    """A capability of Kubernetes that some part of a policy relies on."""

    DRA = "dynamic resource allocation (DeviceClass, ResourceClaimTemplate)"
    PRIORITIZED_LIST = "prioritized alternatives in a claim (firstAvailable, a tier's fallbacks)"
    DEVICE_TOLERATIONS = "device tolerations in claims"
    DEVICE_TAINT_RULES = "DeviceTaintRule objects"
    TAINT_EFFECT_NONE = "device taints with effect None"
    EXTENDED_RESOURCE = "DeviceClass extendedResourceName (extended resources served by DRA)"
    MEMORY_QOS = "kubelet memory QoS (cgroup v2 memory.high/memory.min)"
    MEMORY_RESERVATION_POLICY = "kubelet memoryReservationPolicy (tiered memory reservation)"
    MUTATING_ADMISSION_POLICY = "MutatingAdmissionPolicy objects"
    GANG_WORKLOADS = "Workload objects (all-or-nothing scheduling of a gang's pods)"
    ADMIN_ACCESS = "adminAccess device requests (DRAAdminAccess)"


OBJECT_FEATURES = frozenset(
    {Feature.DEVICE_TAINT_RULES, Feature.MUTATING_ADMISSION_POLICY, Feature.GANG_WORKLOADS}
)
"""Features that are whole API kinds: where the cluster does not serve one, gpufleet leaves its
objects out (an object of an unserved kind fails the whole `kubectl apply` or Argo CD sync)."""


@dataclass(frozen=True)
class Gated:
    """A feature that exists in a version but is off by default there."""

    stage: Literal["alpha", "beta"]
    gates: tuple[str, ...]
    """Feature gates to enable (on the components named in `where`)."""
    runtime_config: tuple[str, ...] = ()
    """`kube-apiserver --runtime-config` entries the feature's API needs."""
    where: str = "kube-apiserver, kube-scheduler, kube-controller-manager and kubelet"


UNAVAILABLE = None
"""A feature the version does not have at all."""

Availability = Gated | None


@dataclass(frozen=True)
class WorkloadShape:
    """How a version spells a Workload's pod groups: the list and each group's policy."""

    groups: Literal["podGroups", "podGroupTemplates"]
    policy: Literal["policy", "schedulingPolicy"]


@dataclass(frozen=True)
class Target:
    """What one Kubernetes minor version serves; features not listed are on by default."""

    version: str
    dra_api: str
    """The apiVersion of DeviceClass and ResourceClaimTemplate gpufleet writes."""
    flat_requests: bool
    """v1beta1 device requests are flat; v1beta2 and v1 wrap them in `exactly`."""
    taint_rule_api: str | None
    """The apiVersion of DeviceTaintRule, None where the kind does not exist."""
    mutating_policy_api: str
    """The apiVersion of MutatingAdmissionPolicy (and its binding)."""
    admin_access_label: str | None
    """The namespace label kube-apiserver requires (`"true"`) on a claim with adminAccess;
    None where it checks none."""
    workload_api: str | None = None
    """The apiVersion of Workload (gang scheduling), None where the kind does not exist."""
    workload_shape: WorkloadShape | None = None
    pod_group_link: str | None = None
    """The Pod field that puts a pod into a gang: a Workload's pod group (1.35), or a PodGroup
    object made from the Workload's template (1.36 on)."""
    features: dict[Feature, Availability] = field(default_factory=dict)

    def availability(self, feature: Feature) -> Availability | Literal["on"]:
        """`on`, a Gated entry, or UNAVAILABLE (None)."""
        if feature in self.features:
            return self.features[feature]
        return "on"

    def has(self, feature: Feature) -> bool:
        """Whether the version has the feature at all (on, or behind a gate)."""
        return self.availability(feature) is not UNAVAILABLE

    def enabled(self, feature: Feature, declared: DeclaredFlags) -> bool:
        """Whether the feature is on in a cluster of this version that sets `declared`:
        on by default, or gated with every gate and runtime-config entry declared on."""
        availability = self.availability(feature)
        if availability == "on":
            return True
        if availability is UNAVAILABLE:
            return False
        return all(declared.feature_gates.get(g) is True for g in availability.gates) and all(
            _serves(declared.runtime_config, entry) for entry in availability.runtime_config
        )


class DeclaredFlags(Protocol):
    """What a cluster says its control plane sets (the Cluster's `apiServer`)."""

    @property
    def feature_gates(self) -> Mapping[str, bool]: ...

    @property
    def runtime_config(self) -> Mapping[str, bool]: ...


def _serves(declared: Mapping[str, bool], entry: str) -> bool:
    """Whether the declared runtime config turns on `entry` (`group/version=true` or
    `group/version/resource=true`); a whole group-version also serves each of its resources."""
    key = entry.removesuffix("=true")
    group_version = "/".join(key.split("/")[:2])
    return declared.get(key) is True or declared.get(group_version) is True


_CONTROL_PLANE = "kube-apiserver, kube-scheduler and kube-controller-manager"
_MEMORY_QOS = Gated("alpha", ("MemoryQoS",), where="kubelet")
ADMISSION_GROUP = "admissionregistration.k8s.io"


def _mutating_policies(stage: Literal["alpha", "beta"], version: str) -> Gated:
    return Gated(
        stage,
        ("MutatingAdmissionPolicy",),
        (f"{ADMISSION_GROUP}/{version}=true",),
        "kube-apiserver",
    )


_TAINTS_ALPHA = Gated("alpha", ("DRADeviceTaints",))
_ADMIN_ACCESS_ALPHA = Gated("alpha", ("DRAAdminAccess",))
_ADMIN_LABEL_BETA = "resource.k8s.io/admin-access"
_ADMIN_LABEL = "resource.kubernetes.io/admin-access"
_WORKLOAD_REF = "spec.workloadRef"
_SCHEDULING_GROUP = "spec.schedulingGroup.podGroupName"
_POD_GROUPS = WorkloadShape("podGroups", "policy")
"""1.35 (v1alpha1): the Workload lists its pod groups, and pods name one."""
_POD_GROUP_TEMPLATES = WorkloadShape("podGroupTemplates", "schedulingPolicy")
"""1.36 on: the Workload lists templates; a PodGroup object per job is made from one."""


def _gang_workloads(stage: Literal["alpha", "beta"], version: str, *gates: str) -> Gated:
    return Gated(stage, gates, (f"{SCHEDULING_GROUP}/{version}=true",), _CONTROL_PLANE)


KubernetesVersion = Literal["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
"""The supported Kubernetes minors, oldest first: one row of TARGETS each."""
KUBERNETES_VERSIONS: tuple[KubernetesVersion, ...] = get_args(KubernetesVersion)

TARGETS: dict[str, Target] = {
    "1.32": Target(
        "1.32",
        dra_api=f"{DRA_GROUP}/v1beta1",
        flat_requests=True,
        taint_rule_api=None,
        mutating_policy_api=f"{ADMISSION_GROUP}/v1alpha1",
        admin_access_label=None,
        features={
            Feature.MUTATING_ADMISSION_POLICY: _mutating_policies("alpha", "v1alpha1"),
            Feature.DRA: Gated(
                "beta", ("DynamicResourceAllocation",), (f"{DRA_GROUP}/v1beta1=true",)
            ),
            Feature.ADMIN_ACCESS: _ADMIN_ACCESS_ALPHA,
            Feature.GANG_WORKLOADS: UNAVAILABLE,
            Feature.PRIORITIZED_LIST: UNAVAILABLE,
            Feature.DEVICE_TOLERATIONS: UNAVAILABLE,
            Feature.DEVICE_TAINT_RULES: UNAVAILABLE,
            Feature.TAINT_EFFECT_NONE: UNAVAILABLE,
            Feature.EXTENDED_RESOURCE: UNAVAILABLE,
            Feature.MEMORY_QOS: _MEMORY_QOS,
            Feature.MEMORY_RESERVATION_POLICY: UNAVAILABLE,
        },
    ),
    "1.33": Target(
        "1.33",
        dra_api=f"{DRA_GROUP}/v1beta2",
        flat_requests=False,
        taint_rule_api=f"{DRA_GROUP}/v1alpha3",
        mutating_policy_api=f"{ADMISSION_GROUP}/v1alpha1",
        admin_access_label=_ADMIN_LABEL_BETA,
        features={
            Feature.MUTATING_ADMISSION_POLICY: _mutating_policies("alpha", "v1alpha1"),
            Feature.DRA: Gated(
                "beta", ("DynamicResourceAllocation",), (f"{DRA_GROUP}/v1beta2=true",)
            ),
            Feature.ADMIN_ACCESS: _ADMIN_ACCESS_ALPHA,
            Feature.GANG_WORKLOADS: UNAVAILABLE,
            Feature.PRIORITIZED_LIST: Gated("alpha", ("DRAPrioritizedList",)),
            Feature.DEVICE_TOLERATIONS: _TAINTS_ALPHA,
            Feature.DEVICE_TAINT_RULES: Gated(
                "alpha", ("DRADeviceTaints",), (f"{DRA_GROUP}/v1alpha3=true",), _CONTROL_PLANE
            ),
            Feature.TAINT_EFFECT_NONE: UNAVAILABLE,
            Feature.EXTENDED_RESOURCE: UNAVAILABLE,
            Feature.MEMORY_QOS: _MEMORY_QOS,
            Feature.MEMORY_RESERVATION_POLICY: UNAVAILABLE,
        },
    ),
    "1.34": Target(
        "1.34",
        dra_api=f"{DRA_GROUP}/v1",
        flat_requests=False,
        taint_rule_api=f"{DRA_GROUP}/v1alpha3",
        mutating_policy_api=f"{ADMISSION_GROUP}/v1beta1",
        admin_access_label=_ADMIN_LABEL,
        features={
            Feature.MUTATING_ADMISSION_POLICY: _mutating_policies("beta", "v1beta1"),
            Feature.GANG_WORKLOADS: UNAVAILABLE,
            Feature.DEVICE_TOLERATIONS: _TAINTS_ALPHA,
            Feature.DEVICE_TAINT_RULES: Gated(
                "alpha", ("DRADeviceTaints",), (f"{DRA_GROUP}/v1alpha3=true",), _CONTROL_PLANE
            ),
            Feature.TAINT_EFFECT_NONE: UNAVAILABLE,
            Feature.EXTENDED_RESOURCE: Gated("alpha", ("DRAExtendedResource",)),
            Feature.MEMORY_QOS: _MEMORY_QOS,
            Feature.MEMORY_RESERVATION_POLICY: UNAVAILABLE,
        },
    ),
    "1.35": Target(
        "1.35",
        dra_api=f"{DRA_GROUP}/v1",
        flat_requests=False,
        taint_rule_api=f"{DRA_GROUP}/v1alpha3",
        mutating_policy_api=f"{ADMISSION_GROUP}/v1beta1",
        admin_access_label=_ADMIN_LABEL,
        workload_api=f"{SCHEDULING_GROUP}/v1alpha1",
        workload_shape=_POD_GROUPS,
        pod_group_link=_WORKLOAD_REF,
        features={
            Feature.MUTATING_ADMISSION_POLICY: _mutating_policies("beta", "v1beta1"),
            Feature.GANG_WORKLOADS: _gang_workloads(
                "alpha", "v1alpha1", "GenericWorkload", "GangScheduling"
            ),
            Feature.DEVICE_TOLERATIONS: _TAINTS_ALPHA,
            Feature.DEVICE_TAINT_RULES: Gated(
                "alpha",
                ("DRADeviceTaints", "DRADeviceTaintRules"),
                (f"{DRA_GROUP}/v1alpha3=true",),
                _CONTROL_PLANE,
            ),
            Feature.TAINT_EFFECT_NONE: _TAINTS_ALPHA,
            Feature.EXTENDED_RESOURCE: Gated("alpha", ("DRAExtendedResource",)),
            Feature.MEMORY_QOS: _MEMORY_QOS,
            Feature.MEMORY_RESERVATION_POLICY: UNAVAILABLE,
        },
    ),
    "1.36": Target(
        "1.36",
        dra_api=f"{DRA_GROUP}/v1",
        flat_requests=False,
        taint_rule_api=f"{DRA_GROUP}/v1beta2",
        mutating_policy_api=f"{ADMISSION_GROUP}/v1",
        admin_access_label=_ADMIN_LABEL,
        workload_api=f"{SCHEDULING_GROUP}/v1alpha2",
        workload_shape=_POD_GROUP_TEMPLATES,
        pod_group_link=_SCHEDULING_GROUP,
        features={
            Feature.DEVICE_TAINT_RULES: Gated(
                "beta",
                ("DRADeviceTaintRules",),
                (f"{DRA_GROUP}/v1beta2/devicetaintrules=true",),
                _CONTROL_PLANE,
            ),
            Feature.MEMORY_QOS: _MEMORY_QOS,
            Feature.MEMORY_RESERVATION_POLICY: _MEMORY_QOS,
            Feature.GANG_WORKLOADS: _gang_workloads(
                "alpha", "v1alpha2", "GenericWorkload", "GangScheduling"
            ),
        },
    ),
    # DeviceTaintRule v1, DRADeviceTaints/DRADeviceTaintRules and DRAExtendedResource GA,
    # MemoryQoS beta and on (the kubelet still needs memoryQoS settings); the Workload API is
    # beta but off (GenericWorkload covers gangs: naming the removed GangScheduling gate
    # stops kube-apiserver).
    "1.37": Target(
        "1.37",
        dra_api=f"{DRA_GROUP}/v1",
        flat_requests=False,
        taint_rule_api=f"{DRA_GROUP}/v1",
        mutating_policy_api=f"{ADMISSION_GROUP}/v1",
        admin_access_label=_ADMIN_LABEL,
        workload_api=f"{SCHEDULING_GROUP}/v1beta1",
        workload_shape=_POD_GROUP_TEMPLATES,
        pod_group_link=_SCHEDULING_GROUP,
        features={
            Feature.GANG_WORKLOADS: _gang_workloads("beta", "v1beta1", "GenericWorkload"),
        },
    ),
}


def target(version: str) -> Target:
    """The table row of a Kubernetes minor version ("1.32" to "1.37")."""
    return TARGETS[version]


def earliest(feature: Feature) -> str:
    """The first version of the table that has `feature` at all."""
    return next(v for v, row in TARGETS.items() if row.has(feature))


def gate_advice(gated: Gated) -> str:
    """How an administrator turns a gated feature on, as one sentence."""
    gates = ",".join(f"{g}=true" for g in gated.gates)
    text = f"enable `--feature-gates={gates}` on {gated.where}"
    if gated.runtime_config:
        text += f" and `--runtime-config={','.join(gated.runtime_config)}` on kube-apiserver"
    return text


def declaration_advice(gated: Gated) -> str:
    """The Cluster `apiServer` fields that declare a gated feature on, as YAML flow text."""
    gates = ", ".join(f"{g}: true" for g in gated.gates)
    text = f"featureGates: {{{gates}}}"
    if gated.runtime_config:
        entries = ", ".join(f"{e.removesuffix('=true')}: true" for e in gated.runtime_config)
        text += f", runtimeConfig: {{{entries}}}"
    return text

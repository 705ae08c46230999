"""The admission table: what each team's own user may and may not create, derived from the
policy model (the team's grant and file, the ladder, the cluster's tiers), never typed by hand.

Pods go through the whole admission chain as server-side dry runs (nothing is left behind to
use up quota); claims are created for real, since the quota must count them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compiler.ir import GrantedTeam, ResolvedCluster
from compiler.model.policy import PriorityLadder

NOT_GRANTED_TAINT = "gpufleet.dev/e2e-never-granted"
DRA_ONLY = "gpufleet-dra-only"
"""The policy that refuses ways to GPUs around DRA (denials name the policy)."""
GPU_NODES = "gpufleet-gpu-nodes"
"""The policy that keeps GPU nodes for pods that claim devices."""
GPU_RUNTIME_CLASS = "nvidia"
"""The RuntimeClass the NVIDIA GPU operator installs (the harness creates it)."""


@dataclass(frozen=True)
class Row:
    """One request a team's user makes, and what the policy says must happen to it."""

    team: str
    namespace: str
    what: str
    manifest: dict[str, Any]
    allowed: bool
    says: tuple[str, ...] = ()
    """Text the denial must contain (what the team may use instead, or who refused)."""
    dry_run: bool = False
    expect: dict[str, Any] = field(default_factory=dict)
    """Fields of the admitted object (`spec.priority`, ...) and the value they must have."""
    devices: dict[str, int] = field(default_factory=dict)
    """For a claim created for real: the DeviceClass quota keys it is charged to, how many each."""
    fill_to: int = 0
    """For a one-class claim: ask whatever the live quota still has below this limit."""


def default_level(team: GrantedTeam, ladder: PriorityLadder) -> tuple[str, int, str] | None:
    """(class, value, preemption policy) of the team's default priority as the policy states
    it: its `defaultPriority`, else the lowest of its priorities; None if it has none."""
    levels = {level.name: level for level in ladder.spec.levels}
    names = [n for n in team.spec.priorities if n in levels]
    if not names:
        return None
    name = team.spec.default_priority or min(names, key=lambda n: (levels[n].value, n))
    return name, levels[name].value, levels[name].preemption


def limits(team: GrantedTeam, namespace: str) -> dict[str, int]:
    """tier -> the devices the team's quotas let `namespace` hold (a quota without a
    namespace belongs to the team's first)."""
    held: dict[str, int] = {}
    for quota in team.spec.quotas:
        if (quota.namespace or team.spec.namespaces[0]) == namespace:
            held[quota.tier] = held.get(quota.tier, 0) + quota.limit
    return held


RESTRICTED = {
    "runAsNonRoot": True,
    "runAsUser": 1000,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}
"""A container security context every Pod Security level admits."""
CONTAINER: dict[str, Any] = {"image": "registry.invalid/e2e:1", "securityContext": RESTRICTED}
"""A container (never run: the control plane has no nodes) every level admits, but its name."""


def pod(namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    """A Pod with one container (never run: the control plane has no nodes), fit for the
    `restricted` Pod Security Standard unless `container` says otherwise."""
    container = {"name": "main", **CONTAINER, **spec.pop("container", {})}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [container], **spec},
    }


def claim(namespace: str, name: str, api: str, *requests: dict[str, Any]) -> dict[str, Any]:
    """A ResourceClaim with the given device requests."""
    return {
        "apiVersion": api,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": list(requests)}},
    }


def exactly(device_class: str, count: int = 1, **fields: Any) -> dict[str, Any]:
    """A request for `count` devices of one class."""
    return {
        "name": "gpu",
        "exactly": {
            "deviceClassName": device_class,
            "allocationMode": "ExactCount",
            "count": count,
            **fields,
        },
    }


def charges(spec: dict[str, Any]) -> dict[str, int]:
    """DeviceClass -> devices ResourceQuota charges a claim of this spec: each `exactly`
    request's count; for `firstAvailable`, the largest alternative of each class."""
    charged: dict[str, int] = {}
    for request in spec["devices"]["requests"]:
        alternatives = [request["exactly"]] if "exactly" in request else request["firstAvailable"]
        largest: dict[str, int] = {}
        for alternative in alternatives:
            name = alternative["deviceClassName"]
            largest[name] = max(largest.get(name, 0), alternative.get("count", 1))
        for name, count in largest.items():
            charged[name] = charged.get(name, 0) + count
    return charged


def quota_key(device_class: str) -> str:
    """The ResourceQuota key that counts a DeviceClass's devices."""
    return f"{device_class}.deviceclass.resource.k8s.io/devices"


def templates(tree: Path, namespace: str) -> list[dict[str, Any]]:
    """The namespace's emitted ResourceClaimTemplates."""
    return [
        yaml.safe_load(p.read_text())
        for p in sorted((tree / namespace).glob("resourceclaimtemplate_*.yaml"))
    ]


def admission_table(
    cluster: ResolvedCluster,
    ladder: PriorityLadder,
    tree: Path,
    mutating_served: bool,
    runtime_classes: Sequence[str],
) -> Iterator[Row]:
    """Every row for every team and namespace of the cluster (`mutating_served`: whether the
    cluster serves MutatingAdmissionPolicy, without which pods naming no class keep
    priority 0; `runtime_classes`: the GPU runtime classes the fleet refuses)."""
    tiers = [t.name for t in cluster.tiers]
    driver = cluster.cluster.spec.driver
    owners = {ns: team.name for team in cluster.teams for ns in team.spec.namespaces}
    for team in cluster.teams:
        for namespace in team.spec.namespaces:
            held = limits(team, namespace)
            yield from _pod_rows(team, namespace, ladder, mutating_served)
            yield from _around_dra_rows(team, namespace, cluster, runtime_classes)
            yield from _claim_rows(team, namespace, tree, held, tiers, driver)
            yield from _gpu_node_rows(team, namespace, cluster, tree, mutating_served)
            others = sorted(ns for ns, owner in owners.items() if owner != team.name)
            if others:
                yield Row(
                    team.name,
                    others[0],
                    f"a pod in team {owners[others[0]]}'s namespace",
                    pod(others[0], "trespass"),
                    False,
                    ("forbidden", "cannot create resource"),
                    dry_run=True,
                )


def _around_dra_rows(
    team: GrantedTeam, namespace: str, cluster: ResolvedCluster, runtime_classes: Sequence[str]
) -> Iterator[Row]:
    """Ways to GPUs around DRA, each refused unless the team's grant allows it: a MIG
    device-plugin resource (where MIG may partition the cluster's GPUs) and any other of the
    NVIDIA family, the NVIDIA runtime class (created by the harness, as the GPU operator does),
    and the NVIDIA container runtime's environment variables."""
    allow = team.spec.allow
    profiles = [
        profile.name
        for pool in cluster.pools
        if pool.model.mig is not None and pool.pool.mig != "disabled"
        for profile in pool.model.mig.profiles
    ]
    resources = [f"nvidia.com/mig-{profiles[0]}"] if profiles else []
    for resource in (*resources, "nvidia.com/anything-new"):
        yield Row(
            team.name,
            namespace,
            f"a pod asking for {resource}",
            pod(namespace, "plugin", container={"resources": {"limits": {resource: "1"}}}),
            allow.device_plugin_resources,
            ()
            if allow.device_plugin_resources
            else (DRA_ONLY, f"device-plugin resource {resource}"),
            dry_run=True,
        )
    refused = GPU_RUNTIME_CLASS in runtime_classes and not allow.gpu_runtime_classes
    yield Row(
        team.name,
        namespace,
        f"a pod of runtime class {GPU_RUNTIME_CLASS}",
        pod(namespace, "gpu-runtime", runtimeClassName=GPU_RUNTIME_CLASS),
        not refused,
        (DRA_ONLY, f"uses runtime class {GPU_RUNTIME_CLASS}") if refused else (),
        dry_run=True,
    )
    for variable, value in (
        ("NVIDIA_VISIBLE_DEVICES", "all"),
        ("NVIDIA_DRIVER_CAPABILITIES", "all"),
    ):
        env = [{"name": variable, "value": value}]
        yield Row(
            team.name,
            namespace,
            f"a pod whose init container sets {variable}={value}",
            pod(namespace, "gpu-env", initContainers=[{**CONTAINER, "name": "setup", "env": env}]),
            allow.gpu_environment,
            () if allow.gpu_environment else ("gpufleet-gpu-environment", variable),
            dry_run=True,
        )


def _gpu_node_rows(
    team: GrantedTeam,
    namespace: str,
    cluster: ResolvedCluster,
    tree: Path,
    mutating_served: bool,
) -> Iterator[Row]:
    """GPU nodes kept for GPU work: a pod that claims a device of the namespace gets the
    toleration of its GPU nodes' taint (where the cluster serves MutatingAdmissionPolicy); a
    pod that claims nothing may neither tolerate the taint nor name a GPU node."""
    taints = cluster.namespace_node_taints.get(namespace, ())
    own = templates(tree, namespace)
    if not taints or not own:
        return
    claimed = {
        "resourceClaims": [
            {"name": "gpu", "resourceClaimTemplateName": own[0]["metadata"]["name"]}
        ],
        "container": {"resources": {"claims": [{"name": "gpu"}]}},
    }
    toleration = {"operator": "Equal", **taints[0].model_dump()}
    expect = {}
    if mutating_served:
        defaults = [
            {
                "key": f"node.kubernetes.io/{key}",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
            for key in ("not-ready", "unreachable")
        ]
        expect = {
            "tolerations": [*defaults, *({"operator": "Equal", **t.model_dump()} for t in taints)]
        }
    yield Row(
        team.name,
        namespace,
        "a pod that claims a device (given its GPU nodes' toleration)",
        pod(namespace, "claims-gpu", **claimed),
        True,
        dry_run=True,
        expect=expect,
    )
    yield Row(
        team.name,
        namespace,
        f"a pod that claims nothing but tolerates {taints[0]}",
        pod(namespace, "tolerates-gpu", tolerations=[toleration]),
        False,
        (GPU_NODES, "but claims no device"),
        dry_run=True,
    )
    node = cluster.tainted_node_names[0]
    yield Row(
        team.name,
        namespace,
        "a pod that claims nothing but names a GPU node",
        pod(namespace, "names-gpu-node", nodeName=f"{node.prefix}0{node.suffix}"),
        False,
        (GPU_NODES, "of a GPU pool in spec.nodeName"),
        dry_run=True,
    )


def _pod_rows(
    team: GrantedTeam, namespace: str, ladder: PriorityLadder, mutating_served: bool
) -> Iterator[Row]:
    level = default_level(team, ladder)
    if level is not None and mutating_served:
        name, value, preemption = level
        expected = {"priorityClassName": name, "priority": value, "preemptionPolicy": preemption}
    else:
        expected = {"priority": 0}
    yield Row(
        team.name,
        namespace,
        "a pod naming no PriorityClass",
        pod(namespace, "no-class"),
        True,
        dry_run=True,
        expect=expected,
    )
    cpu_only = {"cpu": "100m", "memory": "64Mi"}
    yield Row(
        team.name,
        namespace,
        "a CPU-only pod",
        pod(
            namespace,
            "cpu-only",
            container={"resources": {"requests": cpu_only, "limits": cpu_only}},
        ),
        True,
        dry_run=True,
    )
    allowed = sorted(team.spec.priorities)
    for other in ladder.spec.levels:
        may = other.name in team.spec.priorities
        yield Row(
            team.name,
            namespace,
            f"a pod of PriorityClass {other.name}",
            pod(namespace, f"class-{other.name}", priorityClassName=other.name),
            may,
            () if may else (f"may not use; use one of: {', '.join(allowed) or '(none)'}",),
            dry_run=True,
            expect={"priority": other.value} if may else {},
        )
    host_dev = pod(
        namespace,
        "host-dev",
        volumes=[{"name": "dev", "hostPath": {"path": "/dev"}}],
        container={
            "securityContext": {"privileged": True},
            "volumeMounts": [{"name": "dev", "mountPath": "/dev"}],
        },
    )
    privileged = team.spec.pod_security == "privileged"  # what the grant enforces
    yield Row(
        team.name,
        namespace,
        "a privileged pod with hostPath /dev (GPUs around DRA)",
        host_dev,
        privileged,
        () if privileged else ("violates PodSecurity", "privileged", "hostPath"),
        dry_run=True,
    )
    plugins = team.spec.allow.device_plugin_resources
    for where in ("limits", "requests"):
        resources = {"limits": {"nvidia.com/gpu": "1"}}
        if where == "requests":
            resources["requests"] = {"nvidia.com/gpu": "1"}
        yield Row(
            team.name,
            namespace,
            f"a pod with nvidia.com/gpu in its {where}",
            pod(namespace, f"device-plugin-{where}", container={"resources": resources}),
            plugins,
            () if plugins else (DRA_ONLY, "device-plugin resource nvidia.com/gpu"),
            dry_run=True,
        )


def _claim_rows(
    team: GrantedTeam,
    namespace: str,
    tree: Path,
    held: dict[str, int],
    tiers: list[str],
    driver: str,
) -> Iterator[Row]:
    own = templates(tree, namespace)
    if not own:
        return
    api = own[0]["apiVersion"]
    used: dict[str, int] = dict.fromkeys(held, 0)
    for template in own:
        charged = charges(template["spec"]["spec"])
        for tier, count in charged.items():
            used[tier] = used.get(tier, 0) + count
        fits = all(used[tier] <= held.get(tier, 0) for tier in charged)
        yield Row(
            team.name,
            namespace,
            f"a claim from its template {template['metadata']['name']}",
            {
                "apiVersion": api,
                "kind": "ResourceClaim",
                "metadata": {
                    "name": f"from-{template['metadata']['name']}",
                    "namespace": namespace,
                },
                "spec": template["spec"]["spec"],
            },
            fits,
            () if fits else ("exceeded quota",),
            devices={quota_key(tier): count for tier, count in charged.items()},
        )
    mine = sorted(held)[0]
    for other in [*[t for t in tiers if t not in held][:1], driver]:
        yield Row(
            team.name,
            namespace,
            f"a claim naming DeviceClass {other}",
            claim(namespace, f"other-{other.replace('.', '-')}", api, exactly(other)),
            False,
            (f"names DeviceClass {other}",),
        )
        hidden = {
            "name": "gpu",
            "firstAvailable": [
                {"name": "mine", "deviceClassName": mine, "count": 1},
                {"name": "other", "deviceClassName": other, "count": 1},
            ],
        }
        yield Row(
            team.name,
            namespace,
            f"a claim naming DeviceClass {other} inside firstAvailable",
            claim(namespace, f"hidden-{other.replace('.', '-')}", api, hidden),
            False,
            (f"names DeviceClass {other}",),
        )
    yield Row(
        team.name,
        namespace,
        "an adminAccess claim",
        claim(namespace, "admin", api, exactly(mine, adminAccess=True)),
        team.spec.admin_access,
        () if team.spec.admin_access else ("adminAccess",),
    )
    toleration = {"key": NOT_GRANTED_TAINT, "operator": "Exists", "effect": "NoSchedule"}
    yield Row(
        team.name,
        namespace,
        f"a claim tolerating {NOT_GRANTED_TAINT}",
        claim(namespace, "tolerates", api, exactly(mine, tolerations=[toleration])),
        False,
        ("may not tolerate",),
    )
    for tier, limit in sorted(held.items()):
        yield Row(
            team.name,
            namespace,
            f"claims up to the {tier} limit ({limit})",
            claim(namespace, f"fill-{tier}", api, exactly(tier)),
            True,
            devices={quota_key(tier): 0},
            fill_to=limit,
        )
        yield Row(
            team.name,
            namespace,
            f"one {tier} device beyond the limit",
            claim(namespace, f"beyond-{tier}", api, exactly(tier)),
            False,
            ("exceeded quota", quota_key(tier)),
        )

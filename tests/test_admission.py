"""Admission guardrails, by behaviour: the emitted policies run on admission requests.

Expectations come from the teams' grants and files (the policy source), never from the emitter's own
entitlement tables, so a wrong table fails here. Every rule has an allowed and a denied case
per team namespace of each cluster, plus the adversarial ones: a forbidden class hidden in a
`firstAvailable` subrequest or a v1beta1 flat request, `nvidia.com/gpu` only in limits or only
in an init container, a wider toleration than granted, a priority set on UPDATE.
"""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import pytest
import yaml

from compiler.ir import GrantedTeam
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.pipeline import Compiled, compile_policies
from compiler.resolve.grants import granted_teams
from compiler.resolve.teams import quota_namespace
from compiler.validate import validate_object
from tests.admission_harness import Cluster, Decision, Request
from tests.admission_requests import (
    claim,
    container,
    exactly,
    first_available,
    flat,
    job,
    pod,
    workload,
)
from tests.conftest import EXAMPLE

POLICIES = build_policies(load_policies(EXAMPLE))
TEAMS = granted_teams(POLICIES.grants, POLICIES.teams, POLICIES.fleet, [])
LADDER = [level.name for level in POLICIES.ladder.spec.levels] if POLICIES.ladder else []
TIERS = sorted(t.name for t in POLICIES.tiers)
TEAM_NAMESPACES = [
    (cluster.name, team, namespace)
    for cluster in POLICIES.clusters
    for team in TEAMS
    if team.spec.clusters is None or cluster.name in team.spec.clusters
    for namespace in team.spec.namespaces
]
ECC = "gpu.nvidia.com/ecc-errors"


def case_id(case: tuple[str, GrantedTeam, str]) -> str:
    return f"{case[0]}-{case[2]}"


@cache
def example() -> Compiled:
    return compile_policies(EXAMPLE)


@cache
def admission(cluster: str) -> Cluster:
    return Cluster.from_tree(example().tree, cluster)


def entitled_tiers(team: GrantedTeam, namespace: str) -> list[str]:
    return sorted({q.tier for q in team.spec.quotas if quota_namespace(team, q) == namespace})


def assert_denied(decision: Decision, policy: str, *fragments: str) -> None:
    assert decision.outcome == "denied", decision
    assert decision.policy == policy
    for fragment in fragments:
        assert fragment in decision.message, (fragment, decision.message)


def assert_allowed(cluster: Cluster, request: Request) -> None:
    decisions = cluster.decide(request)
    assert decisions, "no policy matched"
    assert all(d.outcome == "allowed" for d in decisions), decisions


parametrize_teams = pytest.mark.parametrize(
    ("cluster", "team", "namespace"), TEAM_NAMESPACES, ids=[case_id(c) for c in TEAM_NAMESPACES]
)


@parametrize_teams
def test_claims_may_name_the_tiers_the_namespace_holds(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    tiers = entitled_tiers(team, namespace)
    assert tiers, "every example namespace holds a quota"
    for tier in tiers:
        for kind in ("ResourceClaim", "ResourceClaimTemplate"):
            assert_allowed(admission(cluster), claim(namespace, exactly(tier), kind=kind))
    assert_allowed(admission(cluster), claim(namespace, first_available(*tiers)))
    assert_allowed(admission(cluster), claim(namespace, flat(tiers[0]), version="v1beta1"))


@parametrize_teams
def test_claims_naming_another_class_are_denied_with_what_to_use(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    tiers = entitled_tiers(team, namespace)
    for forbidden in [t for t in TIERS if t not in tiers] + ["gpu.nvidia.com"]:
        decision = admission(cluster).admit(claim(namespace, exactly(forbidden)))
        assert_denied(
            decision,
            "gpufleet-tier-entitlement",
            f"ResourceClaim {namespace}/my-claim names DeviceClass {forbidden}, ",
            f"team {team.name} holds no quota for in namespace {namespace}",
            f"use one of its tiers: {', '.join(tiers)}",
        )


@parametrize_teams
def test_a_forbidden_class_hidden_anywhere_in_a_claim_is_found(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    tier = entitled_tiers(team, namespace)[0]
    forbidden = "gpu.nvidia.com"
    hidden = [
        claim(namespace, exactly(tier), first_available(tier, forbidden, name="fallback")),
        claim(namespace, first_available(tier, forbidden), kind="ResourceClaimTemplate"),
        claim(namespace, flat(tier), flat(forbidden, name="two"), version="v1beta1"),
        claim(
            namespace,
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "a", "deviceClassName": tier},
                    {"name": "b", "deviceClassName": forbidden},
                ],
            },
            version="v1beta1",
        ),
        claim(namespace, exactly(forbidden), kind="ResourceClaimTemplate", version="v1beta2"),
    ]
    for request in hidden:
        decision = admission(cluster).admit(request)
        assert_denied(decision, "gpufleet-tier-entitlement", f"names DeviceClass {forbidden},")
        assert f"DeviceClass {tier}" not in decision.message


def test_a_namespace_labelled_by_hand_gets_nothing() -> None:
    cluster = admission("prod-east")
    cluster.namespace_labels["impostor"] = {
        "app.kubernetes.io/managed-by": "gpufleet",
        "gpufleet.dev/team": "ml-research",
    }
    try:
        decision = cluster.admit(claim("impostor", exactly("training")))
    finally:
        del cluster.namespace_labels["impostor"]
    assert_denied(decision, "gpufleet-tier-entitlement", "team (none)", "tiers: (none)")


def test_namespaces_gpufleet_does_not_manage_are_untouched() -> None:
    for request in (
        claim("kube-system", exactly("gpu.nvidia.com", adminAccess=True)),
        pod("default", [container(limits={"nvidia.com/gpu": "1"})], priority="training"),
        job("default", "inference-critical"),
    ):
        assert admission("prod-east").decide(request) == []


@parametrize_teams
def test_pods_use_only_the_teams_priority_classes(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    allowed = sorted(team.spec.priorities)
    for priority in allowed:
        assert_allowed(admission(cluster), pod(namespace, priority=priority))
    for forbidden in [p for p in LADDER if p not in allowed] + ["system-cluster-critical"]:
        decision = admission(cluster).admit(pod(namespace, priority=forbidden))
        assert_denied(
            decision,
            "gpufleet-priority-entitlement",
            f"Pod {namespace}/my-pod uses PriorityClass {forbidden}, ",
            f"team {team.name} may not use; use one of: {', '.join(allowed)}",
        )


@parametrize_teams
def test_kueue_priority_labels_and_workloads_are_checked(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    allowed = sorted(team.spec.priorities)
    forbidden = next(p for p in LADDER if p not in allowed)
    assert_allowed(admission(cluster), job(namespace, allowed[0]))
    assert_allowed(admission(cluster), workload(namespace, allowed[0]))
    labelled = pod(
        namespace, priority=allowed[0], labels={"kueue.x-k8s.io/priority-class": forbidden}
    )
    for request, policy in (
        (job(namespace, forbidden), "gpufleet-priority-label"),
        (workload(namespace, forbidden), "gpufleet-priority-entitlement"),
        (workload(namespace, forbidden, version="v1beta1"), "gpufleet-priority-entitlement"),
        (labelled, "gpufleet-priority-entitlement"),
    ):
        assert_denied(
            admission(cluster).admit(request),
            policy,
            f"uses PriorityClass {forbidden}, ",
            f"team {team.name} may not use",
        )


def test_on_update_only_a_newly_set_priority_is_checked() -> None:
    cluster = admission("prod-east")
    # ml-research may use training and batch, not inference-critical
    kept = job("ml-research", "inference-critical", "UPDATE", "inference-critical")
    assert_allowed(cluster, kept)
    raised = job("ml-research", "inference-critical", "UPDATE", "batch")
    assert_denied(cluster.admit(raised), "gpufleet-priority-label", "inference-critical")
    dropped = job("ml-research", None, "UPDATE", "inference-critical")
    assert cluster.admit(dropped).outcome == "allowed"
    unlabelled = job("ml-research", None)
    assert cluster.decide(unlabelled) == []  # no priority, no evaluation


@parametrize_teams
def test_pods_get_gpus_only_through_dra(cluster: str, team: GrantedTeam, namespace: str) -> None:
    priority = team.spec.priorities[0]
    gpu = {"nvidia.com/gpu": "1"}
    cpu = {"cpu": "4", "memory": "16Gi"}
    assert_allowed(admission(cluster), pod(namespace, [container(requests=cpu)], priority=priority))
    cases = {
        "container main": pod(namespace, [container(limits=gpu)], priority=priority),
        "init container setup": pod(
            namespace,
            [container(requests=cpu)],
            init_containers=[container("setup", requests=gpu, limits=gpu)],
            priority=priority,
        ),
    }
    for offender, request in cases.items():
        if team.spec.allow.device_plugin_resources:  # the grant allows it (gpu-ops)
            assert_allowed(admission(cluster), request)
            continue
        assert_denied(
            admission(cluster).admit(request),
            "gpufleet-dra-only",
            f"Pod {namespace}/my-pod requests device-plugin resource nvidia.com/gpu",
            f"in {offender}: team {team.name} gets GPUs only through DRA",
            "ResourceClaimTemplate: " + ", ".join(sorted(_templates(cluster, namespace))),
        )


def test_no_mig_device_plugin_resource_and_no_gpu_runtime_class() -> None:
    """Two more ways to GPUs around DRA: the device plugin's per-profile MIG resources (on a
    cluster whose GPUs MIG may partition) and the NVIDIA runtime class."""
    cluster = admission("prod-east")
    mig = {"nvidia.com/mig-1g.10gb": "1"}
    assert_denied(
        cluster.admit(pod("ml-research", [container(limits=mig)], priority="training")),
        "gpufleet-dra-only",
        "requests device-plugin resource nvidia.com/mig-1g.10gb in container main",
    )
    runtime = pod("ml-research", priority="training")
    runtime.object["spec"]["runtimeClassName"] = "nvidia"
    assert_denied(
        cluster.admit(runtime),
        "gpufleet-dra-only",
        "Pod ml-research/my-pod uses runtime class nvidia, which gives a pod every GPU of its node",
        "team ml-research gets GPUs only through DRA",
    )
    runtime.object["spec"]["runtimeClassName"] = "gvisor"
    assert cluster.admit(runtime).outcome == "allowed"


def _templates(cluster: str, namespace: str) -> list[str]:
    tree = example().tree
    prefix = f"clusters/{cluster}/{namespace}/resourceclaimtemplate_"
    return [p.removeprefix(prefix).removesuffix(".yaml") for p in tree if p.startswith(prefix)]


@parametrize_teams
def test_claims_tolerate_only_what_the_team_may(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    tier = entitled_tiers(team, namespace)[0]
    granted = [t.model_dump(exclude_none=True) for t in team.spec.tolerations]
    for toleration in granted:
        assert_allowed(
            admission(cluster), claim(namespace, exactly(tier, tolerations=[toleration]))
        )
    wider = [{"key": ECC, "operator": "Exists"}, {"operator": "Exists"}]
    other = [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    for toleration in [*wider, *other] + (
        [] if granted else [{"key": ECC, "operator": "Exists", "effect": "NoSchedule"}]
    ):
        for request in (
            claim(namespace, exactly(tier, tolerations=[toleration])),
            claim(namespace, first_available(tier), _second_option_tolerating(tier, toleration)),
        ):
            assert_denied(
                admission(cluster).admit(request),
                "gpufleet-device-tolerations",
                f"ResourceClaim {namespace}/my-claim tolerates device taint",
                f"which team {team.name} may not tolerate; it may tolerate: ",
            )


def _second_option_tolerating(tier: str, toleration: dict[str, str]) -> dict[str, object]:
    """A request whose first option is clean and whose fallback carries the toleration."""
    request = first_available(tier, tier, name="fallback")
    request["firstAvailable"][1]["tolerations"] = [toleration]
    return request


def test_the_burn_in_team_may_tolerate_ecc_errors_narrowly() -> None:
    cluster = admission("prod-east")
    equal = {"key": ECC, "operator": "Equal", "value": "uncorrectable", "effect": "NoSchedule"}
    assert_allowed(cluster, claim("gpu-ops", exactly("training", tolerations=[equal])))
    evicting = {"key": ECC, "operator": "Exists", "effect": "NoExecute"}
    decision = cluster.admit(claim("gpu-ops", exactly("training", tolerations=[equal, evicting])))
    assert_denied(
        decision,
        "gpufleet-device-tolerations",
        f"tolerates device taint {ECC}=*:NoExecute, which team gpu-ops",
        f"it may tolerate: {ECC}=*:NoSchedule",
    )


@parametrize_teams
def test_admin_access_only_in_admin_namespaces(
    cluster: str, team: GrantedTeam, namespace: str
) -> None:
    tier = entitled_tiers(team, namespace)[0]
    requests = [
        claim(namespace, exactly(tier, adminAccess=True)),
        claim(namespace, flat(tier, adminAccess=True), version="v1beta1"),
    ]
    for request in requests:
        if team.spec.admin_access:
            assert_allowed(admission(cluster), request)
        else:
            assert_denied(
                admission(cluster).admit(request),
                "gpufleet-admin-access",
                f"requests adminAccess: true, which team {team.name} may not use in "
                f"namespace {namespace}",
                "(admin namespaces: gpu-ops)"
                if cluster == "prod-east"
                else "(admin namespaces: none)",
            )
    assert_allowed(admission(cluster), claim(namespace, exactly(tier, adminAccess=False)))


def test_every_claim_template_gpufleet_emits_passes_its_own_policies(
    compiled_example: Compiled,
) -> None:
    templates = [
        (path.split("/")[1], yaml.safe_load(text))
        for path, text in compiled_example.tree.items()
        if "/resourceclaimtemplate_" in path
    ]
    assert len(templates) > 10
    for cluster, template in templates:
        namespace = template["metadata"]["namespace"]
        request = Request(
            ("resource.k8s.io", "v1", "ResourceClaimTemplate"),
            "resourceclaimtemplates",
            namespace,
            template,
        )
        assert_allowed(admission(cluster), request)


def test_requests_built_here_are_valid_kubernetes_objects() -> None:
    samples = [
        claim("ns", exactly("training", tolerations=[{"key": ECC, "operator": "Exists"}])),
        claim("ns", first_available("training", "general"), kind="ResourceClaimTemplate"),
        claim("ns", flat("training", adminAccess=True), version="v1beta1"),
        claim("ns", exactly("training"), kind="ResourceClaimTemplate", version="v1beta2"),
        pod("ns", [container(limits={"nvidia.com/gpu": "1"})], [container("setup")], "batch"),
        job("ns", "batch"),
    ]
    for request in samples:
        validate_object(request.object, "1.36")


UNOWNED = "gpufleet-unowned-claims"
DRIVER_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com")
"""The DeviceClasses the NVIDIA DRA driver (gpu.nvidia.com) installs itself."""


@pytest.fixture(scope="module")
def denying(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example with the Fleet's `denyUnownedClaims` set."""
    root = tmp_path_factory.mktemp("denying") / "policies"
    shutil.copytree(EXAMPLE, root)
    documents = list(yaml.safe_load_all((root / "fleet.yaml").read_text(encoding="utf-8")))
    for document in documents:
        if document["kind"] == "Fleet":
            document["spec"]["denyUnownedClaims"] = True
    (root / "fleet.yaml").write_text(yaml.safe_dump_all(documents), encoding="utf-8")
    return root


@cache
def denying_tree(root: Path) -> dict[str, str]:
    return compile_policies(root).tree


def _namespaces_of(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """From the policy source: cluster -> its team namespaces; the system namespaces."""
    policies = build_policies(load_policies(root))
    teams = granted_teams(policies.grants, policies.teams, policies.fleet, [])
    owned = {
        cluster.name: {
            ns
            for team in teams
            if team.spec.clusters is None or cluster.name in team.spec.clusters
            for ns in team.spec.namespaces
        }
        for cluster in policies.clusters
    }
    assert policies.fleet is not None and policies.fleet.spec.deny_unowned_claims
    system = [*policies.fleet.spec.system_namespaces.model_dump().values(), "kube-system"]
    return owned, system


@pytest.mark.parametrize("cluster", ["prod-east", "prod-west"])
def test_gpu_claims_in_a_namespace_no_team_owns_are_denied(denying: Path, cluster: str) -> None:
    tree = denying_tree(denying)
    admission_ = Cluster.from_tree(tree, cluster)
    owned, _ = _namespaces_of(denying)
    elsewhere = set().union(*owned.values()) - owned[cluster]
    assert elsewhere, "a team of another cluster owns a namespace here nobody owns"
    prefix = f"clusters/{cluster}/_cluster/deviceclass_"
    tiers = [p[len(prefix) : -len(".yaml")] for p in tree if p.startswith(prefix)]
    assert tiers
    for namespace in ["scratch", "default", *sorted(elsewhere)]:
        for device_class in [*tiers, *DRIVER_CLASSES]:
            for request in (
                claim(namespace, exactly(device_class)),
                claim(namespace, first_available("fpga.example.com", device_class)),
                claim(namespace, flat(device_class), version="v1beta1"),
                claim(namespace, exactly(device_class), kind="ResourceClaimTemplate"),
            ):
                assert_denied(
                    admission_.admit(request),
                    UNOWNED,
                    f"{request.kind[2]} {namespace}/my-claim names GPU DeviceClass "
                    f"{device_class} in namespace {namespace}, which no team owns",
                )
        assert_allowed(admission_, claim(namespace, exactly("fpga.example.com")))


def test_team_and_system_namespaces_are_not_judged_as_unowned(denying: Path) -> None:
    owned, system = _namespaces_of(denying)
    for cluster, namespaces in owned.items():
        admission_ = Cluster.from_tree(denying_tree(denying), cluster)
        for namespace in system:
            assert admission_.decide(claim(namespace, exactly("gpu.nvidia.com"))) == []
        for namespace in namespaces:
            decisions = admission_.decide(claim(namespace, exactly("gpu.nvidia.com")))
            assert decisions and UNOWNED not in [d.policy for d in decisions]


def test_a_team_label_set_by_hand_does_not_make_a_namespace_owned(denying: Path) -> None:
    admission_ = Cluster.from_tree(denying_tree(denying), "prod-east")
    admission_.namespace_labels["impostor"] = {"gpufleet.dev/team": "ml-research"}
    assert_denied(
        admission_.admit(claim("impostor", exactly("training"))),
        UNOWNED,
        "in namespace impostor, which no team owns",
    )


def test_unowned_claims_are_opt_in_and_bound_to_every_namespace(
    denying: Path, tmp_path: Path
) -> None:
    root = tmp_path / "policies"
    shutil.copytree(denying, root)
    fleet = root / "fleet.yaml"
    fleet.write_text(
        fleet.read_text().replace("denyUnownedClaims: true", "denyUnownedClaims: false")
    )
    assert not [p for p in compile_policies(root).tree if UNOWNED in p]
    tree = denying_tree(denying)
    policy = yaml.safe_load(
        tree[f"clusters/prod-east/_cluster/validatingadmissionpolicy_{UNOWNED}.yaml"]
    )
    binding = yaml.safe_load(
        tree[f"clusters/prod-east/_cluster/validatingadmissionpolicybinding_{UNOWNED}.yaml"]
    )
    assert binding["spec"]["matchResources"]["namespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "Exists"}],
    }
    assert policy["spec"]["failurePolicy"] == "Fail"
    for obj in (policy, binding):
        validate_object(obj, "1.32")

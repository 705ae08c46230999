"""Admission manifests: fail closed, bound to gpufleet's namespaces only, typed like the API
server types them, and the priority quotas and namespace labels that go with them."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from compiler.cel import compile_expression
from compiler.cel.ast import parse_checked, selected_fields
from compiler.emit.admission_cost import ADMISSION_VARIABLES
from compiler.pipeline import Compiled, compile_policies
from compiler.validate import validate_object
from tests import fleets
from tests.conftest import PolicyWriter

POLICY_NAMES = {
    "gpufleet-admin-access",
    "gpufleet-device-tolerations",
    "gpufleet-dra-only",
    "gpufleet-gpu-environment",
    "gpufleet-gpu-nodes",
    "gpufleet-priority-entitlement",
    "gpufleet-priority-label",
    "gpufleet-tier-entitlement",
    "gpufleet-unowned-claims",  # the example fleet opts in
}
ADMISSION_REQUEST_FIELDS = {
    "kind",
    "resource",
    "subResource",
    "requestKind",
    "requestResource",
    "requestSubResource",
    "name",
    "namespace",
    "operation",
    "userInfo",
    "dryRun",
    "options",
}
"""kubernetes.AdmissionRequest as the API server declares `request` (BuildRequestType)."""


def of_kind(compiled: Compiled, kind: str, cluster: str = "prod-east") -> list[dict[str, Any]]:
    found = [
        yaml.safe_load(t) for p, t in compiled.tree.items() if p.startswith(f"clusters/{cluster}/")
    ]
    return [o for o in found if isinstance(o, dict) and o.get("kind") == kind]


def expressions(policy: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(where, expression, the type it must have) for every expression of a policy."""
    spec = policy["spec"]
    found = [
        (f"matchConditions.{c['name']}", c["expression"], "bool")
        for c in spec.get("matchConditions", [])
    ]
    found += [(f"variables.{v['name']}", v["expression"], "any") for v in spec["variables"]]
    for i, v in enumerate(spec["validations"]):
        found += [(f"validations[{i}]", v["expression"], "bool")]
        found += [(f"validations[{i}].messageExpression", v["messageExpression"], "string")]
    return found


def test_every_policy_fails_closed_and_is_bound_to_gpufleet_namespaces(
    compiled_example: Compiled,
) -> None:
    policies = {
        p["metadata"]["name"]: p for p in of_kind(compiled_example, "ValidatingAdmissionPolicy")
    }
    bindings = {
        b["metadata"]["name"]: b
        for b in of_kind(compiled_example, "ValidatingAdmissionPolicyBinding")
    }
    assert set(policies) == set(bindings) == POLICY_NAMES
    for name, policy in policies.items():
        assert policy["apiVersion"] == "admissionregistration.k8s.io/v1"
        assert policy["spec"]["failurePolicy"] == "Fail"
        for validation in policy["spec"]["validations"]:
            assert validation["reason"] == "Forbidden"
            assert validation["message"].startswith("gpufleet: ")
            assert "\n" not in validation["message"]
        binding = bindings[name]["spec"]
        assert binding["policyName"] == name
        assert binding["validationActions"] == ["Deny"]
        if name == "gpufleet-unowned-claims":  # every namespace; picks by name (test_admission)
            continue
        assert binding["matchResources"] == {
            "namespaceSelector": {
                "matchLabels": {"app.kubernetes.io/managed-by": "gpufleet"},
                "matchExpressions": [{"key": "gpufleet.dev/team", "operator": "Exists"}],
            }
        }


def test_every_expression_compiles_with_the_api_servers_variables_and_types(
    compiled_example: Compiled,
) -> None:
    checked = 0
    for policy in of_kind(compiled_example, "ValidatingAdmissionPolicy"):
        for where, source, wanted in expressions(policy):
            compiled = compile_expression(source, ADMISSION_VARIABLES, "any")
            if wanted != "any":
                assert compiled.result_type in (wanted, "dyn"), (where, compiled.result_type)
            node = parse_checked(source, ADMISSION_VARIABLES)
            assert selected_fields(node, "request") <= ADMISSION_REQUEST_FIELDS, where
            assert not selected_fields(node, "params"), "no paramKind: params is null"
            checked += 1
    assert checked > 40


def test_variables_are_defined_before_they_are_used(compiled_example: Compiled) -> None:
    for policy in of_kind(compiled_example, "ValidatingAdmissionPolicy"):
        defined: set[str] = set()
        for where, source, _ in expressions(policy):
            used = selected_fields(parse_checked(source, ADMISSION_VARIABLES), "variables")
            assert used <= defined, (policy["metadata"]["name"], where, used - defined)
            if where.startswith("variables."):
                defined.add(where.removeprefix("variables."))


@pytest.mark.parametrize("cluster", ["prod-east", "prod-west"])
def test_priority_quotas_admit_no_pod_of_a_class_the_team_may_not_use(
    compiled_example: Compiled, cluster: str
) -> None:
    ladder = [level.name for level in compiled_example.fleet.ladder.spec.levels]  # type: ignore[union-attr]
    resolved = next(c for c in compiled_example.fleet.clusters if c.name == cluster)
    quotas = {
        q["metadata"]["namespace"]: q
        for q in of_kind(compiled_example, "ResourceQuota", cluster)
        if q["metadata"]["name"] == "gpufleet-priorities"
    }
    for team in resolved.teams:
        denied = sorted(set(ladder) - set(team.spec.priorities))
        for namespace in team.spec.namespaces:
            spec = quotas[namespace]["spec"]
            assert spec["hard"] == {"pods": "0"}
            (expression,) = spec["scopeSelector"]["matchExpressions"]
            assert expression == {"scopeName": "PriorityClass", "operator": "In", "values": denied}


def test_only_admin_namespaces_carry_the_admin_access_label(compiled_example: Compiled) -> None:
    namespaces = {
        n["metadata"]["name"]: n["metadata"]["labels"]
        for n in of_kind(compiled_example, "Namespace")
    }
    admin = {
        ns for ns, labels in namespaces.items() if "resource.kubernetes.io/admin-access" in labels
    }
    assert admin == {"gpu-ops"}
    assert namespaces["gpu-ops"]["resource.kubernetes.io/admin-access"] == "true"


def test_argocd_may_sync_the_policies(compiled_example: Compiled) -> None:
    project = yaml.safe_load(compiled_example.tree["argocd/appproject_gpufleet.yaml"])
    allowed = {(e["group"], e["kind"]) for e in project["spec"]["clusterResourceWhitelist"]}
    assert ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") in allowed
    assert ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") in allowed


def _small_fleet(
    write_policies: PolicyWriter,
    tier_spec: str,
    fleet: str = "",
    pools: str = "",
    cluster_extra: str = "",
) -> Compiled:
    files = {
        "c.yaml": fleets.cluster(pools=pools) + cluster_extra,
        "t.yaml": fleets.tier("big", tier_spec),
        "team.yaml": fleets.team("a", "[{tier: big, guaranteed: 1}]"),
    }
    if fleet:
        files["fleet.yaml"] = fleet
    return compile_policies(write_policies(files))


def forbidden_resources(compiled: Compiled, variable: str = "forbidden") -> list[str] | None:
    """The resources the DRA-only policy forbids by name (`domains`: by domain), None without
    the policy."""
    policies = [
        p
        for p in of_kind(compiled, "ValidatingAdmissionPolicy", "c1")
        if p["metadata"]["name"] == "gpufleet-dra-only"
    ]
    if not policies:
        return None
    (policy,) = policies
    source = next(v["expression"] for v in policy["spec"]["variables"] if v["name"] == variable)
    return list(compile_expression(source, ADMISSION_VARIABLES, "any").evaluate({}))


def test_without_a_fleet_the_nvidia_domain_is_refused(write_policies: PolicyWriter) -> None:
    compiled = _small_fleet(write_policies, "{select: {models: [H100]}}")
    assert forbidden_resources(compiled, "domains") == ["nvidia.com/"]
    assert forbidden_resources(compiled) == []  # nvidia.com/gpu and the MIG names: the domain
    quotas = [q["metadata"]["name"] for q in of_kind(compiled, "ResourceQuota", "c1")]
    assert "gpufleet-priorities" not in quotas  # no PriorityLadder: no priority quotas
    assert "gpufleet-devices" in quotas


def test_a_tier_serving_the_legacy_name_through_dra_lifts_the_ban(
    write_policies: PolicyWriter,
) -> None:
    fleet = fleets.HEADER + (
        "kind: Fleet\nmetadata: {name: f}\nspec:\n"
        "  gitops: {repoURL: https://git.example.com/x.git}\n"
        "  devicePluginResources: [nvidia.com/gpu, amd.com/gpu]\n"
    )
    served = "{select: {models: [H100]}, extendedResourceName: nvidia.com/gpu}"
    # the name is free only where the driver's own class does not map it (GF230)
    free = "  driverExtendedResources: []\n"
    compiled = _small_fleet(write_policies, served, fleet, cluster_extra=free)
    assert forbidden_resources(compiled) == ["amd.com/gpu", *mig_resources(compiled)]
    nothing = fleet.replace("[nvidia.com/gpu, amd.com/gpu]", "[]") + "  gpuRuntimeClasses: []\n"
    no_mig = served.replace("H100]", "L40S]")
    l40s = "\n    - {name: l40s, nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}\n"
    assert forbidden_resources(_small_fleet(write_policies, no_mig, nothing, l40s, free)) is None


def mig_resources(compiled: Compiled) -> list[str]:
    """The device plugin's MIG resources of the GPUs MIG may partition (`mixed` strategy)."""
    return sorted(
        f"nvidia.com/mig-{profile.name}"
        for pool in compiled.fleet.clusters[0].pools
        if pool.model.mig is not None and pool.pool.mig != "disabled"
        for profile in pool.model.mig.profiles
    )


def test_the_same_objects_are_valid_for_the_oldest_supported_kubernetes(
    compiled_example: Compiled,
) -> None:
    """admissionregistration.k8s.io/v1 is GA since 1.30: one output serves 1.32 to 1.36."""
    objects = of_kind(compiled_example, "ValidatingAdmissionPolicy")
    objects += of_kind(compiled_example, "ValidatingAdmissionPolicyBinding")[:1]
    objects += [
        q
        for q in of_kind(compiled_example, "ResourceQuota")
        if q["metadata"]["name"] == "gpufleet-priorities"
    ][:1]
    assert len(objects) == len(POLICY_NAMES) + 2
    for obj in objects:
        validate_object(obj, "1.32")


def test_policies_name_concrete_versions_so_the_server_type_checks_them(
    compiled_example: Compiled,
) -> None:
    """kube-apiserver type-checks a policy only against the kinds its rules name without a
    wildcard; only the label policy, which reads nothing but metadata, matches every kind."""
    served = {"prod-east": "v1", "prod-west": "v1"}  # resource.k8s.io of 1.36 and 1.34
    for cluster, claims_version in served.items():
        for policy in of_kind(compiled_example, "ValidatingAdmissionPolicy", cluster):
            rules = policy["spec"]["matchConstraints"]["resourceRules"]
            if policy["metadata"]["name"] == "gpufleet-priority-label":
                assert rules[0]["apiGroups"] == ["*"]
                continue
            for rule in rules:
                assert "*" not in rule["apiGroups"] + rule["apiVersions"] + rule["resources"]
                if rule["apiGroups"] == ["resource.k8s.io"]:
                    assert rule["apiVersions"] == [claims_version]

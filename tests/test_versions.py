"""Version targeting: one fixture fleet per Kubernetes version compiles, every object is valid
for that version, and the version table's choices are exactly what each version serves."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from compiler.diagnostics import CompileError
from compiler.pipeline import Compiled, compile_policies
from compiler.resolve.features import check_features, feature_uses
from compiler.validate import validate_builtin, validate_object
from compiler.versions import KUBERNETES_VERSIONS, TARGETS, Feature, Gated, earliest, target
from tests import fleets
from tests.conftest import PolicyWriter
from tests.e2e.policies import EXAMPLE, RETARGETED_CLUSTER, RETARGETED_VERSION, retarget

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "versions"
FIXTURE_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.37")
SCHEMA_VERSIONS = ("1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
"""Versions whose schemas kubernetes-validate ships around the supported range."""


def fixture_fleet(version: str, tmp: Path) -> Path:
    """The common tiers, ladder and teams plus the version's cluster, in one directory."""
    root = tmp / f"fleet-{version}"
    for source in (FIXTURES / "common", FIXTURES / version):
        shutil.copytree(source, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module", params=FIXTURE_VERSIONS)
def compiled_version(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Compiled]:
    version: str = request.param
    return version, compile_policies(fixture_fleet(version, tmp_path_factory.mktemp("v")))


def synced_objects(compiled: Compiled) -> list[tuple[str, dict[str, Any]]]:
    """Every object Argo CD applies: the YAML files a kustomization lists."""
    found = []
    for path, text in compiled.tree.items():
        parts = path.split("/")
        if parts[0] != "clusters" or len(parts) != 4 or parts[2] in ("kueue-config", "node-config"):
            continue
        found.append((path, yaml.safe_load(text)))
    return found


def test_the_table_covers_every_supported_version() -> None:
    assert tuple(TARGETS) == KUBERNETES_VERSIONS
    assert [target(v).dra_api for v in KUBERNETES_VERSIONS] == [
        "resource.k8s.io/v1beta1",
        "resource.k8s.io/v1beta2",
        "resource.k8s.io/v1",
        "resource.k8s.io/v1",
        "resource.k8s.io/v1",
        "resource.k8s.io/v1",
    ]
    assert [target(v).taint_rule_api for v in KUBERNETES_VERSIONS] == [
        None,
        "resource.k8s.io/v1alpha3",
        "resource.k8s.io/v1alpha3",
        "resource.k8s.io/v1alpha3",
        "resource.k8s.io/v1beta2",
        "resource.k8s.io/v1",
    ]
    assert [target(v).mutating_policy_api for v in KUBERNETES_VERSIONS] == [
        "admissionregistration.k8s.io/v1alpha1",
        "admissionregistration.k8s.io/v1alpha1",
        "admissionregistration.k8s.io/v1beta1",
        "admissionregistration.k8s.io/v1beta1",
        "admissionregistration.k8s.io/v1",
        "admissionregistration.k8s.io/v1",
    ]
    assert [target(v).workload_api for v in KUBERNETES_VERSIONS] == [
        None,
        None,
        None,
        "scheduling.k8s.io/v1alpha1",
        "scheduling.k8s.io/v1alpha2",
        "scheduling.k8s.io/v1beta1",
    ]
    assert [target(v).pod_group_link for v in KUBERNETES_VERSIONS] == [
        None,
        None,
        None,
        "spec.workloadRef",
        "spec.schedulingGroup.podGroupName",
        "spec.schedulingGroup.podGroupName",
    ]
    assert [target(v).admin_access_label for v in KUBERNETES_VERSIONS] == [
        None,
        "resource.k8s.io/admin-access",
        "resource.kubernetes.io/admin-access",
        "resource.kubernetes.io/admin-access",
        "resource.kubernetes.io/admin-access",
        "resource.kubernetes.io/admin-access",
    ]
    assert earliest(Feature.DEVICE_TAINT_RULES) == "1.33"
    assert earliest(Feature.EXTENDED_RESOURCE) == "1.34"
    assert earliest(Feature.TAINT_EFFECT_NONE) == "1.35"
    assert earliest(Feature.MEMORY_RESERVATION_POLICY) == "1.36"
    rule_136 = target("1.36").availability(Feature.DEVICE_TAINT_RULES)
    assert isinstance(rule_136, Gated) and rule_136.gates == ("DRADeviceTaintRules",)
    assert rule_136.runtime_config
    # 1.37: DeviceTaintRule v1, extended resources and memory QoS are on by default; the
    # Workload API is beta but off (GenericWorkload alone: GangScheduling is gone in 1.37)
    row_137 = target("1.37")
    for feature in (
        Feature.DEVICE_TAINT_RULES,
        Feature.DEVICE_TOLERATIONS,
        Feature.EXTENDED_RESOURCE,
        Feature.MEMORY_QOS,
        Feature.MEMORY_RESERVATION_POLICY,
        Feature.MUTATING_ADMISSION_POLICY,
        Feature.ADMIN_ACCESS,
    ):
        assert row_137.availability(feature) == "on", feature
    gangs = row_137.availability(Feature.GANG_WORKLOADS)
    assert isinstance(gangs, Gated) and (gangs.stage, gangs.gates) == ("beta", ("GenericWorkload",))
    assert gangs.runtime_config == ("scheduling.k8s.io/v1beta1=true",)
    assert earliest(Feature.GANG_WORKLOADS) == "1.35"
    assert all(
        "GangScheduling" in gated.gates
        for v in ("1.35", "1.36")
        if isinstance(gated := target(v).availability(Feature.GANG_WORKLOADS), Gated)
    )


def test_every_fixture_object_is_valid_for_its_version(
    compiled_version: tuple[str, Compiled],
) -> None:
    version, compiled = compiled_version
    objects = synced_objects(compiled)
    kinds = {obj["kind"] for _, obj in objects}
    assert {"DeviceClass", "ResourceClaimTemplate", "ClusterQueue", "LimitRange"} <= kinds
    for path, obj in objects:
        validate_object(obj, version)
        if obj["kind"] in ("DeviceClass", "ResourceClaimTemplate"):
            assert obj["apiVersion"] == target(version).dra_api, path
        if obj["kind"] == "DeviceTaintRule":
            assert obj["apiVersion"] == target(version).taint_rule_api, path
        if obj["kind"] == "Workload":
            assert obj["apiVersion"] == target(version).workload_api, path
    assert ("DeviceTaintRule" in kinds) == (version != "1.32")
    # only the 1.37 fixture opts in to gang Workloads (and declares the API on)
    assert ("Workload" in kinds) == (version == "1.37")


def test_example_objects_are_valid_for_their_cluster_versions(compiled_example: Compiled) -> None:
    versions = {c.name: c.cluster.spec.kubernetes_version for c in compiled_example.fleet.clusters}
    assert set(versions.values()) == {"1.34", "1.36"}
    for path, obj in synced_objects(compiled_example):
        validate_object(obj, versions[path.split("/")[1]])


def _served_in(obj: dict[str, Any], version: str) -> bool:
    try:
        validate_builtin(obj, version)
    except kubernetes_validate.SchemaNotFoundError:
        return False
    return True


def test_table_choices_are_rejected_where_the_api_is_not_served(
    compiled_version: tuple[str, Compiled],
) -> None:
    """Each apiVersion the table picks is served by the target and refused by a version that
    does not serve it; the kubernetes-validate schemas are the evidence."""
    version, compiled = compiled_version
    checked = set()
    for _, obj in synced_objects(compiled):
        if obj["kind"] not in (
            "DeviceClass",
            "ResourceClaimTemplate",
            "DeviceTaintRule",
            "Workload",
        ):
            continue
        served = [v for v in SCHEMA_VERSIONS if _served_in(obj, v)]
        assert version in served
        assert served != list(SCHEMA_VERSIONS), f"{obj['apiVersion']} {obj['kind']} is everywhere"
        checked.add((obj["apiVersion"], obj["kind"]))
    assert checked


def test_request_shape_follows_the_version(compiled_version: tuple[str, Compiled]) -> None:
    version, compiled = compiled_version
    template = next(
        obj for _, obj in synced_objects(compiled) if obj["kind"] == "ResourceClaimTemplate"
    )
    request = template["spec"]["spec"]["devices"]["requests"][0]
    flat = target(version).flat_requests
    assert ("deviceClassName" in request) == flat
    assert ("exactly" in request or "firstAvailable" in request) == (not flat)
    # the other shape is refused by the same version's schema
    other = dict(request)
    if flat:
        other = {"name": "gpu", "exactly": {k: v for k, v in request.items() if k != "name"}}
    else:
        other = {"name": "gpu", **request.get("exactly", {"deviceClassName": "x"})}
    broken = {**template}
    broken["spec"] = {"spec": {"devices": {"requests": [other]}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        validate_builtin(broken, version)


def test_gated_features_are_reported_with_their_gates(
    compiled_version: tuple[str, Compiled],
) -> None:
    version, compiled = compiled_version
    gated = {w.message for w in compiled.warnings if w.code == "GF600"}
    # memory QoS is beta and on by default from 1.37
    assert any("MemoryQoS" in m for m in gated) == (version != "1.37")
    assert any("DynamicResourceAllocation" in m for m in gated) == (version in ("1.32", "1.33"))
    # the fixtures run Kueue, which admits no alternatives: their templates offer no fallbacks
    assert not any("DRAPrioritizedList" in m for m in gated)
    assert any("DRAExtendedResource" in m for m in gated) == (version in ("1.34", "1.35"))
    # the fixtures declare the DeviceTaintRule gates on: neither warned nor left out
    assert not any("DRADeviceTaint" in m for m in gated)
    left_out = {w.message for w in compiled.warnings if w.code == "GF603"}
    assert not any("DeviceTaintRule" in m for m in left_out)
    assert any("MutatingAdmissionPolicy" in m for m in left_out) == (
        version in ("1.32", "1.33", "1.35")
    )
    # the 1.37 fixture declares the Workload API on: its gang Workloads are not left out
    assert not any("GenericWorkload" in m for m in {w.message for w in compiled.warnings})


def test_every_feature_a_cluster_uses_and_lacks_is_reported(
    compiled_version: tuple[str, Compiled],
) -> None:
    """check_features looks only at the features a cluster lacks: what it reports names each
    feature that some clause of the cluster uses (every clause looked at) and that its version
    does not have on, and no other."""
    _, compiled = compiled_version
    for cluster in compiled.fleet.clusters:
        row, declared = (
            target(cluster.cluster.spec.kubernetes_version),
            cluster.cluster.spec.api_server,
        )
        used = {use.feature for use in feature_uses(cluster, tuple(Feature))}
        lacking = {feature for feature in used if not row.enabled(feature, declared)}
        messages = [d.message for d in check_features(cluster)]
        reported = {f for f in Feature if any(f"needs {f.value}," in m for m in messages)}
        assert reported == lacking, cluster.name


@pytest.mark.parametrize(
    ("version", "feature_file", "needs"),
    [
        ("1.32", "1.33", "1.33"),  # taints, tolerations, fallbacks on 1.32
        ("1.33", "1.34", "1.34"),  # extendedResourceName on 1.33
        ("1.34", "1.35", "1.35"),  # taint effect None on 1.34
    ],
)
def test_features_a_version_lacks_are_errors(
    version: str, feature_file: str, needs: str, tmp_path: Path
) -> None:
    root = fixture_fleet(feature_file, tmp_path)
    cluster = root / "cluster.yaml"
    cluster.write_text(cluster.read_text().replace(f'"{feature_file}"', f'"{version}"'))
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    errors = [d for d in caught.value.diagnostics if d.code == "GF220"]
    assert errors
    assert any(f"exists from {needs}" in d.message for d in errors)


def test_a_fleet_retargeted_to_1_37_needs_no_declarations(tmp_path: Path) -> None:
    """The example's prod-east on 1.37 with nothing declared: DeviceTaintRules in v1, the
    default-priority MutatingAdmissionPolicy in v1, no gate warned about, nothing left out,
    and every object valid for 1.37 (`make e2e` applies the same tree to a real 1.37)."""
    root = retarget(EXAMPLE, tmp_path / "policies", RETARGETED_CLUSTER, RETARGETED_VERSION)
    compiled = compile_policies(root)
    about = f"cluster {RETARGETED_CLUSTER}"
    assert not [w for w in compiled.warnings if w.code in ("GF600", "GF603") and about in w.message]
    prefix = f"clusters/{RETARGETED_CLUSTER}/"
    objects = [(path, obj) for path, obj in synced_objects(compiled) if path.startswith(prefix)]
    apis = {(obj["kind"], obj["apiVersion"]) for _, obj in objects}
    assert ("DeviceTaintRule", "resource.k8s.io/v1") in apis
    assert ("MutatingAdmissionPolicy", "admissionregistration.k8s.io/v1") in apis
    for _, obj in objects:
        validate_object(obj, "1.37")


@pytest.mark.parametrize(
    ("version", "label", "gated"),
    [
        ("1.32", None, True),  # DRAAdminAccess alpha; no namespace label checked yet
        ("1.33", "resource.k8s.io/admin-access", True),
        ("1.34", "resource.kubernetes.io/admin-access", False),
        ("1.37", "resource.kubernetes.io/admin-access", False),
    ],
)
def test_admin_namespaces_carry_the_label_their_version_checks(
    version: str, label: str | None, gated: bool, write_policies: PolicyWriter
) -> None:
    """kube-apiserver accepts `adminAccess: true` only in a namespace labelled with its
    version's key (k8s.io/api resource DRAAdminNamespaceLabelKey: `resource.k8s.io/...` in
    1.33, `resource.kubernetes.io/...` from 1.34); before 1.34 the feature is alpha."""
    pools = (
        "\n    - {name: l40s, nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}\n"
    )
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=pools, version=version),
            "t.yaml": fleets.tier("l40s", "{select: {models: [L40S]}}"),
            "ops.yaml": fleets.team(
                "ops", "[{tier: l40s, guaranteed: 1}]", "  adminAccess: true\n"
            ),
            "users.yaml": fleets.team("users", "[{tier: l40s, guaranteed: 1}]"),
        }
    )
    compiled = compile_policies(root)
    for team in ("ops", "users"):
        namespace = yaml.safe_load(compiled.tree[f"clusters/c1/_cluster/namespace_{team}.yaml"])
        labels = namespace["metadata"]["labels"]
        admin = {k: v for k, v in labels.items() if k.endswith("/admin-access")}
        assert admin == ({label: "true"} if label and team == "ops" else {}), (team, labels)
    warned = [w.message for w in compiled.warnings if w.code == "GF600"]
    assert any("DRAAdminAccess" in m for m in warned) == gated


def _pod_joining_a_gang(link: str) -> dict[str, Any]:
    """A Pod that sets the link field `link` (`spec.a.b`) to join a gang."""
    value: Any = (
        {"name": "training-x8", "podGroup": "gang"} if link.endswith("workloadRef") else "j"
    )
    *parents, leaf = link.split(".")[1:]
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "registry.invalid/e2e:1"}]}
    node = spec
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize(
    "version", [v for v in KUBERNETES_VERSIONS if target(v).pod_group_link is not None]
)
def test_the_pod_link_field_is_the_one_the_version_serves(version: str) -> None:
    """The table's Pod field for joining a gang is in the version's Pod schema, and refused by
    every version whose table names another field (or none)."""
    joining = _pod_joining_a_gang(str(target(version).pod_group_link))
    validate_builtin(joining, version)
    for other in SCHEMA_VERSIONS:
        if other in TARGETS and target(other).pod_group_link != target(version).pod_group_link:
            with pytest.raises(kubernetes_validate.ValidationError):
                validate_builtin(joining, other)

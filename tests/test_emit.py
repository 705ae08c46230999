"""Emit: every object valid for its API, kustomize renders each cluster, output is safe."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compiler.emit.manifest import SOURCE_ANNOTATION
from compiler.pipeline import Compiled
from compiler.validate import CRD_FILES, SCHEMAS, crd_schema, validate_object

KUBERNETES_VERSION = "1.36"


def objects(compiled: Compiled) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    """Every emitted Kubernetes object (kustomizations and node label lists are not objects)."""
    found = [
        (path, yaml.safe_load(text))
        for path, text in compiled.tree.items()
        if path.endswith(".yaml")
        and not path.endswith("kustomization.yaml")
        and "/kueue-config/" not in path
    ]
    return [(path, obj) for path, obj in found if "apiVersion" in obj]


def version_of(compiled: Compiled, path: str) -> str:
    """The Kubernetes version of the cluster a path belongs to (argocd/ files: any)."""
    versions = {c.name: c.cluster.spec.kubernetes_version for c in compiled.fleet.clusters}
    parts = path.split("/")
    return versions[parts[1]] if parts[0] == "clusters" else KUBERNETES_VERSION


def test_every_emitted_object_validates_strictly(compiled_example: Compiled) -> None:
    found = objects(compiled_example)
    assert len(found) > 40
    for path, obj in found:
        validate_object(obj, version_of(compiled_example, path))
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpufleet", path
        assert "#" in obj["metadata"]["annotations"][SOURCE_ANNOTATION], path


def test_strict_validation_is_real(compiled_example: Compiled) -> None:
    _, device_class = next(o for o in objects(compiled_example) if o[1]["kind"] == "DeviceClass")
    device_class["spec"]["selectors"][0]["cel"]["expresion"] = "typo"
    with pytest.raises(Exception, match="expresion"):
        validate_object(device_class, KUBERNETES_VERSION)


def test_paths_follow_the_layout(compiled_example: Compiled) -> None:
    for path, obj in objects(compiled_example):
        name, kind = obj["metadata"]["name"], obj["kind"].lower()
        if path == "argocd/cmp/plugin.yaml":  # Argo CD reads the plugin under this name
            assert kind == "configmanagementplugin"
            continue
        if path.startswith("argocd/"):
            directory = "argocd/cmp" if path.startswith("argocd/cmp/") else "argocd"
            assert path == f"{directory}/{kind}_{name}.yaml"
            continue
        if "/node-config/" in path:
            assert path.endswith(f"/node-config/{kind}_{name}.yaml")
            continue
        namespace = obj["metadata"].get("namespace", "_cluster")
        assert path.endswith(f"/{namespace}/{kind}_{name}.yaml"), path


def test_quota_zeroes_other_classes_and_device_plugin_gpus(compiled_example: Compiled) -> None:
    quota = yaml.safe_load(
        compiled_example.tree["clusters/prod-east/ml-research/resourcequota_gpufleet-devices.yaml"]
    )
    hard = quota["spec"]["hard"]
    assert hard["training.deviceclass.resource.k8s.io/devices"] == "96"
    assert hard["inference.deviceclass.resource.k8s.io/devices"] == "0"
    assert hard["gpu.nvidia.com.deviceclass.resource.k8s.io/devices"] == "0"
    assert hard["requests.nvidia.com/gpu"] == "0"


def test_gang_template_requests_the_gang_and_keeps_it_together(
    compiled_example: Compiled,
) -> None:
    gang = yaml.safe_load(
        compiled_example.tree[
            "clusters/prod-east/data-science/resourceclaimtemplate_general-x2.yaml"
        ]
    )
    devices = gang["spec"]["spec"]["devices"]
    assert devices["requests"][0]["exactly"] == {
        "deviceClassName": "general",
        "allocationMode": "ExactCount",
        "count": 2,
    }
    assert devices["constraints"] == [
        {"requests": ["gpu"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}
    ]


def test_priority_classes_follow_the_ladder(compiled_example: Compiled) -> None:
    classes = {
        obj["metadata"]["name"]: obj
        for path, obj in objects(compiled_example)
        if obj["kind"] == "PriorityClass" and "/prod-east/" in path
    }
    assert {
        n: (c["value"], c["preemptionPolicy"], c["globalDefault"]) for n, c in classes.items()
    } == {
        "inference-critical": (1000000, "PreemptLowerPriority", False),
        "training": (10000, "PreemptLowerPriority", False),
        "batch": (100, "Never", False),
    }


def test_no_priority_class_is_a_global_default(compiled_example: Compiled) -> None:
    """The Priority plugin writes a global default into every pod that names no class, before
    any policy runs: in a team that may not use it, the guardrails would deny every such pod."""
    classes = [obj for _, obj in objects(compiled_example) if obj["kind"] == "PriorityClass"]
    assert classes and not any(c["globalDefault"] for c in classes)


@pytest.mark.parametrize("cluster", ["prod-east"])
def test_pods_that_name_no_class_get_their_teams_default(
    compiled_example: Compiled, cluster: str
) -> None:
    ladder = compiled_example.fleet.ladder
    assert ladder is not None
    value = {level.name: level.value for level in ladder.spec.levels}
    policy = next(
        obj
        for path, obj in objects(compiled_example)
        if obj["kind"] == "MutatingAdmissionPolicy" and f"/{cluster}/" in path
    )
    variables = {v["name"]: v["expression"] for v in policy["spec"]["variables"]}
    classes = json.loads(variables["classes"])
    resolved = next(c for c in compiled_example.fleet.clusters if c.name == cluster)
    for team in resolved.teams:
        # the team's declared default, else the lowest value it may use
        expected = team.spec.default_priority or min(team.spec.priorities, key=value.__getitem__)
        for namespace in team.spec.namespaces:
            assert classes[namespace] == expected
    assert {k: int(v) for k, v in json.loads(variables["values"]).items()} == {
        name: value[name] for name in set(classes.values())
    }


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_kustomize_renders_each_cluster(compiled_example: Compiled, tmp_path: Path) -> None:
    for path, text in compiled_example.tree.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    for cluster in ("prod-east", "prod-west"):
        rendered = subprocess.run(
            ["kubectl", "kustomize", str(tmp_path / "clusters" / cluster)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        kinds = [doc["kind"] for doc in yaml.safe_load_all(rendered)]
        listed = yaml.safe_load(compiled_example.tree[f"clusters/{cluster}/kustomization.yaml"])
        assert len(kinds) == len(listed["resources"])
        assert {"DeviceClass", "ResourceClaimTemplate", "ResourceQuota"} <= set(kinds)


def test_compile_validate_checks_every_object_and_reports_gf505(
    run_cli: Callable[..., tuple[int, str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, _, err = run_cli("compile", "--validate", "--out", tmp_path / "out")
    assert code == 0, err
    from compiler.emit import tree as tree_module

    original = tree_module.render

    def broken(manifest):  # type: ignore[no-untyped-def]
        text = original(manifest)
        if manifest.kind == "DeviceClass":
            return text.replace("  selectors:\n", "  selector:\n")
        return text

    monkeypatch.setattr(tree_module, "render", broken)
    code, _, err = run_cli("compile", "--validate", "--out", tmp_path / "out2")
    assert code == 3 and "error[GF505]" in err and "deviceclass_training.yaml" in err
    assert not (tmp_path / "out2").exists()


@pytest.mark.parametrize("crd", sorted(set(CRD_FILES)))
def test_vendored_crd_schemas_are_valid_json_schemas(crd: tuple[str, str]) -> None:
    import jsonschema

    group, kind = crd
    vendored = yaml.safe_load((SCHEMAS / CRD_FILES[crd]).read_text())
    served = [v["name"] for v in vendored["spec"]["versions"] if v.get("served", True)]
    assert served, f"{CRD_FILES[crd]} serves no version"
    for version in served:
        schema = crd_schema(group, kind, version)
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_team_namespaces_enforce_their_grants_pod_security_standard(
    compiled_example: Compiled,
) -> None:
    """Baseline refuses privileged pods and hostPath /dev, which would reach GPUs around DRA;
    only a grant that says so (gpu-ops's burn-in tools) lifts it."""
    fleet = compiled_example.fleet.fleet
    assert fleet is not None
    for cluster in compiled_example.fleet.clusters:
        for team in cluster.teams:
            for namespace in team.spec.namespaces:
                labels = yaml.safe_load(
                    compiled_example.tree[
                        f"clusters/{cluster.name}/_cluster/namespace_{namespace}.yaml"
                    ]
                )["metadata"]["labels"]
                level = team.grant.spec.pod_security or fleet.spec.pod_security
                assert labels["pod-security.kubernetes.io/enforce"] == level
                assert labels["pod-security.kubernetes.io/enforce-version"] == (
                    f"v{cluster.cluster.spec.kubernetes_version}"
                )
    assert fleet.spec.pod_security == "baseline"

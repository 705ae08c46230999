"""Argo CD wiring: the AppProject allows exactly what gpufleet emits, the ApplicationSet syncs
out/clusters/*, and the Config Management Plugin prints what the rendered manifests hold."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from typing import Any

import jsonschema
import pytest
import yaml

from compiler.pipeline import Compiled
from compiler.validate import CMP_SCHEMA, validate_object
from compiler.write.stream import cluster_stream
from tests.conftest import EXAMPLE, REPO
from tests.test_cli import Run


def load(compiled: Compiled, path: str) -> Any:
    return yaml.safe_load(compiled.tree[path])


def test_the_project_allows_exactly_the_kinds_gpufleet_syncs(compiled_example: Compiled) -> None:
    project = load(compiled_example, "argocd/appproject_gpufleet.yaml")["spec"]
    synced: dict[bool, set[tuple[str, str]]] = {False: set(), True: set()}
    for cluster in CLUSTERS:
        for document in yaml.safe_load_all(cluster_stream(compiled_example.tree, cluster)):
            group = document["apiVersion"].rpartition("/")[0]
            synced["namespace" in document["metadata"]].add((group, document["kind"]))
    allowed = {
        scope: {(e["group"], e["kind"]) for e in project[key]}
        for scope, key in (
            (False, "clusterResourceWhitelist"),
            (True, "namespaceResourceWhitelist"),
        )
    }
    assert allowed == synced
    assert ("", "Namespace") in allowed[False] and ("", "ResourceQuota") in allowed[True]


CLUSTERS = ("prod-east", "prod-west")


def permitted(destinations: list[dict[str, str]], cluster: str, namespace: str) -> bool:
    """Argo CD's AppProject.isDestinationMatched for destinations named by cluster name: the
    name and the namespace each match a glob ("*" anything, a literal only itself, a missing
    namespace only the empty one)."""
    return any(
        fnmatchcase(cluster, d["name"]) and fnmatchcase(namespace, d.get("namespace", ""))
        for d in destinations
    )


def test_the_project_lets_argo_cd_write_only_where_gpufleet_does(
    compiled_example: Compiled,
) -> None:
    destinations = load(compiled_example, "argocd/appproject_gpufleet.yaml")["spec"]["destinations"]
    assert all(d.get("namespace") != "*" for d in destinations)
    for cluster in CLUSTERS:
        written = {
            document["metadata"]["namespace"]
            for document in yaml.safe_load_all(cluster_stream(compiled_example.tree, cluster))
            if "namespace" in document["metadata"]
        }
        assert written and all(permitted(destinations, cluster, ns) for ns in written)
        assert permitted(destinations, cluster, "")  # the Application, which names no namespace
        teams = {ns for t in compiled_example.fleet.teams for ns in t.spec.namespaces}
        for foreign in (
            "kube-system",
            "default",
            "argocd",
            "gpu-operator",
            *sorted(teams - written),
        ):
            assert not permitted(destinations, cluster, foreign), (cluster, foreign)


def test_the_application_set_syncs_each_cluster_directory(compiled_example: Compiled) -> None:
    spec = load(compiled_example, "argocd/applicationset_gpufleet.yaml")["spec"]
    (generator,) = spec["generators"]
    assert generator["git"]["directories"] == [{"path": "out/clusters/*"}]
    template = spec["template"]["spec"]
    assert template["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    assert "ServerSideApply=true" in template["syncPolicy"]["syncOptions"]
    assert template["destination"] == {"name": "{{.path.basename}}"}
    clusters = {p.split("/")[1] for p in compiled_example.tree if p.startswith("clusters/")}
    assert clusters == {"prod-east", "prod-west"}


def test_the_plugin_is_valid_and_the_config_map_holds_it(compiled_example: Compiled) -> None:
    plugin = load(compiled_example, "argocd/cmp/plugin.yaml")
    validate_object(plugin, "1.36")
    config_map = load(compiled_example, "argocd/cmp/configmap_gpufleet-cmp-plugin.yaml")
    validate_object(config_map, "1.36")
    assert (
        config_map["data"]["plugin.yaml"] + "\n" == compiled_example.tree["argocd/cmp/plugin.yaml"]
    )
    schema = json.loads(CMP_SCHEMA.read_text())
    for broken in (
        {**plugin, "spec": {"generate": {"command": []}}},
        {**plugin, "spec": {**plugin["spec"], "generat": {}}},
        {**plugin, "kind": "ConfigMap"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def test_render_prints_a_stream_of_the_cluster_objects(run_cli: Run) -> None:
    code, out, err = run_cli("render", "--policies", EXAMPLE, "--cluster", "prod-east")
    assert code == 0, err
    documents = list(yaml.safe_load_all(out))
    assert len(documents) == out.count("---\n") > 10
    assert {d["kind"] for d in documents} >= {"DeviceClass", "Namespace", "ResourceQuota"}
    assert all(
        d["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpufleet" for d in documents
    )


def test_the_cmp_example_application_set_is_valid() -> None:
    example = yaml.safe_load((REPO / "examples" / "argocd-cmp" / "applicationset.yaml").read_text())
    validate_object(example, "1.36")
    source = example["spec"]["template"]["spec"]["source"]
    assert source["plugin"]["name"] == "gpufleet"
    assert source["plugin"]["env"] == [{"name": "GPUFLEET_CLUSTER", "value": "{{.cluster}}"}]


def test_crd_validation_is_real(compiled_example: Compiled) -> None:
    application_set = load(compiled_example, "argocd/applicationset_gpufleet.yaml")
    application_set["spec"]["goTemplate"] = "yes"
    with pytest.raises(jsonschema.ValidationError, match="yes"):
        validate_object(application_set, "1.36")

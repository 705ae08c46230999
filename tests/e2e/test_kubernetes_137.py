"""The newest Kubernetes minor on a real kube-apiserver: the example fleet with one cluster
retargeted to 1.37 and nothing declared (DeviceTaintRule v1, on by default) passes every
check the example's own clusters pass. Opted in to gang Workloads with the Workload API
declared on (1.37, and 1.36's alpha shape), the tree applies and a team's gang joins through
the Pod's link field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.emit.workload import POD_GROUP, POD_GROUP_LINK
from compiler.versions import target
from tests.e2e.admission_table import pod
from tests.e2e.control_plane import apply_in_waves, control_plane, manifest_paths
from tests.e2e.policies import (
    EXAMPLE,
    RETARGETED_CLUSTER,
    RETARGETED_VERSION,
    compile_tree,
    resolved,
    retarget,
)
from tests.e2e.test_real_cluster import check_cluster

WORKLOAD_API_ON = {
    "1.36": """  gangScheduling: Workload
  apiServer:
    featureGates: {GenericWorkload: true, GangScheduling: true}
    runtimeConfig: {scheduling.k8s.io/v1alpha2: true}
""",
    "1.37": """  gangScheduling: Workload
  apiServer:
    featureGates: {GenericWorkload: true}
    runtimeConfig: {scheduling.k8s.io/v1beta1: true}
""",
}
"""What the retargeted cluster declares to serve the Workload API, per version."""


def kinds(tree: Path) -> dict[str, set[str]]:
    """kind -> the apiVersions of the tree's objects of that kind."""
    found: dict[str, set[str]] = {}
    for path in manifest_paths(tree):
        obj = yaml.safe_load(path.read_text())
        found.setdefault(obj["kind"], set()).add(obj["apiVersion"])
    return found


def test_an_example_cluster_on_a_real_1_37_api_server(tmp_path: Path) -> None:
    policies = retarget(EXAMPLE, tmp_path / "policies", RETARGETED_CLUSTER, RETARGETED_VERSION)
    clusters, _ = resolved(policies)
    spec = clusters[RETARGETED_CLUSTER].cluster.spec
    assert (spec.kubernetes_version, spec.api_server.feature_gates) == ("1.37", {})
    out = tmp_path / "out"
    compile_tree(policies, out)
    tree = out / "clusters" / RETARGETED_CLUSTER
    found = kinds(tree)
    assert found["DeviceTaintRule"] == {"resource.k8s.io/v1"}
    assert found["MutatingAdmissionPolicy"] == {"admissionregistration.k8s.io/v1"}
    check_cluster(policies, out, RETARGETED_CLUSTER, tmp_path / "kube")


def with_gang_workloads(policies: Path, version: str) -> None:
    """Opt the retargeted cluster in to gang Workloads and declare the Workload API on."""
    (path,) = [
        p
        for p in policies.rglob("*.yaml")
        if f"  name: {RETARGETED_CLUSTER}\n" in p.read_text() and "kind: Cluster\n" in p.read_text()
    ]
    declared = WORKLOAD_API_ON[version]
    path.write_text(path.read_text().replace("  nodePools:", declared + "  nodePools:", 1))


def pod_group(version: str, namespace: str, workload: dict[str, Any]) -> dict[str, Any]:
    """A job's PodGroup made from the Workload's template, in the version's shape."""
    name = workload["metadata"]["name"]
    (template,) = workload["spec"]["podGroupTemplates"]
    reference: dict[str, Any] = (
        {"workloadRef": {"workloadName": name, "templateName": POD_GROUP}}
        if version == "1.37"
        else {
            "podGroupTemplateRef": {
                "workload": {"workloadName": name, "podGroupTemplateName": POD_GROUP}
            }
        }
    )
    return {
        "apiVersion": workload["apiVersion"],
        "kind": "PodGroup",
        "metadata": {"name": "job-1", "namespace": namespace},
        "spec": {**reference, "schedulingPolicy": template["schedulingPolicy"]},
    }


@pytest.mark.parametrize("version", ["1.36", RETARGETED_VERSION])
def test_gang_workloads_on_a_real_api_server(version: str, tmp_path: Path) -> None:
    """The Workloads apply (no warning) and are stored as written; a team's user makes a
    PodGroup from its Workload's template and a pod that joins it by the version's link field
    (`spec.schedulingGroup.podGroupName`), both admitted through the whole chain."""
    policies = retarget(EXAMPLE, tmp_path / "policies", RETARGETED_CLUSTER, version)
    with_gang_workloads(policies, version)
    clusters, _ = resolved(policies)
    cluster_model = clusters[RETARGETED_CLUSTER]
    gangs = [g for g in cluster_model.guarantees if g.gang > 1]
    assert gangs, "the example has gangs in the retargeted cluster"
    out = tmp_path / "out"
    compile_tree(policies, out)
    tree = out / "clusters" / RETARGETED_CLUSTER
    row = target(version)
    assert kinds(tree)["Workload"] == {row.workload_api}
    with control_plane(cluster_model, tree, tmp_path / "kube") as cluster:
        assert apply_in_waves(cluster) == []
        stored = {
            (w["metadata"]["namespace"], w["metadata"]["name"]): w
            for w in cluster.get("workloads.scheduling.k8s.io", "-A")["items"]
        }
        assert set(stored) == {(g.namespace, f"{g.tier}-x{g.gang}") for g in gangs}
        gang = gangs[0]
        workload = stored[(gang.namespace, f"{gang.tier}-x{gang.gang}")]
        assert workload["metadata"]["annotations"][POD_GROUP_LINK] == row.pod_group_link
        (template,) = workload["spec"]["podGroupTemplates"]
        assert template["schedulingPolicy"] == {"gang": {"minCount": gang.gang}}
        done = cluster.create(pod_group(version, gang.namespace, workload), team=gang.team.name)
        assert done.returncode == 0, done.stderr
        assert row.pod_group_link == "spec.schedulingGroup.podGroupName"
        member = pod(
            gang.namespace,
            "job-1-worker-0",
            schedulingGroup={"podGroupName": "job-1"},
            resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": gang.tier}],
            container={"resources": {"claims": [{"name": "gpu"}]}},
        )
        done = cluster.create(member, team=gang.team.name, dry_run=True)
        assert done.returncode == 0, done.stderr
        admitted = json.loads(done.stdout)
        assert admitted["spec"]["schedulingGroup"] == {"podGroupName": "job-1"}

"""GPU nodes kept for GPU work: a node taint per GPU pool, registered by the kubelet drop-in,
named on the Kueue flavors, added to pods that claim devices and refused to every other pod.

The host-resource proof counts a GPU node's CPU and memory for the pods of its GPUs; these tests
check that nothing else can land there: not a pod that copies the toleration, not one that
names a GPU node outright, not one that gains the toleration while pending.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pytest
import yaml

from compiler.diagnostics import CompileError
from compiler.model.cluster import GPU_NODE_TAINT
from compiler.pipeline import Compiled, compile_policies
from compiler.validate import validate_object
from tests import fleets
from tests.admission_harness import Cluster, Request
from tests.admission_requests import container, pod
from tests.conftest import EXAMPLE, PolicyWriter

TAINT = {"key": "gpufleet.dev/gpu", "value": "present", "effect": "NoSchedule"}
TOLERATION = {**TAINT, "operator": "Equal"}
DROPIN = "clusters/c1/node-config/kubelet/{pool}/50-gpufleet.conf"


@cache
def example() -> Compiled:
    return compile_policies(EXAMPLE)


@cache
def admission(cluster: str) -> Cluster:
    return Cluster.from_tree(example().tree, cluster)


def load(compiled: Compiled, path: str) -> Any:
    return yaml.safe_load(compiled.tree[path])


def gpu_pod(
    namespace: str,
    tolerations: list[dict[str, Any]] | None = None,
    claims: bool = True,
    node: str | None = None,
) -> Request:
    """A pod that claims a device from the namespace's template (or claims nothing)."""
    request = pod(namespace, [container()])
    spec = request.object["spec"]
    if claims:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "training"}]
        spec["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    if node is not None:
        spec["nodeName"] = node
    return request


def updated(created: Request, tolerations: list[dict[str, Any]]) -> Request:
    """UPDATE of the pod of `created` with `tolerations` after its own (labels too)."""
    old = copy.deepcopy(created.object)
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"touched": "yes"}
    new["spec"]["tolerations"] = [*old["spec"].get("tolerations", []), *tolerations]
    return Request(created.kind, "pods", created.namespace, new, "UPDATE", old)


def test_the_default_taint_is_written_once() -> None:
    assert GPU_NODE_TAINT.model_dump() == TAINT
    assert str(GPU_NODE_TAINT) == "gpufleet.dev/gpu=present:NoSchedule"


def test_every_gpu_pool_registers_with_its_taint_and_may_name_another_or_none(
    write_policies: PolicyWriter,
) -> None:
    pools = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}
    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64,
       nodeTaint: {key: nvidia.com/gpu, value: present}}
    - {name: a100, nodes: 2, gpu: A100-80GB, gpusPerNode: 8, hostMemory: 1Ti, cpu: 128,
       nodeTaint: null}
"""
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=pools),
            "t.yaml": fleets.tier("any", "{select: {models: [H100, L40S, A100]}}"),
            "team.yaml": fleets.team("a", "[{tier: any, guaranteed: 1}]"),
        }
    )
    compiled = compile_policies(root)
    assert yaml.safe_load(compiled.tree[DROPIN.format(pool="h100")]) == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "registerWithTaints": [TAINT],
    }
    l40s = yaml.safe_load(compiled.tree[DROPIN.format(pool="l40s")])
    assert l40s["registerWithTaints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
    # an untainted pool with default kubelet settings needs no drop-in
    assert DROPIN.format(pool="a100") not in compiled.tree
    # pods of the tier may land on either tainted pool: the policy adds both tolerations
    [policy] = [
        yaml.safe_load(text)
        for path, text in compiled.tree.items()
        if path.endswith("mutatingadmissionpolicy_gpufleet-gpu-node-toleration.yaml")
    ]
    variables = {v["name"]: v["expression"] for v in policy["spec"]["variables"]}
    assert json.loads(variables["tolerations"]) == {
        "a": [TAINT, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    }
    assert policy["spec"]["mutations"][0]["patchType"] == "JSONPatch"


def test_kueue_flavors_name_their_pools_taints_and_tolerate_them(
    compiled_example: Compiled,
) -> None:
    """Kueue checks a Job's pod template before any pod exists, so the flavor itself carries
    the toleration (Kueue adds it to the pods it admits) next to the taint it tolerates."""
    prefix = "clusters/prod-east/_cluster/resourceflavor_"
    for tier in ("training", "inference", "general", "large-memory"):
        flavor = load(compiled_example, f"{prefix}{tier}.yaml")
        assert flavor["spec"] == {"nodeTaints": [TAINT], "tolerations": [TOLERATION]}
        validate_object(flavor, "1.36")
    assert load(compiled_example, f"{prefix}gpufleet-host.yaml")["spec"] == {}


def test_pods_that_claim_devices_may_tolerate_the_gpu_taint() -> None:
    cluster = admission("prod-east")
    for toleration in (TOLERATION, {"key": TAINT["key"], "operator": "Exists"}):
        decisions = cluster.decide(gpu_pod("ml-research", [toleration]))
        assert all(d.outcome == "allowed" for d in decisions), decisions


@pytest.mark.parametrize(
    "toleration",
    [
        TOLERATION,
        {"key": "gpufleet.dev/gpu", "operator": "Exists"},
        {"key": "gpufleet.dev/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"operator": "Exists"},  # every taint
    ],
    ids=["equal", "exists", "exists-effect", "everything"],
)
def test_pods_that_claim_nothing_may_not_tolerate_it(toleration: dict[str, Any]) -> None:
    decision = admission("prod-east").admit(gpu_pod("ml-research", [toleration], claims=False))
    assert decision.outcome == "denied" and decision.policy == "gpufleet-gpu-nodes"
    assert (
        "Pod ml-research/my-pod tolerates the GPU node taint gpufleet.dev/gpu=present:NoSchedule"
        " but claims no device: team ml-research may run only pods that claim GPUs on GPU nodes"
    ) in decision.message
    assert "ResourceClaimTemplate: training, training-x8" in decision.message


@pytest.mark.parametrize(
    "toleration",
    [
        {"key": "gpufleet.dev/gpu", "operator": "Exists", "effect": "NoExecute"},
        {"key": "gpufleet.dev/gpu", "operator": "Equal", "value": "absent"},
        {"key": "example.com/spot", "operator": "Exists"},
    ],
)
def test_tolerations_that_miss_the_gpu_taint_are_anyones(toleration: dict[str, Any]) -> None:
    decision = admission("prod-east").admit(gpu_pod("ml-research", [toleration], claims=False))
    assert decision.outcome == "allowed", decision


def test_a_pod_that_claims_nothing_may_not_name_a_gpu_node() -> None:
    cluster = admission("prod-east")
    decision = cluster.admit(gpu_pod("ml-research", claims=False, node="prod-east-h100-3"))
    assert decision.outcome == "denied" and decision.policy == "gpufleet-gpu-nodes"
    assert "names node prod-east-h100-3 of a GPU pool in spec.nodeName" in decision.message
    assert cluster.admit(gpu_pod("ml-research", claims=False, node="cpu-7")).outcome == "allowed"
    assert cluster.admit(gpu_pod("ml-research", node="prod-east-h100-3")).outcome == "allowed"


def test_a_pending_pod_may_not_gain_the_toleration_but_old_pods_stay_updatable() -> None:
    cluster = admission("prod-east")
    created = gpu_pod("ml-research", claims=False)
    decision = cluster.admit(updated(created, [TOLERATION]))
    assert decision.outcome == "denied" and decision.policy == "gpufleet-gpu-nodes"
    # a pod that had the toleration before the policy: a plain update passes every policy
    # (an update has no subresource: `request.subResource` is absent, not empty)
    legacy = gpu_pod("ml-research", [TOLERATION], claims=False)
    decisions = cluster.decide(updated(legacy, []))
    assert decisions and all(d.outcome == "allowed" for d in decisions), decisions


def test_a_namespace_tolerates_only_the_taints_of_its_tiers_pools(
    write_policies: PolicyWriter,
) -> None:
    pools = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       nodeTaint: {key: example.com/h100, value: "yes"}}
    - {name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64,
       nodeTaint: {key: example.com/l40s, value: "yes"}}
"""
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=pools),
            "t.yaml": fleets.tier("training", "{select: {models: [H100]}}")
            + "---\n"
            + fleets.tier("small", "{select: {models: [L40S]}}"),
            "a.yaml": fleets.team("a", "[{tier: training, guaranteed: 1}]"),
            "b.yaml": fleets.team("b", "[{tier: small, guaranteed: 1}]"),
        }
    )
    cluster = Cluster.from_tree(compile_policies(root).tree, "c1")
    own = {"key": "example.com/h100", "operator": "Exists"}
    other = {"key": "example.com/l40s", "operator": "Exists"}
    assert cluster.admit(gpu_pod("a", [own])).outcome == "allowed"
    decision = cluster.admit(gpu_pod("a", [own, other]))
    assert decision.outcome == "denied"
    assert (
        "tolerates the GPU node taint example.com/l40s=yes:NoSchedule of nodes whose GPUs "
        "namespace a holds no quota for"
    ) in decision.message


def test_without_mutating_policies_teams_add_the_toleration_themselves(
    write_policies: PolicyWriter,
) -> None:
    files = {
        "c.yaml": fleets.cluster(version="1.34"),
        "t.yaml": fleets.tier("training", "{select: {models: [H100]}}"),
        "team.yaml": fleets.team("a", "[{tier: training, guaranteed: 1}]"),
    }
    compiled = compile_policies(write_policies(files))
    assert not any("gpu-node-toleration" in path for path in compiled.tree)
    assert "clusters/c1/_cluster/validatingadmissionpolicy_gpufleet-gpu-nodes.yaml" in compiled.tree
    [warning] = [w for w in compiled.warnings if w.code == "GF603"]
    assert warning.message.startswith(
        "the GPU node toleration of the pods that claim devices in cluster c1 needs "
        "MutatingAdmissionPolicy objects"
    )
    assert "they must carry it themselves" in warning.message
    files["c.yaml"] = fleets.cluster(
        version="1.34",
        api_server="{featureGates: {MutatingAdmissionPolicy: true},"
        " runtimeConfig: {admissionregistration.k8s.io/v1beta1: true}}",
    )
    compiled = compile_policies(write_policies(files))
    assert not [w for w in compiled.warnings if w.code == "GF603"]
    policy = load(
        compiled, "clusters/c1/_cluster/mutatingadmissionpolicy_gpufleet-gpu-node-toleration.yaml"
    )
    assert policy["apiVersion"] == "admissionregistration.k8s.io/v1beta1"
    validate_object(policy, "1.34")


def test_a_fleet_without_node_taints_gets_no_gpu_node_policies(
    write_policies: PolicyWriter,
) -> None:
    pools = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       nodeTaint: null}
"""
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=pools),
            "t.yaml": fleets.tier("training", "{select: {models: [H100]}}"),
            "team.yaml": fleets.team("a", "[{tier: training, guaranteed: 1}]"),
        }
    )
    compiled = compile_policies(root)
    assert not any("gpu-node" in path or "node-config/kubelet" in path for path in compiled.tree)


def test_a_pod_asking_for_a_dra_extended_resource_claims_devices(
    write_policies: PolicyWriter,
) -> None:
    """The scheduler makes the claim of a pod asking for a tier's extended resource: the pod
    has no `spec.resourceClaims`, yet runs on the tier's GPU nodes."""
    root = write_policies(
        {
            "c.yaml": fleets.cluster(),
            "t.yaml": fleets.tier(
                "training", "{select: {models: [H100]}, extendedResourceName: example.com/h100}"
            ),
            "team.yaml": fleets.team("a", "[{tier: training, guaranteed: 1}]"),
        }
    )
    compiled = compile_policies(root)
    cluster = Cluster.from_tree(compiled.tree, "c1")
    asks = pod("a", [container(limits={"example.com/h100": "1"})])
    asks.object["spec"]["tolerations"] = [TOLERATION]
    decisions = cluster.decide(asks)
    assert decisions and all(d.outcome == "allowed" for d in decisions), decisions
    policy = load(
        compiled, "clusters/c1/_cluster/mutatingadmissionpolicy_gpufleet-gpu-node-toleration.yaml"
    )
    [condition] = policy["spec"]["matchConditions"]
    assert '"example.com/h100"' in condition["expression"]
    assert cluster.admit(gpu_pod("a", [TOLERATION], claims=False)).outcome == "denied"


def test_a_kueue_flavor_names_at_most_eight_node_taints(write_policies: PolicyWriter) -> None:
    pools = "".join(
        f"\n    - {{name: p{i}, nodes: 1, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, "
        f"cpu: 224, nodeTaint: {{key: example.com/p{i}}}}}"
        for i in range(9)
    )
    files = {
        "c.yaml": fleets.cluster(pools=pools + "\n") + "  kueue: {enabled: true}\n",
        "t.yaml": fleets.tier("training", "{select: {models: [H100]}}"),
        "team.yaml": fleets.team("a", "[{tier: training, guaranteed: 1}]"),
    }
    with pytest.raises(CompileError) as caught:
        compile_policies(write_policies(files))
    [problem] = [d for d in caught.value.diagnostics if d.code == "GF227"]
    assert "9 different node taints" in problem.message and "at most 8" in problem.message

"""Sharing made honest: the driver gate a sharing strategy needs, and claims pods really share.

A claim made from a ResourceClaimTemplate belongs to one pod, so a shared tier's templates
share a GPU only between the containers of one pod; pods share devices by naming one
ResourceClaim, which a team declares in its own file (`sharedClaims`).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from compiler.diagnostics import CompileError, Diagnostic
from compiler.pipeline import Compiled, compile_policies
from compiler.validate import validate_object
from tests import fleets
from tests.admission_harness import Cluster
from tests.admission_requests import claim, container, exactly, pod
from tests.conftest import PolicyWriter

SHARED = "{select: {models: [H100]}, sharing: TimeSlicing, timeSliceInterval: Long}"
CLAIM = "clusters/c1/a/resourceclaim_{name}.yaml"


def fleet(
    tier: str = SHARED,
    shared: str = "[{name: notebooks, tier: training, devices: 2}]",
    version: str = "1.36",
    cluster_extra: str = "  driverFeatureGates: {TimeSlicingSettings: true, MPSSupport: true}\n",
    quota: str = "[{tier: training, guaranteed: 4, limit: 6}]",
) -> dict[str, str]:
    return {
        "c.yaml": fleets.cluster(version=version) + cluster_extra,
        "t.yaml": fleets.tier("training", tier),
        "team.yaml": fleets.team("a", quota, f"  sharedClaims: {shared}\n"),
    }


def errors(write_policies: PolicyWriter, files: dict[str, str], code: str) -> list[Diagnostic]:
    with pytest.raises(CompileError) as caught:
        compile_policies(write_policies(files))
    return [d for d in caught.value.diagnostics if d.code == code]


def load(compiled: Compiled, path: str) -> Any:
    return yaml.safe_load(compiled.tree[path])


# -- the driver gate ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tier", "gate"),
    [
        (SHARED, "TimeSlicingSettings"),
        ("{select: {models: [H100]}, sharing: MPS}", "MPSSupport"),
        (
            "{select: {models: [H100]}, partition: 3g.40gb, sharing: TimeSlicing}",
            "TimeSlicingSettings",
        ),
    ],
    ids=["time-slicing", "mps", "mig-time-slicing"],
)
def test_sharing_without_the_drivers_gate_is_warned_with_the_gate(
    tier: str, gate: str, write_policies: PolicyWriter
) -> None:
    pools = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       mig: allowed}
"""
    files = {
        "c.yaml": fleets.cluster(pools=pools),
        "t.yaml": fleets.tier("training", tier),
        "team.yaml": fleets.team("a", "[{tier: training, guaranteed: 4}]"),
    }
    compiled = compile_policies(write_policies(files))
    [warning] = [w for w in compiled.warnings if w.code == "GF608"]
    assert warning.message.startswith("tier 'training' shares devices by ")
    assert f"which the NVIDIA DRA driver does only with its feature gate {gate}" in warning.message
    assert f"`driverFeatureGates: {{{gate}: true}}`" in warning.hints[0]
    assert warning.span is not None and warning.span.file.endswith("t.yaml")
    # declared on: no warning
    files["c.yaml"] = fleets.cluster(pools=pools) + f"  driverFeatureGates: {{{gate}: true}}\n"
    compiled = compile_policies(write_policies(files))
    assert not [w for w in compiled.warnings if w.code == "GF608"]


def test_exclusive_or_unused_tiers_need_no_gate(write_policies: PolicyWriter) -> None:
    files = {
        "c.yaml": fleets.cluster(),
        "t.yaml": fleets.tier("training", "{select: {models: [H100]}}")
        + "---\n"
        + fleets.tier("spare", SHARED),
        "team.yaml": fleets.team("a", "[{tier: training, guaranteed: 4}]"),
    }
    compiled = compile_policies(write_policies(files))
    assert not [w for w in compiled.warnings if w.code == "GF608"]


# -- shared claims --------------------------------------------------------------------------


def test_a_shared_claim_is_one_resource_claim_with_the_tiers_sharing(
    write_policies: PolicyWriter,
) -> None:
    compiled = compile_policies(write_policies(fleet()))
    obj = load(compiled, CLAIM.format(name="notebooks"))
    assert obj["apiVersion"] == "resource.k8s.io/v1" and obj["kind"] == "ResourceClaim"
    assert obj["metadata"]["namespace"] == "a"
    assert obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "1"
    assert obj["spec"] == {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "exactly": {
                        "deviceClassName": "training",
                        "allocationMode": "ExactCount",
                        "count": 2,
                    },
                }
            ],
            "config": [
                {
                    "requests": ["gpu"],
                    "opaque": {
                        "driver": "gpu.nvidia.com",
                        "parameters": {
                            "apiVersion": "resource.nvidia.com/v1beta1",
                            "kind": "GpuConfig",
                            "sharing": {
                                "strategy": "TimeSlicing",
                                "timeSlicingConfig": {"interval": "Long"},
                            },
                        },
                    },
                }
            ],
        }
    }
    validate_object(obj, "1.36")
    # pods of the tier's template still get a claim each: it stays a template
    template = load(compiled, "clusters/c1/a/resourceclaimtemplate_training.yaml")
    assert template["kind"] == "ResourceClaimTemplate"
    kustomization = load(compiled, "clusters/c1/kustomization.yaml")
    assert "a/resourceclaim_notebooks.yaml" in kustomization["resources"]


def test_on_1_32_the_shared_claim_has_flat_requests(write_policies: PolicyWriter) -> None:
    compiled = compile_policies(write_policies(fleet(version="1.32")))
    obj = load(compiled, CLAIM.format(name="notebooks"))
    assert obj["apiVersion"] == "resource.k8s.io/v1beta1"
    assert obj["spec"]["devices"]["requests"] == [
        {"name": "gpu", "deviceClassName": "training", "allocationMode": "ExactCount", "count": 2}
    ]


def test_the_guardrails_admit_the_shared_claim_and_the_pods_that_name_it(
    write_policies: PolicyWriter,
) -> None:
    compiled = compile_policies(write_policies(fleet()))
    cluster = Cluster.from_tree(compiled.tree, "c1")
    obj = load(compiled, CLAIM.format(name="notebooks"))
    request = claim("a", *obj["spec"]["devices"]["requests"], name="notebooks")
    decisions = cluster.decide(request)
    assert {d.policy for d in decisions} >= {"gpufleet-tier-entitlement"}
    assert all(d.outcome == "allowed" for d in decisions), decisions
    # it counts against the namespace's device quota like any claim of the tier
    quota = load(compiled, "clusters/c1/a/resourcequota_gpufleet-devices.yaml")
    assert quota["spec"]["hard"]["training.deviceclass.resource.k8s.io/devices"] == "6"
    # a pod naming it claims devices: it may tolerate the GPU nodes' taint
    named = pod("a", [container()])
    named.object["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "notebooks"}]
    named.object["spec"]["tolerations"] = [
        {"key": "gpufleet.dev/gpu", "operator": "Equal", "value": "present"}
    ]
    assert all(d.outcome == "allowed" for d in cluster.decide(named))
    # and another tier in the same shape is still refused
    assert cluster.admit(claim("a", exactly("other"), name="x")).outcome == "denied"


def test_a_shared_claim_of_an_exclusive_tier_is_refused(write_policies: PolicyWriter) -> None:
    [problem] = errors(write_policies, fleet(tier="{select: {models: [H100]}}"), "GF241")
    assert problem.message == (
        "team 'a': shared claim 'notebooks' asks for tier 'training', whose devices are not "
        "shared (sharing: Exclusive): every pod naming the claim would get the same GPUs with "
        "no sharing configured"
    )


@pytest.mark.parametrize(
    ("shared", "fragment"),
    [
        (
            "[{name: big, tier: training, devices: 4}, {name: more, tier: training, devices: 3}]",
            "hold 7 devices in cluster c1, beyond the namespace's limit of 6",
        ),
        ("[{name: x, tier: other}]", "which namespace 'a' holds no quota for in any cluster"),
        ("[{name: x, tier: training, namespace: b}]", "namespace 'b' is not the team's"),
        (
            "[{name: x, tier: training, clusters: [c9]}]",
            "lists cluster 'c9', which the team is not in",
        ),
    ],
    ids=["beyond-limit", "tier-not-held", "namespace", "cluster"],
)
def test_a_shared_claim_beyond_the_namespaces_quota_is_refused(
    shared: str, fragment: str, write_policies: PolicyWriter
) -> None:
    files = fleet(shared=shared)
    files["t.yaml"] += "---\n" + fleets.tier("other", SHARED)
    problems = errors(write_policies, files, "GF240")
    assert problems and any(fragment in p.message for p in problems), problems


def test_a_shared_claim_in_a_kueue_cluster_is_refused(write_policies: PolicyWriter) -> None:
    files = fleet(
        cluster_extra="  driverFeatureGates: {TimeSlicingSettings: true}\n"
        "  kueue: {enabled: true}\n"
    )
    [problem] = errors(write_policies, files, "GF242")
    assert "which runs Kueue" in problem.message
    assert "holds every job whose pods name a ResourceClaim as inadmissible" in problem.message


def test_two_shared_claims_of_a_namespace_need_two_names(write_policies: PolicyWriter) -> None:
    shared = "[{name: nb, tier: training}, {name: nb, tier: training}]"
    [problem] = errors(write_policies, fleet(shared=shared), "GF243")
    assert problem.message == "team 'a': two shared claims are named 'nb' in namespace 'a'"
    assert problem.related and problem.related[0][0] == "the other"

"""Gang Workloads (scheduling.k8s.io): emitted per team namespace and gang tier where a
cluster opts in (`gangScheduling: Workload`) and serves the Workload API, in the version's
own shape; left out with GF603 where the API is off, refused with GF220 before 1.35."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from compiler.diagnostics import CompileError
from compiler.emit.waves import WAVES
from compiler.pipeline import Compiled, compile_policies
from compiler.validate import validate_builtin, validate_object
from compiler.versions import target
from tests import fleets
from tests.conftest import PolicyWriter

WORKLOAD_API_ON = {
    "1.35": "{featureGates: {GenericWorkload: true, GangScheduling: true},"
    " runtimeConfig: {scheduling.k8s.io/v1alpha1: true}}",
    "1.36": "{featureGates: {GenericWorkload: true, GangScheduling: true},"
    " runtimeConfig: {scheduling.k8s.io/v1alpha2: true}}",
    "1.37": "{featureGates: {GenericWorkload: true},"
    " runtimeConfig: {scheduling.k8s.io/v1beta1: true}}",
}
"""The `apiServer` of a control plane serving the Workload API, per version."""
GANG_PATH = "clusters/c1/a/workload_h100-x4.yaml"


def gang_fleet(
    write_policies: PolicyWriter, version: str, api_server: str | None, opt_in: bool = True
) -> Path:
    cluster = fleets.cluster(version=version, api_server=api_server)
    return write_policies(
        {
            "c.yaml": cluster + ("  gangScheduling: Workload\n" if opt_in else ""),
            "t.yaml": fleets.tier("h100", "{select: {models: [H100]}}"),
            "a.yaml": fleets.team("a", "[{tier: h100, guaranteed: 8, gang: 4}]"),
            "b.yaml": fleets.team("b", "[{tier: h100, guaranteed: 2}]"),
        }
    )


def workloads(compiled: Compiled) -> dict[str, dict[str, Any]]:
    return {
        path: yaml.safe_load(text)
        for path, text in compiled.tree.items()
        if path.rsplit("/", 1)[-1].startswith("workload_")
    }


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_a_gang_gets_a_workload_in_its_version_shape(
    version: str, write_policies: PolicyWriter
) -> None:
    """One Workload per gang guarantee, named like its claim template, in the team's
    namespace: a pod group `gang` of `gang` pods scheduled all or nothing. Teams without a
    gang get none. Valid for the version's schema, and for no version that lacks its API."""
    compiled = compile_policies(gang_fleet(write_policies, version, WORKLOAD_API_ON[version]))
    found = workloads(compiled)
    assert list(found) == [GANG_PATH]
    workload = found[GANG_PATH]
    assert workload["apiVersion"] == target(version).workload_api
    assert workload["metadata"]["namespace"] == "a"
    annotations = workload["metadata"]["annotations"]
    assert annotations["argocd.argoproj.io/sync-wave"] == str(WAVES["Workload"])
    assert annotations["gpufleet.dev/pod-group-link"] == target(version).pod_group_link
    if version == "1.35":
        assert workload["spec"] == {
            "podGroups": [{"name": "gang", "policy": {"gang": {"minCount": 4}}}]
        }
    else:
        assert workload["spec"] == {
            "podGroupTemplates": [{"name": "gang", "schedulingPolicy": {"gang": {"minCount": 4}}}]
        }
    validate_object(workload, version)
    for other in ("1.34", "1.35", "1.36", "1.37"):
        if other != version:
            with pytest.raises(
                (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.ValidationError)
            ):
                validate_builtin(workload, other)
    assert "a/workload_h100-x4.yaml" in compiled.tree["clusters/c1/kustomization.yaml"]
    assert not [w for w in compiled.warnings if "gang Workloads" in w.message]


def test_without_the_switch_no_workload_is_emitted(write_policies: PolicyWriter) -> None:
    compiled = compile_policies(
        gang_fleet(write_policies, "1.37", WORKLOAD_API_ON["1.37"], opt_in=False)
    )
    assert workloads(compiled) == {}


def test_an_undeclared_workload_api_leaves_the_workloads_out(write_policies: PolicyWriter) -> None:
    """On a stock 1.37 the Workload API is beta and off: one Workload would fail the whole
    sync, so they are left out with GF603 naming the gate and the runtime config."""
    compiled = compile_policies(gang_fleet(write_policies, "1.37", None))
    assert workloads(compiled) == {}
    (warning,) = [w for w in compiled.warnings if w.code == "GF603"]
    assert warning.span is not None and warning.span.line == 8  # gangScheduling: Workload
    assert "gang Workloads" in warning.message
    hint = " ".join(warning.hints)
    assert "GenericWorkload=true" in hint and "scheduling.k8s.io/v1beta1=true" in hint
    assert "GangScheduling" not in hint  # gone in 1.37: naming it stops kube-apiserver


def test_gang_workloads_before_1_35_are_an_error(write_policies: PolicyWriter) -> None:
    with pytest.raises(CompileError) as caught:
        compile_policies(gang_fleet(write_policies, "1.34", None))
    (error,) = [d for d in caught.value.diagnostics if d.code == "GF220"]
    assert "exists from 1.35" in error.message

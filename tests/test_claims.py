"""Claim templates: fallbacks, sharing configuration, extended resources, and the resolve
checks that guard them."""

from __future__ import annotations

import pytest
import yaml

from compiler.diagnostics import CompileError, Severity
from compiler.pipeline import Compiled, compile_policies
from compiler.validate import validate_object
from tests import fleets
from tests.conftest import PolicyWriter

POOLS = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       mig: allowed}
    - {name: h200, nodes: 1, gpu: H200, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}
    - {name: l40s, nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""


def devices(compiled: Compiled, path: str) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(compiled.tree[path])["spec"]["spec"]["devices"]


def errors(write_policies: PolicyWriter, files: dict[str, str]) -> list[tuple[str, str]]:
    with pytest.raises(CompileError) as caught:
        compile_policies(write_policies({"c.yaml": fleets.cluster(pools=POOLS), **files}))
    return [
        (d.code, d.message)
        for d in caught.value.diagnostics
        if d.code.startswith("GF2") and d.severity is Severity.ERROR
    ]


def test_fallbacks_become_first_available_alternatives(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "t.yaml": fleets.tier("h200", "{select: {models: [H200]}, fallbacks: [h100]}")
            + "---\n"
            + fleets.tier("h100", "{select: {models: [H100-80GB]}}"),
            "team.yaml": fleets.team(
                "a", "[{tier: h200, guaranteed: 2, gang: 2}, {tier: h100, guaranteed: 0, limit: 4}]"
            ),
            "b.yaml": fleets.team("b", "[{tier: h200, guaranteed: 1}]"),
        }
    )
    compiled = compile_policies(root)
    gang = devices(compiled, "clusters/c1/a/resourceclaimtemplate_h200-x2.yaml")
    assert gang["requests"] == [
        {
            "name": "gpu",
            "firstAvailable": [
                {
                    "name": "h200",
                    "deviceClassName": "h200",
                    "allocationMode": "ExactCount",
                    "count": 2,
                },
                {
                    "name": "h100",
                    "deviceClassName": "h100",
                    "allocationMode": "ExactCount",
                    "count": 2,
                },
            ],
        }
    ]
    # team b holds no h100 quota: a claim charged against h100 would be refused, so no fallback
    plain = devices(compiled, "clusters/c1/b/resourceclaimtemplate_h200.yaml")
    assert "exactly" in plain["requests"][0]
    [warning] = [w for w in compiled.warnings if w.code == "GF601"]
    assert "team 'b'" in warning.message and "'h100'" in warning.message
    for path, text in compiled.tree.items():
        if "resourceclaimtemplate" in path:
            validate_object(yaml.safe_load(text), "1.36")


def test_a_kueue_cluster_offers_no_alternatives(write_policies: PolicyWriter) -> None:
    """Kueue admits no workload whose claim has `firstAvailable`: in a Kueue cluster the
    templates ask for their own tier, and the fallback tier keeps its own template."""
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS) + "  kueue: {enabled: true}\n",
            "t.yaml": fleets.tier("h200", "{select: {models: [H200]}, fallbacks: [h100]}")
            + "---\n"
            + fleets.tier("h100", "{select: {models: [H100-80GB]}}"),
            "team.yaml": fleets.team(
                "a", "[{tier: h200, guaranteed: 2, gang: 2}, {tier: h100, guaranteed: 0, limit: 4}]"
            ),
        }
    )
    compiled = compile_policies(root)
    for name, tier in (("h200-x2", "h200"), ("h200", "h200"), ("h100", "h100")):
        (request,) = devices(compiled, f"clusters/c1/a/resourceclaimtemplate_{name}.yaml")[
            "requests"
        ]
        assert request["exactly"]["deviceClassName"] == tier
    [warning] = [w for w in compiled.warnings if w.code == "GF602"]
    assert "without the fallbacks (h100)" in warning.message
    assert not [w for w in compiled.warnings if w.code == "GF600"]  # no prioritized list used


def test_shared_tiers_carry_the_nvidia_sharing_config(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            "t.yaml": fleets.tier(
                "nb", "{select: {models: [L40S]}, sharing: TimeSlicing, timeSliceInterval: Medium}"
            )
            + "---\n"
            + fleets.tier(
                "mps", "{select: {models: [H100-80GB]}, partition: 1g.10gb, sharing: MPS}"
            ),
            "team.yaml": fleets.team(
                "a", "[{tier: nb, guaranteed: 1}, {tier: mps, guaranteed: 2}]"
            ),
        }
    )
    compiled = compile_policies(root)
    [config] = devices(compiled, "clusters/c1/a/resourceclaimtemplate_nb.yaml")["config"]
    assert config == {
        "requests": ["gpu"],
        "opaque": {
            "driver": "gpu.nvidia.com",
            "parameters": {
                "apiVersion": "resource.nvidia.com/v1beta1",
                "kind": "GpuConfig",
                "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Medium"}},
            },
        },
    }
    [mig] = devices(compiled, "clusters/c1/a/resourceclaimtemplate_mps.yaml")["config"]
    assert mig["opaque"]["parameters"]["kind"] == "MigDeviceConfig"
    assert mig["opaque"]["parameters"]["sharing"] == {"strategy": "MPS"}


def test_extended_resource_name_and_its_quota_keys(write_policies: PolicyWriter) -> None:
    """A tier takes `nvidia.com/gpu` over where the driver's classes map nothing (GF230)."""
    root = write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS) + "  driverExtendedResources: []\n",
            "t.yaml": fleets.tier(
                "legacy", "{select: {models: [L40S]}, extendedResourceName: nvidia.com/gpu}"
            ),
            "team.yaml": fleets.team("a", "[{tier: legacy, guaranteed: 2, limit: 3}]"),
        }
    )
    compiled = compile_policies(root)
    device_class = yaml.safe_load(compiled.tree["clusters/c1/_cluster/deviceclass_legacy.yaml"])
    assert device_class["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    hard = yaml.safe_load(compiled.tree["clusters/c1/a/resourcequota_gpufleet-devices.yaml"])[
        "spec"
    ]["hard"]
    assert hard["requests.nvidia.com/gpu"] == "3"  # the tier took the legacy name over
    assert hard["requests.deviceclass.resource.kubernetes.io/legacy"] == "3"
    assert hard["legacy.deviceclass.resource.k8s.io/devices"] == "3"


def test_fallback_checks(write_policies: PolicyWriter) -> None:
    found = errors(
        write_policies,
        {
            "t.yaml": fleets.tier(
                "h200", "{select: {models: [H200]}, fallbacks: [h200, nope, a100]}"
            )
            + "---\n"
            + fleets.tier("a100", "{select: {models: [A100]}}"),
            "team.yaml": fleets.team("a", "[{tier: h200, guaranteed: 1}]"),
        },
    )
    codes = sorted(code for code, _ in found)
    assert codes == ["GF221", "GF221", "GF222"]
    assert any("lists itself" in m for _, m in found)
    assert any("'a100', which selects no device" in m for _, m in found)


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        ("{select: {models: [L40S]}, timeSliceInterval: Long}", "GF223"),
        (
            "{select: {models: [H100-80GB]}, partition: 3g.40gb, sharing: TimeSlicing, "
            "timeSliceInterval: Long}",
            "GF223",
        ),
        ('{select: {cel: "device.driver == \\"gpu.nvidia.com\\""}, sharing: MPS}', "GF224"),
    ],
)
def test_sharing_checks(spec: str, code: str, write_policies: PolicyWriter) -> None:
    found = errors(
        write_policies,
        {
            "t.yaml": fleets.tier("x", spec),
            "team.yaml": fleets.team("a", "[{tier: x, guaranteed: 1}]"),
        },
    )
    assert [c for c, _ in found] == [code]


def test_two_tiers_may_not_map_one_extended_resource(write_policies: PolicyWriter) -> None:
    found = errors(
        write_policies,
        {
            "t.yaml": fleets.tier(
                "a", "{select: {models: [L40S]}, extendedResourceName: example.com/gpu}"
            )
            + "---\n"
            + fleets.tier("b", "{select: {models: [H200]}, extendedResourceName: example.com/gpu}"),
            "team.yaml": fleets.team("a", "[{tier: a, guaranteed: 1}, {tier: b, guaranteed: 1}]"),
        },
    )
    assert [c for c, _ in found] == ["GF225"]

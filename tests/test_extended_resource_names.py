"""A tier's extendedResourceName may not be a name the driver's own DeviceClasses map: the
NVIDIA chart's `gpu.nvidia.com` class maps `nvidia.com/gpu` (resource.k8s.io/v1, since chart
v25.12.0), and two classes mapping one name leave the scheduler picking the newer one. A
cluster whose driver install maps nothing says so (`driverExtendedResources: []`); then the
tier may take the name, and guardrails and quotas follow it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compiler.diagnostics import CompileError
from compiler.pipeline import Compiled, compile_policies
from tests import fleets
from tests.conftest import PolicyWriter

POOLS = "\n    - {name: l40s, nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}\n"


def fleet(
    write_policies: PolicyWriter, name: str, cluster_extra: str = "", version: str = "1.37"
) -> Path:
    return write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS, version=version) + cluster_extra,
            "t.yaml": fleets.tier(
                "legacy", f"{{select: {{models: [L40S]}}, extendedResourceName: {name}}}"
            ),
            "team.yaml": fleets.team("a", "[{tier: legacy, guaranteed: 2, limit: 3}]"),
        }
    )


def test_the_nvidia_charts_name_is_refused(write_policies: PolicyWriter) -> None:
    with pytest.raises(CompileError) as caught:
        compile_policies(fleet(write_policies, "nvidia.com/gpu"))
    (error,) = [d for d in caught.value.diagnostics if d.code == "GF230"]
    assert "'nvidia.com/gpu'" in error.message and "gpu.nvidia.com" in error.message
    assert error.span is not None and error.span.file.endswith("t.yaml")
    hints = " ".join(error.hints)
    assert "example.com/legacy" in hints and "driverExtendedResources: []" in hints


def test_a_declared_driver_mapping_is_refused_too(write_policies: PolicyWriter) -> None:
    extra = "  driverExtendedResources: [example.com/gpu]\n"
    with pytest.raises(CompileError) as caught:
        compile_policies(fleet(write_policies, "example.com/gpu", extra))
    assert [d.code for d in caught.value.diagnostics if d.code == "GF230"] == ["GF230"]


def quota(compiled: Compiled) -> dict[str, str]:
    text = compiled.tree["clusters/c1/a/resourcequota_gpufleet-devices.yaml"]
    hard: dict[str, str] = yaml.safe_load(text)["spec"]["hard"]
    return hard


def test_a_free_name_compiles(write_policies: PolicyWriter) -> None:
    compiled = compile_policies(fleet(write_policies, "example.com/legacy"))
    device_class = yaml.safe_load(compiled.tree["clusters/c1/_cluster/deviceclass_legacy.yaml"])
    assert device_class["spec"]["extendedResourceName"] == "example.com/legacy"
    hard = quota(compiled)
    assert hard["requests.example.com/legacy"] == "3"
    assert hard["requests.nvidia.com/gpu"] == "0"  # still the device plugin's: refused


def test_a_cluster_whose_driver_maps_nothing_may_give_the_name_to_a_tier(
    write_policies: PolicyWriter,
) -> None:
    """The documented opt-in: the tier serves `nvidia.com/gpu`, the quota charges it at the
    tier's limit, and the device-plugin guardrail lets pods ask for it."""
    root = fleet(write_policies, "nvidia.com/gpu", "  driverExtendedResources: []\n")
    compiled = compile_policies(root)
    assert quota(compiled)["requests.nvidia.com/gpu"] == "3"
    policy = compiled.tree["clusters/c1/_cluster/validatingadmissionpolicy_gpufleet-dra-only.yaml"]
    assert '"nvidia.com/gpu"' in policy  # among the names served through DRA


def test_other_drivers_map_nothing_by_default(write_policies: PolicyWriter) -> None:
    root = fleet(write_policies, "nvidia.com/gpu", "  driver: gpu.example.com\n")
    assert quota(compile_policies(root))["requests.nvidia.com/gpu"] == "3"

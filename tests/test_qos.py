"""Memory QoS: host quota arithmetic, LimitRange defaults, kubelet drop-ins, and the checks on
the throttling factor and reservations."""

from __future__ import annotations

import pytest
import yaml

from compiler.diagnostics import CompileError
from compiler.pipeline import Compiled, compile_policies
from compiler.quantity import parse_quantity
from tests import fleets
from tests.conftest import PolicyWriter

GIB = 2**30
GPU_NODE_TAINT = {"key": "gpufleet.dev/gpu", "value": "present", "effect": "NoSchedule"}
KUBELET_DEFAULT_SIGNALS = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
"""k8s.io/kubernetes pkg/kubelet/eviction/defaults_linux.go `DefaultEvictionHard` (1.32-1.37)."""


def load(compiled: Compiled, path: str) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(compiled.tree[path])


def test_host_quota_is_the_limit_times_the_tier_shares(compiled_example: Compiled) -> None:
    hard = load(compiled_example, "clusters/prod-east/ml-research/resourcequota_gpufleet-host.yaml")
    hard = hard["spec"]["hard"]
    # ml-research may hold 96 training devices: 24 CPUs and 200Gi each; Guaranteed QoS
    assert parse_quantity(hard["requests.cpu"]) == 96 * 24
    assert parse_quantity(hard["requests.memory"]) == 96 * 200 * GIB
    assert hard["limits.memory"] == hard["requests.memory"]
    serving = load(
        compiled_example, "clusters/prod-east/llm-serving/resourcequota_gpufleet-host.yaml"
    )
    assert parse_quantity(serving["spec"]["hard"]["requests.memory"]) == 64 * 64 * GIB


def test_burstable_team_may_burst_to_the_node_share(compiled_example: Compiled) -> None:
    hard = load(
        compiled_example, "clusters/prod-west/data-science/resourcequota_gpufleet-host.yaml"
    )
    hard = hard["spec"]["hard"]
    assert parse_quantity(hard["requests.memory"]) == 24 * 96 * GIB
    # an L40S node of prod-west: 512Gi less the kubelet's default 100Mi eviction threshold,
    # 4 GPUs, rounded down to whole MiB
    per_gpu = (512 * GIB - 100 * 2**20) // 4 // 2**20 * 2**20
    assert parse_quantity(hard["limits.memory"]) == 24 * per_gpu
    limits = load(
        compiled_example, "clusters/prod-west/data-science/limitrange_gpufleet-defaults.yaml"
    )
    item = limits["spec"]["limits"][0]
    assert item["defaultRequest"] == {"cpu": "12", "memory": "96Gi"}
    assert parse_quantity(item["default"]["memory"]) == per_gpu
    assert "cpu" not in item["default"] and "maxLimitRequestRatio" not in item


def test_guaranteed_team_defaults_limits_to_requests(compiled_example: Compiled) -> None:
    limits = load(
        compiled_example, "clusters/prod-east/ml-research/limitrange_gpufleet-defaults.yaml"
    )
    item = limits["spec"]["limits"][0]
    assert item["default"] == item["defaultRequest"] == {"cpu": "24", "memory": "200Gi"}
    assert item["maxLimitRequestRatio"] == {"memory": "1"}


def test_kubelet_dropin_per_pool_with_tiered_reservation_on_136(compiled_example: Compiled) -> None:
    pools = ("h100", "h200", "l40s")
    for pool in pools:
        text = compiled_example.tree[
            f"clusters/prod-east/node-config/kubelet/{pool}/50-gpufleet.conf"
        ]
        config = yaml.safe_load(text)
        assert config == {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "featureGates": {"MemoryQoS": True},
            "memoryThrottlingFactor": 0.8,
            "memoryReservationPolicy": "TieredReservation",
            "systemReserved": {"cpu": "4", "memory": "16Gi"},
            "kubeReserved": {"cpu": "2", "memory": "8Gi"},
            "evictionHard": {**KUBELET_DEFAULT_SIGNALS, "memory.available": "1Gi"},
            "registerWithTaints": [GPU_NODE_TAINT],
        }
    # prod-west sets no kubelet options: its drop-ins only taint the GPU nodes
    for pool in ("a100", "b200", "l40s"):
        text = compiled_example.tree[
            f"clusters/prod-west/node-config/kubelet/{pool}/50-gpufleet.conf"
        ]
        assert yaml.safe_load(text) == {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "registerWithTaints": [GPU_NODE_TAINT],
        }


def kubelet_cluster(version: str, kubelet: str) -> str:
    return fleets.cluster(version=version) + f"  kubelet: {kubelet}\n"


def test_memory_reservation_policy_only_where_the_kubelet_knows_it(
    write_policies: PolicyWriter,
) -> None:
    root = write_policies(
        {
            "c.yaml": kubelet_cluster("1.35", "{memoryQoS: true}"),
            "t.yaml": fleets.tier("big", "{select: {models: [H100]}}"),
            "team.yaml": fleets.team("a", "[{tier: big, guaranteed: 1}]"),
        }
    )
    config = yaml.safe_load(
        compile_policies(root).tree["clusters/c1/node-config/kubelet/h100/50-gpufleet.conf"]
    )
    assert "memoryReservationPolicy" not in config
    assert config["memoryThrottlingFactor"] == 0.9


@pytest.mark.parametrize("factor", ["0", "-0.5", "1.5"])
def test_throttling_factor_outside_zero_one_is_rejected(
    factor: str, write_policies: PolicyWriter
) -> None:
    root = write_policies(
        {
            "c.yaml": kubelet_cluster(
                "1.36", f"{{memoryQoS: true, memoryThrottlingFactor: {factor}}}"
            )
        }
    )
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    [problem] = caught.value.diagnostics
    assert problem.code == "GF107" and "memoryThrottlingFactor" in problem.message
    assert problem.span is not None and problem.span.line == 8


def test_reserved_memory_larger_than_the_node_is_rejected(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "c.yaml": kubelet_cluster(
                "1.36", "{systemReserved: {memory: 1Ti}, kubeReserved: {memory: 1Ti}}"
            ),
            "t.yaml": fleets.tier("big", "{select: {models: [H100]}}"),
            "team.yaml": fleets.team("a", "[{tier: big, guaranteed: 1}]"),
        }
    )
    with pytest.raises(CompileError) as caught:
        compile_policies(root)
    codes = [(d.code, d.message) for d in caught.value.diagnostics if d.code == "GF226"]
    assert len(codes) == 1 and "pool 'h100'" in codes[0][1] and "2Ti" in codes[0][1]


@pytest.mark.parametrize("version", ["1.32", "1.33", "1.36"])
def test_a_dropin_that_sets_eviction_keeps_the_default_signals(
    version: str, write_policies: PolicyWriter
) -> None:
    """A drop-in's `evictionHard` with only memory.available would leave a kubelet without a
    --config file (or one whose config lists fewer signals) with no disk-pressure eviction at
    all; `mergeDefaultEvictionSettings` does not help there: the kubelet reads it only from its
    --config file, never from a drop-in. So the drop-in lists every default signal."""
    root = write_policies(
        {
            "c.yaml": kubelet_cluster(version, "{evictionHardMemory: 1Gi}"),
            "t.yaml": fleets.tier("big", "{select: {models: [H100]}}"),
            "team.yaml": fleets.team("a", "[{tier: big, guaranteed: 1}]"),
        }
    )
    config = yaml.safe_load(
        compile_policies(root).tree["clusters/c1/node-config/kubelet/h100/50-gpufleet.conf"]
    )
    assert config["evictionHard"] == {**KUBELET_DEFAULT_SIGNALS, "memory.available": "1Gi"}
    assert "mergeDefaultEvictionSettings" not in config

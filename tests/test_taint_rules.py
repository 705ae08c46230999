"""DeviceTaintRules from the resolved taints, and tolerations in the claims of tolerant teams."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compiler.catalog.driver import mig_device_name
from compiler.emit.devicetaintrule import device_names
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.pipeline import Compiled, compile_policies
from compiler.validate import validate_object
from tests import fleets
from tests.conftest import PolicyWriter
from tests.oracle_policy import read_cluster

POOLS = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       mig: allowed}
    - {name: l40s, nodes: 3, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}
"""


def taint(name: str, spec: str) -> str:
    return fleets.HEADER + f"kind: DeviceTaint\nmetadata: {{name: {name}}}\nspec: {spec}\n"


def rules(compiled: Compiled) -> dict[str, dict]:  # type: ignore[type-arg]
    return {
        path.rsplit("/", 1)[1]: yaml.safe_load(text)
        for path, text in compiled.tree.items()
        if "/devicetaintrule_" in path
    }


def write_with(
    write_policies: PolicyWriter, *taints: str, api_server: str | None = fleets.TAINT_RULES_ON_1_36
) -> Path:
    return write_policies(
        {
            "c.yaml": fleets.cluster(pools=POOLS, api_server=api_server),
            "t.yaml": fleets.tier("any", "{select: {models: [H100, L40S]}}"),
            "a.yaml": fleets.team(
                "a",
                "[{tier: any, guaranteed: 1}]",
                "  tolerations: [{key: example.com/maint, operator: Exists}]\n",
            ),
            "b.yaml": fleets.team("b", "[{tier: any, guaranteed: 0, limit: 1}]"),
            **{f"taint{i}.yaml": text for i, text in enumerate(taints)},
        }
    )


def compile_with(
    write_policies: PolicyWriter, *taints: str, api_server: str | None = fleets.TAINT_RULES_ON_1_36
) -> Compiled:
    return compile_policies(write_with(write_policies, *taints, api_server=api_server))


def test_rules_are_emitted_only_where_the_cluster_serves_them(
    write_policies: PolicyWriter,
) -> None:
    """1.36 serves DeviceTaintRule only with a gate and runtime config: one object of an
    unserved kind fails the whole `kubectl apply -k` (and Argo CD sync)."""
    maint = taint("maint", "{cluster: c1, pool: l40s, key: example.com/maint}")
    undeclared = compile_with(write_policies, maint, api_server=None)
    assert rules(undeclared) == {}
    (warning,) = [w for w in undeclared.warnings if w.code == "GF603"]
    assert "not enforced" in warning.message
    assert "--feature-gates=DRADeviceTaintRules=true" in warning.hints[0]
    assert "--runtime-config=resource.k8s.io/v1beta2/devicetaintrules=true" in warning.hints[0]
    # the capacity model still counts the tainted devices out: same plan either way
    declared = compile_with(write_policies, maint)
    assert len(rules(declared)) == 3
    assert not [w for w in declared.warnings if w.code in ("GF600", "GF603")]
    assert undeclared.tree["plan/c1.json"] == declared.tree["plan/c1.json"]
    # declaring the whole group-version serves the kind too
    wide = fleets.TAINT_RULES_ON_1_36.replace("/devicetaintrules", "")
    assert len(rules(compile_with(write_policies, maint, api_server=wide))) == 3
    # a gate alone does not
    gate_only = "{featureGates: {DRADeviceTaintRules: true}}"
    assert rules(compile_with(write_policies, maint, api_server=gate_only)) == {}


def test_pool_taint_is_one_rule_per_node(write_policies: PolicyWriter) -> None:
    compiled = compile_with(
        write_policies, taint("maint", "{cluster: c1, pool: l40s, key: example.com/maint}")
    )
    found = rules(compiled)
    assert sorted(found) == [f"devicetaintrule_maint.c1-l40s-{i}.yaml" for i in range(3)]
    rule = found["devicetaintrule_maint.c1-l40s-1.yaml"]
    assert rule["apiVersion"] == "resource.k8s.io/v1beta2"
    assert rule["spec"] == {
        "deviceSelector": {"driver": "gpu.nvidia.com", "pool": "c1-l40s-1"},
        "taint": {"key": "example.com/maint", "effect": "NoSchedule"},
    }
    assert rule["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == (
        "SkipDryRunOnMissingResource=true"
    )
    for obj in found.values():
        validate_object(obj, "1.36")


def test_cluster_wide_taint_is_one_rule_on_the_driver(write_policies: PolicyWriter) -> None:
    compiled = compile_with(
        write_policies, taint("all", "{cluster: c1, key: example.com/maint, effect: NoExecute}")
    )
    [(name, rule)] = rules(compiled).items()
    assert name == "devicetaintrule_all.yaml"
    assert rule["spec"]["deviceSelector"] == {"driver": "gpu.nvidia.com"}


def test_device_taint_names_the_gpu_and_every_mig_device_it_can_carry(
    write_policies: PolicyWriter,
) -> None:
    compiled = compile_with(
        write_policies,
        taint("ecc", "{cluster: c1, pool: h100, node: 1, device: 5, key: example.com/ecc}"),
    )
    found = rules(compiled)
    devices = sorted(r["spec"]["deviceSelector"]["device"] for r in found.values())
    assert "gpu-5" in devices
    assert "gpu-5-mig-3g40gb-9-4" in devices  # 3g.40gb, GI profile 9, placement 4
    assert "gpu-5-mig-1g10gb-me-20-0" in devices  # media extensions: "+" becomes "-"
    assert all(r["spec"]["deviceSelector"]["pool"] == "c1-h100-1" for r in found.values())
    pool = compiled.fleet.clusters[0].pools[0]
    assert (
        len(devices)
        == len(device_names(pool, 5))
        == 1
        + sum(
            len(p.starts)
            for p in pool.model.mig.profiles  # type: ignore[union-attr]
        )
    )


def test_mig_device_name_matches_the_driver() -> None:
    assert mig_device_name(0, "1g.10gb", 19, 6) == "gpu-0-mig-1g10gb-19-6"
    assert mig_device_name(2, "7g.80gb", 0, 0) == "gpu-2-mig-7g80gb-0-0"


def test_only_tolerant_teams_get_tolerations(write_policies: PolicyWriter) -> None:
    compiled = compile_with(
        write_policies, taint("maint", "{cluster: c1, pool: l40s, key: example.com/maint}")
    )
    tolerant = yaml.safe_load(compiled.tree["clusters/c1/a/resourceclaimtemplate_any.yaml"])
    request = tolerant["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert request["tolerations"] == [{"key": "example.com/maint", "operator": "Exists"}]
    other = yaml.safe_load(compiled.tree["clusters/c1/b/resourceclaimtemplate_any.yaml"])
    assert "tolerations" not in other["spec"]["spec"]["devices"]["requests"][0]["exactly"]


def test_toleration_without_a_matching_taint_is_not_emitted(write_policies: PolicyWriter) -> None:
    compiled = compile_with(write_policies)
    template = yaml.safe_load(compiled.tree["clusters/c1/a/resourceclaimtemplate_any.yaml"])
    assert "tolerations" not in template["spec"]["spec"]["devices"]["requests"][0]["exactly"]


Tainted = set[tuple[str, int | None]]
"""(node name, GPU index or None for every GPU of the node)."""


def tainted_by_rules(compiled: Compiled, every_node: list[str]) -> Tainted:
    """What the emitted DeviceTaintRules taint, read from their selectors: a rule without a
    pool taints every node of the cluster."""
    tainted: Tainted = set()
    for rule in rules(compiled).values():
        selector = rule["spec"]["deviceSelector"]
        assert selector["driver"] == "gpu.nvidia.com"
        nodes = [selector["pool"]] if "pool" in selector else every_node
        device = selector.get("device")
        gpu = None if device is None else int(device.split("-")[1])  # gpu-<index>[-mig-...]
        tainted |= {(node, gpu) for node in nodes}
    return tainted


def tainted_as_the_oracle_reads(root: Path) -> tuple[Tainted, Tainted]:
    """The policy compiled to rules, and what the independent oracle (tests/oracle_policy.py)
    reads the policy's taints to cover: (by the rules, by the oracle)."""
    cluster = read_cluster(build_policies(load_policies(root)), "c1")
    every_node = [name for pool in cluster.pools for name in pool.names]
    by_oracle = {
        (pool.names[node], cover.gpu)
        for taint in cluster.taints
        for cover in taint.covers
        for pool in [cluster.pool(cover.pool)]
        for node in (range(pool.nodes) if cover.nodes is None else sorted(cover.nodes))
    }
    return tainted_by_rules(compile_policies(root), every_node), by_oracle


SELECTS_PRODUCT = '\'device.attributes["gpu.nvidia.com"].productName.contains("L40S")\''


@pytest.mark.parametrize(
    ("select", "pools"),
    [
        ("{models: [L40S]}", {"l40s"}),
        ("{minMemory: 79Gi}", {"h100"}),  # 80 GB H100s, not 48 GB L40Ss
        ("{architectures: [Hopper]}", {"h100"}),
        (f"{{cel: {SELECTS_PRODUCT}}}", {"l40s"}),
        ("{models: [H100, L40S]}", {"h100", "l40s"}),  # every pool: one rule on the driver
        ("{models: [A100]}", set()),  # no pool of the cluster: no rule
    ],
    ids=["models", "min-memory", "architecture", "cel", "every-pool", "no-pool"],
)
def test_a_taints_select_taints_exactly_the_devices_it_selects(
    write_policies: PolicyWriter, select: str, pools: set[str]
) -> None:
    """A DeviceTaint's `select` narrows it to the pools whose GPUs it selects (a DeviceTaintRule
    has no CEL selector since 1.35: the compiler evaluates it and names the nodes); the rules
    taint what the independent oracle reads the policy to taint, and those are the pools the
    policy's models say."""
    spec = f"{{cluster: c1, select: {select}, key: example.com/maint}}"
    by_rules, by_oracle = tainted_as_the_oracle_reads(write_with(write_policies, taint("s", spec)))
    assert by_rules == by_oracle
    assert {node.split("-")[1] for node, _ in by_rules} == pools  # node c1-<pool>-<index>
    assert all(gpu is None for _, gpu in by_rules)


def test_a_taints_select_narrows_a_device_taint_to_the_selected_pools(
    write_policies: PolicyWriter,
) -> None:
    spec = "{cluster: c1, device: 2, select: {models: [H100]}, key: example.com/ecc}"
    root = write_with(write_policies, taint("ecc", spec))
    by_rules, by_oracle = tainted_as_the_oracle_reads(root)
    assert by_rules == by_oracle == {("c1-h100-0", 2), ("c1-h100-1", 2)}
    found = rules(compile_policies(root))
    devices = {r["spec"]["deviceSelector"]["device"] for r in found.values()}
    assert "gpu-2" in devices and "gpu-2-mig-3g40gb-9-4" in devices  # the GPU and its MIG devices
    for obj in found.values():
        validate_object(obj, "1.36")

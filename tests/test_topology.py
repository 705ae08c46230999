"""Topology-true gangs (issue 16, finding 1): a gang matched on an attribute stays within one
group of it, the attribute must be one the cluster's driver release publishes, and a gang
bigger than every group it may use is refused with a gang-specific explanation."""

from __future__ import annotations

import pytest

from compiler.catalog import load_catalog
from compiler.catalog.driver import ATTRIBUTES, CURRENT_DRIVER, DRIVER_VERSIONS, published
from compiler.diagnostics import CompileError, Diagnostic
from compiler.ir import ClusterPlan, DeviceKey, GuaranteeKey, ResolvedFleet
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.model.build import Policies
from compiler.resolve import resolve
from compiler.solve import solve_fleet
from tests import fleets
from tests.conftest import PolicyWriter
from tests.oracle_policy import read_cluster
from tests.plan_checker import check_plan

HGX = "{name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}"
H200 = "{name: h200, nodes: 1, gpu: H200, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}"
ONE_MIXED_NODE = HGX.replace("nodes: 2", "nodes: 1")[:-1] + ", mig: mixed}"
L40S = "{name: l40s, nodes: 2, gpu: L40S, gpusPerNode: 4, hostMemory: 512Gi, cpu: 64}"
PCIE = "resource.kubernetes.io/pcieRoot"
NUMA = "resource.kubernetes.io/numaNode"


def resolved(
    write: PolicyWriter,
    pool: str,
    tier: str,
    teams: dict[str, str],
    driver: str | None = None,
) -> ResolvedFleet:
    root = write(
        {
            "cluster.yaml": fleets.cluster(pools=f"\n    - {pool}\n", driver_version=driver),
            "tier.yaml": fleets.tier("t", tier),
            **{f"{name}.yaml": fleets.team(name, quotas) for name, quotas in teams.items()},
        }
    )
    policies = build_policies(load_policies(root))
    fleet = resolve(policies, load_catalog())
    POLICIES[id(fleet)] = policies
    return fleet


POLICIES: dict[int, Policies] = {}
"""The policies each resolved fleet came from, for the independent plan checker."""


def errors(call: object) -> list[Diagnostic]:
    with pytest.raises(CompileError) as caught:
        call()  # type: ignore[operator]
    return [d for d in caught.value.diagnostics if d.severity.value == "error"]


def solved(fleet: ResolvedFleet) -> ClusterPlan:
    (plan,) = solve_fleet(fleet)
    inventory = read_cluster(POLICIES[id(fleet)], fleet.clusters[0].name)
    assert check_plan(inventory, plan.to_json()) == []
    return plan


def test_gangs_of_8_matched_on_pcie_root_are_refused_with_the_group_that_limits_them(
    write_policies: PolicyWriter,
) -> None:
    """On an HGX H100 board two GPUs share a PCIe root: a gang of 8 on one root never
    schedules, whatever the capacity (it was called feasible before)."""
    fleet = resolved(
        write_policies,
        HGX,
        f"{{select: {{models: [H100]}}, gangMatchAttribute: {PCIE}}}",
        {"a": "[{tier: t, guaranteed: 8, gang: 8}]"},
    )
    (diagnostic,) = errors(lambda: solve_fleet(fleet))
    assert diagnostic.code == "GF403"
    assert "team a's gangs of 8 x t (namespace a) can never be placed" in diagnostic.message
    assert (
        "keeps each gang on one PCIe root (resource.kubernetes.io/pcieRoot)" in diagnostic.message
    )
    assert (
        "pool h100: 2 GPUs per PCIe root (the catalog's board hgx-h100-8, unverified)"
        in diagnostic.message
    )
    assert "use gangs of at most 2 devices" in diagnostic.hints
    assert any("up to 8 GPUs" in hint for hint in diagnostic.hints)
    assert diagnostic.span.file.endswith("a.yaml")  # the team's own gang
    # the same gangs without the attribute: one node each
    fleet = resolved(
        write_policies,
        HGX,
        "{select: {models: [H100]}}",
        {"a": "[{tier: t, guaranteed: 8, gang: 8}]"},
    )
    assert solved(fleet).assignments[GuaranteeKey("a", "a", "t")] == {DeviceKey("h100", "gpu"): 8}


def test_a_gang_bigger_than_any_node_is_refused_the_same_way(write_policies: PolicyWriter) -> None:
    fleet = resolved(
        write_policies,
        with_topology(L40S, "{numaNode: 2, pcieRoot: 2}"),
        "{select: {models: [L40S]}}",
        {"a": "[{tier: t, guaranteed: 8, gang: 8}]"},
    )
    (diagnostic,) = errors(lambda: solve_fleet(fleet))
    assert diagnostic.code == "GF403"
    assert "no node the tier t selects holds 8 of its devices" in diagnostic.message
    assert "pool l40s: 4 GPUs per node" in diagnostic.message


def with_topology(pool: str, topology: str) -> str:
    return pool[:-1] + f", topology: {topology}}}"


def test_gangs_are_placed_within_one_numa_node(write_policies: PolicyWriter) -> None:
    """One H200 node, 4 GPUs per NUMA node: two gangs of 3 fit, one per NUMA node, and leave
    one GPU on each, so a third gang of 2 does not fit there, though the node has 2 free."""
    tier = f"{{select: {{models: [H200]}}, gangMatchAttribute: {NUMA}}}"
    fits = {"a": "[{tier: t, guaranteed: 6, gang: 3}]", "b": "[{tier: t, guaranteed: 2}]"}
    plan = solved(resolved(write_policies, H200, tier, fits, driver="0.5"))
    ((gangs, nodes),) = plan.placements["h200"]
    assert nodes == 1
    assert {devices for key, devices in gangs if key == GuaranteeKey("a", "a", "t")} == {
        ("gpu-0", "gpu-1", "gpu-2"),
        ("gpu-4", "gpu-5", "gpu-6"),
    }
    tight = {"a": "[{tier: t, guaranteed: 6, gang: 3}]", "b": "[{tier: t, guaranteed: 2, gang: 2}]"}
    fleet = resolved(write_policies, H200, tier, tight, driver="0.5")
    (diagnostic,) = errors(lambda: solve_fleet(fleet))
    assert diagnostic.code == "GF401"
    notes = [note for note, _ in diagnostic.related]
    assert any(
        "gang 3 in namespace a; each gang within one NUMA node (pool h200: 4 GPUs per NUMA node "
        "(the catalog's board hgx-h200-8, unverified))" in note
        for note in notes
    ), notes
    assert any(
        "keeps each within one value of resource.kubernetes.io/numaNode" in h
        for h in diagnostic.hints
    )
    # matched on nothing narrower than the node, the same gangs fit
    plan = solved(resolved(write_policies, H200, "{select: {models: [H200]}}", tight))
    assert plan.assignments[GuaranteeKey("b", "b", "t")] == {DeviceKey("h200", "gpu"): 2}


def test_a_pool_may_declare_its_own_topology(write_policies: PolicyWriter) -> None:
    tier = f"{{select: {{models: [H100]}}, gangMatchAttribute: {PCIE}}}"
    teams = {"a": "[{tier: t, guaranteed: 8, gang: 4}]"}
    (diagnostic,) = errors(lambda: solve_fleet(resolved(write_policies, HGX, tier, teams)))
    assert diagnostic.code == "GF403"
    fleet = resolved(write_policies, with_topology(HGX, "{pcieRoot: 4}"), tier, teams)
    plan = solved(fleet)
    assert plan.assignments[GuaranteeKey("a", "a", "t")] == {DeviceKey("h100", "gpu"): 8}


def test_an_unpublished_attribute_is_refused_with_the_published_ones(
    write_policies: PolicyWriter,
) -> None:
    teams = {"a": "[{tier: t, guaranteed: 4, gang: 2}]"}
    (diagnostic,) = errors(
        lambda: resolved(
            write_policies, HGX, "{select: {models: [H100]}, gangMatchAttribute: numa-node}", teams
        )
    )
    assert diagnostic.code == "GF235"
    assert diagnostic.message == (
        "tier 't' matches gangs on 'numa-node', which the NVIDIA DRA driver 0.4 of cluster c1 "
        "does not publish on its GPU devices: a gang claim would never be allocated"
    )
    published_hint = diagnostic.hints[0]
    assert published_hint.startswith("published by driver 0.4: gpu.nvidia.com/architecture, ")
    assert "resource.kubernetes.io/pcieRoot" in published_hint
    assert "gpu.nvidia.com/index" not in published_hint  # gone since 25.8
    # numaNode: published from 0.5 (main) only
    numa = f"{{select: {{models: [H100]}}, gangMatchAttribute: {NUMA}}}"
    (diagnostic,) = errors(lambda: resolved(write_policies, HGX, numa, teams))
    assert diagnostic.code == "GF235"
    assert "(published by driver 0.5 and later; main after v0.4.1" in diagnostic.message
    solved(resolved(write_policies, HGX, numa, teams, driver="0.5"))


def test_old_drivers_keep_their_old_attribute_names(write_policies: PolicyWriter) -> None:
    """v25.8 published gpu.nvidia.com/pcieBusID, renamed resource.kubernetes.io/pciBusID in
    25.12; index and minor went with 25.8."""
    teams = {"a": "[{tier: t, guaranteed: 2}]"}
    old = "{select: {models: [H100]}, gangMatchAttribute: gpu.nvidia.com/pcieBusID}"
    solved(resolved(write_policies, HGX, old, teams, driver="25.8"))
    (diagnostic,) = errors(lambda: resolved(write_policies, HGX, old, teams))
    assert "(published by drivers 25.3 to 25.8; renamed resource.kubernetes.io/pciBusID" in (
        diagnostic.message
    )
    new = "{select: {models: [H100]}, gangMatchAttribute: resource.kubernetes.io/pciBusID}"
    solved(resolved(write_policies, HGX, new, teams))
    (diagnostic,) = errors(lambda: resolved(write_policies, HGX, new, teams, driver="25.8"))
    assert diagnostic.code == "GF235"
    minor = "{select: {models: [H100]}, gangMatchAttribute: gpu.nvidia.com/minor}"
    solved(resolved(write_policies, HGX, minor, teams, driver="25.3"))
    assert errors(lambda: resolved(write_policies, HGX, minor, teams, driver="25.8"))


def test_mig_gangs_on_one_gpu_match_the_parent(write_policies: PolicyWriter) -> None:
    """A MIG gang matched on parentUUID stays on one GPU: at most 7 x 1g.10gb, and a GPU-level
    attribute of whole GPUs (parentUUID) is not published on them."""
    pool = HGX[:-1] + ", mig: allowed}"
    tier = "{partition: 1g.10gb, gangMatchAttribute: gpu.nvidia.com/parentUUID}"
    plan = solved(
        resolved(write_policies, pool, tier, {"a": "[{tier: t, guaranteed: 14, gang: 7}]"})
    )
    for gangs, _ in plan.placements["h100"]:
        for _, devices in gangs:
            assert len({d.split("/")[0] for d in devices}) == 1
    (diagnostic,) = errors(
        lambda: solve_fleet(
            resolved(write_policies, pool, tier, {"a": "[{tier: t, guaranteed: 8, gang: 8}]"})
        )
    )
    assert diagnostic.code == "GF403"
    assert "keeps each gang on one GPU (gpu.nvidia.com/parentUUID)" in diagnostic.message
    assert "(pool h100: one GPU, 7 devices of the tier)" in diagnostic.message
    whole = "{select: {models: [H100]}, gangMatchAttribute: gpu.nvidia.com/parentUUID}"
    (diagnostic,) = errors(
        lambda: resolved(write_policies, HGX, whole, {"a": "[{tier: t, guaranteed: 2, gang: 2}]"})
    )
    assert diagnostic.code == "GF235" and "on its GPU devices" in diagnostic.message


def test_an_unknown_grouping_must_be_declared(write_policies: PolicyWriter) -> None:
    """PCIe cards go into servers the catalog cannot know: the pool says how they group."""
    tier = f"{{select: {{models: [L40S]}}, gangMatchAttribute: {PCIE}}}"
    teams = {"a": "[{tier: t, guaranteed: 4, gang: 2}]"}
    (diagnostic,) = errors(lambda: resolved(write_policies, L40S, tier, teams))
    assert diagnostic.code == "GF236"
    assert "how its GPUs group by PCIe root is not known" in diagnostic.message
    assert "`topology: {pcieRoot: <GPUs per PCIe root>}`" in diagnostic.hints[0]
    solved(resolved(write_policies, with_topology(L40S, "{pcieRoot: 2}"), tier, teams))
    # gangs of one device need no grouping
    resolved(write_policies, L40S, tier, {"a": "[{tier: t, guaranteed: 4}]"})


def test_a_topology_that_does_not_nest_is_refused(write_policies: PolicyWriter) -> None:
    teams = {"a": "[{tier: t, guaranteed: 2}]"}
    tier = "{select: {models: [H100]}}"
    (diagnostic,) = errors(
        lambda: resolved(write_policies, with_topology(HGX, "{pcieRoot: 3}"), tier, teams)
    )
    assert diagnostic.code == "GF237"
    assert "pcieRoot groups of 3 GPUs (the pool's topology) do not divide its 8 GPUs" in (
        diagnostic.message
    )
    (diagnostic,) = errors(
        lambda: resolved(
            write_policies, with_topology(HGX, "{numaNode: 2, pcieRoot: 4}"), tier, teams
        )
    )
    assert "do not fit in numaNode groups of 2" in diagnostic.message


def test_the_driver_table_and_the_cluster_field_agree() -> None:
    assert CURRENT_DRIVER in DRIVER_VERSIONS
    current = published("gpu.nvidia.com", CURRENT_DRIVER, "gpu")
    assert {"resource.kubernetes.io/pcieRoot", "resource.kubernetes.io/pciBusID"} <= set(current)
    assert not {"gpu.nvidia.com/index", "gpu.nvidia.com/minor", NUMA} & set(current)
    assert NUMA in published("gpu.nvidia.com", "0.5", "mig")
    assert len({a.name for a in ATTRIBUTES}) == len(ATTRIBUTES)


def test_every_catalog_board_divides_and_names_its_source() -> None:
    for model in load_catalog().models:
        for board in model.boards:
            assert board.source and board.gpus % (board.numa_node or 1) == 0
            assert (board.numa_node or board.gpus) % (board.pcie_root or 1) == 0
            assert set(board.unverified) <= {"numaNode", "pcieRoot"}


def test_a_mixed_node_lays_out_its_gpus_for_its_groups_and_taints(
    write_policies: PolicyWriter,
) -> None:
    """`mig: mixed`, GPU 0 tainted for everyone, gangs of 2 whole GPUs on one PCIe root (pairs
    0-1, 2-3, ...) and six 3g.40gb: the whole GPUs must fill two clean pairs, the slices go on
    GPU 1 and the third clean pair. Sorting layouts over the node would not find it."""
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(pools=f"\n    - {ONE_MIXED_NODE}\n"),
            "pair.yaml": fleets.tier(
                "pair", f"{{select: {{models: [H100]}}, gangMatchAttribute: {PCIE}}}"
            ),
            "slice.yaml": fleets.tier("slice", "{partition: 3g.40gb}"),
            "taint.yaml": fleets.HEADER
            + "kind: DeviceTaint\nmetadata: {name: ecc}\n"
            + "spec: {cluster: c1, pool: h100, node: 0, device: 0, key: example.com/ecc}\n",
            "a.yaml": fleets.team("a", "[{tier: pair, guaranteed: 4, gang: 2}]"),
            "b.yaml": fleets.team("b", "[{tier: slice, guaranteed: 6}]"),
        }
    )
    policies = build_policies(load_policies(root))
    fleet = resolve(policies, load_catalog())
    POLICIES[id(fleet)] = policies
    plan = solved(fleet)
    (label,) = plan.labels("h100")
    layouts = plan.mig_configs[label].gpus
    assert layouts[1] == "2x3g.40gb" and layouts.count("whole") >= 4
    pairs = {
        devices
        for gangs, _ in plan.placements["h100"]
        for key, devices in gangs
        if key == GuaranteeKey("a", "a", "pair")
    }
    assert all(int(a[4:]) // 2 == int(b[4:]) // 2 for a, b in pairs) and len(pairs) == 2

"""Solve: CP-SAT proves guarantees fit, packs gangs and MIG layouts exactly, explains conflicts."""

from __future__ import annotations

from collections import Counter

import pytest

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError, Diagnostic
from compiler.ir import ClusterPlan, DeviceKey, GuaranteeKey, Steering
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.solve import solve_fleet
from tests import fleets
from tests.conftest import PolicyWriter

H100 = "{name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224"
POOLS = f"""
    - {H100}, mig: allowed}}
    - {{name: h200, nodes: 1, gpu: H200, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}}
"""
TIERS = {
    "big.yaml": fleets.tier("big", "{select: {models: [H200]}}"),
    "any.yaml": fleets.tier("any", "{select: {models: [H100, H200]}}"),
    "slice.yaml": fleets.tier("slice", "{partition: 3g.40gb}"),
}


def solve(
    write: PolicyWriter,
    teams: dict[str, str],
    pools: str = POOLS,
    extra: dict[str, str] | None = None,
) -> list[ClusterPlan]:
    root = write(
        {
            "cluster.yaml": fleets.cluster(pools=pools),
            **TIERS,
            **(extra or {}),
            **{f"{n}.yaml": fleets.team(n, q) for n, q in teams.items()},
        }
    )
    return solve_fleet(resolve(build_policies(load_policies(root)), load_catalog()))


def conflict(write: PolicyWriter, teams: dict[str, str], **options: object) -> Diagnostic:
    with pytest.raises(CompileError) as caught:
        solve(write, teams, **options)  # type: ignore[arg-type]
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF401"
    return diagnostic


def teams_named(diagnostic: Diagnostic) -> list[str]:
    return [note.split()[1] for note, _ in diagnostic.related if note.startswith("team ")]


def configs(plan: ClusterPlan, pool: str) -> Counter[str]:
    return Counter(plan.labels(pool))


def test_overlapping_tiers_share_devices_but_each_device_serves_one_guarantee(
    write_policies: PolicyWriter,
) -> None:
    (plan,) = solve(
        write_policies, {"a": "[{tier: big, guaranteed: 8}]", "b": "[{tier: any, guaranteed: 16}]"}
    )
    assert plan.assignments[GuaranteeKey("a", "a", "big")] == {DeviceKey("h200", "gpu"): 8}
    assert plan.assignments[GuaranteeKey("b", "b", "any")] == {DeviceKey("h100", "gpu"): 16}
    diagnostic = conflict(
        write_policies, {"a": "[{tier: big, guaranteed: 8}]", "b": "[{tier: any, guaranteed: 17}]"}
    )
    assert "shortfall 1" in diagnostic.message
    assert sorted(teams_named(diagnostic)) == ["a", "b"]


def test_conflict_set_is_minimal_and_fixes_are_computed(write_policies: PolicyWriter) -> None:
    diagnostic = conflict(
        write_policies, {"a": "[{tier: big, guaranteed: 9}]", "b": "[{tier: any, guaranteed: 4}]"}
    )
    assert teams_named(diagnostic) == ["a"]
    assert "ask for 9 devices" in diagnostic.message and "at most 8" in diagnostic.message
    assert "to make cluster c1 fit: cut 1 from a's big guarantee (namespace a)" in diagnostic.hints
    assert "or add 1 node to pool h200" in diagnostic.hints


def test_mig_uniform_per_node_versus_mixed_per_gpu(write_policies: PolicyWriter) -> None:
    teams = {"a": "[{tier: slice, guaranteed: 8}]", "b": "[{tier: any, guaranteed: 20}]"}
    conflict(write_policies, teams)  # one whole H100 node must go MIG: 8 + 8 whole < 20
    (plan,) = solve(write_policies, teams, pools=POOLS.replace("mig: allowed", "mig: mixed"))
    assert configs(plan, "h100") == {"mixed-4of-whole-4of-2x3g.40gb": 1, "all-disabled": 1}
    assert plan.mig_configs["mixed-4of-whole-4of-2x3g.40gb"].gpus == (
        "whole",
        "whole",
        "whole",
        "whole",
        "2x3g.40gb",
        "2x3g.40gb",
        "2x3g.40gb",
        "2x3g.40gb",
    )
    assert plan.assignments[GuaranteeKey("a", "a", "slice")] == {DeviceKey("h100", "3g.40gb"): 8}
    (plan,) = solve(
        write_policies,
        {"a": "[{tier: slice, guaranteed: 8}]", "b": "[{tier: any, guaranteed: 16}]"},
    )
    assert configs(plan, "h100") == {"all-2x3g.40gb": 1, "all-disabled": 1}


@pytest.mark.parametrize(
    ("teams", "fits"),
    [
        # gangs of 3: two fit on each of the three 8-GPU nodes, 18 GPUs in all
        ({"a": "[{tier: any, guaranteed: 12, gang: 3}]"}, True),
        ({"a": "[{tier: any, guaranteed: 21, gang: 3}]"}, False),  # 7 gangs: 21 of 24 GPUs
        # the H200 holds a's two gangs of 3, the H100s b's four gangs of 4
        (
            {
                "a": "[{tier: big, guaranteed: 6, gang: 3}]",
                "b": "[{tier: any, guaranteed: 16, gang: 4}]",
            },
            True,
        ),
        # 22 of 24 GPUs, but a gang of 6 on each node leaves 2 there: no node for a gang of 4
        (
            {
                "a": "[{tier: any, guaranteed: 18, gang: 6}]",
                "b": "[{tier: any, guaranteed: 4, gang: 4}]",
            },
            False,
        ),
    ],
    ids=["12-in-3s", "21-in-3s", "3s-and-4s", "6s-and-a-4"],
)
def test_gangs_are_packed_per_node_not_by_total(
    write_policies: PolicyWriter, teams: dict[str, str], fits: bool
) -> None:
    if fits:
        solve(write_policies, teams)
    else:
        conflict(write_policies, teams)


def test_three_teams_with_gangs_of_4_2_and_8_pack_exactly(write_policies: PolicyWriter) -> None:
    teams = {
        "a": "[{tier: any, guaranteed: 8, gang: 8}]",
        "b": "[{tier: any, guaranteed: 8, gang: 4}]",
        "c": "[{tier: any, guaranteed: 8, gang: 2}]",
    }
    (plan,) = solve(write_policies, teams)
    assert sum(sum(v.values()) for v in plan.assignments.values()) == 24
    teams["c"] = "[{tier: any, guaranteed: 10, gang: 2}]"
    conflict(write_policies, teams)


def test_host_memory_limits_how_many_gpus_a_node_can_guarantee(
    write_policies: PolicyWriter,
) -> None:
    tiers = {"big.yaml": fleets.tier("big", "{select: {models: [H200]}, hostMemoryPerGpu: 300Gi}")}
    solve(write_policies, {"a": "[{tier: big, guaranteed: 6}]"}, extra=tiers)
    diagnostic = conflict(write_policies, {"a": "[{tier: big, guaranteed: 7}]"}, extra=tiers)
    assert "at most 6" in diagnostic.message
    cpu_tier = {"big.yaml": fleets.tier("big", "{select: {models: [H200]}, cpuPerGpu: 56}")}
    conflict(write_policies, {"a": "[{tier: big, guaranteed: 5}]"}, extra=cpu_tier)


def test_kubelet_reservations_come_off_the_host(write_policies: PolicyWriter) -> None:
    tiers = {"big.yaml": fleets.tier("big", "{select: {models: [H200]}, hostMemoryPerGpu: 256Gi}")}
    solve(write_policies, {"a": "[{tier: big, guaranteed: 7}]"}, extra=tiers)
    reserved = POOLS + "  kubelet: {systemReserved: {memory: 300Gi}}\n"
    conflict(write_policies, {"a": "[{tier: big, guaranteed: 7}]"}, pools=reserved, extra=tiers)


TAINT = (
    fleets.HEADER
    + """kind: DeviceTaint
metadata: {name: ecc}
spec: {cluster: c1, pool: h200, node: 0, device: 3, key: gpu.nvidia.com/ecc-errors,
       value: uncorrectable, effect: NoSchedule}
"""
)


def test_tainted_devices_serve_only_teams_that_tolerate_them(write_policies: PolicyWriter) -> None:
    diagnostic = conflict(
        write_policies, {"a": "[{tier: big, guaranteed: 8}]"}, extra={"taint.yaml": TAINT}
    )
    assert "with device taint ecc in force" in diagnostic.message
    assert any("device taint ecc" in note for note, _ in diagnostic.related)
    assert any("remove device taint ecc" in hint for hint in diagnostic.hints)
    tolerant = fleets.team(
        "a", "[{tier: big, guaranteed: 8}]", "  tolerations: [{key: gpu.nvidia.com/ecc-errors}]\n"
    )
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(pools=POOLS),
            **TIERS,
            "taint.yaml": TAINT,
            "a.yaml": tolerant,
        }
    )
    solve_fleet(resolve(build_policies(load_policies(root)), load_catalog()))


def test_a_gang_may_use_a_tainted_gpu_only_if_its_team_tolerates_it(
    write_policies: PolicyWriter,
) -> None:
    teams = {
        "a": "[{tier: big, guaranteed: 4, gang: 4}]",
        "b": "[{tier: big, guaranteed: 4, gang: 4}]",
    }
    diagnostic = conflict(write_policies, teams, extra={"taint.yaml": TAINT})
    assert sorted(teams_named(diagnostic)) == ["a", "b"]


def test_plan_prefers_whole_gpus_and_reports_headroom(write_policies: PolicyWriter) -> None:
    (plan,) = solve(write_policies, {"a": "[{tier: any, guaranteed: 4, limit: 10}]"})
    assert configs(plan, "h100") == {"all-disabled": 2}
    any_tier = next(t for t in plan.tiers if t.tier == "any")
    assert (any_tier.capacity, any_tier.guaranteed, any_tier.limit, any_tier.headroom) == (
        24,
        4,
        10,
        20,
    )


BURN_IN = (
    fleets.HEADER
    + """kind: DeviceTaint
metadata: {name: burn-in}
spec: {cluster: c1, pool: h100, node: 1, key: example.com/burn-in}
"""
)


def test_a_tainted_node_is_not_kept_partitioned_for_nobody(write_policies: PolicyWriter) -> None:
    """Plan stability keeps MIG layouts, but never on a node whose taint only teams that use no
    MIG device there tolerate: its slices would be capacity nobody can be given."""
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(pools=f"\n    - {H100}, mig: allowed}}\n"),
            "any.yaml": TIERS["any.yaml"],
            "slice.yaml": TIERS["slice.yaml"],
            "taint.yaml": BURN_IN,
            "s.yaml": fleets.team("s", "[{tier: slice, guaranteed: 4}]"),
            "w.yaml": fleets.team(
                "w",
                "[{tier: any, guaranteed: 4}]",
                "  tolerations: [{key: example.com/burn-in, operator: Exists}]\n",
            ),
        }
    )
    fleet = resolve(build_policies(load_policies(root)), load_catalog())
    partitioned = Steering.from_json(
        '{"cluster": "c1", "nodeConfigs": {"h100": [["all-2x3g.40gb", 2]]}}'
    )
    (plan,) = solve_fleet(fleet, previous={"c1": partitioned})
    assert plan.labels("h100") == ["all-2x3g.40gb", "all-disabled"]
    tiers = {t.tier: t for t in plan.tiers}
    # the slices of node 0 are untainted; node 1's 8 whole GPUs serve w, who tolerates them
    assert (tiers["slice"].capacity, tiers["slice"].tainted, tiers["slice"].usable) == (16, 0, 16)
    anything = tiers["any"]
    assert (anything.capacity, anything.tainted, anything.usable) == (8, 8, 8)
    # w's guarantee takes the tainted GPUs first: nothing untainted is promised, none to lend
    assert (anything.untainted_promised, anything.borrowable) == (0, 0)


def test_devices_no_holder_tolerates_are_not_usable(write_policies: PolicyWriter) -> None:
    (plan,) = solve(
        write_policies, {"a": "[{tier: any, guaranteed: 4, limit: 10}]"}, extra={"b.yaml": BURN_IN}
    )
    anything = next(t for t in plan.tiers if t.tier == "any")
    # h100 node 1 (8 GPUs) is tainted and team a does not tolerate it
    assert (anything.capacity, anything.tainted, anything.usable) == (24, 8, 16)
    assert (anything.headroom, anything.borrowable) == (12, 12)

"""Solve: CP-SAT proves guarantees fit, and explains minimal conflicts when they do not."""

from __future__ import annotations

import pytest

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.solve import solve_fleet
from compiler.solve.plan import ClusterPlan
from tests import fleets
from tests.conftest import PolicyWriter

POOLS = """
    - {name: h100, nodes: 2, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,
       mig: allowed}
    - {name: h200, nodes: 1, gpu: H200, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224}
"""
TIERS = {
    "big.yaml": fleets.tier("big", "{select: {models: [H200]}}"),
    "any.yaml": fleets.tier("any", "{select: {models: [H100, H200]}}"),
    "slice.yaml": fleets.tier("slice", "{partition: 3g.40gb}"),
}


def solve(write: PolicyWriter, teams: dict[str, str]) -> list[ClusterPlan]:
    root = write(
        {
            "c.yaml": fleets.cluster(pools=POOLS),
            **TIERS,
            **{f"{n}.yaml": fleets.team(n, q) for n, q in teams.items()},
        }
    )
    return solve_fleet(resolve(build_policies(load_policies(root)), load_catalog()))


def test_overlapping_tiers_share_devices_but_each_device_serves_one_guarantee(
    write_policies: PolicyWriter,
) -> None:
    (plan,) = solve(
        write_policies, {"a": "[{tier: big, guaranteed: 8}]", "b": "[{tier: any, guaranteed: 16}]"}
    )
    assert plan.assignments["a/a/big"] == {"h200/gpu": 8}
    assert plan.assignments["b/b/any"] == {"h100/gpu": 16}
    with pytest.raises(CompileError) as caught:
        solve(
            write_policies,
            {"a": "[{tier: big, guaranteed: 8}]", "b": "[{tier: any, guaranteed: 17}]"},
        )
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "GF401"
    assert "shortfall 1" in diagnostic.message
    assert {note.split()[1] for note, _ in diagnostic.related} == {"a", "b"}


def test_conflict_set_is_minimal(write_policies: PolicyWriter) -> None:
    with pytest.raises(CompileError) as caught:
        solve(
            write_policies,
            {"a": "[{tier: big, guaranteed: 9}]", "b": "[{tier: any, guaranteed: 4}]"},
        )
    (diagnostic,) = caught.value.diagnostics
    assert [note.split()[1] for note, _ in diagnostic.related] == ["a"]
    assert "ask for 9 devices" in diagnostic.message and "at most 8" in diagnostic.message


def test_mig_and_whole_gpu_guarantees_compete_for_the_same_gpus(
    write_policies: PolicyWriter,
) -> None:
    (plan,) = solve(
        write_policies,
        {"a": "[{tier: slice, guaranteed: 8}]", "b": "[{tier: any, guaranteed: 20}]"},
    )
    assert plan.pool_configs["h100"] == {"2x3g.40gb": 4, "whole": 12}
    assert plan.assignments["a/a/slice"] == {"h100/mig-3g.40gb": 8}
    with pytest.raises(CompileError):
        solve(
            write_policies,
            {"a": "[{tier: slice, guaranteed: 9}]", "b": "[{tier: any, guaranteed: 20}]"},
        )


def test_plan_prefers_whole_gpus_and_reports_headroom(write_policies: PolicyWriter) -> None:
    (plan,) = solve(write_policies, {"a": "[{tier: any, guaranteed: 4, limit: 10}]"})
    assert plan.pool_configs == {"h100": {"whole": 16}, "h200": {"whole": 8}}
    any_tier = next(t for t in plan.tiers if t.tier == "any")
    assert (any_tier.capacity, any_tier.guaranteed, any_tier.limit, any_tier.headroom) == (
        24,
        4,
        10,
        20,
    )

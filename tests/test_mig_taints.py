"""A GPU-level taint on a MIG pool: the GPU is partitioned like its neighbours and its MIG
devices carry the taint (its DeviceTaintRule names them), so teams that tolerate the taint may
use them and others may not (issue 16, finding 2)."""

from __future__ import annotations

import pytest

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.ir import ClusterPlan, DeviceKey, GuaranteeKey
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.solve import solve_fleet
from tests import fleets
from tests.conftest import PolicyWriter

ONE_NODE = (
    "\n    - {name: h100, nodes: 1, gpu: H100-80GB, gpusPerNode: 8, hostMemory: 2Ti, cpu: 224,"
    " mig: allowed}\n"
)
GPU_0 = fleets.HEADER + (
    "kind: DeviceTaint\nmetadata: {name: ecc}\n"
    "spec: {cluster: c1, pool: h100, node: 0, device: 0, key: example.com/ecc}\n"
)
TOLERATES = "  tolerations: [{key: example.com/ecc, operator: Exists}]\n"


def solve(write: PolicyWriter, teams: dict[str, str], pools: str = ONE_NODE) -> ClusterPlan:
    root = write(
        {
            "cluster.yaml": fleets.cluster(pools=pools),
            "slice.yaml": fleets.tier("slice", "{partition: 3g.40gb}"),
            "small.yaml": fleets.tier("small", "{partition: 1g.10gb}"),
            "taint.yaml": GPU_0,
            **{f"{name}.yaml": text for name, text in teams.items()},
        }
    )
    (plan,) = solve_fleet(resolve(build_policies(load_policies(root)), load_catalog()))
    return plan


def test_a_tainted_gpu_on_a_mig_pool_no_longer_keeps_its_node_whole(
    write_policies: PolicyWriter,
) -> None:
    """Seven clean GPUs give 14 x 3g.40gb: feasible, though GPU 0 carries a taint nobody
    tolerates (before the fix the whole node stayed unpartitioned: called infeasible)."""
    plan = solve(write_policies, {"a": fleets.team("a", "[{tier: slice, guaranteed: 14}]")})
    assert plan.labels("h100") == ["all-2x3g.40gb"]
    assert plan.assignments[GuaranteeKey("a", "a", "slice")] == {DeviceKey("h100", "3g.40gb"): 14}
    slice_tier = next(t for t in plan.tiers if t.tier == "slice")
    # GPU 0's two slices carry the taint and nobody holding the tier tolerates it
    assert (slice_tier.capacity, slice_tier.tainted, slice_tier.usable) == (16, 2, 14)


def test_the_tainted_gpus_mig_devices_serve_only_teams_that_tolerate_the_taint(
    write_policies: PolicyWriter,
) -> None:
    tolerant = fleets.team("b", "[{tier: slice, guaranteed: 2}]", TOLERATES)
    plan = solve(
        write_policies,
        {"a": fleets.team("a", "[{tier: slice, guaranteed: 14}]"), "b": tolerant},
    )
    assert plan.assignments[GuaranteeKey("b", "b", "slice")] == {DeviceKey("h100", "3g.40gb"): 2}
    with pytest.raises(CompileError) as caught:
        solve(write_policies, {"a": fleets.team("a", "[{tier: slice, guaranteed: 15}]")})
    assert [d.code for d in caught.value.diagnostics] == ["GF401"]
    assert "with device taint ecc in force" in caught.value.diagnostics[0].message


def test_mixed_pools_choose_the_tainted_gpus_layout_apart(write_policies: PolicyWriter) -> None:
    """`mig: mixed`: the tainted GPU may run another layout than its neighbours; here the only
    tolerating team wants 1g.10gb devices, the others 3g.40gb."""
    mixed = ONE_NODE.replace("mig: allowed", "mig: mixed").replace(
        "gpusPerNode: 8", "gpusPerNode: 2"
    )
    plan = solve(
        write_policies,
        {
            "a": fleets.team("a", "[{tier: slice, guaranteed: 2}]"),
            "b": fleets.team("b", "[{tier: small, guaranteed: 7}]", TOLERATES),
        },
        pools=mixed,
    )
    (label,) = plan.labels("h100")
    assert plan.mig_configs[label].gpus == ("7x1g.10gb", "2x3g.40gb")

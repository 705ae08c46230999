"""Property tests: on random small fleets the solver agrees with a brute-force oracle, every
reported conflict is minimal, every suggested fix really makes the fleet feasible, and every
plan passes the independent plan checker (gangs within their topology groups, tainted devices,
MIG ones included, only for teams that tolerate them).

More examples on demand: GPUFLEET_PROPERTY_EXAMPLES=2000 pytest tests/test_solver_properties.py
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import ResolvedCluster, resolve
from compiler.solve.explain import find_conflict
from compiler.solve.runner import Deadline
from compiler.solve.solver import solve_cluster
from tests import fleets
from tests.oracle import feasible
from tests.plan_checker import check_plan

EXAMPLES = int(os.environ.get("GPUFLEET_PROPERTY_EXAMPLES", "100"))
TIERS = {
    "big": "{select: {models: [H200]}}",
    "any": "{select: {models: [H100, H200]}, hostMemoryPerGpu: 200Gi}",
    "small": "{select: {models: [L40S]}, cpuPerGpu: 20}",
    "slice": "{partition: 3g.40gb}",
    "tiny": "{partition: 1g.10gb, hostMemoryPerGpu: 40Gi}",
    "pair": "{select: {models: [H100, H200]}, gangMatchAttribute: resource.kubernetes.io/pcieRoot}",
    "numa": "{select: {models: [L40S]}, gangMatchAttribute: resource.kubernetes.io/numaNode}",
    "shard": "{partition: 1g.10gb, gangMatchAttribute: gpu.nvidia.com/parentUUID}",
}


TIER_NEEDS = {
    "big": "H200",
    "any": "hopper",
    "small": "L40S",
    "slice": "mig",
    "tiny": "mig",
    "pair": "hopper",
    "numa": "L40S",
    "shard": "mig",
}


@st.composite
def fleet_files(draw: st.DrawFn) -> dict[str, str]:
    pools, models, mig_pool = [], set(), False
    for index in range(draw(st.integers(1, 3))):
        model = draw(st.sampled_from(["H100-80GB", "H200", "L40S"]))
        mig = (
            draw(st.sampled_from(["disabled", "allowed", "mixed"]))
            if model == "H100-80GB"
            else "disabled"
        )
        # the oracle tries every layout of every GPU: keep MIG nodes narrow
        width = draw(st.sampled_from({"mixed": [2], "allowed": [2, 4]}.get(mig, [2, 4, 8])))
        memory = draw(st.sampled_from(["2Ti", "600Gi"]))
        nodes = 1 if mig == "mixed" else draw(st.integers(1, 2))
        numa = draw(st.sampled_from([n for n in (1, 2, 4, 8) if width % n == 0]))
        pcie = draw(st.sampled_from([n for n in (1, 2, 4) if numa % n == 0]))
        models.add(model)
        mig_pool = mig_pool or mig != "disabled"
        pools.append(
            f"    - {{name: p{index}, nodes: {nodes}, gpu: {model}, "
            f"gpusPerNode: {width}, hostMemory: {memory}, cpu: 64, mig: {mig}, "
            f"topology: {{numaNode: {numa}, pcieRoot: {pcie}}}}}\n"
        )
    possible = sorted(
        t
        for t, needs in TIER_NEEDS.items()
        if (needs == "mig" and mig_pool)
        or needs in models
        or (needs == "hopper" and models & {"H100-80GB", "H200"})
    )
    tiers = draw(st.lists(st.sampled_from(possible), min_size=1, max_size=3, unique=True))
    files = {"cluster.yaml": fleets.cluster(pools="\n" + "".join(pools), driver_version="0.5")}
    files.update({f"tier-{t}.yaml": fleets.tier(t, TIERS[t]) for t in tiers})
    tainted = draw(st.booleans())
    if tainted:
        device = draw(st.sampled_from([0, 1]))
        files["taint.yaml"] = fleets.HEADER + (
            "kind: DeviceTaint\nmetadata: {name: ecc}\n"
            f"spec: {{cluster: c1, pool: p0, node: 0, device: {device}, key: example.com/ecc}}\n"
        )
    for index in range(draw(st.integers(1, 4))):
        gang = draw(st.sampled_from([1, 2, 4, 8]))
        count = gang * draw(st.integers(1, 3 if gang < 4 else 2))
        tolerations = (
            "  tolerations: [{key: example.com/ecc}]\n" if tainted and draw(st.booleans()) else ""
        )
        quota = f"[{{tier: {draw(st.sampled_from(tiers))}, guaranteed: {count}, gang: {gang}}}]"
        files[f"team-t{index}.yaml"] = fleets.team(f"t{index}", quota, tolerations)
    return files


def resolved(files: dict[str, str]) -> ResolvedCluster | None:
    with tempfile.TemporaryDirectory() as directory:
        root = fleets.write_tree(Path(directory), files)
        try:
            fleet = resolve(build_policies(load_policies(root)), load_catalog())
        except CompileError:
            return None
    return fleet.clusters[0]


def solver_verdict(cluster: ResolvedCluster) -> str:
    """`feasible` (its plan passing the independent checker), or the diagnostic code saying why
    not: GF401, or GF403 for gangs bigger than every group they may use."""
    try:
        plan = solve_cluster(cluster, 20.0)
    except CompileError as error:
        codes = sorted({d.code for d in error.diagnostics})
        assert codes in (["GF401"], ["GF403"]), error.diagnostics
        return codes[0]
    assert check_plan(cluster, plan.to_json()) == []
    return "feasible"


def without(cluster: ResolvedCluster, guarantee: str = "", taint: str = "") -> ResolvedCluster:
    return dataclasses.replace(
        cluster,
        guarantees=tuple(g for g in cluster.guarantees if g.key != guarantee),
        taints=tuple(t for t in cluster.taints if t.name != taint),
    )


def with_cuts(cluster: ResolvedCluster, cuts: dict[str, int]) -> ResolvedCluster:
    return dataclasses.replace(
        cluster,
        guarantees=tuple(
            dataclasses.replace(g, count=g.count - cuts.get(g.key, 0)) for g in cluster.guarantees
        ),
    )


def with_nodes(cluster: ResolvedCluster, pool: str, extra: int) -> ResolvedCluster:
    def grow(p):  # type: ignore[no-untyped-def]
        if p.pool.name != pool:
            return p
        return dataclasses.replace(
            p, pool=p.pool.model_copy(update={"nodes": p.pool.nodes + extra})
        )

    pools = tuple(grow(p) for p in cluster.pools)
    tiers = tuple(
        dataclasses.replace(
            t,
            kinds=tuple(
                next(k for p in pools for k in p.kinds if k.key == kind.key) for kind in t.kinds
            ),
        )
        for t in cluster.tiers
    )
    return dataclasses.replace(
        cluster,
        pools=pools,
        tiers=tiers,
        taints=tuple(
            dataclasses.replace(
                t,
                targets=tuple(
                    dataclasses.replace(
                        x, pool=next(p for p in pools if p.pool.name == x.pool.pool.name)
                    )
                    for x in t.targets
                ),
            )
            for t in cluster.taints
        ),
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleet_files())
def test_solver_agrees_with_brute_force_and_explains_minimally(files: dict[str, str]) -> None:
    cluster = resolved(files)
    assume(cluster is not None and cluster.guarantees)
    assert cluster is not None
    verdict = solver_verdict(cluster)
    assert (verdict == "feasible") == feasible(cluster)
    if verdict != "GF401":
        return
    conflict = find_conflict(cluster, Deadline(30.0))
    assert conflict.guarantees
    restricted = dataclasses.replace(
        cluster,
        guarantees=conflict.guarantees,
        taints=tuple(t for t in cluster.taints if t in conflict.taints or not t.blocks_scheduling),
    )
    assert not feasible(restricted)
    for guarantee in conflict.guarantees:
        assert feasible(without(restricted, guarantee=guarantee.key))
    for taint in conflict.taints:
        assert feasible(without(restricted, taint=taint.name))
    assert conflict.cuts and feasible(with_cuts(cluster, conflict.cuts))
    for pool, extra in conflict.growth.items():
        assert feasible(with_nodes(cluster, pool, extra))
        if extra > 1:
            assert not feasible(with_nodes(cluster, pool, extra - 1))

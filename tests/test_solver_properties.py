"""Property tests: on random small fleets the solver agrees with the independent oracle
(tests/oracle.py, which reads the policy itself), every reported conflict is minimal by the
oracle, every suggested fix really makes the fleet feasible by the oracle (and a node fewer
does not, where the fix says it is the fewest), and every plan passes the independent plan
checker (gangs within their topology groups, tainted devices, MIG ones included, only for teams
that tolerate them). tests/test_oracle_agreement.py compares verdicts on a few hundred more.

More examples on demand: GPUFLEET_PROPERTY_EXAMPLES=2000 pytest tests/test_solver_properties.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.ir import ResolvedCluster
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.model.build import Policies
from compiler.resolve import resolve
from compiler.solve.explain import Budget, find_conflict
from compiler.solve.solver import solve_cluster
from tests import fleets
from tests.oracle import feasible, only, with_cuts, with_nodes, without
from tests.oracle_policy import Inventory, read_cluster
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


def resolved(files: dict[str, str]) -> tuple[Policies, ResolvedCluster] | None:
    with tempfile.TemporaryDirectory() as directory:
        root = fleets.write_tree(Path(directory), files)
        try:
            policies = build_policies(load_policies(root))
            fleet = resolve(policies, load_catalog())
        except CompileError:
            return None
    return policies, fleet.clusters[0]


def solver_verdict(cluster: ResolvedCluster, inventory: Inventory) -> str:
    """`feasible` (its plan passing the independent checker), or the diagnostic code saying why
    not: GF401, or GF403 for gangs bigger than every group they may use."""
    try:
        plan = solve_cluster(cluster, 20.0)
    except CompileError as error:
        codes = sorted({d.code for d in error.diagnostics})
        assert codes in (["GF401"], ["GF403"]), error.diagnostics
        return codes[0]
    assert check_plan(inventory, plan.to_json()) == []
    return "feasible"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleet_files())
def test_solver_agrees_with_brute_force_and_explains_minimally(files: dict[str, str]) -> None:
    found = resolved(files)
    assume(found is not None and found[1].guarantees)
    assert found is not None
    policies, cluster = found
    inventory = read_cluster(policies, cluster.name)
    verdict = solver_verdict(cluster, inventory)
    assert (verdict == "feasible") == feasible(inventory)
    if verdict != "GF401":
        return
    conflict = find_conflict(cluster, Budget(30.0))
    assert conflict.guarantees and conflict.minimal and conflict.complete
    restricted = only(
        inventory, {str(g.key) for g in conflict.guarantees}, {t.name for t in conflict.taints}
    )
    assert not feasible(restricted)
    for guarantee in conflict.guarantees:
        assert feasible(without(restricted, guarantee=str(guarantee.key)))
    for taint in conflict.taints:
        assert feasible(without(restricted, taint=taint.name))
    assert conflict.cuts and feasible(
        with_cuts(inventory, {str(k): n for k, n in conflict.cuts.items()})
    )
    for pool, extra in conflict.growth.items():
        assert feasible(with_nodes(inventory, pool, extra))
        if pool in conflict.fewest_growth and extra > 1:
            assert not feasible(with_nodes(inventory, pool, extra - 1))

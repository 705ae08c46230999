"""Explanations of infeasible clusters: their own time budget (running out never changes the
verdict, and the report says what is unfinished), and fixes checked before they are printed:
every fix offered makes the whole cluster fit by the brute-force oracle, the cut is the fewest
devices, the nodes to add the fewest (issue 17, deliverable 4)."""

from __future__ import annotations

import dataclasses
import itertools
import random
from pathlib import Path

import pytest

from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.ir import GuaranteeKey, ResolvedCluster
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.solve import solve_cluster
from compiler.solve.explain import Budget, Conflict, find_conflict
from compiler.solve.fixes import Cut, Edit, Grow, RemoveTaint, Tolerate, Ungroup
from tests import fleets
from tests.conftest import PolicyWriter
from tests.oracle import feasible, with_cuts, with_nodes, without
from tests.oracle_policy import Inventory, read_cluster
from tests.test_cli import Run

WHOLE = fleets.tier("whole", "{select: {models: [H100]}}")
TWO_GPUS = (
    "\n    - {name: h100, nodes: 1, gpu: H100-80GB, gpusPerNode: 2, hostMemory: 2Ti, cpu: 64}\n"
)


def taint(name: str, key: str, node: int = 0, device: int = 0, pool: str = "h100") -> str:
    """A DeviceTaint on one GPU."""
    return fleets.HEADER + (
        f"kind: DeviceTaint\nmetadata: {{name: {name}}}\n"
        f"spec: {{cluster: c1, pool: {pool}, node: {node}, device: {device}, key: {key}}}\n"
    )


def read(root: Path) -> tuple[ResolvedCluster, Inventory]:
    """The cluster as the compiler resolves it, and as the independent oracle reads it."""
    policies = build_policies(load_policies(root))
    (cluster,) = resolve(policies, load_catalog()).clusters
    return cluster, read_cluster(policies, cluster.name)


def edited(inventory: Inventory, edit: Edit) -> Inventory:
    """The oracle's own reading of a fix."""
    if isinstance(edit, Cut):
        return with_cuts(inventory, {str(key): n for key, n in edit.devices})
    if isinstance(edit, Grow):
        return with_nodes(inventory, edit.pool, edit.nodes)
    if isinstance(edit, RemoveTaint):
        return without(inventory, taint=edit.name)
    if isinstance(edit, Tolerate):
        taints = tuple(
            dataclasses.replace(t, tolerated_by=t.tolerated_by | set(edit.teams))
            if t.name == edit.name
            else t
            for t in inventory.taints
        )
        return dataclasses.replace(inventory, taints=taints)
    assert isinstance(edit, Ungroup)
    tier = dataclasses.replace(inventory.tiers[edit.tier], attribute=None)
    return dataclasses.replace(inventory, tiers={**inventory.tiers, edit.tier: tier})


def explained(cluster: ResolvedCluster, seconds: float = 30.0) -> Conflict:
    """The conflict of a cluster the solver calls infeasible."""
    with pytest.raises(CompileError) as raised:
        solve_cluster(cluster, 20.0, explain_time_limit=0.0)
    assert [d.code for d in raised.value.diagnostics] == ["GF401"]
    return find_conflict(cluster, Budget(seconds))


def test_the_verdict_stands_when_the_explanation_has_no_time(
    write_policies: PolicyWriter, run_cli: Run
) -> None:
    """With no time to explain, the proven verdict is still GF401 (exit 1), never GF002, and
    the diagnostic says the conflict may not be minimal and fixes were left out."""
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(pools=TWO_GPUS),
            "whole.yaml": WHOLE,
            "a.yaml": fleets.team("a", "[{tier: whole, guaranteed: 2}]"),
            "b.yaml": fleets.team("b", "[{tier: whole, guaranteed: 1}]"),
        }
    )
    code, _, err = run_cli("check", "--policies", root, "--explain-time-limit", "0")
    assert code == 1, err
    assert "error[GF401]" in err and "GF002" not in err
    assert "stopped at its time budget of 0 s" in err
    assert "may not be minimal" in err
    code, _, err = run_cli("check", "--policies", root)
    assert code == 1 and "error[GF401]" in err
    assert "time budget" not in err and "cut 1 from" in err


def test_a_taint_is_offered_as_a_fix_only_where_removing_or_tolerating_it_fits(
    write_policies: PolicyWriter,
) -> None:
    """Two taints on one GPU: removing or tolerating either alone leaves the GPU blocked by
    the other, so neither is offered (before, the conflict's taint was, though useless)."""
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(pools=TWO_GPUS),
            "whole.yaml": WHOLE,
            "ecc.yaml": taint("ecc", "example.com/ecc"),
            "xid.yaml": taint("xid", "example.com/xid"),
            "a.yaml": fleets.team("a", "[{tier: whole, guaranteed: 2}]"),
        }
    )
    cluster, inventory = read(root)
    conflict = explained(cluster)
    hints = [fix.hint for fix in conflict.fixes]
    assert not [h for h in hints if "taint" in h or "tolerate" in h], hints
    assert conflict.cuts == {GuaranteeKey("a", "a", "whole"): 1} and conflict.growth == {"h100": 1}
    for fix in conflict.fixes:
        assert feasible(edited(inventory, fix.edit)), fix.hint


def test_tolerating_a_taint_is_offered_where_it_fits(write_policies: PolicyWriter) -> None:
    root = write_policies(
        {
            "cluster.yaml": fleets.cluster(pools=TWO_GPUS),
            "whole.yaml": WHOLE,
            "ecc.yaml": taint("ecc", "example.com/ecc"),
            "a.yaml": fleets.team("a", "[{tier: whole, guaranteed: 2}]"),
        }
    )
    conflict = explained(read(root)[0])
    hints = [fix.hint for fix in conflict.fixes]
    assert "or remove device taint ecc (example.com/ecc)" in hints
    assert "or let team a tolerate example.com/ecc" in hints


def random_fleet(seed: int) -> dict[str, str]:
    """A small fleet with MIG and whole-GPU pools, a single-GPU taint and gangs, made to
    overflow often: what the campaign that found the wrong hints generated."""
    rng = random.Random(seed)
    mig = rng.choice(["allowed", "mixed", "disabled"])
    width = 2 if mig == "mixed" else rng.choice([2, 4])
    nodes = rng.choice([1, 2])
    pools = (
        f"\n    - {{name: p0, nodes: {nodes}, gpu: H100-80GB, gpusPerNode: {width}, "
        f"hostMemory: 2Ti, cpu: 64, mig: {mig}}}\n"
    )
    tiers = {
        "slice": "{partition: 3g.40gb}",
        "tiny": "{partition: 1g.10gb, hostMemoryPerGpu: 40Gi}",
        "whole": "{select: {models: [H100]}}",
    }
    usable = ["whole"] if mig == "disabled" else rng.sample(sorted(tiers), 2)
    files = {"cluster.yaml": fleets.cluster(pools=pools, driver_version="0.5")}
    files |= {f"tier-{t}.yaml": fleets.tier(t, tiers[t]) for t in usable}
    tainted = rng.random() < 0.7
    if tainted:
        files["taint.yaml"] = taint(
            "ecc", "example.com/ecc", rng.randrange(nodes), rng.randrange(width), "p0"
        )
    for index in range(rng.randint(1, 3)):
        gang = rng.choice([1, 1, 2])
        count = gang * rng.randint(1, 5)
        tolerates = rng.random() < 0.3 and tainted
        extra = "  tolerations: [{key: example.com/ecc}]\n" if tolerates else ""
        quota = f"[{{tier: {rng.choice(usable)}, guaranteed: {count}, gang: {gang}}}]"
        files[f"team-t{index}.yaml"] = fleets.team(f"t{index}", quota, extra)
    return files


def fewest_cut(inventory: Inventory) -> int:
    """The fewest devices to cut, in whole gangs, by brute force over the oracle."""
    needs = inventory.needs
    choices = [range(0, n.count + 1, n.gang) for n in needs]
    for total, cut in sorted((sum(c), c) for c in itertools.product(*choices)):
        if feasible(with_cuts(inventory, {n.key: c for n, c in zip(needs, cut, strict=True)})):
            return total
    raise AssertionError("cutting everything fits")


@pytest.mark.parametrize("seed", range(40))
def test_every_fix_offered_fits_and_is_the_smallest(seed: int, tmp_path: Path) -> None:
    """By the independent oracle: each printed fix makes the cluster fit, the cut is the
    fewest devices, and one node fewer than the nodes to add does not fit."""
    try:
        cluster, inventory = read(fleets.write_tree(tmp_path, random_fleet(seed)))
    except CompileError:
        pytest.skip("not a valid policy")
    if not cluster.guarantees or feasible(inventory):
        return
    conflict = explained(cluster)
    assert conflict.complete and conflict.minimal and conflict.fixes
    for fix in conflict.fixes:
        assert feasible(edited(inventory, fix.edit)), fix.hint
    assert sum(conflict.cuts.values()) == fewest_cut(inventory)
    for pool, nodes in conflict.growth.items():
        assert pool in conflict.fewest_growth
        assert nodes == 1 or not feasible(with_nodes(inventory, pool, nodes - 1))

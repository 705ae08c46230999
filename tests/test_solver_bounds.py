"""Solver bounds: a fleet too big to decide in a tiny time limit exits 3 with GF002, and a
timeout never passes for a verdict. Black-box through the CLI (the model may change)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.pipeline import resolve_policies
from compiler.solve import solver
from compiler.solve.cpsat import cp_model
from compiler.solve.solver import OPTIMISE_WORK
from tests import fleets

Run = Callable[..., tuple[int, str, str]]

PARTITIONS = ("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb")
POOLS = 12
NODES, GPUS = 2, 8
"""Twelve MIG pools of 2 x 8 GPUs: 192 GPUs, so at most 7 x 192 = 1344 MIG slices."""


def pathological_fleet(root: Path, per_team: int, teams: int = 8) -> Path:
    """Many MIG pools, a tier per partition, teams spread over the tiers with gangs."""
    root.mkdir(parents=True)
    pools = "".join(
        f"\n    - {{name: p{i}, nodes: {NODES}, gpu: {('H100-80GB', 'A100-80GB')[i % 2]},"
        f" gpusPerNode: {GPUS}, hostMemory: 2Ti, cpu: 224, mig: allowed}}"
        for i in range(POOLS)
    )
    (root / "cluster.yaml").write_text(fleets.cluster("big", pools=pools + "\n"))
    for partition in PARTITIONS:
        name = "slice-" + partition.replace(".", "-")
        spec = f"{{select: {{models: [H100-80GB, A100-80GB]}}, partition: {partition}}}"
        (root / f"{name}.yaml").write_text(fleets.tier(name, spec))
    for team in range(teams):
        tier = "slice-" + PARTITIONS[team % len(PARTITIONS)].replace(".", "-")
        gang = 2 if team % 2 else 1
        quota = f"[{{tier: {tier}, guaranteed: {per_team}, gang: {gang}}}]"
        (root / f"team-{team}.yaml").write_text(fleets.team(f"team-{team}", quota))
    return fleets.write_tree(root, {})  # migrates the teams


@pytest.fixture(scope="module")
def feasible(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return pathological_fleet(tmp_path_factory.mktemp("bounds") / "feasible", per_team=10)


@pytest.fixture(scope="module")
def infeasible(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 8 teams x 200 slices = 1600 > 1344, the most 192 GPUs can be cut into
    return pathological_fleet(tmp_path_factory.mktemp("bounds") / "infeasible", per_team=200)


def test_a_tiny_time_limit_exits_3_with_gf002(run_cli: Run, feasible: Path) -> None:
    code, out, err = run_cli("check", "--policies", feasible, "--solver-time-limit", "0.001")
    assert code == 3
    assert "error[GF002]: cluster big: the solver reached its time limit without a verdict" in err
    assert "raise --solver-time-limit" in err
    assert "Traceback" not in err and "ok:" not in out


def test_a_timed_out_compile_writes_nothing(run_cli: Run, feasible: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(
        "compile", "--policies", feasible, "--out", out, "--solver-time-limit", "0.001"
    )
    assert code == 3 and "GF002" in err
    assert not out.exists()


def test_the_default_limit_decides_the_feasible_fleet(run_cli: Run, feasible: Path) -> None:
    code, out, err = run_cli("check", "--policies", feasible)
    assert (code, out.strip()) == (0, "ok: 1 clusters, 8 guarantees, all feasible"), err


def test_the_default_limit_decides_the_infeasible_fleet(run_cli: Run, infeasible: Path) -> None:
    code, _, err = run_cli("check", "--policies", infeasible)
    assert code == 1, err
    assert "error[GF401]: cluster big:" in err


@pytest.mark.parametrize("limit", ["0.005", "0.05"])
def test_a_short_limit_gives_a_timeout_or_the_right_verdict_never_a_wrong_one(
    run_cli: Run, feasible: Path, infeasible: Path, limit: str
) -> None:
    for policies, verdict in ((feasible, 0), (infeasible, 1)):
        code, _, err = run_cli("check", "--policies", policies, "--solver-time-limit", limit)
        assert code in (verdict, 3), err
        assert (code == 3) == ("GF002" in err)


@pytest.mark.parametrize("limit", ["0", "-1", "nan", "soon"])
def test_a_time_limit_that_is_not_a_positive_number_is_a_usage_error(
    run_cli: Run, limit: str
) -> None:
    code, _, err = run_cli("check", "--solver-time-limit", limit)
    assert code == 2 and "GF113" in err and "positive number of seconds" in err


def test_a_hard_model_loses_little_without_presolve(
    feasible: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All phases at once, then each phase, are first solved without CP-SAT's presolve
    (small models prove their optimum faster so); one that proves nothing so is solved again
    with it. The first attempt gets a little work: on this fleet the phases at once prove
    nothing, every phase falls back, and no attempt lost more than a tenth of a phase's work
    (OPTIMISE_WORK) without presolve (with OPTIMISE_WORK there too, the solve took 9.6 units
    instead of 3.9)."""
    spent: list[tuple[bool, float]] = []
    real = cp_model.CpSolver.solve

    def counted(self: cp_model.CpSolver, model: cp_model.CpModel) -> object:
        status = real(self, model)
        spent.append((self.parameters.cp_model_presolve, self.deterministic_time))
        return status

    monkeypatch.setattr(cp_model.CpSolver, "solve", counted)
    [cluster] = resolve_policies(feasible).clusters
    solver.solve_cluster(cluster, 600.0)
    phases = sum(1 for presolve, _ in spent if presolve)
    # at once, then every phase fell back
    assert phases > 1 and [presolve for presolve, _ in spent] == [False] + [False, True] * phases
    assert all(work <= OPTIMISE_WORK / 10 for presolve, work in spent if not presolve)

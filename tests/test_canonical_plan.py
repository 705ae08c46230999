"""A cluster's plan does not depend on the path CP-SAT's search takes.

The solver's last objective weighs every variable the plan is read from (compiler.solve.solver
._canonical), so among the plans that tie on every preference one is chosen the same way
whatever the search did first. Here each cluster of random fleets (tests/random_fleets.py) and
of a small benchmark fleet (MIG pools of many nodes, where most plans tie) is solved with the
solver's own parameters and again with others that send the search elsewhere (another seed,
randomised branching, a shorter or no probing presolve): every plan must be the same, to the
byte of its plan file.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import Size, generate
from compiler.catalog import load_catalog
from compiler.diagnostics import CompileError
from compiler.ir import ResolvedCluster
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.resolve import resolve
from compiler.solve import model, runner, solver
from compiler.solve.cpsat import cp_model
from compiler.solve.solver import solve_cluster
from tests import fleets
from tests.random_fleets import fleet

SEEDS = range(40)
BENCHMARK = Size(
    clusters=2,
    nodes_per_cluster=60,
    guarantees_per_cluster=20,
    tiers=8,
    mig_share=0.3,
    taint_share=0.05,
)
"""A fleet shaped like the benchmarks' (benchmarks/generate.py), small enough for make test."""
ELSEWHERE: dict[str, dict[str, Any]] = {
    "another seed": {"random_seed": 12345},
    "randomised search": {"randomize_search": True, "random_seed": 99},
    "one presolve pass": {"max_presolve_iterations": 1},
    "no probing": {"cp_model_probing_level": 0, "symmetry_level": 0},
}


def _benchmark_fleet(root: Path) -> Path:
    generate(BENCHMARK, 1, root)
    return root


def _random_fleet(seed: int) -> Callable[[Path], Path]:
    return lambda root: fleets.write_tree(root, fleet(seed))


FLEETS: dict[str, Callable[[Path], Path]] = {
    "benchmark": _benchmark_fleet,
    **{f"python -m tests.random_fleets {seed}": _random_fleet(seed) for seed in SEEDS},
}
"""Each fleet by how to see it, with what writes its policy files below a directory."""


def _clusters(write: Callable[[Path], Path]) -> list[ResolvedCluster]:
    with tempfile.TemporaryDirectory() as directory:
        root = write(Path(directory))
        try:
            return list(resolve(build_policies(load_policies(root)), load_catalog()).clusters)
        except CompileError:
            return []


def _plans(clusters: list[ResolvedCluster]) -> list[str | None]:
    plans: list[str | None] = []
    for cluster in clusters:
        try:
            plans.append(solve_cluster(cluster, 20.0).to_json())
        except CompileError:
            plans.append(None)  # infeasible: nothing to compare
    return plans


def _steered(parameters: dict[str, Any]) -> Callable[[float], Any]:
    own = model.new_solver

    def new_solver(time_limit: float) -> Any:
        solver = own(time_limit)
        for name, value in parameters.items():
            setattr(solver.parameters, name, value)
        return solver

    return new_solver


@pytest.mark.parametrize("name", FLEETS)
def test_plans_are_the_same_whatever_path_the_search_takes(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clusters = _clusters(FLEETS[name])
    expected = _plans(clusters)
    if name == "benchmark":  # a fleet whose every cluster has a plan to compare
        assert expected and all(expected)
    for variant, parameters in ELSEWHERE.items():
        with monkeypatch.context() as patch:
            patch.setattr(runner, "new_solver", _steered(parameters))
            assert _plans(clusters) == expected, f"{variant} ({name})"


@pytest.mark.parametrize("name", FLEETS)
def test_free_gpus_and_the_canonical_plan_in_one_phase_make_the_plan_of_two(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The solver weighs the most whole GPUs left free and the canonical objective in one
    phase; solved one after the other (as where their weights would be too large to be
    exact), the plans are the same."""
    clusters = _clusters(FLEETS[name])
    expected = _plans(clusters)
    monkeypatch.setattr(solver, "EXACT", 0)
    assert _plans(clusters) == expected


class _NoProofWithoutPresolve:
    """A solver whose search proves nothing without presolve, as on a model too hard for it:
    every phase must then be solved again with presolve, and the plan is the same."""

    def __init__(self, solver: Any, attempts: list[bool]) -> None:
        self._solver = solver
        self._attempts = attempts

    def __getattr__(self, name: str) -> Any:
        return getattr(self._solver, name)

    def solve(self, model: Any) -> Any:
        presolve = bool(self._solver.parameters.cp_model_presolve)
        self._attempts.append(presolve)
        if not presolve:
            return cp_model.UNKNOWN
        return self._solver.solve(model)


def test_a_phase_that_proves_nothing_without_presolve_is_solved_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clusters = _clusters(_benchmark_fleet)
    expected = _plans(clusters)
    assert expected and all(expected)
    attempts: list[bool] = []
    own = model.new_solver
    monkeypatch.setattr(
        runner, "new_solver", lambda limit: _NoProofWithoutPresolve(own(limit), attempts)
    )
    assert _plans(clusters) == expected
    # per cluster: all its phases at once (where it has several), then each phase quickly and
    # again with presolve
    laid_out = "".join("P" if presolve else "q" for presolve in attempts)
    assert "P" in laid_out and re.fullmatch("(q?(qP)+)+", laid_out), laid_out


@pytest.mark.parametrize("name", FLEETS)
def test_the_phases_solved_at_once_make_the_plan_of_the_phases_in_turn(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster's phases are first solved in one weighted objective; where that proves its
    optimum, the plan is the one the phases solved in turn give."""
    clusters = _clusters(FLEETS[name])
    expected = _plans(clusters)
    monkeypatch.setattr(solver, "_proven_at_once", lambda *args: None)
    assert _plans(clusters) == expected


def test_a_fleet_like_the_benchmarks_is_solved_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its clusters (MIG pools: a phase for the nodes that change, then the free GPUs and the
    canonical plan) prove their optimum in one solve, not two: where they did not, the
    attempt at once would only cost time."""
    clusters = _clusters(_benchmark_fleet)
    proven: list[bool] = []
    at_once = solver._proven_at_once

    def counted(*args: Any) -> Any:
        found = at_once(*args)
        proven.append(found is not None)
        return found

    monkeypatch.setattr(solver, "_proven_at_once", counted)
    assert all(_plans(clusters))
    assert len(proven) == len(clusters) and all(proven)

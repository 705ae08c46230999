"""Running CP-SAT for one cluster: a shared deadline, status checks, guarded model building."""

from __future__ import annotations

import time

from compiler.diagnostics import CompileError, fail
from compiler.ir import ResolvedCluster
from compiler.solve.cpsat import cp_model
from compiler.solve.model import EVERYTHING, ClusterModel, Scenario, build_model, new_solver
from compiler.solve.packing import TooManyPatterns


class OutOfTime(Exception):
    """The cluster's time budget is spent before a solve could start."""


class Deadline:
    """The time left for one cluster's solves."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def solver(self) -> cp_model.CpSolver:
        """A deterministic solver limited to the time that is left; OutOfTime when none is."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise OutOfTime
        return new_solver(left)


class Solution:
    """The value of every variable of a solved model, read from the solver at once: a call
    into the solver per variable cost more than the plan's reading of the values did."""

    def __init__(self, solver: cp_model.CpSolver) -> None:
        self._values: list[int] = list(solver.response_proto.solution)

    def __getitem__(self, var: cp_model.IntVar) -> int:
        index: int = var.index
        return self._values[index]


def timeout_error(cluster: ResolvedCluster) -> CompileError:
    """GF002: no verdict within the time limit (never a guess)."""
    return fail(
        "GF002",
        f"cluster {cluster.name}: the solver reached its time limit without a verdict",
        cluster.cluster.source.span(("metadata", "name")),
        "raise --solver-time-limit; nothing was written",
    )


def check_status(status: int, cluster: ResolvedCluster) -> None:
    """Raise the diagnostic for a solve that ended without a usable answer."""
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE):
        return
    if status == cp_model.UNKNOWN:
        raise timeout_error(cluster)
    raise fail(
        "GF001",
        f"cluster {cluster.name}: the solver rejected its model (status {status})",
        cluster.cluster.source.span(("metadata", "name")),
    )


def build_checked(
    cluster: ResolvedCluster, scenario: Scenario = EVERYTHING, require_all: bool = True
) -> ClusterModel:
    """build_model, with an oversized packing reported as a diagnostic."""
    try:
        return build_model(cluster, scenario, require_all)
    except (TooManyPatterns, ValueError) as error:
        raise fail(
            "GF402",
            f"cluster {cluster.name}: {error}",
            cluster.cluster.source.span(("spec", "nodePools")),
            "fewer gang sizes, host shares or MIG profiles per pool keep it small",
        ) from None

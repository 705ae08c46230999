"""Solve each cluster's model: a plan when every guarantee fits, an explanation when not."""

from __future__ import annotations

from ortools.sat.python import cp_model

from compiler.diagnostics import CompileError, Diagnostic, Span
from compiler.resolve import Guarantee, ResolvedCluster, ResolvedFleet
from compiler.solve.model import ClusterModel, build_model, new_solver
from compiler.solve.plan import WHOLE, ClusterPlan, TierCapacity

DEFAULT_TIME_LIMIT = 20.0
"""Seconds per cluster; generous, since real fleets solve in milliseconds."""


class SolverTimeout(Exception):
    """The solver stopped at its time limit without a verdict."""


def solve_fleet(fleet: ResolvedFleet, time_limit: float = DEFAULT_TIME_LIMIT) -> list[ClusterPlan]:
    """A plan per cluster, or CompileError naming every cluster whose guarantees conflict."""
    plans: list[ClusterPlan] = []
    problems: list[Diagnostic] = []
    for cluster in fleet.clusters:
        try:
            plans.append(solve_cluster(cluster, time_limit))
        except CompileError as error:
            problems.extend(error.diagnostics)
    if problems:
        raise CompileError(problems)
    return plans


def _status(solver: cp_model.CpSolver, built: ClusterModel, assume: list[str]) -> int:
    built.model.clear_assumptions()
    built.model.add_assumptions([built.enabled[k] for k in assume])
    return int(solver.solve(built.model))


def solve_cluster(cluster: ResolvedCluster, time_limit: float) -> ClusterPlan:
    """The plan of one cluster that serves every guarantee, preferring whole GPUs left free."""
    built = build_model(cluster)
    solver = new_solver(time_limit)
    keys = sorted(built.enabled)
    status = _status(solver, built, keys)
    if status == cp_model.INFEASIBLE:
        raise CompileError([explain(cluster, time_limit)])
    _check(status, cluster)
    built.model.clear_assumptions()
    for key in keys:
        built.model.add(built.enabled[key] == 1)
    mig_gpus = [v for (pool, config), v in sorted(built.gpus.items()) if config != WHOLE]
    built.model.minimize(sum(mig_gpus))
    status = int(solver.solve(built.model))
    _check(status, cluster)
    return _plan(cluster, built, solver)


def _check(status: int, cluster: ResolvedCluster) -> None:
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return
    if status == cp_model.UNKNOWN:
        raise CompileError(
            [
                Diagnostic(
                    "GF002",
                    f"cluster {cluster.name}: the solver reached its time limit without a verdict",
                    cluster.cluster.source.span(("metadata", "name")),
                    ("raise --solver-time-limit; nothing was written",),
                )
            ]
        )
    raise CompileError(
        [
            Diagnostic(
                "GF001",
                f"cluster {cluster.name}: the solver rejected its model (status {status})",
                cluster.cluster.source.span(("metadata", "name")),
            )
        ]
    )


def _plan(cluster: ResolvedCluster, built: ClusterModel, solver: cp_model.CpSolver) -> ClusterPlan:
    configs: dict[str, dict[str, int]] = {}
    for (pool, config), var in sorted(built.gpus.items()):
        value = solver.value(var)
        if value:
            configs.setdefault(pool, {})[config] = value
    assignments: dict[str, dict[str, int]] = {}
    for (key, kind), var in sorted(built.use.items()):
        value = solver.value(var)
        if value:
            assignments.setdefault(key, {})[kind] = value
    tiers = []
    for tier in cluster.tiers:
        capacity = sum(int(solver.value(built.supply[k.key])) for k in tier.kinds)
        mine = [g for g in cluster.guarantees if g.tier == tier.name]
        tiers.append(
            TierCapacity(
                tier.name, capacity, sum(g.count for g in mine), sum(g.limit for g in mine)
            )
        )
    return ClusterPlan(cluster.name, configs, assignments, tuple(tiers))


def explain(cluster: ResolvedCluster, time_limit: float) -> Diagnostic:
    """A diagnostic naming a minimal set of guarantees that cannot be served together."""
    built = build_model(cluster)
    solver = new_solver(time_limit)
    keys = sorted(built.enabled)
    status = _status(solver, built, keys)
    if status != cp_model.INFEASIBLE:  # the proof did not repeat within the time limit
        solved = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        _check(int(cp_model.UNKNOWN) if solved else status, cluster)
    index = {built.enabled[k].index: k for k in keys}
    core = sorted(index[i] for i in solver.sufficient_assumptions_for_infeasibility())
    for key in list(core):  # deletion pass: keep only what the conflict needs
        trial = [k for k in core if k != key]
        status = _status(solver, built, trial)
        if status == cp_model.INFEASIBLE:
            core = trial
        elif status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            _check(status, cluster)
    by_key = {g.key: g for g in cluster.guarantees}
    conflicting = [by_key[k] for k in core]
    demand = sum(g.count for g in conflicting)
    servable = _max_served(cluster, conflicting, time_limit)
    tiers = sorted({g.tier for g in conflicting})
    first = conflicting[0]
    return Diagnostic(
        "GF401",
        f"cluster {cluster.name}: tier{'s' if len(tiers) > 1 else ''} {', '.join(tiers)} "
        f"cannot serve these guarantees at once: they ask for {demand} devices, the devices "
        f"they select can serve at most {servable} of them (shortfall {demand - servable})",
        first.span,
        (
            f"cut {demand - servable} devices from these guarantees, or add capacity to the pools "
            f"the tier{'s' if len(tiers) > 1 else ''} select{'' if len(tiers) > 1 else 's'}",
        ),
        tuple(_related(g) for g in conflicting),
    )


def _related(guarantee: Guarantee) -> tuple[str, Span]:
    gang = f", gang {guarantee.gang}" if guarantee.gang > 1 else ""
    return (
        f"team {guarantee.team.name} guarantees {guarantee.count} x {guarantee.tier}"
        f"{gang} in namespace {guarantee.namespace}",
        guarantee.span,
    )


def _max_served(cluster: ResolvedCluster, guarantees: list[Guarantee], time_limit: float) -> int:
    built = build_model(cluster, require_all=False)
    wanted = {g.key for g in guarantees}
    for key, literal in built.enabled.items():
        built.model.add(literal == (1 if key in wanted else 0))
    built.model.maximize(sum(built.served[k] for k in sorted(wanted)))
    solver = new_solver(time_limit)
    status = int(solver.solve(built.model))
    _check(status, cluster)
    return int(solver.objective_value)

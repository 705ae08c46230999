"""Explain an infeasible cluster: a minimal conflicting set of clauses and the smallest fixes.

Clauses are guarantees and device taints. The solver's sufficient assumptions give a first set
of guarantees; a deletion pass over taints, then over guarantees, keeps only what the conflict
needs, so dropping any one clause of the result makes it feasible. Fixes are computed by the
solver: the fewest devices to cut from guarantees, or the fewest nodes to add to one pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diagnostics import Diagnostic, Span
from compiler.resolve import Guarantee, ResolvedCluster
from compiler.resolve.fleet import ResolvedTaint
from compiler.solve.cpsat import cp_model
from compiler.solve.gang_fit import group_note
from compiler.solve.model import ClusterModel, Scenario
from compiler.solve.runner import Deadline, build_checked, check_status, solve_status


@dataclass(frozen=True)
class Conflict:
    """A minimal infeasible set of clauses with its figures and fixes."""

    guarantees: tuple[Guarantee, ...]
    taints: tuple[ResolvedTaint, ...]
    demand: int
    servable: int
    cuts: dict[str, int]
    growth: dict[str, int]


def find_conflict(cluster: ResolvedCluster, deadline: Deadline) -> Conflict:
    """The minimal conflicting clauses of an infeasible cluster, with figures and fixes."""
    built = build_checked(cluster)
    keys = sorted(built.enabled)
    solver = _solve_assuming(built, keys, deadline)
    by_index = {built.enabled[k].index: k for k in keys}
    core = sorted(by_index[i] for i in solver.sufficient_assumptions_for_infeasibility())
    active = frozenset(t.name for t in cluster.taints if t.blocks_scheduling)
    for name in sorted(active):  # deletion pass over taints
        fewer = active - {name}
        if _infeasible(cluster, core, fewer, deadline):
            active = fewer
    built = build_checked(cluster, Scenario(active))
    for key in list(core):  # deletion pass over guarantees
        trial = [k for k in core if k != key]
        if solve_status(built, trial, deadline) == cp_model.INFEASIBLE:
            core = trial
    guarantees = tuple(g for g in cluster.guarantees if g.key in core)
    return Conflict(
        guarantees=guarantees,
        taints=tuple(t for t in cluster.taints if t.name in active),
        demand=sum(g.count for g in guarantees),
        servable=_max_served(cluster, set(core), active, deadline),
        cuts=_cuts(cluster, set(core), deadline),
        growth=_growth(cluster, guarantees, deadline),
    )


def _solve_assuming(built: ClusterModel, keys: list[str], deadline: Deadline) -> cp_model.CpSolver:
    built.model.clear_assumptions()
    built.model.add_assumptions([built.enabled[k] for k in keys])
    solver = deadline.solver()
    check_status(int(solver.solve(built.model)), built.cluster)
    return solver


def _infeasible(
    cluster: ResolvedCluster, core: list[str], taints: frozenset[str], deadline: Deadline
) -> bool:
    built = build_checked(cluster, Scenario(taints))
    return solve_status(built, core, deadline) == cp_model.INFEASIBLE


def _max_served(
    cluster: ResolvedCluster, keys: set[str], taints: frozenset[str], deadline: Deadline
) -> int:
    built = build_checked(cluster, Scenario(taints), require_all=False)
    for key, literal in built.enabled.items():
        built.model.add(literal == (1 if key in keys else 0))
    built.model.maximize(sum(built.served[k] for k in sorted(keys)))
    solver = deadline.solver()
    check_status(int(solver.solve(built.model)), cluster)
    return int(solver.objective_value)


def _cuts(cluster: ResolvedCluster, core: set[str], deadline: Deadline) -> dict[str, int]:
    """The fewest devices to cut (from any guarantee, the conflict's first) to make it fit."""
    built = build_checked(cluster, require_all=False)
    for literal in built.enabled.values():
        built.model.add(literal == 1)
    weight = len(cluster.guarantees) + 1
    built.model.maximize(
        sum(
            built.served[g.key] * (weight if g.key not in core else weight + 1)
            for g in cluster.guarantees
        )
    )
    solver = deadline.solver()
    check_status(int(solver.solve(built.model)), cluster)
    cuts = {g.key: g.count - int(solver.value(built.served[g.key])) for g in cluster.guarantees}
    return {k: v for k, v in cuts.items() if v > 0}


def _growth(
    cluster: ResolvedCluster, guarantees: tuple[Guarantee, ...], deadline: Deadline
) -> dict[str, int]:
    """Per pool the conflict's tiers select: the fewest nodes to add so that everything fits."""
    pools = sorted({k.pool for g in guarantees for k in cluster.tier(g.tier).kinds})
    growth: dict[str, int] = {}
    for pool in pools:
        built = build_checked(cluster, Scenario(growable_pool=pool))
        if built.extra is None:
            continue
        for literal in built.enabled.values():
            built.model.add(literal == 1)
        built.model.minimize(built.extra)
        solver = deadline.solver()
        status = int(solver.solve(built.model))
        check_status(status, cluster)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            growth[pool] = int(solver.objective_value)
    return growth


def explain(cluster: ResolvedCluster, deadline: Deadline) -> Diagnostic:
    """The GF401 diagnostic of an infeasible cluster."""
    conflict = find_conflict(cluster, deadline)
    tiers = sorted({g.tier for g in conflict.guarantees})
    shortfall = conflict.demand - conflict.servable
    taints = (
        (
            f", with device taint{'s' if len(conflict.taints) > 1 else ''} "
            f"{', '.join(t.name for t in conflict.taints)} in force"
        )
        if conflict.taints
        else ""
    )
    message = (
        f"cluster {cluster.name}: tier{'s' if len(tiers) > 1 else ''} {', '.join(tiers)} "
        f"cannot serve these guarantees at once{taints}: they ask for {conflict.demand} devices, "
        f"the devices they select can serve at most {conflict.servable} of them "
        f"(shortfall {shortfall})"
    )
    by_key = {g.key: g for g in cluster.guarantees}
    hints = []
    if conflict.cuts:
        parts = [
            f"{n} from {by_key[k].team.name}'s {by_key[k].tier} guarantee "
            f"(namespace {by_key[k].namespace})"
            for k, n in sorted(conflict.cuts.items())
        ]
        hints.append(f"to make cluster {cluster.name} fit: cut " + ", ".join(parts))
    for pool, nodes in sorted(conflict.growth.items()):
        hints.append(f"or add {nodes} node{'s' if nodes != 1 else ''} to pool {pool}")
    for guarantee in conflict.guarantees:
        if group_note(cluster, guarantee):
            tier = cluster.tier(guarantee.tier).tier
            hints.append(
                f"or let {guarantee.team.name}'s gangs of {guarantee.gang} use larger groups: "
                f"tier {tier.name} keeps each within one value of {tier.spec.gang_match_attribute}"
            )
    for taint in conflict.taints:
        hints.append(
            f"or remove device taint {taint.name} ({taint.taint.spec.key}), or let "
            "these teams tolerate it"
        )
    related: list[tuple[str, Span]] = [_guarantee_note(cluster, g) for g in conflict.guarantees]
    related += [
        (
            f"device taint {t.name} ({t.taint.spec.key}={t.taint.spec.value}) takes its "
            "devices from teams that do not tolerate it",
            t.taint.source.span(("spec", "key")),
        )
        for t in conflict.taints
    ]
    return Diagnostic(
        "GF401",
        message,
        conflict.guarantees[0].span if conflict.guarantees else cluster.cluster.source.span(),
        tuple(hints),
        tuple(related),
    )


def _guarantee_note(cluster: ResolvedCluster, guarantee: Guarantee) -> tuple[str, Span]:
    gang = f", gang {guarantee.gang}" if guarantee.gang > 1 else ""
    return (
        f"team {guarantee.team.name} guarantees {guarantee.count} x {guarantee.tier}"
        f"{gang} in namespace {guarantee.namespace}{group_note(cluster, guarantee)}",
        guarantee.span,
    )

"""Solve each cluster: a plan when every guarantee fits, a minimal explanation when not.

Among feasible plans the solver prefers, in this order: the fewest nodes whose MIG
configuration changes relative to the previous plan (each change drains a node), then the most
whole GPUs left free, then a fixed pseudo-random choice among plans still tied (`_canonical`),
so that the plan does not depend on the path the solver's search took.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping

from compiler.diagnostics import CompileError, Diagnostic, Problems
from compiler.ir import (
    ClusterPlan,
    DeviceKey,
    GuaranteeKey,
    MigConfig,
    ResolvedCluster,
    ResolvedFleet,
    Steering,
    previous_label,
    run_length,
)
from compiler.limits import DEFAULT_EXPLAIN_TIME_LIMIT, DEFAULT_TIME_LIMIT
from compiler.parallel import map_in_order
from compiler.solve.cpsat import cp_model
from compiler.solve.explain import explain
from compiler.solve.gang_fit import oversized_gangs
from compiler.solve.model import ClusterModel
from compiler.solve.runner import (
    Deadline,
    OutOfTime,
    Solution,
    build_checked,
    check_status,
    timeout_error,
)
from compiler.solve.usable import Piece, idle_partitions, pieces, tier_use
from compiler.solve.witness import placements


def solve_fleet(
    fleet: ResolvedFleet,
    time_limit: float = DEFAULT_TIME_LIMIT,
    previous: Mapping[str, Steering] | None = None,
    explain_time_limit: float = DEFAULT_EXPLAIN_TIME_LIMIT,
) -> list[ClusterPlan]:
    """A plan per cluster, or CompileError naming every cluster whose guarantees conflict."""

    def solve_one(cluster: ResolvedCluster) -> ClusterPlan | list[Diagnostic]:
        try:
            return solve_cluster(
                cluster, time_limit, (previous or {}).get(cluster.name), explain_time_limit
            )
        except CompileError as error:
            return list(error.diagnostics)

    results = map_in_order(solve_one, fleet.clusters)
    Problems(d for r in results if isinstance(r, list) for d in r).raise_if_errors()
    return [r for r in results if isinstance(r, ClusterPlan)]


Phase = tuple[cp_model.LinearExprT, int, int]
"""An objective to minimise, its largest value (its smallest is 0), and how many preferences
it holds."""


class Infeasible(Exception):
    """The solver proved that the cluster's guarantees cannot all be served."""


def solve_cluster(
    cluster: ResolvedCluster,
    time_limit: float,
    previous: Steering | None = None,
    explain_time_limit: float = DEFAULT_EXPLAIN_TIME_LIMIT,
) -> ClusterPlan:
    """The preferred plan of one cluster that serves every guarantee; when there is none,
    GF401 explained within a time budget of its own (the verdict is known before it starts)."""
    try:
        return _solve_cluster(cluster, Deadline(time_limit), previous)
    except OutOfTime:
        raise timeout_error(cluster) from None
    except Infeasible:
        raise Problems([explain(cluster, explain_time_limit)]).error() from None


def _solve_cluster(
    cluster: ResolvedCluster, deadline: Deadline, previous: Steering | None
) -> ClusterPlan:
    # no group holds gangs this big: nothing else to explain
    Problems(oversized_gangs(cluster)).raise_if_errors()
    built = build_checked(cluster)
    for literal in built.enabled.values():
        built.model.add(literal == 1)
    # the preferences in turn, each phase's objective minimised and its best value then held
    # fixed: (objective, its largest value, how many preferences it holds); the smallest is 0
    nodes = sum(group.count for group in built.groups)
    phases: list[Phase] = []
    if idle := idle_partitions(built):  # tainted nodes partitioned for nobody: make them none
        phases.append((sum(built.config_nodes(group, config) for group, config in idle), nodes, 1))
    if any(len(configs) > 1 for configs in built.configs.values()):  # else nothing can change
        phases.append((_changes(built, previous), nodes, 1))
    # the most whole GPUs left free, then the canonical plan among those, in one phase (one
    # solve less), unless their sum would be too large to be exact
    gpus = sum(group.count * group.pool.pool.gpus_per_node for group in built.groups)
    canonical, most = _canonical(built)
    tie_break: list[Phase] = [(gpus - built.free_whole_gpus(), gpus, 1), (canonical, most, 1)]
    phases += [both] if (both := _at_once(tie_break)) else tie_break
    # Every phase in one solve, first, if that proves its optimum without presolve (the
    # clusters of fleets L and XL do: one solve instead of two); else phase by phase, as a
    # hard model proves each phase sooner than all at once (tests/test_solver_bounds.py's
    # feasible fleet: 8.0 s phase by phase, 10.7 s at once).
    everything = _at_once(phases) if len(phases) > 1 else None
    if everything and (proven := _proven_at_once(built, everything, deadline)) is not None:
        return extract_plan(built, proven, previous)
    for phase in phases:
        solution, best = _optimise(built, phase, deadline, cluster)
        built.model.add(phase[0] == best)
    return extract_plan(built, solution, previous)


def _at_once(phases: list[Phase]) -> Phase | None:
    """The phases (most important first) as one objective that minimises them in turn: each
    weighted above the largest value of all that follow it. None where that sum could reach
    EXACT."""
    objective, largest, held = phases[-1]
    for earlier, most, preferences in reversed(phases[:-1]):
        weight = largest + 1
        if (most + 1) * weight >= EXACT:
            return None
        objective = cp_model.LinearExpr.weighted_sum([earlier, objective], [weight, 1])
        largest, held = most * weight + largest, held + preferences
    return objective, largest, held


def _canonical(built: ClusterModel) -> tuple[cp_model.LinearExpr, int]:
    """A last objective with a fixed pseudo-random weight per variable the plan is read from
    (nodes per configuration and packing pattern, gangs per slot), and its largest value.

    Plans that tie on every preference differ in which configuration and pattern each node
    runs and which pool serves whom; this picks one the same way on every run, whatever path
    the search took, so compiling again from the written plan reproduces it byte for byte.
    """
    gangs = sorted(built.gangs)
    nodes = sorted(built.nodes)
    labels = [
        (group, built.configs[group][config].label, pattern) for group, config, pattern in nodes
    ]
    variables = [built.gangs[n] for n in gangs] + [built.nodes[n] for n in nodes]
    weights = [_weight(n) for n in gangs] + [_weight(("nodes", *n)) for n in labels]
    most = sum(w * max(v.proto.domain) for v, w in zip(variables, weights, strict=True))
    return cp_model.LinearExpr.weighted_sum(variables, weights), most


def _weight(name: tuple[object, ...]) -> int:
    """A variable's weight in the canonical objective: from a hash of its name."""
    digest = hashlib.sha256("/".join(map(str, name)).encode()).digest()
    return 1 + int.from_bytes(digest[:4], "big") % 1_000_003


EXACT = 2**53
"""Integers below this are exact in a double, as CP-SAT's linear relaxation reads objectives."""

OPTIMISE_WORK = 2.0
"""CP-SAT deterministic time units per preference an optimisation phase holds
(machine-independent)."""

WITHOUT_PRESOLVE_WORK = 0.1
"""The deterministic time a phase (or all at once) first gets without presolve. The clusters
of fleets L, L-mixed and XL prove their optimum, all phases at once, within two thousandths
of it (1.6e-4 at most), while a model hard enough not to (many MIG pools, gangs) loses only
this, once at once and once a phase, before each phase is solved with presolve and
OPTIMISE_WORK: with OPTIMISE_WORK here too, tests/test_solver_bounds.py's feasible fleet took
9.6 units (23 s) instead of 3.9 (7.7 s)."""


def _hint(built: ClusterModel, solution: Solution) -> None:
    """Start the next phase from this phase's plan."""
    built.model.clear_hints()  # type: ignore[no-untyped-call]
    variables = [*built.nodes.values(), *built.gangs.values()]
    hint = built.model.proto.solution_hint  # at once: add_hint costs 10 us a variable
    hint.vars.extend([var.index for var in variables])
    hint.values.extend([solution[var] for var in variables])


def _optimise(
    built: ClusterModel, phase: Phase, deadline: Deadline, cluster: ResolvedCluster
) -> tuple[Solution, int]:
    """The plan that minimises the phase's objective best within the work of the
    preferences it holds, and the objective's value there."""
    status, solver = _minimise(built, phase, deadline, quick_only=False)
    check_status(status, cluster)  # what remains: infeasible, or a plan
    if status == cp_model.INFEASIBLE:
        raise Infeasible
    solution = Solution(solver)
    _hint(built, solution)
    return solution, int(solver.objective_value)


def _proven_at_once(built: ClusterModel, phase: Phase, deadline: Deadline) -> Solution | None:
    """The plan that minimises the phase's objective if its quick attempt proves it
    optimal, else None."""
    status, solver = _minimise(built, phase, deadline, quick_only=True)
    if status == cp_model.INFEASIBLE:
        raise Infeasible
    return Solution(solver) if status == cp_model.OPTIMAL else None


def _minimise(
    built: ClusterModel, phase: Phase, deadline: Deadline, quick_only: bool
) -> tuple[int, cp_model.CpSolver]:
    """Minimise the phase's objective: quickly first, then (unless `quick_only`) with all of
    CP-SAT where that proved nothing. The last attempt's status and solver."""
    objective, _, preferences = phase
    built.model.minimize(objective)
    # A cluster's model is small (its variables count nodes and gangs, never GPUs), and on a
    # small model CP-SAT's presolve costs more than the search: fleet L's 50 clusters solve
    # in 0.55 s of CPU without it, 1.1 s with it in every phase; the search for symmetries
    # adds about 6% to their solves' instructions (callgrind). A phase that proves nothing
    # without either within WITHOUT_PRESOLVE_WORK (neither an optimum nor that no plan
    # exists) is solved again with both, as every phase was before; when each proves its
    # optimum, the plan is the same either way (the last objective is canonical).
    attempts = ((True, WITHOUT_PRESOLVE_WORK), (False, OPTIMISE_WORK * preferences))
    for quick, work in attempts[:1] if quick_only else attempts:
        solver = deadline.solver()
        # Each phase gets a bounded, deterministic amount of work (OPTIMISE_WORK a preference
        # it holds), so one cannot eat the time of the next; the best plan found within it
        # is kept (feasibility is never guessed).
        solver.parameters.max_deterministic_time = work
        if quick:
            solver.parameters.cp_model_presolve = False
            solver.parameters.symmetry_level = 0
        status = int(solver.solve(built.model))
        if status in (cp_model.OPTIMAL, cp_model.INFEASIBLE):
            break
    return status, solver


def _changes(built: ClusterModel, previous: Steering | None) -> cp_model.LinearExprT:
    """Nodes whose configuration label differs from the previous plan's."""
    terms: list[cp_model.LinearExprT] = []
    for group in built.groups:
        pool, names = group.pool.pool.name, built.cluster.node_names(group.pool)
        before = Counter(previous_label(previous, pool, i, names[i]) for i in group.nodes)
        kept: list[cp_model.LinearExprT] = []
        for index, config in enumerate(built.configs[group.key]):
            if not before[config.label]:
                continue
            keep = built.model.new_int_var(
                0, before[config.label], f"keep[{group.key},{config.label}]"
            )
            built.model.add(keep <= built.config_nodes(group.key, index))
            kept.append(keep)
        terms.append(group.count - sum(kept))
    return sum(terms)


def extract_plan(built: ClusterModel, solution: Solution, previous: Steering | None) -> ClusterPlan:
    """Turn a solved model into a plan: labels per node, assignments, capacity per tier."""
    cluster = built.cluster
    labels: dict[str, dict[int, str]] = {p.pool.name: {} for p in cluster.pools}
    mig_configs: dict[str, MigConfig] = {}
    found: list[Piece] = []
    for group in built.groups:
        pool = group.pool.pool.name
        counts: dict[str, int] = {}
        for index, config in enumerate(built.configs[group.key]):
            nodes = sum(solution[var] for var in built.config_vars(group.key, index))
            if not nodes:
                continue
            counts[config.label] = nodes
            mig_configs[config.label] = MigConfig(config.label, config.per_gpu())
            found.extend(pieces(group, config, nodes))
        names = cluster.node_names(group.pool)
        labels[pool].update(
            _assign_nodes({i: names[i] for i in group.nodes}, counts, pool, previous)
        )
    node_configs = {
        pool: run_length([by_index[i] for i in sorted(by_index)])
        for pool, by_index in sorted(labels.items())
    }
    changed: list[str] = []
    for p in cluster.pools:
        names = cluster.node_names(p)
        changed += [
            names[i]
            for i, label in sorted(labels[p.pool.name].items())
            if label != previous_label(previous, p.pool.name, i, names[i])
        ]
    assignments: dict[GuaranteeKey, dict[DeviceKey, int]] = {}
    for (key, group_key, device), var in sorted(built.gangs.items()):
        if gangs := solution[var]:
            kind = DeviceKey(group_key.pool, device)
            per_kind = assignments.setdefault(key, {})
            per_kind[kind] = per_kind.get(kind, 0) + gangs * built.guarantee(key).gang
    tiers = [tier_use(cluster, tier.name, found) for tier in cluster.tiers]
    listed = {p.pool.name: p.pool.listed_names for p in cluster.pools}
    return ClusterPlan(
        cluster.name,
        node_configs,
        dict(sorted(mig_configs.items())),
        assignments,
        tuple(tiers),
        tuple(sorted(ns for team in cluster.teams for ns in team.spec.namespaces)),
        tuple(changed),
        placements(built, solution, labels),
        {g.key: g.limit for g in sorted(cluster.guarantees, key=lambda g: g.key)},
        {pool: names for pool, names in listed.items() if names is not None},
    )


def _assign_nodes(
    nodes: dict[int, str], counts: dict[str, int], pool: str, previous: Steering | None
) -> dict[int, str]:
    """Give nodes (index -> name) their labels, keeping each node's previous label where the
    counts allow."""
    remaining = dict(counts)
    assigned: dict[int, str] = {}
    for index, name in nodes.items():
        label = previous_label(previous, pool, index, name)
        if remaining.get(label, 0) > 0:
            assigned[index] = label
            remaining[label] -= 1
    pending = iter([label for label in sorted(remaining) for _ in range(remaining[label])])
    for index in nodes:
        if index not in assigned:
            assigned[index] = next(pending)
    return assigned

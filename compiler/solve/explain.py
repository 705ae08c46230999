"""Explain an infeasible cluster: a minimal conflicting set of clauses and fixes that work.

Clauses are guarantees and device taints. The solver's sufficient assumptions give a first set
of guarantees; a deletion pass over taints, then over guarantees, keeps only what the conflict
needs, so dropping any one clause of the result makes it feasible. Fixes are computed by the
solver (the fewest devices to cut, the fewest nodes to add to one pool; removing or tolerating
a taint; letting gangs use whole nodes), and each is applied to the cluster and solved again
before it is offered: a fix that does not make the whole cluster fit is never printed.

The explanation runs after infeasibility is proven, on a time budget of its own: running out
never changes the verdict. It only makes the explanation say what it could not finish: a
conflict set that may not be minimal, a shortfall that is a bound, fixes left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from compiler.diagnostics import CompileError, Diagnostic, Span
from compiler.ir import Guarantee, GuaranteeKey, ResolvedCluster, ResolvedTaint
from compiler.limits import DEFAULT_EXPLAIN_TIME_LIMIT
from compiler.solve.cpsat import cp_model
from compiler.solve.fixes import Cut, Edit, Grow, RemoveTaint, Tolerate, Ungroup
from compiler.solve.gang_fit import group_note
from compiler.solve.model import EVERYTHING, ClusterModel, Scenario
from compiler.solve.runner import Deadline, OutOfTime, build_checked

EXPLAIN_WORK = 5.0
"""CP-SAT deterministic time units per explanation solve, so that no single step of the
explanation can use up the time of the others (real fleets need a tiny fraction of it)."""


def _solved(status: int) -> bool:
    """Whether a solve found a plan (optimal, or the best within its work limit)."""
    return status in (cp_model.OPTIMAL, cp_model.FEASIBLE)


@dataclass
class Budget:
    """The explanation's own time, and whether anything was cut short for want of it."""

    seconds: float
    deadline: Deadline = field(init=False)
    exhausted: bool = False

    def __post_init__(self) -> None:
        self.deadline = Deadline(self.seconds)

    def solve(self, built: ClusterModel) -> tuple[int, cp_model.CpSolver] | None:
        """Solve within the budget; None (and the budget marked exhausted) without an answer."""
        try:
            solver = self.deadline.solver()
        except OutOfTime:
            self.exhausted = True
            return None
        solver.parameters.max_deterministic_time = EXPLAIN_WORK
        status = int(solver.solve(built.model))
        if not _solved(status) and status != cp_model.INFEASIBLE:
            self.exhausted = True
            return None
        return status, solver

    def build(
        self, cluster: ResolvedCluster, scenario: Scenario = EVERYTHING, require_all: bool = True
    ) -> ClusterModel | None:
        """The model of a (changed) cluster; None when it is too large to build."""
        try:
            return build_checked(cluster, scenario, require_all)
        except CompileError:
            return None

    def fits(self, cluster: ResolvedCluster) -> bool | None:
        """Whether every guarantee of `cluster` can be served; None when not known in time."""
        built = self.build(cluster)
        if built is None:
            return None
        for literal in built.enabled.values():
            built.model.add(literal == 1)
        result = self.solve(built)
        return None if result is None else _solved(result[0])


@dataclass(frozen=True)
class Servable:
    """The most devices of a conflict its devices can serve: exact, or an upper bound."""

    devices: int
    exact: bool


@dataclass(frozen=True)
class Fix:
    """A fix as it is printed, and the change it makes (checked: with it, every guarantee
    fits)."""

    hint: str
    edit: Edit


@dataclass(frozen=True)
class Conflict:
    """A conflicting set of clauses with its figures and the fixes that were checked to work."""

    guarantees: tuple[Guarantee, ...]
    taints: tuple[ResolvedTaint, ...]
    minimal: bool
    """False when the budget ran out before every clause was tried without."""
    demand: int
    servable: Servable | None
    cuts: dict[GuaranteeKey, int]
    """Devices to cut per guarantee key; empty when no cut was found and checked in time."""
    fewest_cut: bool
    growth: dict[str, int]
    """Per pool, nodes to add that make the cluster fit (checked)."""
    fewest_growth: frozenset[str]
    """The pools of `growth` whose count is proven the fewest."""
    fixes: tuple[Fix, ...]
    """Every fix that was checked to work, in the order printed."""
    complete: bool
    """False when the budget ran out anywhere in the explanation."""


def find_conflict(cluster: ResolvedCluster, budget: Budget) -> Conflict:
    """The conflicting clauses of an infeasible cluster, with figures and checked fixes."""
    core, active, minimal = _minimal_core(cluster, budget)
    guarantees = tuple(g for g in cluster.guarantees if g.key in core)
    taints = tuple(t for t in cluster.taints if t.name in active)
    cuts, fewest_cut = _cuts(cluster, set(core), budget)
    growth, fewest_growth = _growth(cluster, guarantees, budget)
    cut = _cut_fixes(cluster, cuts, fewest_cut)
    candidates = [
        *cut,
        *_growth_fixes(growth, fewest_growth),
        *_gang_fixes(cluster, guarantees),
        *_taint_fixes(cluster, guarantees, taints),
    ]
    fixes = tuple(fix for fix in candidates if budget.fits(fix.edit.apply(cluster)))
    return Conflict(
        guarantees=guarantees,
        taints=taints,
        minimal=minimal,
        demand=sum(g.count for g in guarantees),
        servable=_max_served(cluster, set(core), active, budget),
        cuts=cuts if any(fix is cut[0] for fix in fixes) else {},
        fewest_cut=fewest_cut,
        growth=growth,
        fewest_growth=fewest_growth,
        fixes=fixes,
        complete=not budget.exhausted,
    )


def _minimal_core(
    cluster: ResolvedCluster, budget: Budget
) -> tuple[list[GuaranteeKey], frozenset[str], bool]:
    """Guarantee keys and taint names of a conflict, and whether each was tried without."""
    minimal = True
    keys = sorted(g.key for g in cluster.guarantees)
    core = keys
    built = budget.build(cluster)
    if built is not None:
        built.model.add_assumptions([built.enabled[k] for k in keys])
        result = budget.solve(built)
        if result is not None and result[0] == cp_model.INFEASIBLE:
            by_index = {built.enabled[k].index: k for k in keys}
            core = sorted(by_index[i] for i in result[1].sufficient_assumptions_for_infeasibility())
    active = frozenset(t.name for t in cluster.taints if t.blocks_scheduling)
    for name in sorted(active):  # deletion pass over taints
        verdict = _infeasible(cluster, core, active - {name}, budget)
        if verdict is None:
            minimal = False
        elif verdict:
            active -= {name}
    for key in list(core):  # deletion pass over guarantees
        verdict = _infeasible(cluster, [k for k in core if k != key], active, budget)
        if verdict is None:
            minimal = False
        elif verdict:
            core = [k for k in core if k != key]
    return core, active, minimal and not budget.exhausted


def _infeasible(
    cluster: ResolvedCluster, core: list[GuaranteeKey], taints: frozenset[str], budget: Budget
) -> bool | None:
    """Whether `core`'s guarantees alone conflict with only `taints` in force."""
    built = budget.build(cluster, Scenario(taints))
    if built is None:
        return None
    built.model.add_assumptions([built.enabled[k] for k in core])
    result = budget.solve(built)
    return None if result is None else result[0] == cp_model.INFEASIBLE


def _max_served(
    cluster: ResolvedCluster, keys: set[GuaranteeKey], taints: frozenset[str], budget: Budget
) -> Servable | None:
    built = budget.build(cluster, Scenario(taints), require_all=False)
    if built is None:
        return None
    for key, literal in built.enabled.items():
        built.model.add(literal == (1 if key in keys else 0))
    built.model.maximize(sum(built.served[k] for k in sorted(keys)))
    result = budget.solve(built)
    if result is None or not _solved(result[0]):
        return None
    status, solver = result
    if status == cp_model.OPTIMAL:
        return Servable(int(solver.objective_value), exact=True)
    return Servable(math.floor(solver.best_objective_bound), exact=False)


def _cuts(
    cluster: ResolvedCluster, core: set[GuaranteeKey], budget: Budget
) -> tuple[dict[GuaranteeKey, int], bool]:
    """The fewest devices to cut so that the cluster fits, taken first from the conflict's
    guarantees (lexicographically: fewer devices always wins), and whether it is proven the
    fewest. ({}, False) when none was found in time."""
    built = budget.build(cluster, require_all=False)
    if built is None:
        return {}, False
    for literal in built.enabled.values():
        built.model.add(literal == 1)
    total = sum(built.served[g.key] for g in cluster.guarantees)
    built.model.maximize(total)
    result = budget.solve(built)
    if result is None or not _solved(result[0]):
        return {}, False
    status, solver = result
    fewest = status == cp_model.OPTIMAL
    if fewest:  # among the fewest cuts, keep the guarantees outside the conflict whole
        built.model.add(total == int(solver.objective_value))
        built.model.maximize(
            sum(built.served[g.key] for g in cluster.guarantees if g.key not in core)
        )
        result = budget.solve(built) or result
        if _solved(result[0]):
            solver = result[1]
    cuts = {g.key: g.count - int(solver.value(built.served[g.key])) for g in cluster.guarantees}
    return {k: v for k, v in cuts.items() if v > 0}, fewest


def _growth(
    cluster: ResolvedCluster, guarantees: tuple[Guarantee, ...], budget: Budget
) -> tuple[dict[str, int], frozenset[str]]:
    """Per pool the conflict's tiers select: nodes to add so that the cluster fits, checked on
    the grown cluster, and the pools where one node fewer is proven not to fit."""
    pools = sorted({k.pool for g in guarantees for k in cluster.tier(g.tier).kinds})
    growth: dict[str, int] = {}
    fewest: set[str] = set()
    for pool in pools:
        nodes = _growth_estimate(cluster, pool, budget)
        if nodes is None or not budget.fits(Grow(pool, nodes).apply(cluster)):
            continue
        nodes, proven = _fewest(partial(_fits_grown, budget, cluster, pool), nodes)
        growth[pool] = nodes
        if proven:
            fewest.add(pool)
    return growth, frozenset(fewest)


def _fits_grown(budget: Budget, cluster: ResolvedCluster, pool: str, nodes: int) -> bool | None:
    return budget.fits(Grow(pool, nodes).apply(cluster))


def _growth_estimate(cluster: ResolvedCluster, pool: str, budget: Budget) -> int | None:
    """The solver's fewest nodes to add to `pool`; None when growing it cannot help or no
    answer came in time."""
    built = budget.build(cluster, Scenario(growable_pool=pool))
    if built is None or built.extra is None:
        return None
    for literal in built.enabled.values():
        built.model.add(literal == 1)
    built.model.minimize(built.extra)
    result = budget.solve(built)
    if result is None or not _solved(result[0]):
        return None
    return max(int(result[1].objective_value), 1)


def _fewest(fits: Callable[[int], bool | None], known: int) -> tuple[int, bool]:
    """The smallest n <= `known` with fits(n), given fits(known), by binary search (more nodes
    never hurt), trying one fewer than the estimate first; and whether one fewer is proven not
    to fit (rather than not known in time)."""
    low, high, proven = 0, known, True  # 0 nodes added: the cluster as written, infeasible
    middle = known - 1
    while high - low > 1:
        verdict = fits(middle)
        if verdict:
            high = middle
        else:
            low, proven = middle, verdict is False
        middle = (low + high) // 2
    return high, proven


def _cut_fixes(cluster: ResolvedCluster, cuts: dict[GuaranteeKey, int], fewest: bool) -> list[Fix]:
    if not cuts:
        return []
    by_key = {g.key: g for g in cluster.guarantees}
    parts = [
        f"{n} from {by_key[k].team.name}'s {by_key[k].tier} guarantee "
        f"(namespace {by_key[k].namespace})"
        for k, n in sorted(cuts.items())
    ]
    unproven = "" if fewest else " (a smaller cut may exist: it was not proven in time)"
    hint = f"to make cluster {cluster.name} fit: cut {', '.join(parts)}{unproven}"
    return [Fix(hint, Cut(tuple(sorted(cuts.items()))))]


def _growth_fixes(growth: dict[str, int], fewest: frozenset[str]) -> list[Fix]:
    return [
        Fix(
            f"or add {nodes} node{'s' if nodes != 1 else ''} to pool {pool}"
            + ("" if pool in fewest else " (fewer may do: it was not proven in time)"),
            Grow(pool, nodes),
        )
        for pool, nodes in sorted(growth.items())
    ]


def _gang_fixes(cluster: ResolvedCluster, guarantees: tuple[Guarantee, ...]) -> list[Fix]:
    fixes = []
    for tier_name in sorted({g.tier for g in guarantees if group_note(cluster, g)}):
        tier = cluster.tier(tier_name).tier
        teams = sorted({g.team.name for g in guarantees if g.tier == tier_name})
        hint = (
            f"or let the gangs of tier {tier.name} ({', '.join(teams)}) use whole nodes: it "
            f"keeps each within one value of {tier.spec.gang_match_attribute}"
        )
        fixes.append(Fix(hint, Ungroup(tier_name)))
    return fixes


def _taint_fixes(
    cluster: ResolvedCluster, guarantees: tuple[Guarantee, ...], taints: tuple[ResolvedTaint, ...]
) -> list[Fix]:
    fixes = []
    for taint in taints:
        key = taint.taint.spec.key
        fixes.append(Fix(f"or remove device taint {taint.name} ({key})", RemoveTaint(taint.name)))
        teams = sorted({g.team.name for g in guarantees} - set(taint.tolerated_by))
        if teams:
            hint = f"or let team{'s' if len(teams) > 1 else ''} {', '.join(teams)} tolerate {key}"
            fixes.append(Fix(hint, Tolerate(taint.name, tuple(teams))))
    return fixes


def explain(cluster: ResolvedCluster, seconds: float = DEFAULT_EXPLAIN_TIME_LIMIT) -> Diagnostic:
    """The GF401 diagnostic of a cluster proven infeasible, explained within `seconds`."""
    budget = Budget(seconds)
    conflict = find_conflict(cluster, budget)
    tiers = sorted({g.tier for g in conflict.guarantees})
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
        f"cannot serve these guarantees at once{taints}: they ask for {conflict.demand} devices"
    )
    if conflict.servable is not None:
        shortfall = conflict.demand - conflict.servable.devices
        message += (
            f", the devices they select can serve at most {conflict.servable.devices} of them "
            f"(shortfall {'' if conflict.servable.exact else 'at least '}{shortfall})"
        )
    hints = [fix.hint for fix in conflict.fixes]
    if not conflict.complete:
        unfinished = (
            "this set of guarantees may not be minimal, and " if not conflict.minimal else ""
        )
        hints.append(
            f"the explanation stopped at its time budget of {seconds:g} s: {unfinished}fixes "
            "not checked in time are left out (raise --explain-time-limit for more)"
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

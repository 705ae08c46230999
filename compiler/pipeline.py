"""The pipeline: load -> model -> resolve -> solve -> emit, each stage a pure function."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compiler.catalog import load_catalog
from compiler.diagnostics import Diagnostic, fail
from compiler.emit import build_tree
from compiler.emit.kueue_quota import overcommitted
from compiler.ir import ClusterPlan, ResolvedFleet
from compiler.load import load_policies
from compiler.model import build_policies
from compiler.report import build_report
from compiler.resolve import resolve
from compiler.solve import DEFAULT_EXPLAIN_TIME_LIMIT, DEFAULT_TIME_LIMIT, solve_fleet
from compiler.timings import NO_TIMINGS, StageTimings

REPORT = "report.md"
"""The capacity report below out/; compared with no previous plan, so out/ stays a pure
function of the policies (`gpufleet report --previous` prints the comparison)."""


@dataclass(frozen=True)
class Compiled:
    """The result of a successful compile: the output tree, the plans and the warnings."""

    fleet: ResolvedFleet
    plans: tuple[ClusterPlan, ...]
    tree: dict[str, str]

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """Warnings found on the way (the compile still succeeded)."""
        return self.fleet.warnings


def check_policies(
    policies: Path,
    time_limit: float = DEFAULT_TIME_LIMIT,
    previous: dict[str, ClusterPlan] | None = None,
    timings: StageTimings = NO_TIMINGS,
    explain_time_limit: float = DEFAULT_EXPLAIN_TIME_LIMIT,
) -> tuple[ResolvedFleet, tuple[ClusterPlan, ...]]:
    """Every stage but emit and write; raises CompileError on the first failing stage.

    `previous` holds the last compile's plans: the solver keeps their MIG layouts where it can.
    `time_limit` bounds each cluster's solve; an infeasible cluster's explanation then gets
    `explain_time_limit` of its own.
    """
    fleet = resolve_policies(policies, timings)
    with timings.stage("solve"):
        plans = tuple(solve_fleet(fleet, time_limit, previous, explain_time_limit))
    check_kueue_promises(fleet, plans)
    return fleet, plans


def resolve_policies(policies: Path, timings: StageTimings = NO_TIMINGS) -> ResolvedFleet:
    """Load, model and resolve the policies (what needs no solving: ownership, migration)."""
    warnings: list[Diagnostic] = []
    with timings.stage("load"):
        documents = load_policies(policies, warnings)
    with timings.stage("model"):
        policies_model = build_policies(documents, warnings)
    with timings.stage("resolve"):
        return resolve(policies_model, load_catalog())


def check_kueue_promises(fleet: ResolvedFleet, plans: tuple[ClusterPlan, ...]) -> None:
    """A self-check that outlives any refactor: Kueue's quotas never admit more devices than
    the solved plan can give (GF001 if they would: a bug in gpufleet, not in the policy)."""
    for cluster, plan in zip(fleet.clusters, plans, strict=True):
        if cluster.cluster.spec.kueue.enabled and (found := overcommitted(cluster, plan)):
            raise fail(
                "GF001",
                f"cluster {cluster.name}: the Kueue quotas gpufleet would write promise more than "
                f"the plan gives ({'; '.join(found)})",
                cluster.cluster.source.span(("spec", "kueue")),
                "this is a gpufleet bug: please report it with the policies",
            )


def compile_policies(
    policies: Path,
    time_limit: float = DEFAULT_TIME_LIMIT,
    previous: dict[str, ClusterPlan] | None = None,
    timings: StageTimings = NO_TIMINGS,
    explain_time_limit: float = DEFAULT_EXPLAIN_TIME_LIMIT,
) -> Compiled:
    """Compile a policy directory into the output tree, in memory (report.md included)."""
    fleet, plans = check_policies(policies, time_limit, previous, timings, explain_time_limit)
    with timings.stage("emit"):
        tree = {**build_tree(fleet, list(plans)), REPORT: build_report(fleet, plans)}
    return Compiled(fleet, plans, dict(sorted(tree.items())))

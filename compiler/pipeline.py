"""The pipeline: load -> model -> resolve -> solve -> emit, each stage a pure function."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from compiler.cache.reuse import Reuse
from compiler.catalog import load_catalog
from compiler.diagnostics import Diagnostic
from compiler.emit.assemble import assemble_tree
from compiler.file_bytes import FileDigest
from compiler.ir import ClusterPlan, ResolvedFleet, Steering
from compiler.limits import DEFAULT_EXPLAIN_TIME_LIMIT, DEFAULT_TIME_LIMIT
from compiler.load import load_policies
from compiler.model import Policies, build_policies
from compiler.parallel import warm_worker
from compiler.per_cluster import check_kueue_promise, compile_clusters, warm_up
from compiler.report import build_report
from compiler.resolve import resolve
from compiler.timings import NO_TIMINGS, StageTimings

REPORT = "report.md"
"""The capacity report below out/; compared with no previous plan, so out/ stays a pure
function of the policies (`gpufleet report --previous` prints the comparison)."""


@dataclass(frozen=True)
class Compiled:
    """The result of a successful compile: the output tree, the plans and the warnings."""

    fleet: ResolvedFleet
    plans: tuple[ClusterPlan, ...]
    tree: Mapping[str, str]
    """Path below out/ -> text, in path order (emit.assemble.OutputTree: a cached cluster's
    texts are unpacked only when read)."""
    digests: dict[str, FileDigest] = field(default_factory=dict)
    """The FileDigest of the tree's files the compile cache gave or kept (the write hashes
    the rest)."""

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """Warnings found on the way (the compile still succeeded)."""
        return self.fleet.warnings


def check_policies(
    policies: Path,
    time_limit: float = DEFAULT_TIME_LIMIT,
    previous: Mapping[str, Steering] | None = None,
    timings: StageTimings = NO_TIMINGS,
    explain_time_limit: float = DEFAULT_EXPLAIN_TIME_LIMIT,
) -> tuple[ResolvedFleet, tuple[ClusterPlan, ...]]:
    """Every stage but emit and write; raises CompileError on the first failing stage.

    `previous` holds what steers of the last compile's plans: the solver keeps their MIG layouts
    where it can.
    `time_limit` bounds each cluster's solve; an infeasible cluster's explanation then gets
    `explain_time_limit` of its own.
    """
    from compiler.solve import solve_fleet  # imported where solved (compile_cluster says why)

    fleet = resolve_policies(policies, timings)
    with timings.stage("solve"):
        plans = tuple(solve_fleet(fleet, time_limit, previous, explain_time_limit))
    check_kueue_promises(fleet, plans)
    return fleet, plans


def resolve_policies(
    policies: Path, timings: StageTimings = NO_TIMINGS, reuse: Reuse | None = None
) -> ResolvedFleet:
    """Load, model and resolve the policies (what needs no solving: ownership, migration);
    with `reuse`, the files are those its key was taken of, and files parsed by an earlier
    compile are not parsed again."""
    policies_model = model_policies(policies, timings, reuse)
    with timings.stage("resolve"):
        return resolve(policies_model, load_catalog())


def model_policies(
    policies: Path, timings: StageTimings = NO_TIMINGS, reuse: Reuse | None = None
) -> Policies:
    """Load and model the policies (resolve_policies says what `reuse` does)."""
    warnings: list[Diagnostic] = []
    with timings.stage("load"):
        if reuse is None:
            documents = load_policies(policies, warnings)
        else:
            documents = load_policies(policies, warnings, reuse.parsed, reuse.files)
        if reuse is not None:
            reuse.parsed.prune(len({document.origin for document in documents}))
    with timings.stage("model"):
        return build_policies(documents, warnings)


def check_kueue_promises(fleet: ResolvedFleet, plans: tuple[ClusterPlan, ...]) -> None:
    """Every cluster's Kueue promise checked (compiler.per_cluster.check_kueue_promise)."""
    for cluster, plan in zip(fleet.clusters, plans, strict=True):
        check_kueue_promise(cluster, plan)


def compile_policies(
    policies: Path,
    time_limit: float = DEFAULT_TIME_LIMIT,
    previous: Mapping[str, Steering] | None = None,
    timings: StageTimings = NO_TIMINGS,
    explain_time_limit: float = DEFAULT_EXPLAIN_TIME_LIMIT,
    reuse: Reuse | None = None,
    meanwhile: Callable[[], bool] | None = None,
) -> Compiled:
    """Compile a policy directory into the output tree, in memory (report.md included).

    With `reuse`, files parsed before are not parsed again, and a cluster whose inputs and
    previous plan are those of a cached result is neither solved nor emitted: its plan and
    files come from the cache, and the clusters compiled afresh are added to it.
    """
    # with the cache, few clusters are expected to be compiled afresh: the first goes to a
    # worker that gets ready meanwhile
    with warm_worker(reuse is not None, warm_up) as warm:
        policies_model = model_policies(policies, timings, reuse)
        with timings.stage("resolve"):
            fleet = resolve(policies_model, load_catalog())
        cache = reuse.clusters_of(policies_model, fleet) if reuse is not None else None
        results = compile_clusters(
            fleet, previous or {}, cache, time_limit, explain_time_limit, timings, warm, meanwhile
        )
    with timings.stage("emit"):
        plans = tuple(r.plan for r in results)
        report = {REPORT: build_report(fleet, plans)}
        tree = assemble_tree(fleet, [(r.files, list(r.synced)) for r in results], report)
    digests = {path: digest for r in results for path, digest in r.digests.items()}
    return Compiled(fleet, plans, tree, digests)

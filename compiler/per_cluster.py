"""Each cluster's plan and files: from the compile cache, or solved and emitted afresh.

A cluster is solved and then emitted in one task, in a worker process for a large fleet, so
the workers never wait for each other between the two stages and the plans need not travel
to the parent and back. A task starts as soon as its cluster is found to have no entry in
the cache (the key is taken, and a file looked for), before any entry is read: after a
one-team change the changed cluster is being solved while the parent takes the other keys
and reads the other clusters' entries, wherever it stands in the fleet.

Which problems are reported is as if every cluster were solved before any were emitted:
every cluster whose guarantees do not fit; else the first, in the fleet's order, of the
problems found after solving (a broken Kueue promise, an emit error).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from compiler.cache.clusters import ClusterCache, ClusterResult
from compiler.diagnostics import CompileError, Problems, fail
from compiler.emit.kueue_quota import overcommitted
from compiler.ir import ClusterPlan, ResolvedCluster, ResolvedFleet, Steering
from compiler.parallel import OrderedWork, WarmWorker, worker_count
from compiler.timings import StageTimings
from compiler.write.writer import text_digest

POLL = 0.005
"""Seconds between two calls of compile_clusters' `meanwhile` while clusters compile."""


@dataclass(frozen=True)
class ClusterFailure:
    """Why a cluster has no result: its guarantees do not fit (`solving`), or a problem
    found after it was solved."""

    solving: bool
    error: CompileError


def compile_clusters(
    fleet: ResolvedFleet,
    previous: Mapping[str, Steering],
    cache: ClusterCache | None,
    time_limit: float,
    explain_time_limit: float,
    timings: StageTimings,
    warm: WarmWorker | None = None,
    meanwhile: Callable[[], bool] | None = None,
) -> list[ClusterResult]:
    """Every cluster's result, in the fleet's order.

    A cluster whose key has an entry in `cache` is neither solved nor emitted, and the
    clusters compiled afresh are added to it; the first of those goes to `warm`, if given
    (a WarmWorker that ran warm_up). `previous` holds what steers of the last compile's plans;
    `time_limit` bounds each cluster's solve, and an infeasible cluster's explanation gets
    `explain_time_limit` of its own. `meanwhile`, if given, is what the caller would do now
    rather than once the clusters are compiled: it is called before they are looked up,
    and then, every POLL seconds while they compile, until it says it is done. Raises
    CompileError as the module's docstring says.
    """

    def fresh(cluster: ResolvedCluster) -> ClusterResult | ClusterFailure:
        return compile_cluster(
            fleet,
            cluster,
            previous.get(cluster.name),
            time_limit,
            explain_time_limit,
            digested=cache is not None,
        )

    clusters = fleet.clusters
    found: dict[int, ClusterResult | ClusterFailure] = {}
    warmed: int | None = None  # the index of the cluster `warm` took
    with OrderedWork(fresh, clusters, worker_count(len(clusters))) as work:

        def start(index: int) -> None:
            nonlocal warmed
            with timings.stage("solve+emit"):
                if warm is None or warm.taken:
                    work.start(index)
                    return
                cluster = clusters[index]
                warm.take(
                    compile_cluster,
                    alone(fleet, cluster),
                    cluster,
                    previous.get(cluster.name),
                    time_limit,
                    explain_time_limit,
                    cache is not None,
                )
                warmed = index

        done = meanwhile is None or meanwhile()
        if cache is None:
            for index in range(len(clusters)):
                start(index)
        else:
            found.update(_look_up(cache, fleet, previous, start, timings))
        busy = warm if warmed is not None else None
        while not done and _compiling(work, busy):
            done = meanwhile is None or meanwhile()
        with timings.stage("solve+emit"):
            computed = work.results()
            if warm is not None and warmed is not None:
                computed[warmed] = warm.result()
    found.update(computed)
    outcomes = [found[index] for index in range(len(clusters))]
    failures = [o for o in outcomes if isinstance(o, ClusterFailure)]
    Problems(d for f in failures if f.solving for d in f.error.diagnostics).raise_if_errors()
    for failure in failures:
        raise failure.error
    results = [o for o in outcomes if isinstance(o, ClusterResult)]  # all: none failed
    if cache is not None:
        with timings.stage("cache"):
            cache.store(fleet, previous, {results[i].plan.cluster: results[i] for i in computed})
    return results


def _compiling(work: OrderedWork[Any, Any], warm: WarmWorker | None) -> bool:
    """Whether a cluster is still being compiled, by `warm` or in `work`, after waiting POLL
    seconds at most for it to be done."""
    return (warm is not None and not warm.ready(POLL)) or not work.done(POLL)


def alone(fleet: ResolvedFleet, cluster: ResolvedCluster) -> ResolvedFleet:
    """The fleet as one cluster's solve and emit read it: that cluster, the priority ladder
    and the Fleet (what its cache key holds too). This, not the whole fleet, is what is
    pickled for a warm worker, which was forked before the fleet was resolved."""
    return replace(fleet, clusters=(cluster,), warnings=(), teams=(), suppressions=())


def warm_up() -> None:
    """What a process's first cluster would cost it once: the solver and the emitters
    imported, OR-Tools' cp_model too (at the first attribute read: compiler.solve.lazy), and
    the admission policies' CEL parsed; no template (a cluster's objects all have direct
    builders). A warm worker (compiler.parallel.WarmWorker) started before load does it
    while the policies load and resolve, on a core that idles meanwhile."""
    for module in ("compiler.emit.tree", "compiler.solve.solver"):  # compile_cluster's
        importlib.import_module(module)
    from compiler.emit.admission_warm_up import parse_admission_expressions
    from compiler.solve.cpsat import cp_model

    cp_model.CpModel()  # an unused model: the import is what is wanted
    parse_admission_expressions()


def _look_up(
    cache: ClusterCache,
    fleet: ResolvedFleet,
    previous: Mapping[str, Steering],
    start: Callable[[int], None],
    timings: StageTimings,
) -> dict[int, ClusterResult]:
    """The results `cache` holds for the fleet's clusters, by index. A cluster without an
    entry is started at once, before any entry is read, so that it is being compiled while
    the rest are read."""
    stored: dict[int, str] = {}
    for index, cluster in enumerate(fleet.clusters):
        with timings.stage("cache"):
            key = cache.stored_key(cluster, fleet, previous.get(cluster.name))
        if key is None:
            start(index)
        else:
            stored[index] = key
    found: dict[int, ClusterResult] = {}
    for index, key in stored.items():
        with timings.stage("cache"):
            hit = cache.read(key, fleet.clusters[index].name)
        if hit is None:  # unreadable after all
            start(index)
        else:
            found[index] = hit
    return found


def compile_cluster(
    fleet: ResolvedFleet,
    cluster: ResolvedCluster,
    previous: Steering | None,
    time_limit: float,
    explain_time_limit: float,
    digested: bool = False,
) -> ClusterResult | ClusterFailure:
    """Solve one cluster and emit its files; why not, when it cannot be done. `digested`:
    with each file's digest, for a result the compile cache keeps (taken here, in the
    worker, rather than in the process that writes)."""
    # imported where clusters are compiled: a compile whose clusters all come from the cache
    # or from workers never imports the solver and the emitters in the process that writes
    from compiler.emit.tree import cluster_files
    from compiler.emit.view import ClusterView
    from compiler.solve import solver

    try:
        plan = solver.solve_cluster(cluster, time_limit, previous, explain_time_limit)
    except CompileError as error:
        return ClusterFailure(True, error)
    try:
        check_kueue_promise(cluster, plan)
        files, synced = cluster_files(ClusterView(cluster, fleet, plan))
    except CompileError as error:
        return ClusterFailure(False, error)
    digests = {path: text_digest(text) for path, text in files.items()} if digested else {}
    return ClusterResult(plan, files, tuple(synced), digests)


def check_kueue_promise(cluster: ResolvedCluster, plan: ClusterPlan) -> None:
    """A self-check that outlives any refactor: Kueue's quotas never admit more devices than
    the solved plan can give (GF001 if they would: a bug in gpufleet, not in the policy)."""
    if cluster.cluster.spec.kueue.enabled and (found := overcommitted(cluster, plan)):
        raise fail(
            "GF001",
            f"cluster {cluster.name}: the Kueue quotas gpufleet would write promise more than "
            f"the plan gives ({'; '.join(found)})",
            cluster.cluster.source.span(("spec", "kueue")),
            "this is a gpufleet bug: please report it with the policies",
        )

"""Whether the guarantees still hold on the live capacity: the live cluster solved again, and
when it cannot serve them all, the explanation `gpufleet check` gives (GF401) as GF827."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diagnostics import CompileError, Diagnostic
from compiler.drift.findings import DRIFT_DOMAIN, LACKS
from compiler.ir import ClusterPlan, ResolvedCluster, ResolvedTaint
from compiler.solve import solve_cluster

EXPLAINED = ("GF401", "GF403")
"""What the solver reports when guarantees cannot be served (GF403: a gang no group holds)."""


@dataclass(frozen=True)
class Verdict:
    """The live cluster's plan when every guarantee holds, else why not (GF827)."""

    plan: ClusterPlan | None
    broken: tuple[Diagnostic, ...] = ()


def verdict(
    live: ResolvedCluster, plan: ClusterPlan, time_limit: float, explain_time_limit: float
) -> Verdict:
    """Solve the live cluster (preferring the committed plan); a solver timeout (GF002) is
    raised as from any solve."""
    try:
        return Verdict(solve_cluster(live, time_limit, plan.steering, explain_time_limit))
    except CompileError as error:
        if not all(d.code in EXPLAINED for d in error.diagnostics):
            raise
        return Verdict(None, tuple(_broken(d, live) for d in error.diagnostics))


def _broken(diagnostic: Diagnostic, live: ResolvedCluster) -> Diagnostic:
    """GF401 (or GF403) of the live cluster as GF827: the same message, fixes and notes, the
    notes on capacity the cluster lacks said as what it is."""
    lacking = {
        f"device taint {t.name} (": t
        for t in live.taints
        if t.taint.spec.key.startswith(f"{DRIFT_DOMAIN}/")
    }

    def said(taint: ResolvedTaint) -> tuple[str, str]:
        return taint.name.rsplit(" (", 1)[0], LACKS[taint.taint.spec.key.rsplit("/", 1)[1]]

    related = []
    for text, span in diagnostic.related:
        taint = next((t for prefix, t in lacking.items() if text.startswith(prefix)), None)
        if taint is not None:
            where, lacks = said(taint)
            text = f"{where}: {lacks}, its devices are out of the live capacity"
        related.append((text, span))
    hints = []
    for hint in diagnostic.hints:
        if f"tolerate {DRIFT_DOMAIN}/" in hint:
            continue  # nobody can tolerate capacity that is not there
        taint = next((t for p, t in lacking.items() if hint.startswith(f"or remove {p}")), None)
        if taint is not None:
            where, lacks = said(taint)
            hint = f"or repair {where} ({lacks})"
        hints.append(hint)
    return Diagnostic(
        "GF827",
        f"with the capacity the cluster runs now, {diagnostic.message}",
        diagnostic.span,
        (
            *hints,
            "a device taint named after a node or GPU with (missing), (not-ready) or "
            "(mig-layout) stands for capacity the cluster lacks",
        ),
        tuple(related),
        cluster=live.name,
    )

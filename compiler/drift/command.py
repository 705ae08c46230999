"""`gpufleet drift` on the command line: read the dump, the policy and the committed plan,
report every difference, and exit 0 in sync, 1 drifted with every guarantee holding, 2 when a
guarantee no longer holds (input errors keep their codes: compiler.diagnostics.codes)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from compiler.diagnostics import Span, fail
from compiler.diagnostics.codes import EXIT_INPUT, EXIT_OK, EXIT_POLICY
from compiler.diagnostics.output import DiagnosticOutput
from compiler.drift.compare import Drift, compare
from compiler.drift.markdown import drift_markdown
from compiler.drift.mig import PlanSpan
from compiler.inventory import read_dump
from compiler.ir import ClusterPlan, ResolvedCluster
from compiler.pipeline import resolve_policies
from compiler.report.previous import PLAN_DIR, read_previous_plans

MARKDOWN = "markdown"
"""`--format markdown`: the report on stdout, diagnostics as text (github under Actions)."""


def run_drift(args: argparse.Namespace, output: DiagnosticOutput) -> int:
    """Run `gpufleet drift`; its exit code (errors in its input raise CompileError)."""
    dump, warnings = read_dump(args.dump)
    output.report(warnings)
    fleet = resolve_policies(args.policies)
    cluster = _cluster(fleet.clusters, args.cluster)
    plan_file = args.out / PLAN_DIR / f"{cluster.name}.json"
    plans, unreadable = read_previous_plans(args.out)
    output.report(unreadable)
    plan = plans.get(cluster.name)
    if plan is None:
        raise fail(
            "GF828",
            f"{plan_file} is missing: drift compares the cluster with the plan compiled for it",
            Span(plan_file.as_posix()),
            "run `gpufleet compile` (and commit out/), or pass the output directory with --out",
        )
    drift = compare(
        cluster,
        plan,
        dump,
        _plan_span(plan_file, plan),
        args.solver_time_limit,
        args.explain_time_limit,
    )
    output.report(drift.diagnostics)
    summary = _summary(drift)
    if args.format == MARKDOWN:
        sys.stdout.write(drift_markdown(drift, dump.file, plan_file.as_posix()))
        sys.stderr.write(summary + "\n")
    else:
        print(summary)
    if drift.in_sync:
        return EXIT_OK
    return EXIT_INPUT if drift.breaks_guarantees else EXIT_POLICY


def _cluster(clusters: tuple[ResolvedCluster, ...], name: str) -> ResolvedCluster:
    found = next((c for c in clusters if c.name == name), None)
    if found is None:
        known = ", ".join(c.name for c in clusters) or "none"
        raise fail(
            "GF113",
            f"--cluster {name}: the policies have no cluster of that name",
            None,
            f"clusters: {known}",
        )
    return found


def _plan_span(plan_file: Path, plan: ClusterPlan) -> PlanSpan:
    """Where the plan file lists a pool's MIG configurations (the pool's line in
    `nodeConfigs`), for notes about a node's layout; the file itself when it is not found."""
    try:
        lines = plan_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    start = next((i for i, line in enumerate(lines) if line.strip() == '"nodeConfigs": {'), 0)
    where: dict[str, Span] = {}
    for number, line in enumerate(lines[start:], start + 1):
        key = line.strip().removesuffix(": [").strip('"')
        if line.strip().endswith(": [") and key in plan.node_configs and key not in where:
            where[key] = Span(plan_file.as_posix(), number, line.index('"') + 1)
    return lambda pool: where.get(pool, Span(plan_file.as_posix()))


def _summary(drift: Drift) -> str:
    name = drift.cluster.name
    if drift.in_sync:
        return f"ok: cluster {name} runs what its policy and plan say"
    count = len(drift.findings)
    found = f"{count} difference{'' if count == 1 else 's'}"
    if drift.breaks_guarantees:
        return f"drift: cluster {name}: {found}; a guarantee no longer holds (exit 2)"
    return f"drift: cluster {name}: {found}; every guarantee still holds (exit 1)"

"""The pull-request commands: `diff`, `report` and `render`, thin shells over the pipeline.

They read what they compare with (out/, the previous plans) here, at the edge, and hand it
to the pure functions of `compiler.report` and `compiler.write.stream`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from compiler.cache.reuse import Reuse
from compiler.diagnostics import Diagnostic, Span, fail
from compiler.diagnostics.codes import EXIT_OK
from compiler.diagnostics.terminal import visible
from compiler.ir import Steering
from compiler.pipeline import Compiled, compile_policies
from compiler.report import (
    Previous,
    build_report,
    read_previous_plans,
    read_previous_steering,
    render_diff,
)
from compiler.report.diff import FileChange, read_changes
from compiler.report.hurt import objects_deleted, render_hurts
from compiler.report.markdown import hurts, mig_drains
from compiler.report.renames import detect_renames
from compiler.timings import NO_TIMINGS, StageTimings
from compiler.write import OWNED_LIST, Staleness, compare_tree, with_listing
from compiler.write.stream import cluster_stream

Reporter = Callable[[Sequence[Diagnostic]], None]


def conflict_diagnostics(out: Path, paths: Sequence[str]) -> list[Diagnostic]:
    """GF503 for each file gpufleet would have to overwrite but does not own."""
    return [
        Diagnostic(
            "GF503",
            f"{out / path} is not gpufleet's (not in {OWNED_LIST}) and gpufleet would write "
            "there; nothing was written",
            Span((out / path).as_posix(), 1, 1),
            ("move the file out of the way; gpufleet never overwrites a file it did not write",),
        )
        for path in paths
    ]


def stale_summary(changes: Staleness, shown: int = 5) -> str:
    """`2 changed, 1 added: plan/a.json, ...`: what a compile would do to out/, with the first
    few paths (an absent out/ would list every file)."""
    lists = (("changed", changes.changed), ("added", changes.added), ("removed", changes.removed))
    counts = ", ".join(f"{len(paths)} {what}" for what, paths in lists if paths)
    paths = [path for _, listed in lists for path in listed]
    more = f", and {len(paths) - shown} more" if len(paths) > shown else ""
    return f"{counts}: {', '.join(paths[:shown])}{more}"


def note_foreign(out: Path, paths: Sequence[str]) -> None:
    """Tell the user about files in out/ gpufleet keeps but does not own."""
    for path in paths:
        sys.stderr.write(f"note: {visible(str(out / path))} is not gpufleet's; left as it is\n")


def compile_as_compile_would(
    args: argparse.Namespace,
    report: Reporter,
    timings: StageTimings = NO_TIMINGS,
    reuse: Reuse | None = None,
    previous: Mapping[str, Steering] | None = None,
    meanwhile: Callable[[], bool] | None = None,
) -> Compiled:
    """The tree `gpufleet compile` would write with these arguments (over the plans in --out,
    of which the caller may have read `previous` already): compile, diff, report and render
    all compile through here, so they show the same tree (`compile` reuses what the compile
    cache holds, which gives the same tree faster)."""
    if previous is None:
        with timings.stage("load"):
            previous, problems = read_previous_steering(args.out)
        report(problems)
    return compile_policies(
        args.policies,
        args.solver_time_limit,
        previous,
        timings,
        args.explain_time_limit,
        reuse,
        meanwhile,
    )


def changed_files(out: Path, compiled: Compiled) -> tuple[list[FileChange], Staleness]:
    """What writing the compiled tree would change in `out`, renames paired as git pairs
    them (a missing `out` is all added), and the comparison they come from."""
    changes = compare_tree(out, compiled.tree)
    lists = (changes.added, changes.changed, changes.removed)
    return detect_renames(read_changes(out, with_listing(compiled.tree), *lists)), changes


def run_diff(args: argparse.Namespace, report: Reporter) -> int:
    """Print what can hurt, then what a compile would change in out/, by cluster and object."""
    previous, problems = read_previous_plans(args.out)  # whole: what can hurt compares them
    report(problems)
    steering = {cluster: plan.steering for cluster, plan in previous.items()}
    compiled = compile_as_compile_would(args, report, previous=steering)
    report(compiled.warnings)
    files, changes = changed_files(args.out, compiled)
    report(conflict_diagnostics(args.out, changes.conflicts))
    foreign = changes.foreign
    if not files:
        print(f"{args.out} is up to date: a compile changes nothing")
        note_foreign(args.out, foreign)
        return EXIT_OK
    deleted = objects_deleted(files, compiled.tree)
    found = hurts(compiled.fleet, compiled.plans, previous, deleted)
    sys.stdout.write(render_hurts(found))
    mig = mig_drains(compiled.fleet, compiled.plans, previous)
    sys.stdout.write(render_diff(files, mig, [f"{args.out / p}" for p in foreign]))
    return EXIT_OK


def run_report(args: argparse.Namespace, report: Reporter) -> int:
    """Print the Markdown report, compared with the plans and files in --previous (default:
    --out): what can hurt first."""
    compiled = compile_as_compile_would(args, report)
    report(compiled.warnings)
    base = args.previous if args.previous is not None else args.out
    previous, problems = read_previous_plans(base)
    report(problems)
    files, _ = changed_files(base, compiled)
    label = (base / "plan").as_posix()
    compared = Previous(previous, label, tuple(files), tuple(objects_deleted(files, compiled.tree)))
    sys.stdout.write(build_report(compiled.fleet, compiled.plans, compared))
    return EXIT_OK


def run_render(args: argparse.Namespace, report: Reporter) -> int:
    """Print one cluster's objects as a YAML stream: what Argo CD syncs for that cluster.

    Only what was reviewed: it compiles over the committed plans in --out, and refuses
    (GF501, nothing printed) exactly when `compile --check` would, so a plugin never syncs a
    plan that is missing from out/ or that the policies have moved away from.
    """
    compiled = compile_as_compile_would(args, report)
    report(compiled.warnings)
    names = sorted(c.name for c in compiled.fleet.clusters)
    if args.cluster not in names:
        raise fail(
            "GF113",
            f"--cluster {args.cluster!r} is not a cluster of the policies",
            None,
            f"clusters: {', '.join(names)}",
        )
    changes = compare_tree(args.out, compiled.tree)
    if changes.stale:
        plan = args.out / "plan" / f"{args.cluster}.json"
        missing = "" if plan.is_file() else f" (it has no {plan})"
        raise fail(
            "GF501",
            f"{args.out} is not what the policies compile to{missing}: render prints only the "
            f"reviewed, committed out/, never a new plan ({stale_summary(changes)})",
            Span(str(args.out)),
            "run `gpufleet compile` and commit out/ with the policies; under Argo CD, check "
            "that out/ is at the fleet's gitops.path from the repository's root",
        )
    sys.stdout.write(cluster_stream(compiled.tree, args.cluster))
    return EXIT_OK


REVIEW_COMMANDS: dict[str, Callable[[argparse.Namespace, Reporter], int]] = {
    "diff": run_diff,
    "report": run_report,
    "render": run_render,
}

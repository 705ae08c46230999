"""The commands that load the policies: compile, check, explain, diff, report, render,
migrate, codeowners, inventory, drift and schema (the command line is in compiler.cli, which
imports this module only when a command needs it: a `compile --check` answered from its
compile record does not load the stages)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from compiler.cache import CompileCache
from compiler.cache.reuse import Reuse
from compiler.diagnostics import Diagnostic, Problems, Span, fail
from compiler.diagnostics.codes import EXIT_OK, EXIT_POLICY, EXIT_STRICT
from compiler.diagnostics.output import DiagnosticOutput
from compiler.diagnostics.terminal import visible
from compiler.ir import ResolvedFleet
from compiler.load.loader import display_path
from compiler.owners import codeowners_text, ownership, ownership_problems
from compiler.pipeline import Compiled, check_policies, resolve_policies
from compiler.policy_files import PolicyEntry
from compiler.review import (
    REVIEW_COMMANDS,
    compile_as_compile_would,
    conflict_diagnostics,
    note_foreign,
)
from compiler.timings import StageTimings, print_timings
from compiler.write import OutputConflict, compare_tree, write_tree
from compiler.write.prestage import Prestage


def run_command(
    args: argparse.Namespace,
    output: DiagnosticOutput,
    cache: CompileCache | None,
    prestage: Prestage | None = None,
) -> int:
    """Run the parsed command, reporting to `output`; its exit code. `cache` is the compile
    cache of a `compile` (None: off, or another command), `prestage` the carrying of out/
    into staging started for a `compile` that writes it (None: none)."""
    report = output.report
    if args.command in REVIEW_COMMANDS:
        return REVIEW_COMMANDS[args.command](args, report)
    if args.command == "schema":
        # imported for their command only, like drift's and inventory's: a compile needs none
        from compiler.diagnostics.document import diagnostics_schema_text
        from compiler.model.schema import policy_schema_text

        sys.stdout.write(diagnostics_schema_text() if args.diagnostics else policy_schema_text())
        return EXIT_OK
    if args.command == "explain":
        from compiler.solve.breakdown import capacity_breakdown

        compiled = compile_as_compile_would(args, report)
        fleet, plans = compiled.fleet, compiled.plans
        report(fleet.warnings)
        print(
            "\n\n".join(
                capacity_breakdown(c, p) for c, p in zip(fleet.clusters, plans, strict=True)
            )
        )
        return EXIT_OK
    if args.command == "drift":
        from compiler.drift.command import run_drift

        return run_drift(args, output)
    if args.command == "inventory":
        from compiler.inventory.command import run_import

        return run_import(args, output)
    if args.command == "migrate":
        return _migrate(args)
    if args.command == "codeowners":
        return _codeowners(args)
    if args.command == "check":
        fleet, _ = check_policies(
            args.policies, args.solver_time_limit, explain_time_limit=args.explain_time_limit
        )
        report(fleet.warnings)
        output.suppress([s for silenced in fleet.suppressions for s in silenced.suppressed()])
        _check_ownership(fleet, args.policies)
        if output.strict_stop("the policies are feasible"):
            return EXIT_STRICT
        print(
            f"ok: {len(fleet.clusters)} clusters, {sum(len(c.guarantees) for c in fleet.clusters)}"
            " guarantees, all feasible"
        )
        return EXIT_OK
    timings = StageTimings()
    reuse = Reuse.of(cache) if cache is not None else None
    meanwhile = prestage.take_if_carried if prestage is not None else None
    compiled = compile_as_compile_would(args, report, timings, reuse, meanwhile=meanwhile)
    report(compiled.warnings)
    output.suppress([s for silenced in compiled.fleet.suppressions for s in silenced.suppressed()])
    if args.validate:
        with timings.stage("validate"):
            _validate(compiled)
    loaded = reuse.files.files if reuse is not None else None
    ownership_found, codeowners = _ownership(compiled.fleet, args.policies, loaded)
    # a compile whose CODEOWNERS is wrong is not recorded: the next check must say so again
    recorder = cache if not ownership_found.errors else None
    if args.check:
        ownership_found.raise_if_errors()
        with timings.stage("compare"):
            changes = compare_tree(args.out, compiled.tree)
        print_timings(timings, args.timings)
        note_foreign(args.out, changes.foreign)
        report(conflict_diagnostics(args.out, changes.conflicts))
        if changes.stale:
            stale = [
                ("added", changes.added),
                ("changed", changes.changed),
                ("removed", changes.removed),
            ]
            listing = "; ".join(f"{what}: {', '.join(paths)}" for what, paths in stale if paths)
            report(
                [
                    Diagnostic(
                        "GF501",
                        f"{args.out} is stale ({listing})",
                        Span(str(args.out)),
                        ("run `make compile` (gpufleet compile) and commit out/",),
                    )
                ]
            )
            return EXIT_POLICY
        if recorder is not None and not changes.foreign:
            recorder.remember(
                compiled.tree, output.reported, output.suppressed, codeowners, compiled.digests
            )
        if output.strict_stop(f"{args.out} is up to date"):
            return EXIT_STRICT
        print(f"ok: {args.out} is up to date ({len(compiled.tree)} files)")
        return EXIT_OK
    if output.strict_stop(f"nothing was written to {args.out}"):
        return EXIT_STRICT
    try:
        with timings.stage("write"):
            changes = write_tree(args.out, compiled.tree, prestage, compiled.digests)
    except OutputConflict as conflict:
        raise Problems(conflict_diagnostics(args.out, conflict.paths)).error() from None
    except OSError as error:
        named = error.filename and Path(error.filename).absolute() != args.out.absolute()
        where = f" ({error.filename})" if named else ""
        raise fail(
            "GF502", f"cannot write {args.out}: {error.strerror}{where}", Span(str(args.out))
        ) from None
    note_foreign(args.out, changes.foreign)
    if recorder is not None and not changes.foreign:
        recorder.remember(
            compiled.tree, output.reported, output.suppressed, codeowners, compiled.digests
        )
    summary = ", ".join(
        f"{plan.cluster}: {len(plan.changed_nodes)} nodes change MIG configuration"
        for plan in compiled.plans
    )
    print(
        f"compiled {summary}; {len(changes.added)} added, {len(changes.changed)} changed, "
        f"{len(changes.removed)} removed in {args.out}"
    )
    print_timings(timings, args.timings)
    return EXIT_OK


def _migrate(args: argparse.Namespace) -> int:
    """`gpufleet migrate`: write the grants of teams that have none (or, with --check, say
    whether any are missing)."""
    from compiler.migrate import migrate, plan_migration

    migration = (plan_migration if args.check else migrate)(args.policies)
    if not migration.files:
        print(f"ok: every team in {args.policies} has a grant; nothing to migrate")
        return EXIT_OK
    verb = "would write" if args.check else "wrote"
    for path in migration.grants:
        print(f"{verb} {visible(str(args.policies / path))}")
    for path in migration.edited:
        print(f"{'would edit' if args.check else 'edited'} {visible(str(args.policies / path))}")
    if args.check:
        return EXIT_POLICY
    print("review the diff (comments on the moved fields are not carried over), then commit")
    return EXIT_OK


def _codeowners(args: argparse.Namespace) -> int:
    """`gpufleet codeowners`: write (or with --check, verify) the CODEOWNERS block."""
    fleet = resolve_policies(args.policies)
    owned = ownership(fleet, args.policies)
    if owned is None or fleet.fleet is None:
        raise fail(
            "GF229",
            "the fleet declares no code owners, so there is no CODEOWNERS block to write",
            fleet.fleet.source.span(("spec",)) if fleet.fleet else None,
            'declare the platform\'s owners in the Fleet: `owners: ["@org/platform-team"]`',
        )
    if args.check:
        _check_ownership(fleet, args.policies)
        print(f"ok: {display_path(owned.file)} routes every policy file to its owners")
        return EXIT_OK
    text = codeowners_text(owned, fleet.fleet)
    owned.file.parent.mkdir(parents=True, exist_ok=True)
    owned.file.write_text(text, encoding="utf-8")
    print(f"wrote {display_path(owned.file)} ({len(owned.expected)} policy files)")
    return EXIT_OK


def _check_ownership(fleet: ResolvedFleet, policies: Path) -> None:
    """GF229 unless CODEOWNERS routes every policy file to its owners (when owners are
    declared)."""
    _ownership(fleet, policies)[0].raise_if_errors()


def _ownership(
    fleet: ResolvedFleet, policies: Path, files: Sequence[PolicyEntry] | None = None
) -> tuple[Problems, list[Path]]:
    """What is wrong with CODEOWNERS (GF229) for the policy files `files` (default: those
    there now) and the files that verdict read: CODEOWNERS, or none when the Fleet declares
    no owners."""
    owned = ownership(fleet, policies, files)
    if owned is None or fleet.fleet is None:
        return Problems(), []
    return Problems(ownership_problems(owned, fleet.fleet)), [owned.file]


def _validate(compiled: Compiled) -> None:
    """GF505 for every emitted object its API would refuse (a gpufleet bug: please report)."""
    try:
        from compiler.validate import validate_tree
    except ImportError:
        raise fail(
            "GF113", "--validate needs the validate extra", None, "pip install 'gpufleet[validate]'"
        ) from None
    versions = {c.name: c.cluster.spec.kubernetes_version for c in compiled.fleet.clusters}
    Problems(
        Diagnostic("GF505", problem, None, ("this is a gpufleet bug: please report it",))
        for problem in validate_tree(compiled.tree, versions)
    ).raise_if_errors()

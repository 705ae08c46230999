"""The `gpufleet` command line: a thin shell over the pipeline stages.

Exit codes: compiler.diagnostics.codes.EXIT_CODES (README.md, Exit codes).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from contextlib import ExitStack, nullcontext, redirect_stdout
from pathlib import Path

from compiler import __version__
from compiler.cache import CompileCache, CompileOptions, CompileRecord
from compiler.diagnostics import CompileError, Diagnostic, Problems, Span, exit_code_for, fail
from compiler.diagnostics.codes import (
    EXIT_CODES,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_POLICY,
    EXIT_STRICT,
)
from compiler.diagnostics.document import diagnostics_schema_text
from compiler.diagnostics.formats import DOCUMENT_FORMATS, FORMATS
from compiler.diagnostics.output import DiagnosticOutput
from compiler.diagnostics.terminal import visible
from compiler.ir import ResolvedFleet
from compiler.load.loader import display_path
from compiler.migrate import migrate, plan_migration
from compiler.model.schema import policy_schema_text
from compiler.owners import codeowners_text, ownership, ownership_problems
from compiler.pipeline import Compiled, check_policies, resolve_policies
from compiler.report import read_previous_plans
from compiler.review import (
    REVIEW_COMMANDS,
    add_review_arguments,
    compile_as_compile_would,
    conflict_diagnostics,
    note_foreign,
    out_from_repository_root,
)
from compiler.solve import DEFAULT_EXPLAIN_TIME_LIMIT, DEFAULT_TIME_LIMIT
from compiler.solve.breakdown import capacity_breakdown
from compiler.timings import StageTimings
from compiler.write import OutputConflict, compare_tree, write_tree
from compiler.write.lock import DEFAULT_LOCK_TIMEOUT, locked


class _UsageError(Exception):
    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message, self.format_usage())


def _default_format(argv: Sequence[str]) -> str:
    """The --format asked for (even on a command line that does not parse), else the default."""
    for index, word in enumerate(argv):
        value = word.removeprefix("--format=") if word.startswith("--format=") else None
        if word == "--format" and index + 1 < len(argv):
            value = argv[index + 1]
        if value in FORMATS:
            return value
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def _seconds(text: str) -> float:
    """A positive number of seconds (`inf` for no limit); NaN, zero and negatives are refused."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _seconds_or_none(text: str) -> float:
    """Like _seconds, but 0 too: for work that may be skipped (an explanation)."""
    return 0.0 if text.strip() in ("0", "0.0") else _seconds(text)


PRODUCT_COMMANDS = ("diff", "report", "render", "explain")
"""Commands whose stdout is their product (a diff, Markdown, YAML, a table): their
diagnostics are lines on stderr (text, github), never a document on stdout."""


def _command(
    commands: argparse._SubParsersAction[_Parser], name: str, summary: str
) -> argparse.ArgumentParser:
    """A subcommand with the options every policy command has: --policies, --format and
    --strict."""
    sub = commands.add_parser(name, help=summary, description=summary)
    sub.add_argument(
        "--policies",
        type=Path,
        default=Path("policies"),
        help="policy directory (default: policies)",
    )
    product = name in PRODUCT_COMMANDS
    sub.add_argument(
        "--format",
        choices=[f for f in FORMATS if not (product and f in DOCUMENT_FORMATS)],
        default=None,
        help="diagnostic format (default: github under GitHub Actions, else text)"
        + ("" if product else "; json and sarif write one document to stdout"),
    )
    sub.add_argument(
        "--strict",
        action="store_true",
        help=f"warnings fail the run (exit {EXIT_STRICT}); compile then writes nothing",
    )
    return sub


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpufleet",
        description=__doc__.split("\n")[0] if __doc__ else None,
        epilog="exit codes: " + "; ".join(f"{n} {text}" for n, text in EXIT_CODES.items()),
    )
    parser.add_argument("--version", action="version", version=f"gpufleet {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, summary in (
        ("compile", "compile the policies into the output directory"),
        ("check", "load, resolve and solve the policies without writing anything"),
        ("diff", "show what a compile would change in the output directory"),
        ("report", "print the Markdown capacity report, compared with the previous plan"),
        ("render", "print one cluster's objects as a YAML stream (for Argo CD plugins)"),
        ("explain", "print the capacity of each tier, pool by pool (or why it does not fit)"),
    ):
        sub = _command(commands, name, summary)
        sub.add_argument(
            "--solver-time-limit",
            type=_seconds,
            default=DEFAULT_TIME_LIMIT,
            metavar="SECONDS",
            help="time limit per cluster (default: %(default)s)",
        )
        sub.add_argument(
            "--explain-time-limit",
            type=_seconds_or_none,
            default=DEFAULT_EXPLAIN_TIME_LIMIT,
            metavar="SECONDS",
            help="time an infeasible cluster's explanation may take after the verdict; 0 "
            "reports the conflict unexplained (default: %(default)s)",
        )
        if name == "compile":
            sub.add_argument(
                "--validate",
                action="store_true",
                help="check every emitted object against its API's schema before writing",
            )
            sub.add_argument(
                "--timings",
                action="store_true",
                help="print the seconds spent in each stage to stderr",
            )
        if name != "check":
            sub.add_argument(
                "--out",
                type=Path,
                default=Path("out"),
                help="output directory, whose plans keep MIG layouts stable (default: out)",
            )
            sub.add_argument(
                "--lock-timeout",
                type=_seconds,
                default=DEFAULT_LOCK_TIMEOUT,
                metavar="SECONDS",
                help="how long to wait for another gpufleet using the output directory "
                "(default: %(default)s)",
            )
        add_review_arguments(name, sub)
        if name == "compile":
            sub.add_argument(
                "--check",
                action="store_true",
                help="write nothing; exit 1 listing the files that are stale",
            )
            sub.add_argument(
                "--no-cache",
                action="store_true",
                help="neither use nor update the compile cache (also GPUFLEET_NO_CACHE=1)",
            )
    for name, summary in (
        ("migrate", "move what team files grant themselves into platform grants (grants/)"),
        ("codeowners", "write the CODEOWNERS block that routes each policy file to its owners"),
    ):
        sub = _command(commands, name, summary)
        sub.add_argument(
            "--check",
            action="store_true",
            help="write nothing; exit 1 if anything would change",
        )
    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of the policy language",
        description="print the JSON Schema of the policy language (for editors and CI)",
    )
    schema.add_argument(
        "--diagnostics",
        action="store_true",
        help="print the JSON Schema of `--format json` output instead",
    )
    return parser


def _check_output_outside_policies(args: argparse.Namespace) -> None:
    """GF113 when `compile` would write into the policy directory (--out is it or inside
    it): the next compile would read its own output as policy, and pruning out/ could remove
    policy files. Commands that only read out/ are left alone."""
    out = getattr(args, "out", None)
    if out is None:
        return
    try:
        real = out.resolve()
    except (RuntimeError, OSError):  # a symlink loop, or a path the system cannot follow
        raise fail(
            "GF121",
            f"--out {out} is a symlink that leads nowhere (a loop)",
            Span(str(out)),
            "pass the real directory with --out, or remove the links",
        ) from None
    if args.command != "compile" or args.check:
        return
    if real.is_relative_to(args.policies.resolve()):
        raise fail(
            "GF113",
            f"--out {out} is inside --policies {args.policies}",
            None,
            "write the output next to the policies, e.g. --out out beside policies/",
        )


def _run(args: argparse.Namespace, output: DiagnosticOutput) -> int:
    out_from_repository_root(args)
    _check_output_outside_policies(args)
    with ExitStack() as held:
        for directory, write in _output_directories(args):
            held.enter_context(locked(directory, write=write, timeout=args.lock_timeout))
        return _run_command(args, output)


def _output_directories(args: argparse.Namespace) -> list[tuple[Path, bool]]:
    """The output directories the command reads (their plans, their files) or writes, each
    with whether it writes it: it holds their locks from before it reads them until it is
    done (compiler.write.lock)."""
    out = getattr(args, "out", None)
    if out is None:
        return []
    directories = [(out, args.command == "compile" and not args.check)]
    previous = getattr(args, "previous", None)
    if previous is not None and previous.absolute() != out.absolute():
        directories.append((previous, False))
    return directories


def _strict_stop(output: DiagnosticOutput, what: str) -> bool:
    """Whether --strict ends the run here because warnings were reported (saying so)."""
    if not output.strict_failure():
        return False
    sys.stderr.write(f"note: --strict: warnings fail the run; {what}\n")
    return True


def _run_command(args: argparse.Namespace, output: DiagnosticOutput) -> int:
    report = output.report
    if args.command in REVIEW_COMMANDS:
        return REVIEW_COMMANDS[args.command](args, report)
    if args.command == "schema":
        sys.stdout.write(diagnostics_schema_text() if args.diagnostics else policy_schema_text())
        return EXIT_OK
    if args.command == "explain":
        compiled = compile_as_compile_would(args, report)
        fleet, plans = compiled.fleet, compiled.plans
        report(fleet.warnings)
        print(
            "\n\n".join(
                capacity_breakdown(c, p) for c, p in zip(fleet.clusters, plans, strict=True)
            )
        )
        return EXIT_OK
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
        if _strict_stop(output, "the policies are feasible"):
            return EXIT_STRICT
        print(
            f"ok: {len(fleet.clusters)} clusters, {sum(len(c.guarantees) for c in fleet.clusters)}"
            " guarantees, all feasible"
        )
        return EXIT_OK
    timings = StageTimings()
    cache = _compile_cache(args)
    if args.check and cache is not None and (record := cache.up_to_date()) is not None:
        return _check_from_cache(args, output, record, timings)
    compiled = compile_as_compile_would(
        args, report, timings, cache.clusters if cache is not None else None
    )
    report(compiled.warnings)
    output.suppress([s for silenced in compiled.fleet.suppressions for s in silenced.suppressed()])
    if args.validate:
        with timings.stage("validate"):
            _validate(compiled)
    if args.check:
        _check_ownership(compiled.fleet, args.policies)
        with timings.stage("compare"):
            changes = compare_tree(args.out, compiled.tree)
        _print_timings(args, timings)
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
        if cache is not None and not changes.foreign:
            cache.remember(compiled.tree)
        if _strict_stop(output, f"{args.out} is up to date"):
            return EXIT_STRICT
        print(f"ok: {args.out} is up to date ({len(compiled.tree)} files)")
        return EXIT_OK
    if _strict_stop(output, f"nothing was written to {args.out}"):
        return EXIT_STRICT
    try:
        with timings.stage("write"):
            changes = write_tree(args.out, compiled.tree)
    except OutputConflict as conflict:
        raise Problems(conflict_diagnostics(args.out, conflict.paths)).error() from None
    except OSError as error:
        named = error.filename and Path(error.filename).absolute() != args.out.absolute()
        where = f" ({error.filename})" if named else ""
        raise fail(
            "GF502", f"cannot write {args.out}: {error.strerror}{where}", Span(str(args.out))
        ) from None
    note_foreign(args.out, changes.foreign)
    if cache is not None and not changes.foreign:
        cache.remember(compiled.tree)
    summary = ", ".join(
        f"{plan.cluster}: {len(plan.changed_nodes)} nodes change MIG configuration"
        for plan in compiled.plans
    )
    print(
        f"compiled {summary}; {len(changes.added)} added, {len(changes.changed)} changed, "
        f"{len(changes.removed)} removed in {args.out}"
    )
    _print_timings(args, timings)
    return EXIT_OK


def _compile_cache(args: argparse.Namespace) -> CompileCache | None:
    """The compile cache for this `compile` (None with --no-cache or GPUFLEET_NO_CACHE=1)."""
    if args.no_cache or os.environ.get("GPUFLEET_NO_CACHE") == "1":
        return None
    options = CompileOptions(args.solver_time_limit, args.explain_time_limit, args.validate)
    return CompileCache.open(args.policies, args.out, options)


def _check_from_cache(
    args: argparse.Namespace, output: DiagnosticOutput, record: CompileRecord, timings: StageTimings
) -> int:
    """`compile --check` when a record says out/ is what this compile writes: neither solve
    nor emit nor compare runs. What the full check reports besides the tree still runs, so
    that it says the same: the previous plans' problems, the warnings and suppressions of
    resolve, CODEOWNERS and --strict."""
    with timings.stage("load"):
        _, problems = read_previous_plans(args.out)
    output.report(problems)
    fleet = resolve_policies(args.policies, timings)
    output.report(fleet.warnings)
    output.suppress([s for silenced in fleet.suppressions for s in silenced.suppressed()])
    _check_ownership(fleet, args.policies)
    _print_timings(args, timings)
    if _strict_stop(output, f"{args.out} is up to date"):
        return EXIT_STRICT
    print(f"ok: {args.out} is up to date ({record.files} files)")
    return EXIT_OK


def _migrate(args: argparse.Namespace) -> int:
    """`gpufleet migrate`: write the grants of teams that have none (or, with --check, say
    whether any are missing)."""
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
    owned = ownership(fleet, policies)
    if owned is not None and fleet.fleet is not None:
        Problems(ownership_problems(owned, fleet.fleet)).raise_if_errors()


def _print_timings(args: argparse.Namespace, timings: StageTimings) -> None:
    if args.timings:
        sys.stderr.write(f"timings: {timings.line()}\n")


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; never lets a Python traceback reach the user."""
    words = list(sys.argv[1:] if argv is None else argv)
    output = DiagnosticOutput(_default_format(words))
    try:
        args = _parser().parse_args(words)
    except _UsageError as error:
        if output.format == "text":
            sys.stderr.write(error.usage)
        hint = "`gpufleet --help` lists the commands, `gpufleet COMMAND --help` their options"
        output.report([Diagnostic("GF113", str(error), None, (hint,))])
        return output.finish(EXIT_INPUT)
    output.strict = getattr(args, "strict", False)
    output.policies = getattr(args, "policies", None)
    # a document owns stdout: what the command says as text goes to stderr
    with redirect_stdout(sys.stderr) if output.is_document else nullcontext():
        code = _guarded(args, output)
    return output.finish(code)


def _guarded(args: argparse.Namespace, output: DiagnosticOutput) -> int:
    """Run the command; its diagnostics, and any failure as one, go to `output`."""
    try:
        return _run(args, output)
    except CompileError as error:
        output.report(error.diagnostics)
        return exit_code_for(error.diagnostics) or EXIT_POLICY
    except Exception as error:
        if os.environ.get("GPUFLEET_DEBUG"):
            traceback.print_exc()
        output.report(
            [
                Diagnostic(
                    "GF001",
                    f"internal error: {type(error).__name__}: {error}",
                    None,
                    (
                        "please report this with the policy that caused it; "
                        "GPUFLEET_DEBUG=1 prints the traceback",
                    ),
                )
            ]
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())

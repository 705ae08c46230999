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
from compiler.cache.store import cache_directory
from compiler.diagnostics import CompileError, Diagnostic, exit_code_for, fail
from compiler.diagnostics.codes import (
    DRIFT_EXIT_CODES,
    EXIT_CODES,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_POLICY,
    EXIT_STRICT,
)
from compiler.diagnostics.diagnostic import Span
from compiler.diagnostics.formats import DOCUMENT_FORMATS, FORMATS
from compiler.diagnostics.output import DiagnosticOutput
from compiler.limits import DEFAULT_EXPLAIN_TIME_LIMIT, DEFAULT_TIME_LIMIT
from compiler.quick_check import answer_from_record, compile_cache, reading_out, uses_cache
from compiler.repository import out_from_repository_root
from compiler.write.lock import DEFAULT_LOCK_TIMEOUT, locked
from compiler.write.prestage import Prestage, prestaging
from compiler.write.trash import Trash


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


EPILOGS = {
    "drift": "exit codes: " + "; ".join(f"{n} {text}" for n, text in DRIFT_EXIT_CODES.items())
}

PRODUCT_COMMANDS = ("diff", "report", "render", "explain")
"""Commands whose stdout is their product (a diff, Markdown, YAML, a table): their
diagnostics are lines on stderr (text, github), never a document on stdout."""


def _command(
    commands: argparse._SubParsersAction[_Parser], name: str, summary: str
) -> argparse.ArgumentParser:
    """A subcommand with the options every policy command has: --policies, --format and
    --strict."""
    sub = commands.add_parser(name, help=summary, description=summary, epilog=EPILOGS.get(name))
    sub.add_argument(
        "--policies",
        type=Path,
        default=Path("policies"),
        help="policy directory (default: policies)",
    )
    product = name in PRODUCT_COMMANDS
    sub.add_argument(
        "--format",
        choices=[f for f in FORMATS if not (product and f in DOCUMENT_FORMATS)]
        + (["markdown"] if name == "drift" else []),
        default=None,
        help="diagnostic format (default: github under GitHub Actions, else text)"
        + ("" if product else "; json and sarif write one document to stdout")
        + (
            "; markdown writes the drift report to stdout (diagnostics as text on stderr)"
            if name == "drift"
            else ""
        ),
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
        (
            "drift",
            "compare what a cluster runs (a kubectl dump) with its policy and committed plan, "
            "and say which guarantees no longer hold",
        ),
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
        _review_arguments(name, sub)
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
    inventory = commands.add_parser(
        "inventory",
        help="import what a cluster runs into its policy file",
        description="import what a cluster runs (a kubectl dump) into its policy file",
    )
    steps = inventory.add_subparsers(dest="inventory_command", required=True, parser_class=_Parser)
    imports = _command(
        steps,
        "import",
        "write the cluster's node pools from a dump of "
        "`kubectl get nodes,resourceslices,devicetaintrules -o yaml`",
    )
    imports.add_argument(
        "--dump",
        required=True,
        metavar="FILE",
        help="the dump to read (`-`: standard input)",
    )
    imports.add_argument(
        "--cluster", required=True, metavar="NAME", help="the cluster the dump is of"
    )
    imports.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the import would change the cluster's file",
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


def _review_arguments(command: str, parser: argparse.ArgumentParser) -> None:
    """The options only the review commands have."""
    if command == "report":
        parser.add_argument(
            "--previous",
            type=Path,
            default=None,
            metavar="DIR",
            help="an output directory whose plan/ to compare with (default: --out)",
        )
    if command == "drift":
        parser.add_argument(
            "--dump",
            required=True,
            metavar="FILE",
            help="the dump of `kubectl get nodes,resourceslices,devicetaintrules -o yaml` "
            "(`-`: standard input)",
        )
        parser.add_argument(
            "--cluster", required=True, metavar="NAME", help="the cluster the dump is of"
        )
    if command == "render":
        parser.add_argument("--cluster", required=True, help="the cluster to print")
        parser.add_argument(
            "--source-path",
            default=None,
            metavar="PATH",
            help="the working directory's path inside the repository (Argo CD's "
            "$ARGOCD_APP_SOURCE_PATH; empty for the root): --out is then read from the "
            "repository's root",
        )


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
        prestage: Prestage | None = None
        for directory, write in _output_directories(args):
            held.enter_context(locked(directory, write=write, timeout=args.lock_timeout))
            if write:  # out/ is carried into staging while the compile runs
                kept_in = cache_directory() if uses_cache(args) else None
                trash = Trash(kept_in / "trash") if kept_in is not None else None
                prestage = held.enter_context(prestaging(directory, trash, kept_in))
        with reading_out(args) as reading:
            cache = compile_cache(args)
            answered = answer_from_record(args, output, cache, reading)
        if answered is not None:
            return answered
        # the stages load here, not at start-up: a check answered from its record needs none
        from compiler.commands import run_command

        return run_command(args, output, cache, prestage)


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

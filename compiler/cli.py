"""The `gpufleet` command line: a thin shell over the pipeline stages.

Exit codes: 0 ok, 1 policy problem (infeasible, semantic error, stale out/),
2 invalid input or usage, 3 internal error or solver timeout.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from compiler.diagnostics import CompileError, Diagnostic, Span, exit_code_for
from compiler.diagnostics.codes import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_POLICY
from compiler.diagnostics.formats import FORMATS, FORMATTERS
from compiler.model.schema import policy_schema_text
from compiler.pipeline import check_policies, compile_policies
from compiler.solve import DEFAULT_TIME_LIMIT
from compiler.write import compare_tree, write_tree


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"gpufleet: error[GF113]: {message}\n")
        raise SystemExit(EXIT_INPUT)


def _seconds(text: str) -> float:
    """A positive number of seconds (`inf` for no limit); NaN, zero and negatives are refused."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpufleet", description=__doc__.split("\n")[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, summary in (
        ("compile", "compile the policies into the output directory"),
        ("check", "load, resolve and solve the policies without writing anything"),
    ):
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.add_argument(
            "--policies",
            type=Path,
            default=Path("policies"),
            help="policy directory (default: policies)",
        )
        sub.add_argument(
            "--format",
            choices=FORMATS,
            default=None,
            help="diagnostic format (default: github under GitHub Actions, else text)",
        )
        sub.add_argument(
            "--solver-time-limit",
            type=_seconds,
            default=DEFAULT_TIME_LIMIT,
            metavar="SECONDS",
            help="time limit per cluster (default: %(default)s)",
        )
        if name == "compile":
            sub.add_argument(
                "--out", type=Path, default=Path("out"), help="output directory (default: out)"
            )
            sub.add_argument(
                "--check",
                action="store_true",
                help="write nothing; exit 1 listing the files that are stale",
            )
    commands.add_parser(
        "schema",
        help="print the JSON Schema of the policy language",
        description="print the JSON Schema of the policy language (for editors and CI)",
    )
    return parser


def _report(diagnostics: Sequence[Diagnostic], fmt: str) -> None:
    formatter = FORMATTERS[fmt]
    for diagnostic in diagnostics:
        sys.stderr.write(formatter(diagnostic) + "\n")


def _run(args: argparse.Namespace, fmt: str) -> int:
    if args.command == "schema":
        sys.stdout.write(policy_schema_text())
        return EXIT_OK
    if args.command == "check":
        fleet, _ = check_policies(args.policies, args.solver_time_limit)
        _report(fleet.warnings, fmt)
        print(
            f"ok: {len(fleet.clusters)} clusters, {sum(len(c.guarantees) for c in fleet.clusters)}"
            " guarantees, all feasible"
        )
        return EXIT_OK
    compiled = compile_policies(args.policies, args.solver_time_limit)
    _report(compiled.warnings, fmt)
    if args.check:
        changes = compare_tree(args.out, compiled.tree)
        if changes.stale:
            stale = [
                ("added", changes.added),
                ("changed", changes.changed),
                ("removed", changes.removed),
            ]
            listing = "; ".join(f"{what}: {', '.join(paths)}" for what, paths in stale if paths)
            _report(
                [
                    Diagnostic(
                        "GF501",
                        f"{args.out} is stale ({listing})",
                        Span(str(args.out)),
                        ("run `make compile` (gpufleet compile) and commit out/",),
                    )
                ],
                fmt,
            )
            return EXIT_POLICY
        print(f"ok: {args.out} is up to date ({len(compiled.tree)} files)")
        return EXIT_OK
    try:
        changes = write_tree(args.out, compiled.tree)
    except OSError as error:
        raise CompileError(
            [Diagnostic("GF502", f"cannot write {args.out}: {error.strerror}", Span(str(args.out)))]
        ) from None
    for path in changes.foreign:
        sys.stderr.write(f"note: {args.out}/{path} is not gpufleet's; left as it is\n")
    summary = ", ".join(
        f"{c}: {sum(1 for p in compiled.tree if p.startswith(f'clusters/{c}/'))} files"
        for c in (plan.cluster for plan in compiled.plans)
    )
    print(
        f"compiled {summary}; {len(changes.added)} added, {len(changes.changed)} changed, "
        f"{len(changes.removed)} removed in {args.out}"
    )
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; never lets a Python traceback reach the user."""
    args = _parser().parse_args(argv)
    fmt = getattr(args, "format", None) or (
        "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    )
    try:
        return _run(args, fmt)
    except CompileError as error:
        _report(error.diagnostics, fmt)
        return exit_code_for(error.diagnostics) or EXIT_POLICY
    except Exception as error:
        if os.environ.get("GPUFLEET_DEBUG"):
            traceback.print_exc()
        _report(
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
            ],
            fmt,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())

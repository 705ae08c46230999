"""`compile --check` answered from a compile record: when neither the inputs nor out/ changed
since a compile that wrote (or found) out/ as it is, say what that compile said, without
loading the policies, solving, emitting or comparing.

This module and what it imports (the cache's key and records, the diagnostics, the output)
load none of the stages, so that the answer CI waits for on most pull requests starts in
milliseconds; the commands that compile are in compiler.commands.
"""

from __future__ import annotations

import argparse
import os

from compiler.cache import CompileCache, CompileOptions
from compiler.diagnostics.codes import EXIT_OK, EXIT_STRICT
from compiler.diagnostics.output import DiagnosticOutput
from compiler.timings import StageTimings, print_timings


def compile_cache(args: argparse.Namespace) -> CompileCache | None:
    """The compile cache of a `compile` (None for other commands, with --no-cache or
    GPUFLEET_NO_CACHE=1, or when the key cannot be computed)."""
    if args.command != "compile" or args.no_cache or os.environ.get("GPUFLEET_NO_CACHE") == "1":
        return None
    options = CompileOptions(args.solver_time_limit, args.explain_time_limit, args.validate)
    return CompileCache.open(args.policies, args.out, options)


def answer_from_record(
    args: argparse.Namespace, output: DiagnosticOutput, cache: CompileCache | None
) -> int | None:
    """The exit code of a `compile --check` that a record answers (having reported what the
    recorded compile reported), or None when it must compile."""
    if cache is None or not args.check:
        return None
    timings = StageTimings()
    with timings.stage("cache"):
        record = cache.up_to_date()
    if record is None:
        return None
    output.report(record.reported)
    output.suppress(record.suppressed)
    print_timings(timings, args.timings)
    if output.strict_stop(f"{args.out} is up to date"):
        return EXIT_STRICT
    print(f"ok: {args.out} is up to date ({record.files} files)")
    return EXIT_OK

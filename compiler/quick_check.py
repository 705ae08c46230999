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
from collections.abc import Iterator
from contextlib import contextmanager

from compiler.cache import CompileCache, CompileOptions, cache_directory
from compiler.cache.out_reader import OutReader
from compiler.diagnostics.codes import EXIT_OK, EXIT_STRICT
from compiler.diagnostics.output import DiagnosticOutput
from compiler.timings import StageTimings, print_timings


def uses_cache(args: argparse.Namespace) -> bool:
    """Whether the command is a `compile` with the cache (not --no-cache, GPUFLEET_NO_CACHE=1)."""
    return (
        args.command == "compile"
        and not args.no_cache
        and os.environ.get("GPUFLEET_NO_CACHE") != "1"
    )


def compile_cache(args: argparse.Namespace) -> CompileCache | None:
    """The compile cache of a `compile` (None for other commands, without the cache, or when
    the key cannot be computed)."""
    if not uses_cache(args):
        return None
    options = CompileOptions(args.solver_time_limit, args.explain_time_limit, args.validate)
    return CompileCache.open(args.policies, args.out, options)


@contextmanager
def reading_out(args: argparse.Namespace) -> Iterator[OutReader | None]:
    """For a `compile --check` with the cache: out/ read from now on, in a forked process,
    while this one takes the compile key and reads the record (compiler.cache.out_reader);
    stopped when the body ends. None for any other command."""
    if not (uses_cache(args) and args.check):
        yield None
        return
    reader = OutReader.start(cache_directory(), args.out)
    try:
        yield reader
    finally:
        reader.stop()


def answer_from_record(
    args: argparse.Namespace,
    output: DiagnosticOutput,
    cache: CompileCache | None,
    reader: OutReader | None = None,
) -> int | None:
    """The exit code of a `compile --check` that a record answers (having reported what the
    recorded compile reported), or None when it must compile. `reader`: reading out/ since
    before the key was taken (reading_out)."""
    if cache is None or not args.check:
        return None
    timings = StageTimings()
    with timings.stage("cache"):
        record = cache.up_to_date(reader)
    if record is None:
        return None
    output.report(record.reported)
    output.suppress(record.suppressed)
    print_timings(timings, args.timings)
    if output.strict_stop(f"{args.out} is up to date"):
        return EXIT_STRICT
    print(f"ok: {args.out} is up to date ({record.files} files)")
    return EXIT_OK

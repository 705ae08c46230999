"""`gpufleet inventory import` on the command line: run the import, say what it did."""

from __future__ import annotations

import argparse

from compiler.diagnostics.codes import EXIT_OK, EXIT_POLICY, EXIT_STRICT
from compiler.diagnostics.output import DiagnosticOutput
from compiler.inventory.importer import import_inventory


def run_import(args: argparse.Namespace, output: DiagnosticOutput) -> int:
    """Write (or with --check, compare) the cluster's pools; the exit code: 0 written or
    nothing to change, 1 when --check finds the file stale or --strict finds warnings (then
    nothing is written). Errors raise CompileError (nothing written)."""
    strict_or_check = args.strict or args.check
    imported = import_inventory(args.dump, args.cluster, args.policies, write=not strict_or_check)
    output.report(imported.warnings)
    counted = ", ".join(
        f"{n} {what}{'' if n == 1 else 's'}"
        for n, what in ((imported.pools, "pool"), (imported.nodes, "node"))
    )
    if not imported.changed:
        print(f"ok: {imported.file} describes the dump ({counted}); nothing to change")
        return EXIT_STRICT if output.strict_stop("the file is up to date") else EXIT_OK
    changes = "; ".join(imported.notes)
    if args.check:
        verb = "would create" if imported.created else "would change"
        print(f"{verb} {imported.file} ({changes})")
        return EXIT_POLICY
    if output.strict_stop(f"nothing was written to {imported.file}"):
        return EXIT_STRICT
    verb = "wrote" if imported.created else "updated"
    print(f"{verb} {imported.file}: {counted} ({changes}); review the diff, then commit")
    return EXIT_OK

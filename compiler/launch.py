"""The `gpufleet` command: run the CLI with the process's arguments and exit with its code."""

from __future__ import annotations

import gc
import signal
import sys
from typing import NoReturn


def run() -> NoReturn:
    """Run `gpufleet` with the process's arguments and exit with main's code.

    A reader that goes away (`gpufleet render ... | head`) ends the process with SIGPIPE, as
    it ends `cat` or `git`, not with an error about a broken pipe. The cycle collector is off
    for the whole (short) run, its end included.
    """
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # A run builds millions of objects that live until it ends (documents with every node's
    # position, the IR, the output) and makes little cyclic garbage: the cycle collector's
    # repeated scans of them cost a fifth of the CPU on fleets L and XL and freed nothing that
    # peak memory shows (docs/benchmarks.md, Speed tricks). Worker processes inherit this.
    gc.disable()
    from compiler.cli import main

    code = main()
    # CPython's shutdown collects once more, collector off or not, scanning every object
    # still alive; frozen, they are out of its reach (a tenth of a second on fleet L). Files
    # are closed where they are written (`with`, os-level), never left to a finalizer.
    gc.freeze()
    sys.exit(code)

"""The `gpufleet` command: start reading a large policy directory, then import and run the CLI.

This module imports only the loader, so that for a directory of hundreds of files the file
readers (worker processes, compiler.load.prefetch) run while the rest of gpufleet is imported.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import NoReturn

from compiler.load import prefetch


def run() -> NoReturn:
    """Run `gpufleet` with the process's arguments, then exit without tearing it down.

    A reader that goes away (`gpufleet render ... | head`) ends the process with SIGPIPE, as
    it ends `cat` or `git`, not with an error about a broken pipe. Once the output is flushed
    nothing is left to do; unloading OR-Tools, pydantic and the rest would add a tenth of a
    second to every run.
    """
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    prefetch.start(sys.argv[1:])
    from compiler.cli import main  # imported while the readers read

    try:
        code = main()
    finally:
        prefetch.discard()  # readers nobody took: the command failed first, or printed --help
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # a reader that went away (`gpufleet diff | head`)
            stream.flush()
    os._exit(code)

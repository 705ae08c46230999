"""The `gpufleet` command: run the CLI with the process's arguments and exit with its code."""

from __future__ import annotations

import signal
import sys
from typing import NoReturn


def run() -> NoReturn:
    """Run `gpufleet` with the process's arguments and exit with main's code.

    A reader that goes away (`gpufleet render ... | head`) ends the process with SIGPIPE, as
    it ends `cat` or `git`, not with an error about a broken pipe.
    """
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    from compiler.cli import main

    sys.exit(main())

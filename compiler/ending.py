"""How the `gpufleet` process ends: without freeing, one by one, what it built.

A compile of a large fleet ends holding millions of objects (the resolved fleet, every
emitted file). Freeing them when the command returns, and then tearing the interpreter
down, takes a tenth of a second on fleet L and a fifth on XL, just before the process ends
anyway. The `gpufleet` process (compiler.launch) therefore keeps what a command hands to
`keep` alive, and ends by `exit_process`: the exit handlers run and the output is flushed as
at a normal exit, and then the process ends without the teardown (as mypy ends). Where the
command line runs inside another process (tests call compiler.cli.main), `keep` keeps
nothing, so nothing leaks from one call to the next.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

_kept: list[object] | None = None
"""What is kept until the process ends; None where nothing is (a process that goes on)."""


def keep_until_exit() -> None:
    """From now on, `keep` keeps what it is given until the process ends (exit_process)."""
    global _kept
    _kept = []


def keep(value: object) -> None:
    """Keep `value` (a command's large result) alive until the process ends, when this is
    the `gpufleet` process (keep_until_exit); else do nothing."""
    if _kept is not None:
        _kept.append(value)


def exit_process(code: int) -> NoReturn:
    """End the process with `code`: the exit handlers run (multiprocessing's among them,
    which stops any daemonic child) and stdout and stderr are flushed, then it ends without
    freeing what is kept or tearing the interpreter down. A reader gone from stdout ends it
    by SIGPIPE, as at any write (compiler.launch)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)

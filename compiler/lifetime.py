"""Processes that gpufleet forks end when it ends, however it ends (die_with_parent)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

STOPPING = {signal.SIGINT, signal.SIGTERM}
"""The signals a forked process must not get before it has its own handlers: it would run
the parent's (a KeyboardInterrupt there unwinds the parent's stack in the child)."""

_PR_SET_PDEATHSIG = 1
PARENT_POLL = 1.0
"""Seconds between checks that the parent lives, where the kernel cannot be asked to tell."""


def die_with_parent(parent: int, how: signal.Signals = signal.SIGKILL) -> None:
    """End this forked process when process `parent` ends, however it ends (a pool worker's
    initializer, and the first call of every other process gpufleet forks).

    A forked process waits for work from its parent, or works for it; a parent killed with
    SIGKILL cannot tell it to stop, so it would wait, or work, for nothing. Linux sends it
    the signal `how` (PR_SET_PDEATHSIG: SIGKILL unless the process has clean-up of its own to
    do on SIGTERM); elsewhere a thread checks that the parent is still there and sends it.
    """
    if not _signal_me_with_parent(how):
        threading.Thread(target=_watch_parent, args=(parent, how), daemon=True).start()
    if os.getppid() != parent:  # the parent died before the kernel was asked to tell
        os.kill(os.getpid(), how)


def _signal_me_with_parent(how: signal.Signals) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    return bool(prctl(_PR_SET_PDEATHSIG, how, 0, 0, 0) == 0)


def _watch_parent(parent: int, how: signal.Signals) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    os.kill(os.getpid(), how)


@contextmanager
def signals_held() -> Iterator[None]:
    """STOPPING held back for the body, a fork: the child unblocks them once it has its own
    handlers (it never leaves the body: it ends with os._exit), the parent when the body
    ends, where one that came meanwhile is raised."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)

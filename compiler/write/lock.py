"""The lock on out/: one gpufleet writes out/ at a time, and none reads it meanwhile.

The lock is a file beside out/ (`.out.lock` for out/), never in it, so out/ holds only what
the compile wrote. It is an flock(2) lock, which the kernel releases when its holder ends,
however it ends: a killed compile never leaves a stale lock. `compile` holds it exclusively
from before it reads the previous plans until out/ is replaced; the commands that only read
out/ (compile --check, diff, report, render, explain) share it. Whoever takes it first
restores an out/ that an interrupted write left set aside, before anything reads out/.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from compiler.diagnostics import Span, fail
from compiler.write.atomic import beside, needs_recovery, recover
from compiler.write.writer import refuse_enclosing

DEFAULT_LOCK_TIMEOUT = 300.0
"""Seconds a command waits for another gpufleet to finish with out/ before it gives up with
GF506: longer than a compile of a large fleet takes, short enough for a CI job to fail."""

_POLL = 0.05
_RECORD = 32
"""Bytes of the holder's record at the start of the lock file: `PID MODE`, padded."""


def lock_path(out: Path) -> Path:
    """The lock file of the output directory `out`: beside it, named after it."""
    return beside(out, "lock")


def say_note(message: str) -> None:
    """Print a note on stderr, at once (a waiting command says why it does nothing)."""
    sys.stderr.write(f"note: {message}\n")
    sys.stderr.flush()


@contextmanager
def locked(
    out: Path, *, write: bool, timeout: float, say: Callable[[str], None] = say_note
) -> Iterator[None]:
    """Hold out/'s lock for the body (exclusive to write, shared to read), out/ restored first.

    Waits up to `timeout` seconds for another gpufleet, telling `say` once whom it waits
    for; then raises GF506. A reader that cannot create the lock file (a read-only checkout)
    reads unlocked: nobody can write out/ there either.
    """
    if write:
        refuse_enclosing(out.absolute())  # before the lock file goes beside it
    lock = _Lock(out, timeout, time.monotonic() + timeout, say, _open(out, write))
    try:
        lock.take(fcntl.LOCK_EX if write else fcntl.LOCK_SH, "writing" if write else "reading")
        retired = beside(out, "retired")
        if needs_recovery(out, retired):
            lock.take(fcntl.LOCK_EX, "writing")
            try:
                recover(out, retired)
            except OSError as error:
                raise fail(
                    "GF502",
                    f"cannot restore {out} from {retired}, where an interrupted compile "
                    f"left it: {error.strerror}",
                    Span(str(out)),
                    f"move {retired} back to {out}",
                ) from None
            if not write:
                lock.take(fcntl.LOCK_SH, "reading")
        yield
    finally:
        if lock.descriptor is not None:
            os.close(lock.descriptor)


def _open(out: Path, write: bool) -> int | None:
    """The lock file, open; created by writers, and by readers of an out/ that exists (a
    reader of no out/ leaves no file behind: it has nothing to read)."""
    path = lock_path(out)
    flags = os.O_CLOEXEC | os.O_NOFOLLOW  # a planted link never leads the pid elsewhere
    if write:
        try:
            os.makedirs(path.parent, exist_ok=True)
            return os.open(path, flags | os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise fail(
                "GF502",
                f"cannot write {out}: cannot create its lock {path}: {error.strerror}",
                Span(str(out)),
            ) from None
    create = os.O_CREAT if out.exists() or beside(out, "retired").exists() else 0
    for mode in (os.O_RDWR | create, os.O_RDONLY):
        try:
            return os.open(path, flags | mode, 0o644)
        except OSError:
            continue
    return None


@dataclass
class _Lock:
    out: Path
    timeout: float
    deadline: float
    say: Callable[[str], None]
    descriptor: int | None
    waited: bool = False

    def take(self, operation: int, mode: str) -> None:
        """flock `operation`, polling until the deadline; then record who holds it."""
        if self.descriptor is None:
            return
        while not self._try(operation):
            holder = self._holder()
            if not self.waited:
                self.waited = True
                self.say(
                    f"waiting for {holder} to finish with {self.out} "
                    f"(up to {self.timeout:g} s: --lock-timeout)"
                )
            if time.monotonic() >= self.deadline:
                raise fail(
                    "GF506",
                    f"{self.out} is locked by {holder}; gave up after {self.timeout:g} s",
                    Span(str(self.out)),
                    "wait for the other gpufleet to finish, or give it longer with "
                    "--lock-timeout SECONDS",
                )
            time.sleep(_POLL)
        record = f"{os.getpid()} {mode}".ljust(_RECORD - 1) + "\n"
        with suppress(OSError):  # opened read-only: the lock holds, its record is older
            os.pwrite(self.descriptor, record.encode(), 0)

    def _try(self, operation: int) -> bool:
        assert self.descriptor is not None
        try:
            fcntl.flock(self.descriptor, operation | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError as error:
            raise fail(
                "GF502",
                f"cannot lock {self.out} ({lock_path(self.out)}): {error.strerror}",
                Span(str(self.out)),
            ) from None
        return True

    def _holder(self) -> str:
        assert self.descriptor is not None
        try:
            words = os.pread(self.descriptor, _RECORD, 0).decode("ascii").split()
        except (OSError, UnicodeDecodeError):
            words = []
        if len(words) == 2 and words[0].isdigit():
            return f"gpufleet (pid {words[0]}, {words[1]})"
        return "another gpufleet"

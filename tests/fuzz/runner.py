"""Run one fuzz case in a child process with bounded time and memory.

The child is forked from the warm parent (gpufleet already imported), so a case costs its
own work and not the 0.7 s an interpreter takes to import gpufleet; `exec` mode runs the
real `gpufleet` console script instead (the truest, and slower). Either way the child leads
a process group of its own, so its workers are found and killed with it; its address space
is capped (RLIMIT_AS, inherited by its workers) so a memory bomb fails inside it instead of
taking the machine; a case that outlives its time limit is killed and reported as a hang.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import resource
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

RAISED = 99
"""The exit status of a child whose target raised (its traceback is on its stderr)."""


@dataclass(frozen=True)
class Limits:
    """What one case may take: wall seconds before it counts as a hang, and memory (bytes)
    beyond what the parent held when it forked (the child's address space is capped at the
    parent's plus `address_space_margin`)."""

    seconds: float = 60.0
    memory: int = 1024 << 20
    address_space_margin: int = 4096 << 20
    linger: float = 2.0
    """Seconds its workers may take to end once it has ended."""


@dataclass(frozen=True)
class Finished:
    """How a child ended."""

    status: int
    """Its exit code, or minus the signal that killed it."""
    seconds: float
    max_rss: int
    """Peak resident memory in bytes (the child's, or its largest waited-for worker's)."""
    rss_growth: int
    """`max_rss` less the parent's resident memory when it forked (a forked child starts
    with the parent's pages)."""
    timed_out: bool
    stray: int
    cpu: float = 0.0
    """CPU seconds (user and system) of the child and the workers it waited for."""
    """Processes of its group still alive after it ended (workers outliving it; killed)."""


def _memory_of_self() -> tuple[int, int]:
    """(resident, virtual) bytes of this process."""
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as statm:
        size, resident = (int(n) for n in statm.read().split()[:2])
    return resident * page, size * page


@dataclass
class Child:
    """A started child: its pid, a pidfd to wait on, and when it started."""

    pid: int
    pidfd: int
    started: float
    deadline: float
    parent_rss: int
    linger: float


def start(
    target: Callable[[], int] | Sequence[str],
    cwd: Path,
    stdout: Path,
    stderr: Path,
    limits: Limits,
) -> Child:
    """Fork a child that runs `target` in `cwd` (a function returning an exit code, or an
    argv to exec), its output going to the two files."""
    resident, virtual = _memory_of_self()
    cap = virtual + limits.address_space_margin
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        _child(target, cwd, stdout, stderr, cap)
    started = time.monotonic()
    deadline = started + limits.seconds
    return Child(pid, os.pidfd_open(pid), started, deadline, resident, limits.linger)


def _child(
    target: Callable[[], int] | Sequence[str], cwd: Path, stdout: Path, stderr: Path, cap: int
) -> None:
    code = RAISED
    # the collector leaves the parent's objects alone: walking them would copy every page
    gc.freeze()
    try:
        os.setpgid(0, 0)
        for number, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, str(stdout), os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, str(stderr), os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            descriptor = os.open(path, flags, 0o644)
            os.dup2(descriptor, number)
            os.close(descriptor)
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(number, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.chdir(cwd)
        if not callable(target):
            os.execv(target[0], list(target))
        # the streams a fresh interpreter would have under a UTF-8 locale
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace"
        )
        code = target()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else RAISED
    except BaseException:
        os.write(2, traceback.format_exc().encode("utf-8", "backslashreplace"))
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def finished(child: Child) -> bool:
    """Whether the child has ended (or outlived its deadline)."""
    if time.monotonic() >= child.deadline:
        return True
    return bool(select.select([child.pidfd], [], [], 0)[0])


def reap(child: Child) -> Finished:
    """Wait for the child (killing its group at the deadline) and say how it ended."""
    remaining = child.deadline - time.monotonic()
    ready = remaining > 0 and select.select([child.pidfd], [], [], remaining)[0]
    timed_out = not ready
    if timed_out:
        _kill_group(child.pid)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - child.started
    os.close(child.pidfd)
    stray = _stray(child.pid, child.linger)
    code = os.waitstatus_to_exitcode(status)
    max_rss = usage.ru_maxrss * 1024
    cpu = usage.ru_utime + usage.ru_stime
    return Finished(code, seconds, max_rss, max_rss - child.parent_rss, timed_out, stray, cpu)


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)


def _stray(group: int, patience: float) -> int:
    """Processes left in the child's group once it ended, after `patience` seconds for
    them to finish; they are killed."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return 0  # the common case, in one system call
        if not _members(group):
            return 0  # zombies only, waiting for whoever adopted them
        time.sleep(0.02)
    members = _members(group)
    _kill_group(group)
    return len(members)


def _members(group: int) -> list[int]:
    """Live (not zombie) processes whose process group is `group`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry))
    return found


def run(
    target: Callable[[], int] | Sequence[str],
    cwd: Path,
    stdout: Path,
    stderr: Path,
    limits: Limits,
) -> Finished:
    """`start` then `reap`: one child, start to end."""
    return reap(start(target, cwd, stdout, stderr, limits))

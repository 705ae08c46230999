"""Starting, recognising and stopping the control plane's processes.

Each process leads its own session and process group. A record keeps its pid and its start time
(from /proc), so a later ``down`` never signals a process that merely reuses an old pid.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProcessRecord:
    """A started component: enough to find it again from another process."""

    name: str
    pid: int
    start_ticks: int
    """Field 22 of /proc/<pid>/stat: tells this process from a later one with the same pid."""
    log: Path

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (see from_json)."""
        return {
            "name": self.name,
            "pid": self.pid,
            "start_ticks": self.start_ticks,
            "log": str(self.log),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProcessRecord:
        """The record to_json wrote."""
        return cls(str(data["name"]), int(data["pid"]), int(data["start_ticks"]), Path(data["log"]))


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start ticks) of a live pid, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[19])


def _pdeathsig(parent: int) -> Callable[[], None]:
    def arm() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return arm


def spawn(
    name: str, argv: Sequence[str | Path], log: Path, *, die_with_parent: bool
) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
    """Start ``argv`` in a new session with stdout and stderr appended to ``log``.

    With ``die_with_parent`` the kernel SIGKILLs it when the thread that started it dies
    (PR_SET_PDEATHSIG), so a killed test run leaves nothing behind; without it, it outlives us.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [str(arg) for arg in argv],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_pdeathsig(os.getpid()) if die_with_parent else None,
        )
    stat = _stat(process.pid)
    return process, ProcessRecord(name, process.pid, stat[1] if stat else -1, log)


def is_running(record: ProcessRecord) -> bool:
    """Whether the process of ``record`` is alive (reaping it if it is our exited child)."""
    stat = _stat(record.pid)
    if stat is None or stat[1] != record.start_ticks:
        return False
    if stat[0] in ("Z", "X"):
        # Exited. If it is our child, reap it (the wait only lasts while its threads finish).
        with contextlib.suppress(ChildProcessError):
            os.waitpid(record.pid, 0)
        return False
    return True


def rss_bytes(record: ProcessRecord) -> int | None:
    """Resident memory of a running process, or None."""
    if not is_running(record):
        return None
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{record.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return None


def stop_all(records: Sequence[ProcessRecord], timeout: float = 10.0) -> list[str]:
    """SIGTERM the process groups of ``records`` together, SIGKILL what still runs after
    ``timeout`` s (see wait_reaped for the zombie entries they may leave).

    Returns the names of those that were running. A record whose pid now belongs to another
    process is left alone.
    """
    alive = [record for record in records if is_running(record)]
    for record in alive:
        _signal_group(record.pid, signal.SIGTERM)

    def all_stopped() -> bool:
        return not any(is_running(record) for record in alive)

    if not _wait_until(all_stopped, timeout):
        for record in alive:
            if is_running(record):
                _signal_group(record.pid, signal.SIGKILL)
        _wait_until(all_stopped, 5.0)
    return [record.name for record in alive]


def wait_reaped(records: Sequence[ProcessRecord], timeout: float = 5.0) -> None:
    """Wait until stopped processes that are not our children (a CLI ``down``) have been reaped
    by init, so no ``<defunct>`` entry outlives ``down``."""
    _wait_until(lambda: not any(_exists(record) for record in records), timeout)


def _exists(record: ProcessRecord) -> bool:
    stat = _stat(record.pid)
    return stat is not None and stat[1] == record.start_ticks


def _wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _signal_group(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 that were free a moment ago."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a log, indented, or a note that there is no log."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            text = handle.read().decode(errors="replace")
    except FileNotFoundError:
        return f"    ({path} does not exist)"
    return "\n".join(f"    {line}" for line in text.splitlines()[-lines:])

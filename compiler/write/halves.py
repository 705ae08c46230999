"""A large write shared by two processes: the writer's own, and one forked for half the files.

Staging tens of thousands of small files is system calls (open, write, close) and the Python
around them, all on one core while the other idles: writing fleet XL's 68,202 files took
1.09 to 1.58 s in one process, 0.81 to 0.98 s in two (4 alternated rounds on tmpfs), and the
whole XL compile 0.95x (docs/benchmarks.md); threads gained nothing (the GIL). The forked
process writes only into the staging directory the writer prepared, only the files it was
given (the second half of them, in their order: other directories than the first half's, as
the tree's paths are sorted), and ends with os._exit, running nothing of the parent's. It
dies with the writer, leaves Ctrl-C to it, and a failure there is raised here as the writer's
own, after which the writer removes the staging directory as after any failed write.
"""

from __future__ import annotations

import errno
import os
import pickle
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import NoReturn

from compiler.lifetime import STOPPING, die_with_parent, signals_held

SHARED_FROM = 2000
"""Fewer files than this are written by the writer alone: a fork would cost about what the
second process saves."""


def each_shared(paths: Sequence[str], write: Callable[[str], None]) -> None:
    """`write(path)` for every path in `paths`, the second half in a forked process when there
    are SHARED_FROM or more and gpufleet may use more than one process (_may_fork).
    Raises what either process's `write` raised (the first half's first)."""
    if len(paths) < SHARED_FROM or not _may_fork():
        for path in paths:
            write(path)
        return
    half = len(paths) // 2
    child = _start(paths[half:], write)
    if child is None:  # no process to be had: all of it here
        for path in paths:
            write(path)
        return
    pid, failure = child
    try:
        for path in paths[:half]:
            write(path)
    except BaseException:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _reap(pid, failure)
        raise
    raised = _reap(pid, failure)
    if raised is not None:
        raise raised


def _may_fork() -> bool:
    """Whether gpufleet would use more than one process for its work (worker_count: fork,
    another CPU, GPUFLEET_WORKERS); imported here, as a `compile --check` that imports the
    writer has no use for the pool machinery, and a compile has it imported already."""
    from compiler.parallel import MIN_CLUSTERS_FOR_WORKERS, worker_count

    return worker_count(MIN_CLUSTERS_FOR_WORKERS) > 1


def _start(paths: Sequence[str], write: Callable[[str], None]) -> tuple[int, int] | None:
    """The forked process writing `paths`, and the read end of the pipe it sends a failure
    down; None when no process or pipe can be had."""
    try:
        failure_read, failure_write = os.pipe()
    except OSError:
        return None
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        with suppress(Exception):
            stream.flush()
    parent = os.getpid()
    with signals_held():
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:  # nothing of the parent's may run here: all of it is in the call
            _write_in_child(parent, paths, write, failure_read, failure_write)
    os.close(failure_write)
    if pid < 0:
        os.close(failure_read)
        return None
    return pid, failure_read


def _write_in_child(
    parent: int,
    paths: Sequence[str],
    write: Callable[[str], None],
    theirs: int,
    failure: int,
) -> NoReturn:
    """The forked process: write every path, or send down `failure` what stopped it."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's to handle
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)
        die_with_parent(parent)
        os.close(theirs)
        for path in paths:
            write(path)
    except BaseException as error:
        with suppress(BaseException):
            data = _pickled(error)
            view = memoryview(data)
            while view:
                view = view[os.write(failure, view) :]
    finally:
        os._exit(0)


def _pickled(error: BaseException) -> bytes:
    """`error` pickled; an OSError saying what it was where it does not pickle."""
    try:
        return pickle.dumps(error, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return pickle.dumps(OSError(errno.EIO, f"{type(error).__name__}: {error}"))


def _reap(pid: int, failure: int) -> BaseException | None:
    """Wait for the forked process to end; what it failed with, if it did not write all."""
    chunks = []
    with suppress(OSError):
        while chunk := os.read(failure, 1 << 16):
            chunks.append(chunk)
    os.close(failure)
    status = 0
    with suppress(ChildProcessError):
        status = os.waitpid(pid, 0)[1]
    if chunks:
        try:
            raised = pickle.loads(b"".join(chunks))
        except Exception:
            raised = None
        if isinstance(raised, BaseException):
            return raised
    if status != 0 or chunks:
        return OSError(errno.EIO, f"the process writing half of the files ended ({status})")
    return None

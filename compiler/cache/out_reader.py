"""out/'s digest for a `compile --check`, read in a forked process while the check takes the
compile key.

A check answered from a compile record takes the key of the policy files (reading each of
them: on fleet L, 4,000 files and a third of the check), then the digest of out/ (reading
each of its 17,000 files, or its index's lstat of each: most of the rest). Neither needs the
other, so a process forked before the key reads out/ meanwhile, on a core the check leaves
idle, sends the digest and waits. If it is the digest the record expects, the check closes
the pipe the process waits on, and the process saves out/'s index
(compiler.cache.file_index), as a check in one process would; else the check kills it, before
it has written anything.

The process only reads out/ and writes only the index, when told. It ends with its parent
(compiler.lifetime), leaves Ctrl-C to the parent, and ends with os._exit, running none of
the parent's clean-up (atexit handlers, buffered output). Anything that goes wrong with it
(no fork, a failure there, a digest cut short) costs only the speed: the check then reads
out/ itself.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from contextlib import suppress
from pathlib import Path
from typing import NoReturn

from compiler.cache.file_index import OUT_INDEX, FileIndex
from compiler.cache.store import out_digest
from compiler.lifetime import STOPPING, die_with_parent, signals_held


class OutReader:
    """The digest of `out` as it is now, for a check whose cache is in `directory`."""

    def __init__(self, directory: Path, out: Path) -> None:
        self.directory = directory
        self.out = out
        self._pid: int | None = None
        self._digest: int | None = None
        """The read end of the pipe the process sends the digest down."""
        self._answer: int | None = None
        """The write end of the pipe the process waits on: closed, it says save the index
        (the process is killed when it must not)."""
        self._index: FileIndex | None = None
        """The index of a digest read in this process."""

    @classmethod
    def start(cls, directory: Path, out: Path) -> OutReader:
        """A reader of `out`, reading it from now on in a forked process where there is fork
        (and GPUFLEET_WORKERS=1 does not ask for one process)."""
        reader = cls(directory, out)
        if not hasattr(os, "fork") or os.environ.get("GPUFLEET_WORKERS") == "1":
            return reader
        try:
            digest_read, digest_write = os.pipe()
            answer_read, answer_write = os.pipe()
        except OSError:  # out of descriptors: read here
            return reader
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            with suppress(Exception):
                stream.flush()
        parent = os.getpid()
        ours, theirs = (digest_read, answer_write), (digest_write, answer_read)
        try:
            with signals_held():
                try:
                    pid: int | None = os.fork()
                except OSError:  # out of processes: read here
                    pid = None
                if pid == 0:  # nothing of the parent's may run here: all of it is in the call
                    _read_in_child(parent, directory, out, theirs, ours)
                for end in theirs:
                    os.close(end)
                if pid is None:
                    for end in ours:
                        os.close(end)
                else:
                    reader._pid, (reader._digest, reader._answer) = pid, ours
        except BaseException:  # a signal held back, raised as the body ended
            reader.stop()
            raise
        return reader

    def digest(self) -> str | None:
        """out/'s digest (store.out_digest: None when out/ holds anything but directories and
        regular files), from the process if it sends one whole, else read here."""
        if self._digest is not None:
            chunks = []
            with suppress(OSError):
                while chunk := os.read(self._digest, 1 << 16):
                    chunks.append(chunk)
            os.close(self._digest)
            self._digest = None
            with suppress(Exception):  # cut short: the process failed, or was killed
                digest = pickle.loads(b"".join(chunks))
                if digest is None or isinstance(digest, str):
                    return digest
            self.stop()
        self._index = FileIndex.open(self.directory, self.out, OUT_INDEX)
        return out_digest(self.out, self._index)

    def keep_index(self) -> None:
        """The digest was the one expected: save out/'s index with what was read, and wait
        until it is saved."""
        if self._index is not None:
            self._index.save()
        elif self._answer is not None:
            self._wait()  # closing the answer says "save", where writing could raise SIGPIPE

    def stop(self) -> None:
        """End the process, whatever it is doing (nothing is saved after this)."""
        if self._pid is not None:
            with suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
        self._wait()

    def _wait(self) -> None:
        for end in (self._digest, self._answer):
            if end is not None:
                os.close(end)
        self._digest = self._answer = None
        if self._pid is not None:
            with suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
            self._pid = None


def _read_in_child(
    parent: int,
    directory: Path,
    out: Path,
    ends: tuple[int, int],
    parents: tuple[int, int],
) -> NoReturn:
    """The forked process: read out/, send its digest down the first of its `ends`, wait for
    the second to close, and save the index then (unless killed before). `parents`: the
    parent's ends of the two pipes, closed here."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's to handle
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)
        die_with_parent(parent)
        for end in parents:
            os.close(end)
        digest_write, answer_read = ends
        index = FileIndex.open(directory, out, OUT_INDEX)
        data = pickle.dumps(out_digest(out, index), protocol=pickle.HIGHEST_PROTOCOL)
        with open(digest_write, "wb") as pipe:
            pipe.write(data)
        os.read(answer_read, 1)  # the end of the answer: the check was up to date
        index.save()
    finally:
        os._exit(0)

"""Carry out/ into the staging directory while the policies compile.

A compile replaces out/ whole (compiler.write.writer): it builds the new tree beside out/,
with each file whose bytes stay the same hard-linked from out/, and swaps it in. Finding
those files (reading every file of out/) and linking them costs the same however small the
change: on a fleet of 17,000 files, 0.25 s of a one-team change. None of it needs the new
tree, so a forked process does it from the start of the compile, on a core the compile
leaves idle while it loads, resolves and solves: it reads and digests every regular file of
out/ and carries each into the staging directory as the writer would carry an unchanged one
(carry_over). The write then compares digests, rewrites what changed and swaps.

out/ itself is only read. The staging directory is the writer's own (`.out.staging`), used
under out/'s write lock: whatever a prestage leaves there (the compile failed, or was
killed) is removed when the compile ends, or by the next one. A prestage that fails for any
reason is no prestage: the writer then stages from nothing, as it always could.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NoReturn

from compiler.file_bytes import read_at_most
from compiler.write.atomic import beside, remove
from compiler.write.writer import (
    OWNED_LIST,
    Staged,
    file_digest,
    owned_files,
    present_files,
)

MAX_DIGESTED = 16 << 20
"""Files larger than this (none that gpufleet writes) get no digest: the writer reads them
again if the tree writes there."""


def carry_over(out: Path, staging: Path) -> Staged:
    """Carry every file of `out` into the new directory `staging` as the writer carries an
    unchanged one, and digest every regular file: what a prestage does (in-process here)."""
    present = present_files(out)
    owned = {*owned_files(out), OWNED_LIST}
    staging.mkdir()
    digests: dict[str, tuple[int, bytes]] = {}
    carried: list[str] = []
    made = {""}
    for path in sorted(present.files):
        source, target = f"{out}/{path}", f"{staging}/{path}"
        regular = path in present.regular
        if regular:
            data = read_at_most(source, MAX_DIGESTED + 1)
            if len(data) <= MAX_DIGESTED:
                digests[path] = (len(data), file_digest(data))
        if path in owned and not regular:
            continue  # rewritten or removed, never carried
        parent = os.path.dirname(path)
        if parent not in made:
            os.makedirs(f"{staging}/{parent}", exist_ok=True)
            made.add(parent)
        if path in owned:
            try:
                os.link(source, target, follow_symlinks=False)
            except OSError:  # a file system without hard links
                shutil.copyfile(source, target)
        elif path in present.links:
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)
        carried.append(path)
    return Staged(present, digests, frozenset(carried))


class Prestage:
    """A forked process that carries out/ into its staging directory (carry_over), sends
    what it carried, then waits to remove the staging directory: after the write has
    swapped it with out/, that is the old tree, removed while the compile finishes."""

    def __init__(self, staging: Path, pid: int, results: int, orders: int) -> None:
        self.staging = staging
        self._pid: int | None = pid
        self._results: int | None = results
        """Read end of the pipe the process sends what it carried down."""
        self._orders: int | None = orders
        """Write end of the pipe it waits on: closing it tells it to remove the staging
        directory and end."""

    @classmethod
    def start(cls, out: Path) -> Prestage | None:
        """Start carrying `out` over, or None where there is nothing to carry or no fork
        (or GPUFLEET_WORKERS=1 asks for one process)."""
        out = out.absolute()
        single = os.environ.get("GPUFLEET_WORKERS") == "1"
        if single or not hasattr(os, "fork") or out.is_symlink() or not out.is_dir():
            return None
        # imported here, not at start-up: a `compile --check` answered from its record forks
        # nothing; every compile that writes needs it for its workers anyway
        from compiler.parallel import die_with_parent

        staging = beside(out, "staging")
        results, orders = os.pipe(), os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(results[0])
            os.close(orders[1])
            _carry_in_child(out, staging, results[1], orders[0], lambda: die_with_parent(parent))
        os.close(results[1])
        os.close(orders[0])
        return cls(staging, pid, results[0], orders[1])

    def staged(self) -> Staged | None:
        """Wait until the process has carried out/ over; what it carried, or None when it
        failed (the staging directory is then the writer's to clear)."""
        if self._results is None:
            return None
        chunks = []
        while chunk := os.read(self._results, 1 << 20):
            chunks.append(chunk)
        os.close(self._results)
        self._results = None
        try:
            staged = pickle.loads(b"".join(chunks))
        except Exception:  # nothing, or cut short: the process failed
            return None
        return staged if isinstance(staged, Staged) else None

    def dispose(self, tree: Path) -> None:
        """Remove a tree the write is done with (writer.write_tree's `dispose`): the process
        removes it when it is the staging directory (the old out/ after the swap, or the
        carried copy when nothing changed) while the compile finishes, and discard waits for
        that; any other goes here."""
        if tree == self.staging and self._orders is not None:
            self._let_go()
        else:
            remove(tree)

    def discard(self) -> None:
        """End the process (stopped if it is still carrying, else once it has removed the
        staging directory) and remove whatever is left there."""
        if self._pid is not None:
            if self._results is not None:  # never asked for: stop it
                with suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
                os.close(self._results)
                self._results = None
            self._let_go()
            os.waitpid(self._pid, 0)
            self._pid = None
        with suppress(OSError):
            remove(self.staging)

    def _let_go(self) -> None:
        if self._orders is not None:
            os.close(self._orders)
            self._orders = None


@contextmanager
def prestaging(out: Path) -> Iterator[Prestage | None]:
    """A prestage of `out` for the body (None where there is none), discarded after it.

    Enter it holding out/'s write lock, which must outlast it."""
    prestage = Prestage.start(out)
    try:
        yield prestage
    finally:
        if prestage is not None:
            prestage.discard()


def _carry_in_child(
    out: Path, staging: Path, results: int, orders: int, guard: Callable[[], None]
) -> NoReturn:
    """The forked process: `guard` it (it must die with its parent), carry `out` over, send
    the result down `results`, and once `orders` closes, remove the staging directory. It
    ends here, with no clean-up of the parent's (atexit handlers, buffered output) run
    twice."""
    code = 1
    try:
        guard()
        remove(staging)  # what a killed run left
        data = memoryview(pickle.dumps(carry_over(out, staging), protocol=5))
        while data:
            data = data[os.write(results, data) :]
        os.close(results)
        while os.read(orders, 1):  # until the parent closes it
            pass
        remove(staging)
        code = 0
    except BaseException:  # any failure is no prestage: the parent stages from nothing
        pass
    finally:
        os._exit(code)

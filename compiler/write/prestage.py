"""Carry out/ into the staging directory while the policies compile.

A compile replaces out/ whole (compiler.write.writer): it builds the new tree beside out/,
with each file whose bytes stay the same hard-linked from out/, and swaps it in. Finding
those files (reading every file of out/) and linking them costs the same however small the
change: on a fleet of 17,000 files, 0.25 s of a one-team change. None of it needs the new
tree, so a forked process does it from the start of the compile, with what CPU the compile
leaves idle while it loads, resolves and solves (it runs nicer: NICENESS): it reads and
digests every regular file of out/ and carries each into the staging directory as the
writer would carry an unchanged one (carry_over). The write then compares digests, rewrites
what changed and swaps.

With the compile cache on, the process reads only the files changed since the last compile:
out/'s index in the cache (compiler.cache.file_index) keeps the digest of each file with its
lstat, and the process renews it when the write is done, with every file it carried that no
one wrote since (FileIndex.relinked: carrying links it, which moves its change time). It
also empties the cache's trash, where the last compile left its old tree, after the carry
(removing that tree moves the change times of the files it shares with out/), and this
compile's old tree goes there too (compiler.write.trash).

out/ itself is only read. The staging directory is the writer's own (`.out.staging`), used
under out/'s write lock (which the process holds too, inherited, until it ends): whatever a
prestage leaves there is removed when the compile ends, by the process when its parent dies
(PR_SET_PDEATHSIG with SIGTERM, which it handles), or by the next compile. A prestage that
fails for any reason is no prestage: the writer then stages from nothing, as it always could.

The lock keeps other gpufleet runs out, not people or other tools, and a compile can take a
while: out/ may change after it was carried. So the process also takes a `snapshot` of out/
as it carries it, and once the compile has taken what was carried (as soon as it is, while
the clusters compile: Prestage.take_if_carried; else when the write asks for it) it walks
out/ again and says whether anything changed: a file edited, replaced, added, removed or
chmodded since the compile started. The writer then stages from nothing, from out/ as it is
(Carried.still_carried). An edit in the same tick of the file system's clock as the
snapshot, which leaves the size unchanged, goes unseen: the same race as between any reading
of out/ and the swap.
"""

from __future__ import annotations

import os
import pickle
import select
import shutil
import signal
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from compiler.cache.file_index import OUT_INDEX, FileIndex
from compiler.cache.settled import FileStat, Settled, file_stat, written
from compiler.file_bytes import FileDigest, bytes_digest, read_open, read_whole
from compiler.lifetime import STOPPING, die_with_parent, signals_held
from compiler.write.atomic import beside, remove
from compiler.write.writer import (
    OWNED_LIST,
    Present,
    Staged,
    owned_files,
    write_file,
)

if TYPE_CHECKING:
    import socket

    from compiler.write.trash import Trash

NICENESS = 10
"""How much nicer than the compile the process runs: it works ahead, and only its last part
(the walk that verifies out/) is waited for, so it takes what CPU the compile leaves rather
than share a core with the parent or a worker. On fleet L (2 cores), alternated with the
same process at the compile's priority: a one-team compile 0.95x, a compile of every
cluster over out/ 0.97x (nicer still, 19, did no better; 5 a little worse)."""

MAX_DIGESTED = 16 << 20
"""Files larger than this (none that gpufleet writes) get no digest: the writer reads them
again if the tree writes there."""


def carry_over(
    out: Path, staging: Path, max_digested: int = MAX_DIGESTED, index: FileIndex | None = None
) -> Staged:
    """Carry every file of `out` into the new directory `staging` as the writer carries an
    unchanged one, and digest every regular file up to `max_digested` bytes (a file `index`
    kept, unchanged, is not read again): what a prestage does (in-process here)."""
    return _carry(out, staging, max_digested, index).staged()


Snapshot = dict[str, FileStat]
"""Every entry below out/ with its lstat."""


def snapshot(out: Path) -> Snapshot:
    """Every entry below `out` with its lstat."""
    found: Snapshot = {}
    with _directory(str(out)) as descriptor:
        _snapshot(descriptor, "", found)
    return found


def unwritten(before: Snapshot, after: Snapshot) -> bool:
    """Whether nothing below out/ was written, replaced, moved, added, removed or chmodded
    between two snapshots (a directory's size and times change with its entries): each
    entry's lstat is the same but for its change time, which carrying a file moves (it
    hard-links it), as does removing a tree that shares it (the trash)."""
    return before.keys() == after.keys() and all(
        written(status) == written(after[path]) for path, status in before.items()
    )


def _snapshot(directory: int, prefix: str, found: Snapshot) -> None:
    with os.scandir(directory) as entries:
        for entry in entries:
            relative = prefix + entry.name
            found[relative] = file_stat(entry.stat(follow_symlinks=False))
            if entry.is_dir(follow_symlinks=False):
                with _directory(entry.name, directory) as below:
                    _snapshot(below, relative + "/", found)


@contextmanager
def _directory(path: str, parent: int | None = None) -> Iterator[int]:
    """A descriptor of the directory `path` (of `parent`'s, if given), never through a link:
    the walks below go by descriptor, so no system call walks out/'s path again."""
    descriptor = os.open(path, _DIRECTORY, dir_fd=parent)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _carry(out: Path, staging: Path, max_digested: int, index: FileIndex | None) -> _Carrier:
    """carry_over, in one walk of `out` that also takes its snapshot: each entry's status is
    taken before its bytes are read, as a snapshot before the carry would have it."""
    owned = {*owned_files(out), OWNED_LIST}
    carrier = _Carrier(str(out), str(staging), owned, max_digested, index)
    staging.mkdir()
    try:
        with _directory(carrier.out) as descriptor:
            carrier.walk(descriptor, "")
    finally:
        carrier.close()
    return carrier


class _Carrier:
    """One walk of out/ (`_carry`): what it found, and the staging directories made so far
    (a directory is made when the first file carried into it is: as _stage makes them)."""

    def __init__(
        self, out: str, staging: str, owned: set[str], max_digested: int, index: FileIndex | None
    ) -> None:
        self.out, self.staging, self.owned, self.max_digested = out, staging, owned, max_digested
        self.index = index
        """out/'s index, if any: a file it kept, unchanged, is not read."""
        self.found: Snapshot = {}
        self.files: set[str] = set()
        self.links: set[str] = set()
        self.regular: set[str] = set()
        self.directories: set[str] = set()
        self.digests: dict[str, FileDigest] = {}
        self.carried: list[str] = []
        self.made: dict[str, int] = {}
        """A descriptor of each staging directory made, by its path below staging."""

    def staged(self) -> Staged:
        """What the walk carried, as the writer takes it."""
        present = Present(
            frozenset(self.files),
            frozenset(self.links),
            frozenset(self.regular),
            frozenset(self.directories),
        )
        return Staged(present, self.digests, frozenset(self.carried))

    def walk(self, directory: int, prefix: str) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                path = prefix + entry.name
                status = entry.stat(follow_symlinks=False)
                self.found[path] = file_stat(status)
                if entry.is_dir(follow_symlinks=False):
                    self.directories.add(path)
                    with _directory(entry.name, directory) as below:
                        self.walk(below, path + "/")
                else:
                    self.carry(directory, prefix, entry.name, status)

    def carry(self, directory: int, prefix: str, name: str, status: os.stat_result) -> None:
        """Carry the file `name` of out/'s directory `prefix` (open as `directory`)."""
        path = prefix + name
        self.files.add(path)
        regular = stat.S_ISREG(status.st_mode)
        if stat.S_ISLNK(status.st_mode):
            self.links.add(path)
        elif regular:
            self.regular.add(path)
            index = self.index
            digest = index.kept_digest(path, self.found[path]) if index is not None else None
            if digest is None:
                descriptor = os.open(name, _FILE, dir_fd=directory)
                try:
                    data = read_open(descriptor, self.max_digested + 1, status.st_size)
                finally:
                    os.close(descriptor)
                if len(data) <= self.max_digested:
                    digest = bytes_digest(data)
            if digest is not None:
                self.digests[path] = digest
        if path in self.owned and not regular:
            return  # rewritten or removed, never carried
        target = self.target(prefix.rstrip("/"))
        if path in self.owned:
            try:
                os.link(name, name, src_dir_fd=directory, dst_dir_fd=target, follow_symlinks=False)
            except OSError:  # no hard link here: a copy, made as the writer makes files
                write_file(f"{self.staging}/{path}", read_whole(f"{self.out}/{path}"))
        elif path in self.links:
            os.symlink(os.readlink(name, dir_fd=directory), name, dir_fd=target)
        else:
            shutil.copy2(f"{self.out}/{path}", f"{self.staging}/{path}")
        self.carried.append(path)

    def target(self, directory: str) -> int:
        """A descriptor of the staging directory `directory` (below staging), made if need be."""
        found = self.made.get(directory)
        if found is None:
            os.makedirs(f"{self.staging}/{directory}", exist_ok=True)
            found = self.made[directory] = os.open(f"{self.staging}/{directory}", _DIRECTORY)
        return found

    def close(self) -> None:
        for descriptor in self.made.values():
            os.close(descriptor)
        self.made.clear()


_VERIFY, _END = b"v", b"e"
"""Orders to the process: walk out/ again and say whether it is as carried; remove the
staging directory and end (also when the channel closes: the parent is gone or done)."""

_LENGTH = 8
"""Bytes of the length that comes before the carried result."""


class Prestage:
    """A forked process that carries out/ into its staging directory (carry_over), sends
    what it carried, says on request whether out/ is still as carried, then waits to remove
    the staging directory: after the write has swapped it with out/, that is the old tree,
    removed while the compile finishes (unless it went to the trash). It is the writer's
    `Carried`.

    The two talk over a socket pair, not pipes: a message to a process that has ended must
    be an error, not the SIGPIPE that ends gpufleet (compiler.launch restores it), and a
    socket can say so (MSG_NOSIGNAL: where there is none, there is no prestage)."""

    def __init__(
        self,
        staging: Path,
        pid: int,
        channel: socket.socket,
        no_signal: int,
        trash: Trash | None = None,
    ) -> None:
        self.staging = staging
        self._trash = trash
        """Where the write's old trees go (the next compile's prestage removes them), if
        anywhere: else this process removes them."""
        self._pid: int | None = pid
        self._channel: socket.socket | None = channel
        self._no_signal = no_signal
        """MSG_NOSIGNAL."""
        self._asked = False
        self._staged: Staged | None = None
        self._received = False
        """What it carried came whole: the process carries no more."""
        self._verdict: bool | None = None

    @classmethod
    def start(
        cls, out: Path, trash: Trash | None = None, indexes: Path | None = None
    ) -> Prestage | None:
        """Start carrying `out` over, or None where there is nothing to carry or no fork
        (or GPUFLEET_WORKERS=1 asks for one process). The trees the write is done with go to
        `trash` (compiler.write.trash), which the process empties once it has carried out/.
        `indexes`: the cache directory that holds out/'s index (compiler.cache.file_index),
        which the process reads and renews."""
        out = out.absolute()
        single = os.environ.get("GPUFLEET_WORKERS") == "1"
        if single or not hasattr(os, "fork") or out.is_symlink() or not out.is_dir():
            return None
        # imported here, not at start-up: a `compile --check` answered from its record forks
        # nothing; every compile that writes needs them for its workers anyway
        import socket

        no_signal = getattr(socket, "MSG_NOSIGNAL", None)
        if no_signal is None:
            return None
        try:
            ours, theirs = socket.socketpair()
        except OSError:  # out of descriptors: no prestage
            return None
        parent = os.getpid()
        staging = beside(out, "staging")
        prestage: Prestage | None = None
        try:
            with signals_held():
                try:
                    pid = os.fork()
                except OSError:  # out of processes: no prestage
                    ours.close()
                    theirs.close()
                    return None
                if pid == 0:  # nothing of the parent's may run here: all of it is in the call
                    _carry_in_child(out, staging, (theirs, ours), parent, trash, indexes)
                theirs.close()
                prestage = cls(staging, pid, ours, no_signal, trash)
        except BaseException:  # a signal held back, raised as the body ended
            if prestage is not None:
                prestage.discard()
            raise
        return prestage

    def staged(self) -> Staged | None:
        """Wait until the process has carried out/ over, and have it check from now on that
        out/ stays as carried; what it carried, or None when it failed (the staging
        directory is then the writer's to clear)."""
        if self._channel is None or self._asked:
            return self._staged
        self._asked = True
        try:
            length = int.from_bytes(_receive(self._channel, _LENGTH), "big")
            staged = pickle.loads(_receive(self._channel, length))
            self._received = True
            self._order(_VERIFY)
        except Exception:  # nothing, or cut short: the process failed
            return None
        self._staged = staged if isinstance(staged, Staged) else None
        return self._staged

    def take_if_carried(self) -> bool:
        """staged(), if the process has carried out/ over already (else nothing: the write
        asks later); whether there is nothing left to take. What the compile calls while it
        compiles (compile_clusters' `meanwhile`): the process's walk that verifies out/ then
        runs while the compile finishes, rather than while the write waits for it. The walk
        starts that much earlier before the swap (a fraction of a second, in a compile that
        lasts seconds): an edit to out/ after it goes unseen, as one after it always did."""
        if self._channel is None or self._asked:
            return True
        with suppress(OSError, ValueError):
            if select.select([self._channel], [], [], 0)[0]:
                self.staged()
        return self._asked

    def still_carried(self) -> bool:
        """Whether out/ was as carried when staged() returned (waits for the process's walk)."""
        if self._verdict is None:
            self._verdict = False
            if self._channel is not None and self._received:
                with suppress(OSError):
                    self._verdict = self._channel.recv(1) == b"1"
        return self._verdict

    def dispose(self, tree: Path) -> None:
        """Remove a tree the write is done with (writer.write_tree's `dispose`): into the
        trash, where there is one on its file system; else the process removes it when it
        is the staging directory (the old out/ after the swap, or the carried copy when
        nothing changed), and any other goes here. The staging directory is the last tree
        a write disposes of: the process then removes what is left there and saves out/'s
        renewed index while the compile finishes (discard waits for that)."""
        trashed = self._trash is not None and self._trash.put(tree)
        if tree == self.staging and self._channel is not None:
            self._let_go()
        elif not trashed:
            remove(tree)

    def discard(self) -> None:
        """End the process (stopped if it is still carrying, else once it has removed the
        staging directory) and remove whatever is left there."""
        if self._pid is not None:
            if not self._received:  # still carrying, or never asked: stop it
                with suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
            self._let_go()
            with suppress(ChildProcessError):  # reaped already (SIGCHLD ignored)
                os.waitpid(self._pid, 0)
            self._pid = None
        with suppress(OSError):
            remove(self.staging)

    def _order(self, order: bytes) -> None:
        assert self._channel is not None
        self._channel.sendall(order, self._no_signal)

    def _let_go(self) -> None:
        """Tell the process to remove the staging directory and end. In words: workers
        forked since hold the channel open too, so the process would not see it close."""
        if self._channel is not None:
            with suppress(OSError):  # it has ended already
                self._order(_END)
            self._channel.close()
            self._channel = None


@contextmanager
def prestaging(
    out: Path, trash: Trash | None = None, indexes: Path | None = None
) -> Iterator[Prestage | None]:
    """A prestage of `out` for the body (None where there is none), discarded after it; the
    trees the write is done with go to `trash`, and out/'s index is in `indexes`, if given
    (Prestage.start).

    Enter it holding out/'s write lock, which must outlast it."""
    prestage = Prestage.start(out, trash, indexes)
    try:
        yield prestage
    finally:
        if prestage is not None:
            prestage.discard()


def _receive(channel: socket.socket, size: int) -> bytes:
    """`size` bytes from `channel` (EOFError when it ends before)."""
    chunks: list[bytes] = []
    while size:
        chunk = channel.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _end(signal_number: int, frame: object) -> NoReturn:
    """SIGTERM in the process: its parent died (or it was asked to end): clean up and end."""
    raise SystemExit(1)


def _carry_in_child(
    out: Path,
    staging: Path,
    ends: tuple[socket.socket, socket.socket],
    parent: int,
    trash: Trash | None,
    indexes: Path | None,
) -> NoReturn:
    """The forked process, SIGINT and SIGTERM held back: take its own signal handlers, end
    with its `parent` (SIGTERM), close the parent's end of the socket pair (`ends`: its own,
    the parent's), carry `out` over (with its index in `indexes`, if given), send the result
    down its end, empty the `trash` of the trees it held at the start, answer VERIFY orders
    (with the walk that verifies out/, whose lstats also renew out/'s index), and on END (or
    when the channel closes) remove the staging directory and save the renewed index.

    When anything else ends it, it removes the staging directory only where the parent
    cannot be using it: before the result was sent, or once the parent is gone. (The parent
    sees the channel close only once this process has ended, so it never stages from nothing
    while this one still removes.) It ends here, with no clean-up of the parent's (atexit
    handlers, buffered output) run twice."""
    sent = False
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's to handle
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # an error, if the parent is gone
        signal.signal(signal.SIGTERM, _end)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)
        die_with_parent(parent, signal.SIGTERM)
        with suppress(OSError):  # at the compile's priority, then
            os.nice(NICENESS)
        channel, parents = ends
        parents.close()
        remove(staging)  # what a killed run left
        index = FileIndex.open(indexes, out, OUT_INDEX) if indexes is not None else None
        trashed = trash.trees() if trash is not None else []  # not the trees this run adds
        carrier = _carry(out, staging, MAX_DIGESTED, index)
        data = pickle.dumps(carrier.staged(), protocol=5)
        sent = True
        channel.sendall(len(data).to_bytes(_LENGTH, "big") + data)
        if trash is not None:  # before the walk below: removing moves change times
            trash.empty(trashed)
        renewed = None
        while channel.recv(1) == _VERIFY:
            now = Settled.now(index.directory) if index is not None else None
            found = snapshot(out)
            channel.sendall(b"1" if unwritten(carrier.found, found) else b"0")
            if index is not None and now is not None:  # every link to them is made or gone
                renewed = index.relinked(carrier.digests, carrier.found, found, now)
        sent = False  # END: the parent is done with it
        remove(staging)
        if index is not None and renewed is not None:
            index.save_as(out, renewed)
    except BaseException:  # any failure is no prestage: the parent stages from nothing
        pass
    finally:
        try:
            if not sent or os.getppid() != parent:
                remove(staging)
        finally:
            os._exit(0)

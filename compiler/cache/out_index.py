"""What out/'s files were when a check last read them, so that the next check reads only the
files changed since (as git's index spares `git status` from reading the work tree).

A `compile --check` answered from a compile record hashes every file of out/
(compiler.cache.store.out_digest): on fleet L, 17,000 files and most of the check's time. The
index keeps, for each regular file of one out/, its lstat (device, inode, mode, size,
modification and change times in ns) and the FileDigest of the bytes read then: a file whose
lstat is the same is not read again. Writing to a file or changing its mode moves its change
time (ctime), which no call can set back; replacing it gives it another inode.

A file changed shortly before a check read it could change again within the same tick of the
file system's clock and keep every time it had. So a file is kept only when it last changed
before the check started, by its file system's clock where the check can read it, else
RACY_NS before by the system clock (compiler.cache.settled); a younger one is read at every
check until it is that old (git's "racily clean" entries).

An index is of one directory: out/'s device and inode, not only its path. A check that finds
no index of the directory it checks keeps that directory's identity only, and the next check
of it keeps the files: a fresh checkout that CI checks once costs no lstat and no index of
17,000 entries, while a working tree checked again and again reads only what changed from its
third check on. (A compile that rewrites out/ swaps in a new directory, so the first check
after it starts over.)

One index per out/ path lives in the cache directory, written whole or not at all
(compiler.cache.files); anything unreadable is an empty index, which costs one check the full
read. It is a pure speed-up: a check's verdict is the same with or without it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

from compiler.cache.files import put_file, take_file
from compiler.cache.settled import FileStat, Settled, file_stat
from compiler.file_bytes import read_regular
from compiler.write.writer import FileDigest, bytes_digest

INDEX_FORMAT = "gpufleet-out-index/2"
INDEX_SUFFIX = ".outindex"


@dataclass
class OutIndex:
    """The index of one out/ directory as one check reads and renews it."""

    directory: Path
    name: str
    """The index file's name in `directory`."""
    tree: tuple[int, int] | None
    """out/'s device and inode (None when it cannot be found)."""
    known: dict[str, tuple[FileStat, FileDigest]]
    """What the last check of this directory kept, by path below out/."""
    seen_before: bool
    """Whether the last check was of this directory: only then are its files kept."""
    settled: Settled
    """Whether a file changed early enough to be kept (taken when the check starts)."""
    kept: dict[str, tuple[FileStat, FileDigest]] = field(default_factory=dict)
    """What this check keeps for the next."""

    @classmethod
    def open(cls, directory: Path, out: Path) -> OutIndex:
        """The index of `out` kept in the cache `directory` (empty when there is none of the
        directory now at that path). The check starts now (`settled`)."""
        settled = Settled.now(directory)
        name = hashlib.sha256(os.fsencode(out.absolute())).hexdigest()[:32] + INDEX_SUFFIX
        try:
            status = os.lstat(out)
            tree: tuple[int, int] | None = (status.st_dev, status.st_ino)
        except OSError:
            tree = None
        data = take_file(directory, name) if tree is not None else None
        if data is not None:
            try:
                format_, saved_tree, entries = pickle.loads(data)
                if format_ == INDEX_FORMAT and saved_tree == tree and isinstance(entries, dict):
                    return cls(directory, name, tree, entries, True, settled)
            except Exception:  # an unreadable index (cut short, another format) is empty
                pass
        return cls(directory, name, tree, {}, False, settled)

    def digest(self, out: Path, path: str) -> FileDigest:
        """The FileDigest of regular file `path` below `out`: the kept one when its lstat is
        unchanged, else read (OSError when it is not a regular file or cannot be read)."""
        full = f"{out}/{path}"
        entry = self.known.get(path)
        if entry is not None and file_stat(os.lstat(full)) == entry[0]:
            self._keep(path, *entry)
            return entry[1]
        # the status is taken before the bytes are read: a change in between is in the
        # bytes, or moves the ctime
        status, data = read_regular(full)
        digest = bytes_digest(data)
        self._keep(path, file_stat(status), digest)
        return digest

    def _keep(self, path: str, found: FileStat, digest: FileDigest) -> None:
        """Keep `path`'s entry for the next check: when the last check was of this directory
        too, and the file did not change too recently."""
        if self.seen_before and self.settled(found):
            self.kept[path] = (found, digest)

    def save(self) -> None:
        """Keep what this check found for the next: out/'s identity, and its files if the
        last check was of this directory too (nothing is written when that is what was kept
        already; a cache that cannot be written stays as it was)."""
        if self.tree is None or (self.seen_before and self.kept == self.known):
            return
        put_file(self.directory, self.name, pickle.dumps((INDEX_FORMAT, self.tree, self.kept), 5))

"""What a directory's files were when a run last read them, so that the next run reads only
the files changed since (as git's index spares `git status` from reading the work tree).

Two runs read every file of a directory only to hash it:
- a `compile --check` answered from a compile record hashes every file of out/
  (compiler.cache.store.out_digest): on fleet L, 17,000 files and most of the check's time;
- a compile with the cache takes its key of every policy file (compiler.cache.key), and the
  loader finds what it parsed before by the same hashes (compiler.cache.parsed).

The index of a directory keeps, for each regular file in it, its lstat (device, inode, mode,
size, modification and change times in ns) and the FileDigest of the bytes read then: a file
whose lstat is the same is not read again. Writing to a file or changing its mode moves its
change time (ctime), which no call can set back; replacing it gives it another inode.

A file changed shortly before a run read it could change again within the same tick of the
file system's clock and keep every time it had. So a file is kept only when it last changed
before the run started, by its file system's clock where the run can read it, else RACY_NS
before by the system clock (compiler.cache.settled); a younger one is read at every run until
it is that old (git's "racily clean" entries).

An index is of one directory: its device and inode, not only its path. A run that finds no
index of the directory it reads keeps that directory's identity only, and the next run of it
keeps the files: a fresh checkout that CI checks once costs no lstat and no index of 17,000
entries, while a working tree checked again and again reads only what changed from its third
run on. (A compile that rewrites out/ swaps in a new directory, so the first check after it
starts over.)

One index per directory path and use (OUT_INDEX, POLICY_INDEX) lives in the cache directory,
written whole or not at all (compiler.cache.files); anything unreadable is an empty index,
which costs one run the full read. It is a pure speed-up: what a run finds is the same with
or without it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

from compiler.cache.files import put_file, take_file
from compiler.cache.settled import FileStat, Settled, file_stat
from compiler.file_bytes import FileDigest, bytes_digest, read_regular

INDEX_FORMAT = "gpufleet-file-index/3"
OUT_INDEX = ".outindex"
"""The suffix of out/'s index."""
POLICY_INDEX = ".policyindex"
"""The suffix of the policy directory's index."""


@dataclass
class FileIndex:
    """The index of one directory as one run reads and renews it."""

    directory: Path
    name: str
    """The index file's name in `directory`."""
    tree: tuple[int, int] | None
    """The directory's device and inode (None when it cannot be found)."""
    known: dict[str, tuple[FileStat, FileDigest]]
    """What the last run of this directory kept, by path below it."""
    seen_before: bool
    """Whether the last run was of this directory: only then are its files kept."""
    settled: Settled
    """Whether a file changed early enough to be kept (taken when the run starts)."""
    kept: dict[str, tuple[FileStat, FileDigest]] = field(default_factory=dict)
    """What this run keeps for the next."""

    @classmethod
    def open(cls, directory: Path, root: Path, use: str) -> FileIndex:
        """The `use` index (OUT_INDEX, POLICY_INDEX) of the directory `root`, kept in the
        cache `directory` (empty when there is none of the directory now at that path). The
        run starts now (`settled`)."""
        settled = Settled.now(directory)
        name = hashlib.sha256(os.fsencode(root.absolute())).hexdigest()[:32] + use
        try:
            status = os.lstat(root)
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

    def digest(self, root: Path, path: str) -> FileDigest:
        """The FileDigest of regular file `path` below `root`: the kept one when its lstat is
        unchanged, else read (OSError when it is not a regular file or cannot be read)."""
        return self.read(root, path)[0]

    def read(self, root: Path, path: str, limit: int = 1 << 62) -> tuple[FileDigest, bytes | None]:
        """The FileDigest of the first `limit` bytes of regular file `path` below `root`, and
        those bytes when they were read: None when the kept digest stands for them (its lstat
        is unchanged). OSError when it is not a regular file or cannot be read."""
        full = f"{root}/{path}"
        entry = self.known.get(path)
        if entry is not None and file_stat(os.lstat(full)) == entry[0]:
            self._keep(path, *entry)
            return entry[1], None
        # the status is taken before the bytes are read: a change in between is in the
        # bytes, or moves the ctime
        status, data = read_regular(full, limit)
        digest = bytes_digest(data)
        self._keep(path, file_stat(status), digest)
        return digest, data

    def _keep(self, path: str, found: FileStat, digest: FileDigest) -> None:
        """Keep `path`'s entry for the next run: when the last run was of this directory
        too, and the file did not change too recently."""
        if self.seen_before and self.settled(found):
            self.kept[path] = (found, digest)

    def save(self) -> None:
        """Keep what this run found for the next: the directory's identity, and its files if
        the last run was of this directory too (nothing is written when that is what was kept
        already; a cache that cannot be written stays as it was)."""
        if self.tree is None or (self.seen_before and self.kept == self.known):
            return
        put_file(self.directory, self.name, pickle.dumps((INDEX_FORMAT, self.tree, self.kept), 5))

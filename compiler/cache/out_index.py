"""What out/'s files were when a check last read them, so that the next check reads only the
files changed since (as git's index spares `git status` from reading the work tree).

A `compile --check` answered from a compile record hashes every file of out/
(compiler.cache.store.out_digest): on fleet L, 17,000 files and most of the check's time. The
index keeps, for each regular file of one out/, its lstat (device, inode, mode, size,
modification and change times in ns) and the FileDigest of the bytes read then: a file whose
lstat is the same is not read again. Writing to a file or changing its mode moves its change
time (ctime), which no call can set back; replacing it gives it another inode.

A file changed shortly before a check read it could change again within the same tick of the
file system's clock and keep every time it had. So a file is kept only once its ctime is
RACY_NS older than the start of the check that read it; a younger one is read at every check
until it is that old (git's "racily clean" entries).

One index per out/ directory (by its absolute path) lives in the cache directory, written
whole or not at all (compiler.cache.files); anything unreadable is an empty index, which
costs one check the full read. It is a pure speed-up: a check's verdict is the same with or
without it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from compiler.cache.files import put_file, take_file
from compiler.file_bytes import read_whole
from compiler.write.writer import FileDigest, bytes_digest

INDEX_FORMAT = "gpufleet-out-index/1"
INDEX_SUFFIX = ".outindex"
RACY_NS = 2_000_000_000
"""How much older than a check a file's last change must be for the check to keep its lstat:
2 s, the coarsest timestamps of a file system Linux mounts (FAT's modification time)."""

FileStat = tuple[int, int, int, int, int, int]
"""(device, inode, mode, size, mtime_ns, ctime_ns) of an lstat."""


@dataclass
class OutIndex:
    """The index of one out/ directory as one check reads and renews it."""

    directory: Path
    name: str
    """The index file's name in `directory`."""
    known: dict[str, tuple[FileStat, FileDigest]]
    """What the last check kept, by path below out/."""
    settled_before: int = field(default_factory=lambda: time.time_ns() - RACY_NS)
    """A file whose ctime is this or later changed too recently to be kept."""
    kept: dict[str, tuple[FileStat, FileDigest]] = field(default_factory=dict)
    """What this check keeps for the next."""

    @classmethod
    def open(cls, directory: Path, out: Path) -> OutIndex:
        """The index of `out` kept in the cache `directory` (empty when there is none)."""
        name = hashlib.sha256(os.fsencode(out.absolute())).hexdigest()[:32] + INDEX_SUFFIX
        known: dict[str, tuple[FileStat, FileDigest]] = {}
        data = take_file(directory, name)
        if data is not None:
            try:
                format_, entries = pickle.loads(data)
                if format_ == INDEX_FORMAT and isinstance(entries, dict):
                    known = entries
            except Exception:  # an unreadable index (cut short, another format) is empty
                pass
        return cls(directory, name, known)

    def digest(self, out: Path, path: str) -> FileDigest:
        """The FileDigest of regular file `path` below `out`: the kept one when its lstat is
        unchanged, else read (OSError when it is not a regular file or cannot be read)."""
        full = f"{out}/{path}"
        found = os.lstat(full)
        if not stat.S_ISREG(found.st_mode):
            raise OSError(f"{full} is no longer a regular file")
        now: FileStat = (
            found.st_dev,
            found.st_ino,
            found.st_mode,
            found.st_size,
            found.st_mtime_ns,
            found.st_ctime_ns,
        )
        entry = self.known.get(path)
        if entry is not None and entry[0] == now:
            digest = entry[1]
        else:  # read after the lstat: a change in between is in the bytes, or moves the ctime
            digest = bytes_digest(read_whole(full))
        if found.st_ctime_ns < self.settled_before:
            self.kept[path] = (now, digest)
        return digest

    def save(self) -> None:
        """Keep what this check found for the next, unless it is what was kept already (a
        cache that cannot be written stays as it was)."""
        if self.kept != self.known:
            put_file(self.directory, self.name, pickle.dumps((INDEX_FORMAT, self.kept), 5))

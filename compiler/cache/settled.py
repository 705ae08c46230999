"""When a file's lstat may stand for its bytes: the "racily clean" rule of the indexes that
spare a run (a check, a compile taking its key) from reading files it read before
(compiler.cache.file_index).

An index keeps a file's lstat with the digest of the bytes read after it, and takes the same
lstat later to mean the same bytes. That fails for one kind of change only: one made within
the same tick of the file system's clock as the change before it, which leaves the size
alike, keeps every time stamp the file had. So a file is kept only when its last change
(ctime) is older than the start of the run that reads it, by the clock of the file system
the file is on; a change made after that start is stamped at that time or later, and so
never matches what was kept.

That clock is read where it can be: the run makes an unnamed file (O_TMPFILE) in the cache
directory and takes its ctime, the time stamp the cache's file system gives now. It bounds
the files on that same file system (the same device), which out/ and the policies usually
share with the cache. A file elsewhere, or any file where no stamp can be had, must be
RACY_NS older than the run by the system clock instead: a file system's stamps may lag
that clock by a tick, or come from another machine's clock (NFS).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

RACY_NS = 2_000_000_000
"""How much older than a run by the system clock a file's last change must be, where its
file system's clock cannot be read: 2 s, the coarsest time stamps of a file system Linux
mounts (FAT's modification time)."""

FileStat = tuple[int, int, int, int, int, int]
"""(device, inode, mode, size, mtime_ns, ctime_ns) of an lstat."""


def file_stat(status: os.stat_result) -> FileStat:
    """What an index keeps of an lstat (or of the fstat of a file opened without following a
    link): every field that a change to the file or its mode moves."""
    return (
        status.st_dev,
        status.st_ino,
        status.st_mode,
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
    )


def written(found: FileStat) -> tuple[int, ...]:
    """The fields of an lstat that only writing, replacing or chmodding the file moves: all
    but its change time, which linking and unlinking it move too."""
    return found[:5]


@dataclass(frozen=True)
class Settled:
    """The start of one run, by the system clock and by its cache's file system's clock:
    a file changed before it may be kept (`__call__`)."""

    system: int
    """time.time_ns() at the start, less RACY_NS."""
    device: int | None = None
    """The device of the cache's file system, when its clock was read."""
    stamp: int = 0
    """The ctime that file system gave at the start."""

    @classmethod
    def now(cls, directory: Path) -> Settled:
        """The start of a run now, whose cache is in `directory` (where a file is made,
        never named, to read its file system's clock: without it, the system clock only)."""
        system = time.time_ns() - RACY_NS
        try:
            descriptor = os.open(directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        except (AttributeError, OSError):  # no O_TMPFILE here, no such directory, read-only
            return cls(system)
        try:
            status = os.fstat(descriptor)
        except OSError:
            return cls(system)
        finally:
            os.close(descriptor)
        return cls(system, status.st_dev, status.st_ctime_ns)

    def __call__(self, found: FileStat) -> bool:
        """Whether a file whose lstat is `found` last changed before the start."""
        if found[0] == self.device:
            return found[5] < self.stamp
        return found[5] < self.system

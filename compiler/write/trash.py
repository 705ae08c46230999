"""Old output trees set aside for a later run to remove, so that a compile does not wait for
thousands of unlinks before it ends.

Once a write has swapped the new out/ in, the old tree must go (hard links to the unchanged
files, and the old versions of the changed ones), as must a carried copy of out/ that nothing
changed in. Removing one of fleet L's trees takes about a tenth of a second of the kernel's
time, the last thing a one-team compile waited for. With the compile cache on, such a tree is
instead renamed into the cache directory's `trash/`, at once, where that is on the same file
system (else it is removed as before), and the next compile removes whatever is there, in its
prestage process (compiler.write.prestage), beside the stages, before it carries out/ over.
Nothing is left beside out/; what the trash holds is the cache directory's, which may be
deleted at any time.
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from compiler.write.atomic import remove


@dataclass(frozen=True)
class Trash:
    """The trash directory `directory` (in the compile cache's)."""

    directory: Path

    def put(self, tree: Path) -> bool:
        """Move the directory `tree` into the trash; False when it cannot be moved there
        (another file system, a cache directory that cannot be written): it stays where it
        was."""
        name = f"{os.getpid()}-{os.urandom(6).hex()}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tree.rename(self.directory / name)
        except OSError:
            return False
        return True

    def empty(self) -> None:
        """Remove what the trash holds (what cannot be removed stays, for a later run)."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return
        for name in names:
            with suppress(OSError):
                remove(self.directory / name)

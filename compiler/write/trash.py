"""Old output trees set aside for a later run to remove, so that a compile does not wait for
thousands of unlinks before it ends.

Once a write has swapped the new out/ in, the old tree must go (hard links to the unchanged
files, and the old versions of the changed ones), as must a carried copy of out/ that nothing
changed in. Removing one of fleet L's trees takes about a tenth of a second of the kernel's
time, the last thing a one-team compile waited for. With the compile cache on, such a tree is
instead renamed into the cache directory's `trash/`, at once, where that is on the same file
system (else it is removed as before), and the next compile removes the trees that were there
when it started, in its prestage process (compiler.write.prestage), beside the stages, after
it carried out/ over: removing a tree moves the change time of each file it shares with
out/, which out/'s index would then find changed.
Nothing is left beside out/; what the trash holds is the cache directory's, which may be
deleted at any time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
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

    def trees(self) -> list[str]:
        """The names of the trees the trash holds now."""
        try:
            return os.listdir(self.directory)
        except OSError:
            return []

    def empty(self, trees: Iterable[str] | None = None) -> None:
        """Remove the trees named `trees` (by default all it holds now); what cannot be
        removed stays, for a later run."""
        for name in self.trees() if trees is None else trees:
            with suppress(OSError):
                remove(self.directory / name)

"""Compare the compiled tree with out/, and replace out/ with it in one atomic step.

The swap is atomic against a failed, interrupted or killed compile: out/ is the old tree or
the new one, never a mix. Files are not fsynced: out/ is build output, regenerated from the
policies (a power loss right after a compile can at worst leave files that
`gpufleet compile --check` reports as stale), and a flush of every file cost more than the
whole compile on a large fleet.

Nothing is written outside out/: the tree's paths are relative and free of `..`, out/ is
built afresh in a sibling staging directory (so no write goes through anything already in
out/), and a symlink where gpufleet writes (out/ itself, or a file or directory of the tree)
is refused rather than replaced or followed. The user's own files, symlinks included, are
carried over as they are.

A compile starts building the staging directory before it knows the tree: a forked process
carries out/ into it as if nothing changed (compiler.write.prestage), and write_tree then
only replaces what did (`Carried`, `_restage`); the result is the same bytes, links and
directories as staging from nothing, and when out/ changed after it was carried, the
carried copy is dropped and the write stages from nothing. Neither ever writes into a file
carried over (it is a hard link to out/'s): a file that changes is unlinked and created
anew.

A write that fails leaves out/ as it was and nothing beside it: a read-only out/ (or any
read-only directory in it) is refused before anything is staged, the staging directory is
removed when anything fails, and the leftovers of a killed run are removed first (read-only
ones included). Callers serialise writes and reads with compiler.write.lock.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from compiler.diagnostics import Diagnostic, Problems, Span, fail
from compiler.file_bytes import FileDigest, bytes_digest, read_at_most, write_new
from compiler.write.atomic import beside, recover, remove, replace_directory

OWNED_LIST = ".gpufleet-owned"
"""The list of files below out/ that gpufleet wrote and may prune; nothing else is touched."""


@dataclass
class Staleness:
    """How out/ differs from the compiled tree."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    """Files in out/ that gpufleet does not own (kept, reported)."""
    conflicts: list[str] = field(default_factory=list)
    """Files gpufleet does not own standing where it would write (never overwritten)."""

    @property
    def stale(self) -> bool:
        """Whether a compile would change any file gpufleet owns."""
        return bool(self.added or self.changed or self.removed)


def _check_path(relative: str) -> None:
    if not relative.strip("/") or relative.startswith("/") or ".." in relative.split("/"):
        raise ValueError(f"refusing to write outside the output directory: {relative!r}")


def owned_files(out: Path) -> list[str]:
    """The files a previous compile recorded as its own."""
    listing = out / OWNED_LIST
    if not listing.is_file() or listing.is_symlink():
        return []
    lines = listing.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


@dataclass(frozen=True)
class Present:
    """What out/ holds, from one walk that never follows a link."""

    files: frozenset[str]
    """Every file and symlink (symlinks to directories included)."""
    links: frozenset[str]
    """The symlinks among them."""
    regular: frozenset[str]
    """The regular files among them (the only ones ever read: a FIFO could block)."""
    directories: frozenset[str]
    """The directories below out/."""


def present_files(out: Path) -> Present:
    """Every file, symlink and directory below `out`, relative to it."""
    files: set[str] = set()
    links: set[str] = set()
    regular: set[str] = set()
    directories: set[str] = set()
    if out.is_dir() and not out.is_symlink():
        _walk(str(out), "", files, links, regular, directories)
    return Present(frozenset(files), frozenset(links), frozenset(regular), frozenset(directories))


def _walk(
    directory: str,
    prefix: str,
    files: set[str],
    links: set[str],
    regular: set[str],
    directories: set[str],
) -> None:
    with os.scandir(directory) as entries:
        for entry in entries:
            relative = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                directories.add(relative)
                _walk(entry.path, relative + "/", files, links, regular, directories)
                continue
            files.add(relative)
            if entry.is_symlink():
                links.add(relative)
            elif entry.is_file(follow_symlinks=False):
                regular.add(relative)


def refuse_symlinks(out: Path, tree: Mapping[str, str], present: Present) -> None:
    """Raise CompileError if out/, or any file or directory the tree writes below it, is a link.

    Writing would replace such a link with gpufleet's own file, so a link someone put there
    on purpose would silently vanish; reading through it could compare files outside out/.
    """
    if out.is_symlink():
        raise fail(
            "GF121",
            f"the output directory {out} is a symlink (to {os.readlink(out)})",
            Span(str(out)),
            "pass the real directory with --out, or remove the link",
        )
    links = present.links
    if not links:
        return
    written = {OWNED_LIST, *tree} | directories_of(tree)
    linked = sorted(links & written)
    Problems(
        Diagnostic(
            "GF121",
            f"{out / relative} is a symlink where gpufleet writes its own "
            f"{'directory' if any(p.startswith(relative + '/') for p in tree) else 'file'}",
            Span(str(out / relative)),
            ("remove the link; gpufleet writes real files only, and nothing outside out/",),
        )
        for relative in linked
    ).raise_if_errors()


def refuse_enclosing(out: Path) -> None:
    """Raise CompileError if out/ is the working directory, one of its parents, or `/`.

    Replacing out/ moves the whole directory aside: pointed at the repository it would move
    the repository (policies, .git) through a copy.
    """
    here = Path.cwd().resolve()
    target = out.resolve()
    if target == here or here.is_relative_to(target) or target.parent == target:
        raise fail(
            "GF113",
            f"--out {out} contains the working directory; gpufleet replaces that directory whole",
            Span(str(out)),
            "use a directory of its own, e.g. --out out",
        )


def with_listing(tree: Mapping[str, str]) -> Mapping[str, str]:
    """The tree as written: the output files plus the list of files gpufleet owns (last), a
    view that reads a file's text from `tree` only when it is read."""
    listing = "# Files written by gpufleet; it prunes only these.\n" + "".join(
        f"{path}\n" for path in sorted(tree)
    )
    return _Listed(tree, listing)


class _Listed(Mapping[str, str]):
    """`tree` and OWNED_LIST's `listing` after its files (with_listing)."""

    def __init__(self, tree: Mapping[str, str], listing: str) -> None:
        self._tree, self._listing = tree, listing

    def __getitem__(self, path: str) -> str:
        return self._listing if path == OWNED_LIST else self._tree[path]

    def __iter__(self) -> Iterator[str]:
        if OWNED_LIST in self._tree:
            yield from (path for path in self._tree if path != OWNED_LIST)
        else:
            yield from self._tree
        yield OWNED_LIST

    def __len__(self) -> int:
        return len(self._tree) + (OWNED_LIST not in self._tree)

    def __contains__(self, path: object) -> bool:
        return path == OWNED_LIST or path in self._tree


def refuse_read_only(out: Path, present: Present) -> None:
    """Raise PermissionError if out/ or a directory in it is read-only: gpufleet replaces out/
    whole, which changes every directory in it, so it asks what writing in place would ask
    (replacing it regardless would leave the old tree, undeletable, beside out/)."""
    for directory in [out, *(out / relative for relative in sorted(present.directories))]:
        if not os.access(directory, os.W_OK):
            raise PermissionError(
                errno.EACCES,
                f"{directory} is read-only (gpufleet replaces the output directory whole: "
                "make it writable)",
            )


def compare_tree(out: Path, tree: Mapping[str, str]) -> Staleness:
    """What writing `tree` would add, change and remove below `out`."""
    return _compare(out, tree, present_files(out), _holds_in(out))


Holds = Callable[[str, Mapping[str, str]], bool]
"""Whether the regular file `path` of out/ holds exactly the text of `path` in a tree (which
it reads only if it must)."""


def _compare(out: Path, tree: Mapping[str, str], present: Present, holds: Holds) -> Staleness:
    """The comparison, with `holds` saying whether a file of out/ is the tree's."""
    refuse_symlinks(out, tree, present)
    full = with_listing(tree)
    owned = set(owned_files(out)) | {OWNED_LIST}
    result = Staleness()
    for path in full:
        if path not in present.files:
            result.added.append(path)
        elif path not in present.regular or not holds(path, full):
            result.changed.append(path)
    written = set(full)
    result.removed = sorted((owned & present.files) - written)
    result.foreign = sorted(present.files - owned - written)
    parents = directories_of(full) if result.foreign else set()
    result.conflicts = sorted(
        {p for p in result.changed if p not in owned} | {p for p in result.foreign if p in parents}
    )
    return result


def _holds_in(out: Path) -> Holds:
    """`holds` for _compare, reading the file of `out` from the disk."""

    def holds(path: str, tree: Mapping[str, str]) -> bool:
        expected = tree[path].encode("utf-8")
        return read_at_most(f"{out}/{path}", len(expected) + 1) == expected

    return holds


def text_digest(text: str) -> FileDigest:
    """The FileDigest of `text` as the writer writes it (UTF-8)."""
    return bytes_digest(text.encode("utf-8"))


def digest_of(path: str, tree: Mapping[str, str], known: Mapping[str, FileDigest]) -> FileDigest:
    """The FileDigest of the file `path` of `tree`: `known`'s, if it has one (the compile
    cache's: the text is then not read), else taken here."""
    found = known.get(path)
    return found if found is not None else text_digest(tree[path])


@dataclass(frozen=True)
class Staged:
    """out/ carried into the staging directory beside it while the policies compiled
    (compiler.write.prestage), for write_tree to finish instead of staging from nothing.

    `carried` is what _stage would carry over if no file changed, made the same way: every
    regular file gpufleet owns hard-linked, every file of the user's copied (symlinks as
    symlinks); a file gpufleet owns that is no regular file is not carried (it is rewritten
    or removed). `digests` has the FileDigest of each regular file read (all but
    those over a size limit, which are read again if the tree writes there).
    """

    present: Present
    digests: Mapping[str, FileDigest]
    carried: frozenset[str]

    def holds_in(self, out: Path, known: Mapping[str, FileDigest]) -> Holds:
        """`holds` for _compare, from the digests (from the disk for a file without one);
        `known` has the FileDigest of some of the tree's files (the rest are hashed here)."""
        on_disk = _holds_in(out)

        def holds(path: str, tree: Mapping[str, str]) -> bool:
            old = self.digests.get(path)
            if old is None:
                return on_disk(path, tree)
            return digest_of(path, tree, known) == old

        return holds


class Carried(Protocol):
    """out/ carried into the staging directory beside it while the policies compiled, by a
    process that can tell whether out/ changed since (compiler.write.prestage.Prestage)."""

    def staged(self) -> Staged | None:
        """What was carried, or None (the staging directory is then the writer's to clear).
        From this call on, whether out/ is still as carried is being found out."""

    def still_carried(self) -> bool:
        """Whether out/ was still as carried when staged() returned; until this has said so,
        the staging directory is not to be touched."""

    def dispose(self, tree: Path) -> None:
        """Remove a tree beside out/ the write is done with."""


def directories_of(paths: Iterable[str]) -> set[str]:
    """Every directory that holds one of the files at `paths` (relative to out/), the
    directories above it included."""
    found: set[str] = set()
    for path in paths:
        directory = path.rpartition("/")[0]
        while directory and directory not in found:
            found.add(directory)
            directory = directory.rpartition("/")[0]
    return found


class OutputConflict(Exception):
    """Writing would overwrite files gpufleet does not own; nothing was written."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        super().__init__(", ".join(paths))


def write_tree(
    out: Path,
    tree: Mapping[str, str],
    carried: Carried | None = None,
    known: Mapping[str, FileDigest] | None = None,
) -> Staleness:
    """Replace `out` with `tree` atomically, keeping files gpufleet does not own.

    Raises OutputConflict, before touching anything, when a file gpufleet does not own stands
    where it would write (a file whose bytes already are what gpufleet writes is adopted), and
    OSError when it cannot write, out/ then being as it was and nothing left beside it.
    With `carried`, the staging directory already holds out/ carried over (Carried): only
    what changed is written there, and the staging directory is used up either way; trees
    the write is done with (the old out/ once the new one is in place, or a carried copy
    that nothing changed in) go to its `dispose` (an error it raises is ignored: the next
    run removes what is left). `known` has the FileDigest of some of the tree's files, for
    comparing them with those carried.
    """
    for path in tree:
        _check_path(path)
    out = out.absolute()
    refuse_enclosing(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "it exists and is not a directory", str(out))
    retired, staging = beside(out, "retired"), beside(out, "staging")
    recover(out, retired)
    staged = carried.staged() if carried else None
    dispose = carried.dispose if carried else remove
    try:
        remove(retired)  # a killed run's
        changes = (
            _carried_changes(out, tree, carried, staged, known or {})
            if carried and staged
            else None
        )
        if staged is not None and changes is not None:
            present = staged.present
        else:  # nothing carried, or out/ changed since it was
            staged = None
            remove(staging)  # a killed run's, or a carried copy out of date
            present = present_files(out)
            changes = _compare(out, tree, present, _holds_in(out))
        if changes.conflicts:
            raise OutputConflict(changes.conflicts)
        if not changes.stale:
            if staged:
                with suppress(OSError):
                    dispose(staging)
            return changes  # out/ already is the tree: nothing is rewritten, no mtime moves
        if out.exists():
            refuse_read_only(out, present)
        if staged:
            _restage(staging, tree, changes, staged)
        else:
            _stage(out, staging, tree, changes)
        old = replace_directory(staging, out, retired)
    except BaseException:
        with suppress(OSError):
            remove(staging)
        raise
    if old is not None:  # out/ is the new tree: the old one goes, or the next run removes it
        with suppress(OSError):
            dispose(old)
    return changes


def _carried_changes(
    out: Path,
    tree: Mapping[str, str],
    carried: Carried,
    staged: Staged,
    known: Mapping[str, FileDigest],
) -> Staleness | None:
    """The comparison with out/ as it was carried, or None if out/ has changed since (the
    comparison, or its refusal, is then out of date too)."""
    try:
        changes = _compare(out, tree, staged.present, staged.holds_in(out, known))
    except Exception:
        if carried.still_carried():
            raise
        return None
    return changes if carried.still_carried() else None


def _stage(out: Path, staging: Path, tree: Mapping[str, str], changes: Staleness) -> None:
    """Build the new out/ in `staging`: the tree, and the user's own files carried over."""
    staging.mkdir(parents=True)
    files = with_listing(tree)
    root = str(staging)
    for directory in sorted(directories_of(files)):  # a directory sorts before what is in it
        os.mkdir(f"{root}/{directory}")
    for path in changes.foreign:  # the user's own files come along untouched
        source, target = out / path, staging / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    rewritten = {*changes.added, *changes.changed}
    old = str(out)
    for path in files:
        _stage_file(old, root, path, files, keep=path not in rewritten)


def _restage(staging: Path, tree: Mapping[str, str], changes: Staleness, staged: Staged) -> None:
    """Turn out/ carried into `staging` into the new out/ that _stage would build: the files
    that changed or went are dropped, directories left empty go, and the new bytes are
    written; what did not change is already there."""
    files = with_listing(tree)
    root = str(staging)
    emptied: set[str] = set()
    for path in (*changes.changed, *changes.removed):
        if path in staged.carried:
            os.unlink(f"{root}/{path}")
            emptied |= directories_of((path,))
    # a directory left empty goes (the writes below make again those they need)
    for directory in sorted(emptied, key=lambda name: name.count("/"), reverse=True):
        try:
            os.rmdir(f"{root}/{directory}")
        except OSError as error:
            if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
    for path in (*changes.added, *changes.changed):
        os.makedirs(os.path.dirname(f"{root}/{path}"), exist_ok=True)
        write_file(f"{root}/{path}", files[path].encode("utf-8"))


def _stage_file(out: str, staging: str, path: str, files: Mapping[str, str], keep: bool) -> None:
    """Put the file `path` of the new tree `files` into staging: a hard link to out/'s own
    copy when its bytes are unchanged (no new inode, and the old one is not freed by the
    clean-up), else the new bytes. Files are never modified in place, so out/ stays the old
    tree meanwhile."""
    if keep:
        try:
            os.link(f"{out}/{path}", f"{staging}/{path}", follow_symlinks=False)
            return
        except OSError:
            pass  # a file system without hard links: write the bytes
    write_file(f"{staging}/{path}", files[path].encode("utf-8"))


def write_file(path: str, data: bytes) -> None:
    """Create `path` (it must not exist) holding `data`."""
    write_new(path, data)

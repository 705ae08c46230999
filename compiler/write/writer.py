"""Compare the compiled tree with out/, and replace out/ with it in one atomic step."""

from __future__ import annotations

import errno
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from compiler.write.atomic import recover, replace_directory

WRITER_THREADS = 4
"""Threads writing files into the staging directory (the order does not matter: the directory
is swapped in whole)."""

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
    path = PurePosixPath(relative)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"refusing to write outside the output directory: {relative!r}")


def owned_files(out: Path) -> list[str]:
    """The files a previous compile recorded as its own."""
    listing = out / OWNED_LIST
    if not listing.is_file() or listing.is_symlink():
        return []
    lines = listing.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def _present_files(out: Path) -> list[str]:
    if not out.is_dir():
        return []
    found = []
    for root, dirs, files in os.walk(out):
        dirs.sort()
        for name in sorted(files):
            found.append((Path(root) / name).relative_to(out).as_posix())
    return found


def _with_listing(tree: dict[str, str]) -> dict[str, str]:
    listing = "# Files written by gpufleet; it prunes only these.\n" + "".join(
        f"{path}\n" for path in sorted(tree)
    )
    return {**tree, OWNED_LIST: listing}


def compare_tree(out: Path, tree: dict[str, str]) -> Staleness:
    """What writing `tree` would add, change and remove below `out`."""
    full = _with_listing(tree)
    owned = set(owned_files(out)) | {OWNED_LIST}
    present = set(_present_files(out))
    result = Staleness()
    for path, text in full.items():
        target = out / path
        if path not in present:
            result.added.append(path)
        elif target.is_symlink() or target.read_bytes() != text.encode("utf-8"):
            result.changed.append(path)
    result.removed = sorted((owned & present) - set(full))
    result.foreign = sorted(present - owned - set(full))
    parents = {parent for path in full for parent in _parents(path)}
    result.conflicts = sorted(
        {p for p in result.changed if p not in owned} | {p for p in result.foreign if p in parents}
    )
    return result


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(1, len(parts))]


class OutputConflict(Exception):
    """Writing would overwrite files gpufleet does not own; nothing was written."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        super().__init__(", ".join(paths))


def write_tree(out: Path, tree: dict[str, str]) -> Staleness:
    """Replace `out` with `tree` atomically, keeping files gpufleet does not own.

    Raises OutputConflict, before touching anything, when a file gpufleet does not own stands
    where it would write (a file whose bytes already are what gpufleet writes is adopted).
    """
    for path in tree:
        _check_path(path)
    out = out.absolute()
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "it exists and is not a directory", str(out))
    retired = out.with_name(f".{out.name}.retired")
    staging = out.with_name(f".{out.name}.staging")
    recover(out, retired)
    for leftover in (staging, retired):
        if leftover.exists() or leftover.is_symlink():
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
    changes = compare_tree(out, tree)
    if changes.conflicts:
        raise OutputConflict(changes.conflicts)
    staging.mkdir(parents=True)
    for path in changes.foreign:  # the user's own files come along untouched
        source, target = out / path, staging / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    files = _with_listing(tree)
    for directory in sorted({(staging / path).parent for path in files}):
        directory.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=WRITER_THREADS) as pool:  # file writes release the GIL
        list(
            pool.map(
                lambda item: (staging / item[0]).write_bytes(item[1].encode("utf-8")), files.items()
            )
        )
    os.sync()  # every file durable before the swap; one flush instead of one per file
    replace_directory(staging, out, retired)
    shutil.rmtree(retired, ignore_errors=True)
    return changes

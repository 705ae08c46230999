"""Which files below the policy directory are policy: the loader reads them, the compile
cache hashes them and CODEOWNERS routes them (a leaf, so that hashing them loads no parser)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from compiler.file_bytes import FileDigest, bytes_digest, read_at_most

if TYPE_CHECKING:
    from compiler.cache.file_index import FileIndex

POLICY_SUFFIXES = (".yaml", ".yml")
"""What a policy file's name ends with; anything else below the policy directory is not read."""

MAX_FILE_BYTES = 512 * 1024
"""Policy files are a few kilobytes; a larger one is refused (GF120) without reading past this."""


@dataclass(frozen=True)
class PolicyEntry:
    """A policy-named entry below the policy directory."""

    path: Path
    relative: str
    """Its path below the policy directory, with `/`."""
    link: bool
    """Whether the entry itself is a symbolic link (the directories above it never are: links
    to directories are not followed)."""


def scan_policy_files(root: Path) -> tuple[list[PolicyEntry], list[PolicyEntry]]:
    """The policy files below `root` (regular files, or links to one) and the policy-named
    entries that are not (a dangling link, a FIFO), each sorted by relative path. Links to
    directories are not followed, as `Path.rglob` does not."""
    files: list[PolicyEntry] = []
    others: list[PolicyEntry] = []
    pending = [("", str(root))]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as scan:
            for entry in scan:
                relative = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((relative + "/", entry.path))
                if not entry.name.endswith(POLICY_SUFFIXES):
                    continue
                found = PolicyEntry(root / relative, relative, entry.is_symlink())
                if entry.is_file():
                    files.append(found)
                elif not entry.is_dir():
                    others.append(found)
    return sorted(files, key=_relative), sorted(others, key=_relative)


@dataclass
class PolicySnapshot:
    """The policy directory read once, for a compile with the compile cache: the compile key
    is taken of these files' digests and the loader loads the bytes they are digests of, so
    the record of a compile says what it compiled however the files change meanwhile (the
    next compile sees the change), and no file is read twice.

    A file the policy directory's index vouched for is known by its digest only: the loader
    finds what it parsed before by that digest, and reads the file only when it has to parse
    it (`read_again`); if the bytes are not those of the digest any more, the snapshot is
    `changed` and the compile is not recorded."""

    files: list[PolicyEntry]
    """The policy files (scan_policy_files)."""
    others: list[PolicyEntry]
    """The policy-named entries that are no regular file."""
    contents: dict[str, FileRead] = field(repr=False)
    """Each file as read, by relative path; empty once the loader has taken them."""
    digests: dict[str, FileDigest] = field(repr=False)
    """Each file's FileDigest as the key was taken of it, by relative path (kept once the
    loader has taken the bytes)."""
    taken: bool = False
    changed: bool = False
    """Whether a file read again was no longer what its digest said (the key is not of what
    the compile loaded)."""

    def take(self) -> dict[str, FileRead]:
        """The files' bytes, handed over once (to the loader, which drops them when it is done,
        rather than keep them for the whole compile); RuntimeError the second time."""
        if self.taken:
            raise RuntimeError("the policy files' bytes were taken already")
        contents, self.contents, self.taken = self.contents, {}, True
        return contents

    def read_again(self, entry: PolicyEntry, read: FileRead) -> FileRead:
        """`read` with the bytes of `entry`, which the index vouched for (`read.data` is
        None), read now; `changed` when they are not those of its digest. Unchanged when the
        file cannot be read (the loader then reads it and says why)."""
        try:
            data = read_at_most(entry.path, MAX_FILE_BYTES + 1)
        except OSError:
            self.changed = True
            return read
        digest = bytes_digest(data)
        self.changed |= digest != read.digest
        return FileRead(read.real, data, digest)


class FileRead(NamedTuple):
    """One policy file as read: where it leads if it is a symbolic link, its first
    MAX_FILE_BYTES + 1 bytes (all of them, for a file the loader takes) and their digest."""

    real: Path | None
    data: bytes | None
    """Empty for a link that leads outside the policy directory: the loader refuses it
    (GF122), and what lies outside is never read. None when the policy directory's index
    vouched for the bytes by `digest` (they were not read)."""
    digest: FileDigest


def read_policy_files(root: Path, index: FileIndex | None = None) -> PolicySnapshot:
    """The policy files below `root` and their bytes, or the digest the policy directory's
    `index` has of a file that did not change (OSError when one cannot be read: the loader
    then reads them itself and says which). A link is followed once, here: the loader checks
    where it led when it was read. Links are always read (their lstat is not the file's)."""
    files, others = scan_policy_files(root)
    real_root = root.resolve()
    contents: dict[str, FileRead] = {}
    for entry in files:
        real = entry.path.resolve() if entry.link else None
        if real is not None and not real.is_relative_to(real_root):
            contents[entry.relative] = FileRead(real, b"", bytes_digest(b""))
        elif real is None and index is not None:
            digest, data = index.read(root, entry.relative, MAX_FILE_BYTES + 1)
            contents[entry.relative] = FileRead(None, data, digest)
        else:
            data = read_at_most(real or entry.path, MAX_FILE_BYTES + 1)
            contents[entry.relative] = FileRead(real, data, bytes_digest(data))
    digests = {relative: read.digest for relative, read in contents.items()}
    return PolicySnapshot(files, others, contents, digests)


def policy_files(root: Path) -> list[Path]:
    """Every `*.yaml` / `*.yml` file below `root`, in a stable order."""
    return [entry.path for entry in scan_policy_files(root)[0]]


def _relative(entry: PolicyEntry) -> str:
    return entry.relative

"""Which files below the policy directory are policy: the loader reads them, the compile
cache hashes them and CODEOWNERS routes them (a leaf, so that hashing them loads no parser)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

POLICY_SUFFIXES = (".yaml", ".yml")
"""What a policy file's name ends with; anything else below the policy directory is not read."""


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


def policy_files(root: Path) -> list[Path]:
    """Every `*.yaml` / `*.yml` file below `root`, in a stable order."""
    return [entry.path for entry in scan_policy_files(root)[0]]


def _relative(entry: PolicyEntry) -> str:
    return entry.relative

"""Which removed and added files of out/ are one file moved: a team renamed, a cluster's tree moved.

A reviewer reads a rename as one change, as git shows it, instead of a whole file removed and
a whole file added. A removed and an added file are one file moved when their paths differ in
exactly one component (a directory such as the cluster or the namespace, or the file name) and
at least half of their lines are alike, git's default rename threshold. Pairs are taken most
alike first, then by path, so the result does not depend on the order of the input.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import replace

from compiler.report.diff import FileChange

RENAME_SIMILARITY = 0.5
"""The least share of alike lines that makes a removed and an added file one file moved."""


def _masks(path: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """The path with each of its components in turn left out: two paths that differ in exactly
    one component share one of these."""
    parts = tuple(path.split("/"))
    return [(len(parts), i, parts[:i] + parts[i + 1 :]) for i in range(len(parts))]


def _candidates(
    removed: Sequence[FileChange], added: Sequence[FileChange]
) -> list[tuple[float, str, str]]:
    by_mask: dict[tuple[int, int, tuple[str, ...]], list[FileChange]] = {}
    for change in added:
        for mask in _masks(change.path):
            by_mask.setdefault(mask, []).append(change)
    found: dict[tuple[str, str], float] = {}
    for old in removed:
        for mask in _masks(old.path):
            for new in by_mask.get(mask, ()):
                if (old.path, new.path) in found:
                    continue
                matcher = difflib.SequenceMatcher(
                    None, old.old.splitlines(), new.new.splitlines(), False
                )
                if matcher.real_quick_ratio() < RENAME_SIMILARITY:
                    continue
                if matcher.quick_ratio() < RENAME_SIMILARITY:
                    continue
                score = matcher.ratio()
                if score >= RENAME_SIMILARITY:
                    found[(old.path, new.path)] = score
    return sorted((-score, old, new) for (old, new), score in found.items())


def detect_renames(changes: Sequence[FileChange]) -> list[FileChange]:
    """`changes` with each removed file that moved to an added one as one `renamed` change
    (its path the new one, `moved_from` the old one), the rest as they were."""
    removed = [c for c in changes if c.status == "removed"]
    added = [c for c in changes if c.status == "added"]
    by_path = {c.path: c for c in (*removed, *added)}
    paired: dict[str, FileChange] = {}
    taken: set[str] = set()
    for _, old_path, new_path in _candidates(removed, added):
        if old_path in taken or new_path in taken:
            continue
        taken |= {old_path, new_path}
        old, new = by_path[old_path], by_path[new_path]
        paired[new_path] = replace(new, status="renamed", old=old.old, moved_from=old_path)
    result = [paired.get(c.path, c) for c in changes if c.path not in taken or c.path in paired]
    return sorted(result, key=lambda c: c.path)

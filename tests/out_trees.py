"""A small out/ tree, and how its files are read, for the tests of out/'s index and reader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import compiler.cache.file_index as file_index
from compiler.cache.file_index import OUT_INDEX, FileIndex
from compiler.cache.store import out_digest
from compiler.file_bytes import read_regular

FILES = 6
"""The regular files `tree` writes."""

TICK = 0.05
"""Longer than a tick of any file system clock this suite runs on, so that a change made
after this sleep has a ctime of its own."""


def tree(root: Path) -> Path:
    """An out/ below `root` of FILES files in two directories."""
    out = root / "out"
    for index in range(FILES):
        path = out / f"clusters/c{index % 2}/file-{index}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"kind: Thing\nindex: {index}\n")
    return out


def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths a file index reads from now on, in this process."""
    reads: list[str] = []

    def counted(path: str, limit: int = 1 << 62) -> tuple[os.stat_result, bytes]:
        reads.append(path)
        return read_regular(path, limit)

    monkeypatch.setattr(file_index, "read_regular", counted)
    return reads


def read_in_full(out: Path) -> str | None:
    """out/'s digest with every file read: what an index that knows nothing gives (an index
    file that does not exist)."""
    return out_digest(out, FileIndex.open(out.parent / "no-cache", out, OUT_INDEX))

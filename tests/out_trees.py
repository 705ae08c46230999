"""A small out/ tree, and how its files are read, for the tests of out/'s index and reader."""

from __future__ import annotations

import os
from collections.abc import Callable
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


def same_size_and_mtime(path: Path, write: Callable[[Path, bytes], object]) -> None:
    """Flip a byte of `path` by `write`, then give it back its modification time."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[0] ^= 0x01
    write(path, bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns), follow_symlinks=False)


def replace(path: Path, data: bytes) -> None:
    """Put a new file with `data` in the place of `path`."""
    temporary = path.with_name(path.name + ".new")
    temporary.write_bytes(data)
    temporary.replace(path)


FILE = "clusters/c1/file-3.yaml"
"""The file of `tree` that EDITS change."""

EDITS: dict[str, Callable[[Path], object]] = {
    "edited in place, size and mtime kept": lambda out: same_size_and_mtime(
        out / FILE, lambda path, data: path.write_bytes(data)
    ),
    "replaced, size and mtime kept": lambda out: same_size_and_mtime(out / FILE, replace),
    "chmodded": lambda out: (out / FILE).chmod(0o600),
    "removed": lambda out: (out / FILE).unlink(),
    "added": lambda out: (out / "clusters/c1/new.yaml").write_text("kind: New\n"),
    "a symlink now": lambda out: ((out / FILE).unlink(), (out / FILE).symlink_to("file-1.yaml")),
}

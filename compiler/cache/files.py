"""The compile cache's files: each written whole or not at all, read back as bytes, and the
least recently used deleted beyond a count. Records and entries are all kept this way."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from compiler.file_bytes import read_whole, write_whole


def put_file(directory: Path, name: str, data: bytes) -> bool:
    """Store `data` as `directory/name`: written to a temporary file beside it, then renamed,
    so a reader sees a whole file or none and concurrent writers each leave a whole one;
    False, and nothing left behind, when it cannot (a cache that cannot be written is off).

    The temporary file is named after the entry and this process (no two live processes
    share it, so no random name is needed: a compile writes thousands of entries), and a
    link in its place is not followed."""
    temporary = f"{directory}/.{name}.{os.getpid()}.tmp"
    try:
        try:
            write_whole(temporary, data, _REPLACING)
        except FileNotFoundError:  # the first entry: make the directory
            directory.mkdir(parents=True, exist_ok=True)
            write_whole(temporary, data, _REPLACING)
        os.replace(temporary, f"{directory}/{name}")
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True


_REPLACING = os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)


def take_file(directory: Path, name: str) -> bytes | None:
    """The bytes of `directory/name`, which now counts as recently used; None when it cannot
    be read (absent, say)."""
    path = f"{directory}/{name}"
    try:
        data = read_whole(path)
        os.utime(path)
    except OSError:
        return None
    return data


def prune_files(directory: Path, keep: int) -> None:
    """Once `directory` holds half as many files again as `keep`, delete the least recently
    used beyond `keep` (directories and other writers' temporaries are left alone). Pruning
    in batches spares most compiles the stat of every entry (8,000 parsed files on fleet L)."""
    try:
        with os.scandir(directory) as scan:
            files = [e for e in scan if not e.name.startswith(".") and e.is_file()]
        if len(files) <= keep + keep // 2:
            return
        files.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
    except OSError:
        return
    for entry in files[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)

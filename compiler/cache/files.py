"""The compile cache's files: each written whole or not at all, read back as bytes, and the
least recently used deleted beyond a count. Records and entries are all kept this way."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from compiler.file_bytes import read_whole, write_new


def put_file(directory: Path, name: str, data: bytes) -> bool:
    """Store `data` as `directory/name`: written to a temporary file beside it, then renamed,
    so a reader sees a whole file or none and concurrent writers each leave a whole one;
    False, and nothing left behind, when it cannot (a cache that cannot be written is off).

    The temporary file is new (never one found there, nor a link) and readable by its owner
    only, as entries hold policy documents; its name is the entry's with a random suffix
    (cheaper than mkstemp's retries, and a compile writes thousands of entries)."""
    temporary = f"{directory}/.{name}.{os.urandom(6).hex()}.tmp"
    try:
        try:
            write_new(temporary, data, 0o600)
        except FileNotFoundError:  # the first entry: make the directory
            directory.mkdir(parents=True, exist_ok=True)
            write_new(temporary, data, 0o600)
    except FileExistsError:  # someone else's file at that name: left alone
        return False
    except OSError:
        _discard(temporary)
        return False
    try:
        os.replace(temporary, f"{directory}/{name}")
    except OSError:
        _discard(temporary)
        return False
    return True


def _discard(temporary: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def has_file(directory: Path, name: str) -> bool:
    """Whether `directory/name` is a file (a stat: cheaper than reading it)."""
    return os.path.isfile(f"{directory}/{name}")


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
    """Once `directory` holds more than half as many files again as `keep`, delete the least
    recently used beyond `keep` (directories and other writers' temporaries are left alone).
    Pruning in batches spares most compiles the stat of every entry (8,000 parsed files on
    fleet L)."""
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

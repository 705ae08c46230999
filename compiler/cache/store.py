"""Compile records: which out/ a compile with a given key found up to date (or wrote).

A record is one small JSON file, `<key>.json`, in the cache directory ($GPUFLEET_CACHE, else
$XDG_CACHE_HOME/gpufleet/compile, else ~/.cache/gpufleet/compile), never in out/. It is
written to a temporary file beside it and renamed into place, so a reader sees a whole
record or none, and two runs writing the same key each leave a true one. Anything unreadable
(absent, corrupt, another key's, a directory that cannot be created or written) is no
record: the caller then compiles in full, as without a cache. Deleting the directory is safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from compiler.write.writer import present_files

RECORD_FORMAT = "gpufleet-compile-record/1"


@dataclass(frozen=True)
class CompileRecord:
    """A compile with `key` produced exactly the `files` files of out/ whose digest is `out`."""

    key: str
    out: str
    files: int


def cache_directory() -> Path:
    """Where compile records live (outside out/, safe to delete)."""
    configured = os.environ.get("GPUFLEET_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpufleet" / "compile"


def out_digest(out: Path) -> str | None:
    """The digest of every file below `out`, or None when out/ holds a symlink, a FIFO or
    anything else that is not a directory or a regular file, or cannot be read."""
    present = present_files(out)
    if present.links or present.files != present.regular:
        return None
    try:
        return files_digest((path, (out / path).read_bytes()) for path in present.regular)
    except OSError:
        return None


def files_digest(files: Iterable[tuple[str, bytes]]) -> str:
    """A hash of files given as (path below out/, bytes), whatever their order: what
    out_digest reads from disk, or a tree in memory that out/ was just found or made equal to."""
    digest = hashlib.sha256()
    for path, data in sorted(files):
        digest.update(f"{path}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        digest.update(data)
    return digest.hexdigest()


def read_record(directory: Path, key: str) -> CompileRecord | None:
    """The record of `key`, or None when there is none that can be trusted."""
    try:
        data = json.loads((directory / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        return None
    record_key, out, files = data.get("key"), data.get("out"), data.get("files")
    if record_key != key or not isinstance(out, str) or type(files) is not int:
        return None
    return CompileRecord(key, out, files)


def write_record(directory: Path, record: CompileRecord) -> bool:
    """Store `record` (write, then rename); False, and nothing left behind, when it cannot."""
    text = json.dumps(
        {"format": RECORD_FORMAT, "key": record.key, "out": record.out, "files": record.files}
    )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".record-", suffix=".tmp", dir=directory)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, directory / f"{record.key}.json")
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True

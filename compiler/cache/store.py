"""Compile records: which out/ a compile with a given key found up to date (or wrote).

A record is one small file, `<key>.record` (a pickle), in the cache directory ($GPUFLEET_CACHE, else
$XDG_CACHE_HOME/gpufleet/compile, else ~/.cache/gpufleet/compile), never in out/. It is
written to a temporary file beside it and renamed into place, so a reader sees a whole
record or none, and two runs writing the same key each leave a true one. Anything unreadable
(absent, corrupt, another key's, a directory that cannot be created or written) is no
record: the caller then compiles in full, as without a cache. Deleting the directory is safe.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from compiler.cache.file_index import FileIndex
from compiler.cache.files import prune_files, put_file, take_file
from compiler.diagnostics import Diagnostic, Suppressed
from compiler.file_bytes import FileDigest
from compiler.write.writer import present_files

RECORD_FORMAT = "gpufleet-compile-record/3"
RECORD_SUFFIX = ".record"
MAX_RECORDS = 256
"""Records kept (the least recently used beyond go, in batches: compiler.cache.files): one per
compiled state of the inputs."""


@dataclass(frozen=True)
class CompileRecord:
    """A compile with `key` produced exactly the `files` files of out/ whose digest is `out`.

    It keeps what the compile said besides the tree, for a check answered from it to say the
    same: the diagnostics it reported (the previous plans' problems, the warnings) and the
    warnings the fleet's suppressions silenced. `depends` lists the files outside the policy
    directory its verdict read (CODEOWNERS), each with the sha256 of its bytes (None: absent).
    """

    key: str
    out: str
    files: int
    reported: tuple[Diagnostic, ...] = ()
    suppressed: tuple[Suppressed, ...] = ()
    depends: tuple[tuple[str, str | None], ...] = ()


def cache_directory() -> Path:
    """Where compile records live (outside out/, safe to delete)."""
    configured = os.environ.get("GPUFLEET_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpufleet" / "compile"


def out_digest(out: Path, index: FileIndex) -> str | None:
    """The digest of every file below `out`, or None when out/ holds a symlink, a FIFO or
    anything else that is not a directory or a regular file, or cannot be read. A file that
    `index` saw unchanged is not read again (compiler.cache.file_index)."""
    present = present_files(out)
    if present.links or present.files != present.regular:
        return None
    paths = sorted(present.regular)
    try:
        digests = dict(zip(paths, index.digests(out, paths), strict=True))
    except OSError:
        return None
    return files_digest(paths, digests.__getitem__)


def files_digest(paths: Iterable[str], digest_of: Callable[[str], FileDigest]) -> str:
    """A hash of the files at `paths` below out/ (in any order), by the FileDigest of each
    that `digest_of` gives: of what out_digest reads from disk, or of a tree in memory that
    out/ was just found or made equal to (known, or taken of its text). Only one file's
    bytes are held at a time (XL's out/ is 80 MB)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        size, hashed = digest_of(path)  # a digest is of fixed length
        digest.update(f"{path}\0{size}\0".encode("utf-8", "surrogateescape") + hashed)
    return digest.hexdigest()


def file_sha256(path: Path) -> str | None:
    """The sha256 of a file's bytes, or None when it cannot be read (absent, say)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def read_record(directory: Path, key: str) -> CompileRecord | None:
    """The record of `key`, or None when there is none that can be trusted."""
    data = take_file(directory, f"{key}{RECORD_SUFFIX}")
    if data is None:
        return None
    try:
        format_, record = pickle.loads(data)
    except Exception:  # an unreadable record (cut short, another format) is none
        return None
    if format_ != RECORD_FORMAT or not isinstance(record, CompileRecord) or record.key != key:
        return None
    return record


def write_record(directory: Path, record: CompileRecord) -> bool:
    """Store `record`, then prune to the MAX_RECORDS most recently used (in batches); False,
    and nothing left behind, when it cannot be stored."""
    data = pickle.dumps((RECORD_FORMAT, record), protocol=5)
    if not put_file(directory, f"{record.key}{RECORD_SUFFIX}", data):
        return False
    prune_files(directory, MAX_RECORDS)
    return True

"""Reading and writing small files whole, with plain system calls.

A compile reads and writes thousands of small files (policy files, cache entries, out/), and
`open()`'s buffered file object costs more than the read or write of one of them; these use
os.open/os.read/os.write, reads sized by fstat so no large buffer is allocated per file.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat

_CHUNK = 1 << 16


def read_at_most(path: str | os.PathLike[str], limit: int) -> bytes:
    """The first `limit` bytes of the file `path`, all of it when shorter (OSError when it
    cannot be read). It reads until the file ends: a read may return fewer bytes than asked
    for without the file ending (some network and FUSE file systems, /proc)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return read_open(descriptor, limit, os.fstat(descriptor).st_size)
    finally:
        os.close(descriptor)


def read_regular(
    path: str | os.PathLike[str], limit: int = 1 << 62
) -> tuple[os.stat_result, bytes]:
    """The status of the regular file `path`, taken before its bytes were read, and its first
    `limit` bytes, all of them when shorter (OSError when it cannot be read, is a symlink or
    is not a regular file: a FIFO is refused, not waited on)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        return status, read_open(descriptor, limit, status.st_size)
    finally:
        os.close(descriptor)


def read_open(descriptor: int, limit: int, size: int) -> bytes:
    """Up to `limit` bytes of the open file `descriptor`, `size` bytes long when it was
    opened (its status, taken however the caller did: fstat, or the stat of a walk)."""
    # sized to one byte past the size it has now, so that most files take one read
    chunks = [os.read(descriptor, min(limit, size + 1))]
    left = limit - len(chunks[0])
    while left > 0 and chunks[-1]:
        chunks.append(os.read(descriptor, min(left, _CHUNK)))
        left -= len(chunks[-1])
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def write_new(path: str, data: bytes, mode: int = 0o644) -> None:
    """Create `path`, which must not exist (nor be a link), with `mode` (less the umask), and
    write all of `data` (OSError when it cannot)."""
    # O_EXCL: open fails on anything already there, a link included (it is not followed)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)


def read_whole(path: str | os.PathLike[str]) -> bytes:
    """Every byte of the file `path` (OSError when it cannot be read)."""
    return read_at_most(path, 1 << 62)


FileDigest = tuple[int, bytes]
"""A file's size and the blake2b (160 bits) of its bytes: what a prestage records of each file
of out/, what the file indexes keep (compiler.cache.file_index), and what the compile cache
keeps of each file of a cluster's result, so that a write compares those it took from the
cache without encoding and hashing them again."""


def bytes_digest(data: bytes) -> FileDigest:
    """The FileDigest of a file's bytes."""
    return len(data), hashlib.blake2b(data, digest_size=20).digest()


def digest_bytes(digest: FileDigest) -> bytes:
    """`digest` as bytes of a fixed length, for a hash taken of file digests (the compile key,
    the parse cache's keys)."""
    size, hashed = digest
    return size.to_bytes(8, "little") + hashed

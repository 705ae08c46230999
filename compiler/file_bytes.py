"""Reading and writing small files whole, with plain system calls.

A compile reads and writes thousands of small files (policy files, cache entries, out/), and
`open()`'s buffered file object costs more than the read or write of one of them; these use
os.open/os.read/os.write, reads sized by fstat so no large buffer is allocated per file.
"""

from __future__ import annotations

import os

_CHUNK = 1 << 16


def read_at_most(path: str | os.PathLike[str], limit: int) -> bytes:
    """The first `limit` bytes of the file `path`, all of it when shorter (OSError when it
    cannot be read)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        # one byte past the size it has now: a shorter read is the end of the file, a full
        # one means it grew meanwhile (or is longer than `limit`) and it is read on
        want = min(limit, os.fstat(descriptor).st_size + 1)
        chunks = [os.read(descriptor, want)]
        left = limit - len(chunks[0])
        while len(chunks[-1]) == want and left > 0:
            want = min(left, _CHUNK)
            chunks.append(os.read(descriptor, want))
            left -= len(chunks[-1])
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(descriptor)


def write_whole(path: str, data: bytes, flags: int) -> None:
    """Open `path` for writing with `flags` added (O_EXCL: it must not exist; O_TRUNC) and
    write all of `data` (OSError when it cannot)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)


def read_whole(path: str | os.PathLike[str]) -> bytes:
    """Every byte of the file `path` (OSError when it cannot be read)."""
    return read_at_most(path, 1 << 62)

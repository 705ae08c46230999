"""What a directory's files were when a run last read them, so that the next run reads only
the files changed since (as git's index spares `git status` from reading the work tree).

Three runs read every file of a directory only to hash it:
- a `compile --check` answered from a compile record hashes every file of out/
  (compiler.cache.store.out_digest): on fleet L, 17,000 files and most of the check's time;
- a compile's prestage hashes every file of out/ to find those the write may keep
  (compiler.write.prestage);
- a compile with the cache takes its key of every policy file (compiler.cache.key), and the
  loader finds what it parsed before by the same hashes (compiler.cache.parsed).

The index of a directory keeps, for each regular file in it, its lstat (device, inode, mode,
size, modification and change times in ns) and the FileDigest of the bytes read then: a file
whose lstat is the same is not read again. Writing to a file or changing its mode moves its
change time (ctime), which no call can set back; replacing it gives it another inode. A run
that finds exactly the files the last one kept, each with the same lstat, keeps them all at
once (FileIndex.digests).

A file changed shortly before a run read it could change again within the same tick of the
file system's clock and keep every time it had. So a file is kept only when it last changed
before the run started, by its file system's clock where the run can read it, else RACY_NS
before by the system clock (compiler.cache.settled); a younger one is read at every run until
it is that old (git's "racily clean" entries).

An index is of one directory: its device and inode, not only its path. A run that finds no
index of the directory it reads keeps that directory's identity only, and the next run of it
keeps the files: a fresh checkout that CI checks once costs no lstat and no index of 17,000
entries, while a working tree checked again and again reads only what changed from its third
run on. A compile with the cache swaps in a new out/, and its prestage saves the new
directory's index with every file it carried that no one wrote since (relinked): the
next compile and check read only the files that compile wrote.

One index per directory path and use (OUT_INDEX, POLICY_INDEX) lives in the cache directory,
written whole or not at all (compiler.cache.files); anything unreadable is an empty index,
which costs one run the full read. It is a pure speed-up: what a run finds is the same with
or without it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from array import array
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import NamedTuple, cast, get_args

from compiler.cache.files import put_file, take_file
from compiler.cache.settled import FileStat, Settled, file_stat, written
from compiler.file_bytes import FileDigest, bytes_digest, read_regular

INDEX_FORMAT = "gpufleet-file-index/4"
OUT_INDEX = ".outindex"
"""The suffix of out/'s index."""
POLICY_INDEX = ".policyindex"
"""The suffix of the policy directory's index."""

Entry = tuple[FileStat, FileDigest]
"""What an index keeps of one file: its lstat, and the digest of the bytes read after it."""


class Entries(NamedTuple):
    """The entries of an index as it is stored, in order of their paths: a few flat arrays
    rather than a tuple or two per file, so that opening the index of L's out/ (17,000
    files) takes milliseconds, and comparing every file's lstat with the one kept is
    comparing two byte strings (FileIndex.digests)."""

    paths: list[str]
    stats: bytes
    """Each path's FileStat, its fields one after the other as _INTEGERS."""
    sizes: bytes
    """Each path's digest's size, as _INTEGERS."""
    hashes: list[bytes]
    """Each path's digest's hash."""

    @classmethod
    def of(cls, kept: dict[str, Entry]) -> Entries:
        """The stored form of `kept`."""
        paths = sorted(kept)
        entries = [kept[path] for path in paths]
        sizes = array(_INTEGERS, (size for _, (size, _) in entries))
        hashes = [hashed for _, (_, hashed) in entries]
        return cls(paths, _packed([found for found, _ in entries]), sizes.tobytes(), hashes)

    def digests(self) -> list[FileDigest]:
        """Each path's FileDigest, in order."""
        return list(zip(_integers(self.sizes), self.hashes, strict=True))

    def by_path(self) -> dict[str, Entry]:
        """Each path's Entry."""
        stats = _integers(self.stats)
        found = [
            cast(FileStat, tuple(stats[i : i + _FIELDS])) for i in range(0, len(stats), _FIELDS)
        ]
        return dict(zip(self.paths, zip(found, self.digests(), strict=True), strict=True))

    def whole(self) -> bool:
        """Whether these are entries as `of` makes them: as many of each part as paths."""
        count, width = len(self.paths), array(_INTEGERS).itemsize
        return (
            len(self.stats) == count * _FIELDS * width
            and len(self.sizes) == count * width
            and len(self.hashes) == count
        )


_INTEGERS = "q"
"""The array type Entries stores integers as: signed, 64 bits."""
_FIELDS = len(get_args(FileStat))
"""The integers of one FileStat."""

NO_ENTRIES = Entries([], b"", b"", [])


def _integers(data: bytes) -> array[int]:
    """The _INTEGERS stored as `data`."""
    values = array(_INTEGERS)
    values.frombytes(data)
    return values


@dataclass
class FileIndex:
    """The index of one directory as one run reads and renews it."""

    directory: Path
    name: str
    """The index file's name in `directory`."""
    tree: tuple[int, int] | None
    """The directory's device and inode (None when it cannot be found)."""
    saved: Entries
    """What the last run of this directory kept."""
    seen_before: bool
    """Whether the last run was of this directory: only then are its files kept."""
    settled: Settled
    """Whether a file changed early enough to be kept (taken when the run starts)."""
    kept: dict[str, Entry] | None = field(default_factory=dict)
    """What this run keeps for the next (None: what the last run kept, all of it)."""

    @classmethod
    def open(cls, directory: Path, root: Path, use: str) -> FileIndex:
        """The `use` index (OUT_INDEX, POLICY_INDEX) of the directory `root`, kept in the
        cache `directory` (empty when there is none of the directory now at that path). The
        run starts now (`settled`)."""
        settled = Settled.now(directory)
        name = hashlib.sha256(os.fsencode(root.absolute())).hexdigest()[:32] + use
        try:
            status = os.lstat(root)
            tree: tuple[int, int] | None = (status.st_dev, status.st_ino)
        except OSError:
            tree = None
        data = take_file(directory, name) if tree is not None else None
        if data is not None:
            try:
                format_, saved_tree, fields = pickle.loads(data)
                if format_ == INDEX_FORMAT and saved_tree == tree:
                    saved = Entries(*fields)
                    if saved.whole():
                        return cls(directory, name, tree, saved, True, settled)
            except Exception:  # an unreadable index (cut short, another format) is empty
                pass
        return cls(directory, name, tree, NO_ENTRIES, False, settled)

    @cached_property
    def known(self) -> dict[str, Entry]:
        """What the last run of this directory kept, by path below it."""
        return self.saved.by_path()

    def digests(self, root: Path, paths: list[str]) -> list[FileDigest]:
        """The FileDigest of each regular file of `paths` below `root`, in their order, as
        `read` gives them (OSError when one is not a regular file or cannot be read).

        Every lstat is taken first. When `paths` are the paths the last run kept, in its
        order, and every lstat is the one it kept, its digests are all kept at once: one
        comparison of byte strings rather than a lookup per file (a check of L's out/:
        17,000 files). That run kept them because they changed before it started, so they
        did before this one too."""
        found = [file_stat(os.lstat(f"{root}/{path}")) for path in paths]
        saved = self.saved
        if self.seen_before and paths == saved.paths and _packed(found) == saved.stats:
            self.kept = None
            return saved.digests()
        return [self.read(root, path, found=now)[0] for path, now in zip(paths, found, strict=True)]

    def read(
        self, root: Path, path: str, limit: int = 1 << 62, found: FileStat | None = None
    ) -> tuple[FileDigest, bytes | None]:
        """The FileDigest of the first `limit` bytes of regular file `path` below `root`, and
        those bytes when they were read: None when the kept digest stands for them (its lstat
        is unchanged). OSError when it is not a regular file or cannot be read. `found`: the
        file's lstat, where the caller took it already."""
        full = f"{root}/{path}"
        if path in self.known:
            if found is None:
                found = file_stat(os.lstat(full))
            kept = self.kept_digest(path, found)
            if kept is not None:
                self._keep(path, found, kept)
                return kept, None
        # the status is taken before the bytes are read: a change in between is in the
        # bytes, or moves the ctime
        status, data = read_regular(full, limit)
        digest = bytes_digest(data)
        self._keep(path, file_stat(status), digest)
        return digest, data

    def kept_digest(self, path: str, found: FileStat) -> FileDigest | None:
        """The digest the last run of this directory kept for the file `path`, when `found`
        is the lstat it kept with it (the bytes are then those it read); else None."""
        entry = self.known.get(path)
        return entry[1] if entry is not None and entry[0] == found else None

    def relinked(
        self,
        digests: Mapping[str, FileDigest],
        read: Mapping[str, FileStat],
        found: Mapping[str, FileStat],
        now: Settled,
    ) -> Entries:
        """The entries, for the next run, of the files of `digests` (the digest of each as
        this run read it, its lstat then in `read`) that no one has written since, by
        `found`, their lstats taken after `now`: what a compile's
        prestage keeps of out/ (compiler.write.prestage), which it read (or found in this
        index), then hard-linked into the tree that replaces out/, and unlinked from the one
        before. Take the lstats once the run has done so; save the entries with save_as.

        Linking and unlinking a file moves its change time, so that time cannot say here
        that it was not written. A file is kept when it is the inode read, of the mode,
        size and modification time read (a write moves the modification time to now, later
        than the read, which was of a file settled before this run started), and when it
        has not changed since `now` (by `Settled`, as any entry). So a file written after
        the read, and then given back its size and modification time before `now`, is taken
        for the one read: the window of the prestage's own check of out/ (an edit during a
        compile that forges its time stamp back); anything done to it after `now` moves its
        change time, as for any entry."""
        kept: dict[str, Entry] = {}
        for path, digest in digests.items():
            before, after = read[path], found.get(path)
            if after is None or not self.settled(before) or not now(after):
                continue
            if written(after) == written(before):
                kept[path] = (after, digest)
        return Entries.of(kept)

    def save_as(self, root: Path, entries: Entries) -> None:
        """Save `entries` as the index of the directory now at `root` (this index's path):
        the next run of it keeps them."""
        with suppress(OSError):
            status = os.lstat(root)
            _store(self.directory, self.name, (status.st_dev, status.st_ino), entries)

    def _keep(self, path: str, found: FileStat, digest: FileDigest) -> None:
        """Keep `path`'s entry for the next run: when the last run was of this directory
        too, and the file did not change too recently."""
        if self.seen_before and self.settled(found):
            if self.kept is None:
                self.kept = dict(self.known)
            self.kept[path] = (found, digest)

    def save(self) -> None:
        """Keep what this run found for the next: the directory's identity, and its files if
        the last run was of this directory too (nothing is written when that is what was kept
        already; a cache that cannot be written stays as it was)."""
        if self.tree is None:
            return
        entries = self.saved if self.kept is None else Entries.of(self.kept)
        if self.seen_before and entries == self.saved:
            return
        _store(self.directory, self.name, self.tree, entries)


def _store(directory: Path, name: str, tree: tuple[int, int], entries: Entries) -> None:
    """Write the index `name` of the directory `tree` (device, inode) into the cache
    `directory`, whole or not at all."""
    stored = (INDEX_FORMAT, tree, tuple(entries))
    put_file(directory, name, pickle.dumps(stored, protocol=5))


def _packed(stats: Sequence[FileStat]) -> bytes:
    """`stats` as Entries stores them."""
    return array(_INTEGERS, chain.from_iterable(stats)).tobytes()
